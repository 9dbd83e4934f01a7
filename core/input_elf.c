/* Device code inside host ELF files (executables, shared objects, .o).
 * Where it lives: shared/reference/fatbin-format.md §1, §2, §9.
 *
 * Must stay fast on libtorch_cuda.so (456 MB, ~2,800 cubins in a 298 MB
 * .nv_fatbin): only ELF headers, container headers, the bytes between
 * containers and the small wrapper section are read. Code sections are
 * never touched and payloads are never read. Data sections are read only
 * when the caller asks for KIMG_INPUT_SCAN_DATA (a memchr-speed search).
 * Every lookup is O(1) or O(wrappers) per module: libcublasLt.so.13 has
 * ~2,800 wrappers, and a lookup that walked the section headers for each
 * wrapper made the scan quadratic (542 ms on 541 MB). */
#include "input_internal.h"

#include "fatbin.h"

#define EHDR_SIZE 64u
#define SHDR_SIZE 64u
#define SHN_XINDEX 0xffffu
#define SHT_PROGBITS 1u
#define SHT_NOBITS 8u
#define SHF_ALLOC 0x2u
#define SHF_EXECINSTR 0x4u
#define WRAPPER_SIZE 24u

struct shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link;
};

struct elf {
	struct kimg_span in;
	uint64_t shoff, shnum;
	struct kimg_span names; /* section-name table, ends in NUL */
};

/* Section header i; the table was bounds-checked as a whole before use. */
static struct shdr elf_shdr(const struct elf *e, uint64_t i)
{
	struct shdr h = { 0, 0, 0, 0, 0, 0, 0 };
	uint64_t at = e->shoff + i * SHDR_SIZE;
	kimg_span_u32(&e->in, at + 0x00, &h.name);
	kimg_span_u32(&e->in, at + 0x04, &h.type);
	kimg_span_u64(&e->in, at + 0x08, &h.flags);
	kimg_span_u64(&e->in, at + 0x10, &h.addr);
	kimg_span_u64(&e->in, at + 0x18, &h.offset);
	kimg_span_u64(&e->in, at + 0x20, &h.size);
	kimg_span_u32(&e->in, at + 0x28, &h.link);
	return h;
}

/* Names were checked to start inside the table, which ends in NUL. */
static const char *elf_name(const struct elf *e, const struct shdr *h)
{
	return (const char *)e->names.data + h->name;
}

static bool elf_has_data(const struct elf *e, const struct shdr *h)
{
	return h->type != SHT_NOBITS && kimg_span_has(&e->in, h->offset, h->size);
}

/* Ehdr, section header table and section-name table, in that order (STYLE §5). */
static int elf_open(struct kimg_walk *w, struct kimg_span in, struct elf *e)
{
	const uint8_t *id = kimg_span_at(&in, 0, EHDR_SIZE);
	uint16_t shentsize, shnum16, shstrndx16;
	uint64_t shstrndx;
	struct shdr sh0, strtab;

	if (!id)
		return kimg_walk_fail(w, -KIMG_ETRUNC, 0, "host ELF: %llu bytes, shorter than the ELF header",
				      (unsigned long long)in.size);
	if (id[4] != 2)
		return kimg_walk_fail(w, -KIMG_ENOTSUP, 4, "host ELF: 32-bit ELF (class %u) is not supported", id[4]);
	if (id[5] != 1)
		return kimg_walk_fail(w, -KIMG_ENOTSUP, 5, "host ELF: big-endian ELF is not supported");
	e->in = in;
	kimg_span_u64(&in, 0x28, &e->shoff);
	kimg_span_u16(&in, 0x3A, &shentsize);
	kimg_span_u16(&in, 0x3C, &shnum16);
	kimg_span_u16(&in, 0x3E, &shstrndx16);
	e->shnum = 0;
	if (e->shoff == 0)
		return 0; /* no section headers: nothing to find by name */
	if (shentsize != SHDR_SIZE)
		return kimg_walk_fail(w, -KIMG_EFORMAT, 0x3A, "host ELF: e_shentsize %u, expected 64", shentsize);
	if (!kimg_span_has(&in, e->shoff, SHDR_SIZE))
		return kimg_walk_fail(w, -KIMG_ETRUNC, 0x28, "host ELF: section headers at %llu past the end",
				      (unsigned long long)e->shoff);
	e->shnum = 1;
	sh0 = elf_shdr(e, 0);
	/* Extended numbering (gABI): counts that overflow 16 bits live in
	 * section 0. Large cubins use it (§9); host files may too. */
	e->shnum = shnum16 ? shnum16 : sh0.size;
	shstrndx = shstrndx16 == SHN_XINDEX ? sh0.link : shstrndx16;
	if (e->shnum > (in.size - e->shoff) / SHDR_SIZE)
		return kimg_walk_fail(w, -KIMG_ETRUNC, e->shoff, "host ELF: %llu section headers pass the end",
				      (unsigned long long)e->shnum);
	if (shstrndx == 0 || shstrndx >= e->shnum)
		return kimg_walk_fail(w, -KIMG_EFORMAT, 0x3E, "host ELF: section-name table index %llu of %llu",
				      (unsigned long long)shstrndx, (unsigned long long)e->shnum);
	strtab = elf_shdr(e, shstrndx);
	if (strtab.type == SHT_NOBITS || strtab.size == 0)
		return kimg_walk_fail(w, -KIMG_EFORMAT, e->shoff + shstrndx * SHDR_SIZE,
				      "host ELF: section-name table has no contents");
	if (!elf_has_data(e, &strtab))
		return kimg_walk_fail(w, -KIMG_ETRUNC, e->shoff + shstrndx * SHDR_SIZE,
				      "host ELF: section-name table [%llu, +%llu) past the end",
				      (unsigned long long)strtab.offset, (unsigned long long)strtab.size);
	e->names = kimg_span_sub(&in, strtab.offset, strtab.size);
	if (e->names.data[e->names.size - 1] != 0)
		return kimg_walk_fail(w, -KIMG_EFORMAT, strtab.offset, "host ELF: section-name table not NUL-terminated");
	for (uint64_t i = 0; i < e->shnum; i++) {
		struct shdr h = elf_shdr(e, i);
		if (h.name >= e->names.size)
			return kimg_walk_fail(w, -KIMG_EFORMAT, e->shoff + i * SHDR_SIZE,
					      "host ELF: section %llu name offset %u outside the name table",
					      (unsigned long long)i, h.name);
	}
	return 0;
}

static bool is_fatbin_section(const char *name, enum kimg_module_origin *origin)
{
	if (strcmp(name, ".nv_fatbin") == 0)
		*origin = KIMG_ORIGIN_NV_FATBIN;
	else if (strcmp(name, "__nv_relfatbin") == 0)
		*origin = KIMG_ORIGIN_RELFATBIN;
	else
		return false;
	return true;
}

/* The section whose loaded image holds `vaddr`, and the file offset. */
static bool elf_vaddr_to_offset(const struct elf *e, uint64_t vaddr, uint64_t *sec, uint64_t *off)
{
	for (uint64_t i = 1; i < e->shnum; i++) {
		struct shdr h = elf_shdr(e, i);
		if ((h.flags & SHF_ALLOC) && h.type != SHT_NOBITS && vaddr >= h.addr && vaddr - h.addr < h.size) {
			*sec = i;
			*off = h.offset + (vaddr - h.addr);
			return true;
		}
	}
	return false;
}

/* Container address of wrapper j of section h, or 0 for an empty slot. */
static uint64_t wrapper_data(const struct elf *e, const struct shdr *h, uint64_t j)
{
	uint64_t data = 0;
	kimg_span_u64(&e->in, h->offset + j * WRAPPER_SIZE + 8, &data);
	return data;
}

static uint32_t wrapper_magic(const struct elf *e, const struct shdr *h, uint64_t j)
{
	uint32_t magic = 0;
	kimg_span_u32(&e->in, h->offset + j * WRAPPER_SIZE, &magic);
	return magic;
}

static bool is_wrapper_section(const struct elf *e, const struct shdr *h)
{
	return strcmp(elf_name(e, h), ".nvFatBinSegment") == 0 && elf_has_data(e, h);
}

/* The addresses wrappers lead to outside the two fatbin sections (§2):
 * where the wrapper walk yields modules, and so where it must not yield
 * twice and the data scan must not yield again. nvcc points every wrapper
 * into .nv_fatbin, so this is normally empty and every lookup is O(1).
 * A bounded array keeps the core free of allocation; past it, a lookup
 * searches the wrappers themselves (linear, not quadratic: one pass over
 * the wrappers per lookup, no section-header walk per wrapper). */
#define TARGETS_MAX 64u
struct targets {
	uint64_t vaddr[TARGETS_MAX];
	uint64_t n;      /* recorded; only the first TARGETS_MAX are kept */
	uint64_t lo, hi; /* smallest and largest recorded */
	uint64_t sec;    /* wrapper section of the first one recorded */
};

static void targets_add(struct targets *t, uint64_t vaddr, uint64_t sec)
{
	if (t->n == 0)
		t->sec = sec;
	if (t->n < TARGETS_MAX)
		t->vaddr[t->n] = vaddr;
	if (t->n == 0 || vaddr < t->lo)
		t->lo = vaddr;
	if (t->n == 0 || vaddr > t->hi)
		t->hi = vaddr;
	t->n++;
}

/* Does a wrapper walked before wrapper `limit_j` of section `limit_sec`
 * lead to `vaddr`? Wrappers after a bad magic in a section are not
 * walked (walk_wrappers stops there), so they do not count either. The
 * first wrapper leading to any recorded address lies in t->sec or later. */
static bool wrappers_lead_to(const struct elf *e, const struct targets *t, uint64_t vaddr, uint64_t limit_sec,
			     uint64_t limit_j)
{
	for (uint64_t i = t->sec; i < e->shnum && i <= limit_sec; i++) {
		struct shdr h = elf_shdr(e, i);
		if (!is_wrapper_section(e, &h))
			continue;
		for (uint64_t j = 0; j < h.size / WRAPPER_SIZE && (i < limit_sec || j < limit_j); j++) {
			uint64_t data = wrapper_data(e, &h, j);
			uint32_t magic = wrapper_magic(e, &h, j);
			if (magic != KIMG_FATBIN_WRAPPER_MAGIC && (magic != 0 || data != 0))
				break;
			if (data != 0 && data == vaddr)
				return true;
		}
	}
	return false;
}

static bool targets_has(const struct elf *e, const struct targets *t, uint64_t vaddr, uint64_t limit_sec,
			uint64_t limit_j)
{
	if (t->n == 0 || vaddr < t->lo || vaddr > t->hi)
		return false;
	if (t->n > TARGETS_MAX)
		return wrappers_lead_to(e, t, vaddr, limit_sec, limit_j);
	for (uint64_t k = 0; k < t->n; k++)
		if (t->vaddr[k] == vaddr)
			return true;
	return false;
}

/* §2: wrappers matter only when they point outside the two fatbin
 * sections (those are walked whole). In .o files data is 0 and the target
 * is a relocation: ignored, since the sections themselves are walked. */
static void walk_wrappers(struct kimg_walk *w, const struct elf *e, uint64_t i, const struct shdr *h,
			  struct targets *seen)
{
	enum kimg_module_origin unused;

	for (uint64_t j = 0; j < h->size / WRAPPER_SIZE && !w->stop; j++) {
		uint64_t at = h->offset + j * WRAPPER_SIZE, sec, off;
		uint64_t data = wrapper_data(e, h, j);
		uint32_t magic = wrapper_magic(e, h, j);
		struct shdr t;
		struct kimg_span tspan;
		struct kimg_fatbin fb;
		struct kimg_error fe = { 0, 0, "" };

		if (magic == 0 && data == 0)
			continue;
		if (magic != KIMG_FATBIN_WRAPPER_MAGIC) {
			kimg_walk_fail(w, -KIMG_EFORMAT, at, ".nvFatBinSegment: bad wrapper magic 0x%08x", magic);
			return;
		}
		if (data == 0)
			continue;
		if (!elf_vaddr_to_offset(e, data, &sec, &off)) {
			kimg_walk_fail(w, -KIMG_EFORMAT, at, ".nvFatBinSegment: address 0x%llx in no section",
				       (unsigned long long)data);
			continue;
		}
		t = elf_shdr(e, sec);
		if (is_fatbin_section(elf_name(e, &t), &unused) || !elf_has_data(e, &t))
			continue;
		/* One address, one section, one file offset: an equal address is
		 * the same container, already yielded (or already reported). */
		if (targets_has(e, seen, data, i, j))
			continue;
		targets_add(seen, data, i);
		tspan = kimg_span_sub(&e->in, t.offset, t.size);
		if (kimg_fatbin_open(tspan, off - t.offset, &fb, &fe) < 0) {
			kimg_walk_take(w, &fe, t.offset);
			continue;
		}
		kimg_walk_emit(w, KIMG_INPUT_FATBIN, KIMG_ORIGIN_WRAPPER, fb.bytes, off, elf_name(e, &t));
	}
}

/* §1, §9: blobs for cuModuleLoadData may sit in any loaded data section.
 * Only SHF_ALLOC, non-executable PROGBITS sections are searched, and only
 * strictly valid containers count. */
static bool scan_candidate(const struct elf *e, const struct shdr *h)
{
	const char *name = elf_name(e, h);
	enum kimg_module_origin unused;
	return h->type == SHT_PROGBITS && (h->flags & SHF_ALLOC) && !(h->flags & SHF_EXECINSTR) &&
	       !is_fatbin_section(name, &unused) && strcmp(name, ".nvFatBinSegment") != 0 && elf_has_data(e, h);
}

/* Offset of the next container magic (50 ed 55 ba) in `sec` at or after
 * `from`, or sec.size. Any alignment is accepted: blobs embedded with
 * .incbin or objcopy need not be 8-aligned. memchr for one byte of the
 * magic and a compare runs at memory speed (≈15 ms for libcublasLt.so.13's
 * 110 MB .cask_resource, 275 k candidate bytes), where memmem took 66 ms
 * and a loop over 8-aligned words 20 ms (measured on this machine). */
static uint64_t find_magic(struct kimg_span sec, uint64_t from)
{
	uint64_t q = from + 1; /* the byte 0xed, second of the magic */

	if (sec.size < 4)
		return sec.size;
	while (q <= sec.size - 3) {
		const uint8_t *hit = memchr(sec.data + q, 0xed, (size_t)(sec.size - 2 - q));
		const uint8_t *m;
		if (!hit)
			break;
		q = (uint64_t)(hit - sec.data);
		m = kimg_span_at(&sec, q - 1, 4);
		if (m && m[0] == 0x50 && m[2] == 0x55 && m[3] == 0xba)
			return q - 1;
		q++;
	}
	return sec.size;
}

static void scan_section(struct kimg_walk *w, const struct elf *e, uint64_t i, const struct shdr *h,
			 const struct targets *seen)
{
	struct kimg_span sec = kimg_span_sub(&e->in, h->offset, h->size);
	uint64_t pos = 0;

	while (pos < sec.size && !w->stop) {
		uint64_t at = find_magic(sec, pos), size, s, o;
		if (at >= sec.size)
			break;
		if (!kimg_container_is_plausible(sec, at, &size)) {
			pos = at + 1;
			continue;
		}
		pos = at + size;
		/* Reached through a wrapper: yielded already. The address must
		 * also resolve to this very section (sections may overlap). */
		if (targets_has(e, seen, h->addr + at, UINT64_MAX, UINT64_MAX) &&
		    elf_vaddr_to_offset(e, h->addr + at, &s, &o) && s == i)
			continue;
		kimg_walk_emit(w, KIMG_INPUT_FATBIN, KIMG_ORIGIN_SCAN, kimg_span_sub(&sec, at, size), h->offset + at,
			       elf_name(e, h));
	}
}

int kimg_walk_host_elf(struct kimg_walk *w, struct kimg_span in)
{
	struct elf e;
	struct targets seen;
	int rc = elf_open(w, in, &e);
	if (rc < 0)
		return rc;
	seen.n = seen.lo = seen.hi = seen.sec = 0;

	for (uint64_t i = 1; i < e.shnum && !w->stop; i++) {
		struct shdr h = elf_shdr(&e, i);
		enum kimg_module_origin origin;
		if (!is_fatbin_section(elf_name(&e, &h), &origin) || h.type == SHT_NOBITS)
			continue;
		if (!elf_has_data(&e, &h)) {
			kimg_walk_fail(w, -KIMG_ETRUNC, e.shoff + i * SHDR_SIZE, "host ELF: section %s [%llu, +%llu) past the end",
				       elf_name(&e, &h), (unsigned long long)h.offset, (unsigned long long)h.size);
			continue;
		}
		kimg_walk_containers(w, kimg_span_sub(&in, h.offset, h.size), h.offset, origin, elf_name(&e, &h), false);
	}
	for (uint64_t i = 1; i < e.shnum && !w->stop; i++) {
		struct shdr h = elf_shdr(&e, i);
		if (is_wrapper_section(&e, &h))
			walk_wrappers(w, &e, i, &h, &seen);
	}
	if (!(w->flags & KIMG_INPUT_SCAN_DATA))
		return 0;
	for (uint64_t i = 1; i < e.shnum && !w->stop; i++) {
		struct shdr h = elf_shdr(&e, i);
		if (scan_candidate(&e, &h))
			scan_section(w, &e, i, &h, &seen);
	}
	return 0;
}
