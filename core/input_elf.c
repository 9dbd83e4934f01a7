/* SPDX-License-Identifier: Apache-2.0 */
/* Device code inside host ELF files (executables, shared objects, .o).
 * Where it lives: docs/format.md §1, §2, §9.
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

#include "elf64.h"
#include "fatbin.h"

#define WRAPPER_SIZE 24u

/* Ehdr, section header table and section-name table: elf64.c, whose
 * reader elf_symbols.c and cuda_libs.c share. */
static int elf_open(struct kimg_walk *w, struct kimg_span in, struct kimg_elf *e)
{
	struct kimg_error err = { 0, 0, "" };
	int rc = kimg_elf_open(in, e, &err);
	return rc < 0 ? kimg_walk_take(w, &err, 0) : rc;
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
static bool elf_vaddr_to_offset(const struct kimg_elf *e, uint64_t vaddr, uint64_t *sec, uint64_t *off)
{
	for (uint64_t i = 1; i < e->shnum; i++) {
		struct kimg_elf_shdr h = kimg_elf_shdr(e, i);
		if ((h.flags & KIMG_SHF_ALLOC) && h.type != KIMG_SHT_NOBITS && vaddr >= h.addr && vaddr - h.addr < h.size) {
			*sec = i;
			*off = h.offset + (vaddr - h.addr);
			return true;
		}
	}
	return false;
}

/* The loaded sections in index order, decoded once for a wrapper walk:
 * each wrapper's address is resolved against them (2,782 wrappers in
 * libcublasLt.so.13, each decoding every section header was a tenth of
 * a scan's instructions). The first match in index order, as
 * elf_vaddr_to_offset; past LOADED_MAX sections, elf_vaddr_to_offset
 * itself. A bounded array: the core does not allocate. */
#define LOADED_MAX 48u
struct loaded_sections {
	struct {
		uint64_t sec, addr, size, offset;
	} s[LOADED_MAX];
	uint64_t n;
	bool complete; /* every loaded section is in s */
};

static void loaded_init(const struct kimg_elf *e, struct loaded_sections *ls)
{
	ls->n = 0;
	ls->complete = true;
	for (uint64_t i = 1; i < e->shnum; i++) {
		struct kimg_elf_shdr h = kimg_elf_shdr(e, i);
		if (!(h.flags & KIMG_SHF_ALLOC) || h.type == KIMG_SHT_NOBITS)
			continue;
		if (ls->n == LOADED_MAX) {
			ls->complete = false;
			return;
		}
		ls->s[ls->n].sec = i;
		ls->s[ls->n].addr = h.addr;
		ls->s[ls->n].size = h.size;
		ls->s[ls->n].offset = h.offset;
		ls->n++;
	}
}

static bool loaded_find(const struct kimg_elf *e, const struct loaded_sections *ls, uint64_t vaddr, uint64_t *sec,
			uint64_t *off)
{
	if (!ls->complete)
		return elf_vaddr_to_offset(e, vaddr, sec, off);
	for (uint64_t k = 0; k < ls->n; k++)
		if (vaddr >= ls->s[k].addr && vaddr - ls->s[k].addr < ls->s[k].size) {
			*sec = ls->s[k].sec;
			*off = ls->s[k].offset + (vaddr - ls->s[k].addr);
			return true;
		}
	return false;
}

/* Container address of wrapper j of section h, or 0 for an empty slot. */
static uint64_t wrapper_data(const struct kimg_elf *e, const struct kimg_elf_shdr *h, uint64_t j)
{
	uint64_t data = 0;
	kimg_span_u64(&e->in, h->offset + j * WRAPPER_SIZE + 8, &data);
	return data;
}

static uint32_t wrapper_magic(const struct kimg_elf *e, const struct kimg_elf_shdr *h, uint64_t j)
{
	uint32_t magic = 0;
	kimg_span_u32(&e->in, h->offset + j * WRAPPER_SIZE, &magic);
	return magic;
}

static bool is_wrapper_section(const struct kimg_elf *e, const struct kimg_elf_shdr *h)
{
	return strcmp(kimg_elf_section_name(e, h), ".nvFatBinSegment") == 0 && kimg_elf_has_data(e, h);
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
static bool wrappers_lead_to(const struct kimg_elf *e, const struct targets *t, uint64_t vaddr,
			     uint64_t limit_sec, uint64_t limit_j)
{
	for (uint64_t i = t->sec; i < e->shnum && i <= limit_sec; i++) {
		struct kimg_elf_shdr h = kimg_elf_shdr(e, i);
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

static bool targets_has(const struct kimg_elf *e, const struct targets *t, uint64_t vaddr, uint64_t limit_sec,
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
static void walk_wrappers(struct kimg_walk *w, const struct kimg_elf *e, uint64_t i,
			  const struct kimg_elf_shdr *h, struct targets *seen)
{
	enum kimg_module_origin unused;
	struct loaded_sections loaded;
	loaded_init(e, &loaded);

	for (uint64_t j = 0; j < h->size / WRAPPER_SIZE && !w->call->stop; j++) {
		uint64_t at = h->offset + j * WRAPPER_SIZE, sec, off;
		uint64_t data = wrapper_data(e, h, j);
		uint32_t magic = wrapper_magic(e, h, j);
		struct kimg_elf_shdr t;
		struct kimg_span tspan;
		struct kimg_fatbin fb;
		struct kimg_error fe = { 0, 0, "" };

		if (magic == 0 && data == 0) {
			/* Empty slots in a hole: resume at the first slot reaching past it. */
			uint64_t z = kimg_walk_zero_end(w, at);
			if (z > at + WRAPPER_SIZE)
				j = (z - h->offset) / WRAPPER_SIZE - 1;
			continue;
		}
		if (magic != KIMG_FATBIN_WRAPPER_MAGIC) {
			kimg_walk_fail(w, -KIMG_EFORMAT, at, ".nvFatBinSegment: bad wrapper magic 0x%08x", magic);
			return;
		}
		if (data == 0)
			continue;
		if (!loaded_find(e, &loaded, data, &sec, &off)) {
			kimg_walk_fail(w, -KIMG_EFORMAT, at, ".nvFatBinSegment: address 0x%llx in no section",
				       (unsigned long long)data);
			continue;
		}
		t = kimg_elf_shdr(e, sec);
		if (is_fatbin_section(kimg_elf_section_name(e, &t), &unused) || !kimg_elf_has_data(e, &t))
			continue;
		/* One address, one section, one file offset: an equal address is
		 * the same container, already yielded (or already reported). */
		if (targets_has(e, seen, data, i, j))
			continue;
		targets_add(seen, data, i);
		tspan = kimg_elf_section_bytes(e, &t);
		if (kimg_fatbin_open(tspan, off - t.offset, &fb, &fe) < 0) {
			kimg_walk_take(w, &fe, t.offset);
			continue;
		}
		kimg_walk_emit(w, KIMG_INPUT_FATBIN, KIMG_ORIGIN_WRAPPER, fb.bytes, off, kimg_elf_section_name(e, &t));
	}
}

/* §1, §9: blobs for cuModuleLoadData may sit in any loaded data section.
 * Only SHF_ALLOC, non-executable PROGBITS sections are searched, and only
 * strictly valid containers count. */
static bool scan_candidate(const struct kimg_elf *e, const struct kimg_elf_shdr *h)
{
	const char *name = kimg_elf_section_name(e, h);
	enum kimg_module_origin unused;
	return h->type == KIMG_SHT_PROGBITS && (h->flags & KIMG_SHF_ALLOC) && !(h->flags & KIMG_SHF_EXECINSTR) &&
	       !is_fatbin_section(name, &unused) && strcmp(name, ".nvFatBinSegment") != 0 && kimg_elf_has_data(e, h);
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

static void scan_section(struct kimg_walk *w, const struct kimg_elf *e, uint64_t i,
			 const struct kimg_elf_shdr *h, const struct targets *seen)
{
	struct kimg_span sec = kimg_elf_section_bytes(e, h);
	uint64_t pos = 0;

	while (pos < sec.size && !w->call->stop) {
		/* A magic has no zero byte, so none lies in a known zero run:
		 * search up to the next one, then jump over it. */
		uint64_t zend = kimg_walk_zero_end(w, h->offset + pos) - h->offset;
		if (zend > pos) {
			pos = zend;
			continue;
		}
		uint64_t next = kimg_walk_next_zero(w, h->offset + pos);
		uint64_t limit = next != UINT64_MAX && next - h->offset < sec.size ? next - h->offset : sec.size;
		uint64_t at = find_magic(kimg_span_sub(&sec, 0, limit), pos), size, s, o;
		if (at >= limit) {
			if (limit >= sec.size)
				break;
			pos = limit;
			continue;
		}
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
			       kimg_elf_section_name(e, h));
	}
}

int kimg_walk_host_elf(struct kimg_walk *w, struct kimg_span in)
{
	struct kimg_elf e;
	struct targets seen;
	int rc = elf_open(w, in, &e);
	if (rc < 0)
		return rc;
	seen.n = seen.lo = seen.hi = seen.sec = 0;

	for (uint64_t i = 1; i < e.shnum && !w->call->stop; i++) {
		struct kimg_elf_shdr h = kimg_elf_shdr(&e, i);
		enum kimg_module_origin origin;
		if (!is_fatbin_section(kimg_elf_section_name(&e, &h), &origin) || h.type == KIMG_SHT_NOBITS)
			continue;
		if (!kimg_elf_has_data(&e, &h)) {
			kimg_walk_fail(w, -KIMG_ETRUNC, kimg_elf_shdr_offset(&e, i), "host ELF: section %s [%llu, +%llu) past the end",
				       kimg_elf_section_name(&e, &h), (unsigned long long)h.offset, (unsigned long long)h.size);
			continue;
		}
		kimg_walk_containers(w, kimg_elf_section_bytes(&e, &h), h.offset, origin,
				     kimg_elf_section_name(&e, &h), false);
	}
	for (uint64_t i = 1; i < e.shnum && !w->call->stop; i++) {
		struct kimg_elf_shdr h = kimg_elf_shdr(&e, i);
		if (is_wrapper_section(&e, &h))
			walk_wrappers(w, &e, i, &h, &seen);
	}
	if (!(w->call->flags & KIMG_INPUT_SCAN_DATA))
		return 0;
	for (uint64_t i = 1; i < e.shnum && !w->call->stop; i++) {
		struct kimg_elf_shdr h = kimg_elf_shdr(&e, i);
		if (scan_candidate(&e, &h))
			scan_section(w, &e, i, &h, &seen);
	}
	return 0;
}
