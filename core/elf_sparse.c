/* SPDX-License-Identifier: Apache-2.0 */
/* Sparse reading plans for large ELF files in streams (elf_sparse.h). */
#include "elf_sparse.h"

#include <string.h>

#include "elf64.h"
#include "fatbin.h"

#define SHF_EXECINSTR 0x4u

static inline uint32_t word_lo(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static int wrapper_at(struct kimg_span bytes, uint64_t i, uint64_t base, kimg_sparse_wrapper_fn fn, void *ctx)
{
	const uint8_t *p = kimg_span_at(&bytes, i, KIMG_SPARSE_WRAPPER_SIZE);
	if (!p || word_lo(p) != KIMG_SPARSE_WRAPPER_MAGIC)
		return 0;
	struct kimg_sparse_wrapper w = { base + i, 0 };
	memcpy(&w.data, p + 8, 8);
	return fn(ctx, &w);
}

int kimg_sparse_wrappers_scan(struct kimg_span bytes, uint64_t base, kimg_sparse_wrapper_fn fn, void *ctx)
{
	const uint8_t *b = bytes.data;
	uint64_t n = bytes.size, i = 0;
	int rc;
	for (; i + 32 <= n; i += 32) {
		if (word_lo(b + i) != KIMG_SPARSE_WRAPPER_MAGIC && word_lo(b + i + 8) != KIMG_SPARSE_WRAPPER_MAGIC &&
		    word_lo(b + i + 16) != KIMG_SPARSE_WRAPPER_MAGIC && word_lo(b + i + 24) != KIMG_SPARSE_WRAPPER_MAGIC)
			continue;
		for (uint64_t k = 0; k < 32; k += 8)
			if ((rc = wrapper_at(bytes, i + k, base, fn, ctx)) != 0)
				return rc;
	}
	for (; i + 8 <= n; i += 8)
		if ((rc = wrapper_at(bytes, i, base, fn, ctx)) != 0)
			return rc;
	return 0;
}

bool kimg_sparse_window(struct kimg_span head, uint64_t file_size, uint64_t *lo, uint64_t *hi)
{
	const uint8_t *e = kimg_span_at(&head, 0, KIMG_ELF_EHDR_SIZE);
	uint64_t shoff;
	uint16_t shentsize, shnum;
	if (!e || memcmp(e, KIMG_ELF_MAGIC, KIMG_ELF_MAGIC_SIZE) != 0 || e[4] != KIMG_ELFCLASS64 || e[5] != KIMG_ELFDATA2LSB)
		return false;
	kimg_span_u64(&head, 0x28, &shoff);
	kimg_span_u16(&head, 0x3A, &shentsize);
	kimg_span_u16(&head, 0x3C, &shnum);
	if (shentsize != KIMG_ELF_SHDR_SIZE || shnum == 0 || shoff > file_size ||
	    (uint64_t)shnum * KIMG_ELF_SHDR_SIZE > file_size - shoff)
		return false;
	*lo = shoff > KIMG_SPARSE_TAIL_WINDOW ? shoff - KIMG_SPARSE_TAIL_WINDOW : 0;
	*hi = shoff + (uint64_t)shnum * KIMG_ELF_SHDR_SIZE;
	return true;
}

static bool add(struct kimg_sparse_range *r, unsigned *n, uint64_t off, uint64_t size)
{
	if (*n >= KIMG_SPARSE_RANGES_MAX)
		return false;
	r[*n].off = off;
	r[*n].size = size;
	(*n)++;
	return true;
}

static void sort(struct kimg_sparse_range *r, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && r[j - 1].off > r[j].off; j--) {
			struct kimg_sparse_range t = r[j];
			r[j] = r[j - 1];
			r[j - 1] = t;
		}
}

static bool name_is(struct kimg_span names, uint32_t name, const char *want)
{
	size_t n = strlen(want) + 1;
	return name < names.size && names.size - name >= n && memcmp(names.data + name, want, n) == 0;
}

bool kimg_sparse_plan_make(struct kimg_span head, struct kimg_span window, uint64_t lo, uint64_t file_size,
			   const struct kimg_sparse_wrapper *wrappers, unsigned n_wrappers, struct kimg_sparse_plan *plan)
{
	uint64_t wlo, whi, shoff;
	uint16_t shnum, shstrndx;
	memset(plan, 0, sizeof *plan);
	if (!kimg_sparse_window(head, file_size, &wlo, &whi) || wlo != lo || window.size != whi - wlo)
		return false;
	kimg_span_u64(&head, 0x28, &shoff);
	kimg_span_u16(&head, 0x3C, &shnum);
	kimg_span_u16(&head, 0x3E, &shstrndx);
	if (shstrndx >= shnum)
		return false;
	const uint64_t sh = shoff - lo;
	uint64_t str_off, str_size;
	kimg_span_u64(&window, sh + (uint64_t)shstrndx * 64 + 0x18, &str_off);
	kimg_span_u64(&window, sh + (uint64_t)shstrndx * 64 + 0x20, &str_size);
	if (str_off < lo || str_off - lo > window.size || str_size > window.size - (str_off - lo))
		return false;
	struct kimg_span names = kimg_span_sub(&window, str_off - lo, str_size);
	/* Wrappers of .nvFatBinSegment must point into .nv_fatbin: else the
	 * containers they name sit in other sections, which are then read. */
	for (unsigned i = 1; i < shnum; i++) {
		uint32_t name;
		uint64_t off, size, at = sh + (uint64_t)i * 64;
		kimg_span_u32(&window, at, &name);
		kimg_span_u64(&window, at + 0x18, &off);
		kimg_span_u64(&window, at + 0x20, &size);
		if (!name_is(names, name, ".nvFatBinSegment"))
			continue;
		for (unsigned w = 0; w < n_wrappers; w++) {
			if (wrappers[w].off < off || wrappers[w].off - off >= size)
				continue;
			bool inside = false;
			for (unsigned k = 1; k < shnum && !inside; k++) {
				uint32_t kn;
				uint64_t addr, ksize, kat = sh + (uint64_t)k * 64;
				kimg_span_u32(&window, kat, &kn);
				kimg_span_u64(&window, kat + 0x10, &addr);
				kimg_span_u64(&window, kat + 0x20, &ksize);
				inside = name_is(names, kn, ".nv_fatbin") && wrappers[w].data >= addr &&
					 wrappers[w].data - addr < ksize;
			}
			if (!inside && wrappers[w].data != 0)
				return false;
		}
	}
	for (unsigned i = 1; i < shnum; i++) {
		uint32_t name, type;
		uint64_t flags, off, size;
		uint64_t at = sh + (uint64_t)i * 64;
		kimg_span_u32(&window, at, &name);
		kimg_span_u32(&window, at + 4, &type);
		kimg_span_u64(&window, at + 8, &flags);
		kimg_span_u64(&window, at + 0x18, &off);
		kimg_span_u64(&window, at + 0x20, &size);
		if (type == KIMG_SHT_NOBITS || size == 0)
			continue;
		if (off > file_size || size > file_size - off)
			return false;
		bool is_fatbin = name_is(names, name, ".nv_fatbin");
		if (is_fatbin && !add(plan->fatbin, &plan->n_fatbin, off, size))
			return false;
		bool read = name_is(names, name, ".rodata") || name_is(names, name, ".nvFatBinSegment") ||
			    name_is(names, name, "__nv_relfatbin");
		bool drop = type == KIMG_SHT_PROGBITS && !is_fatbin && !read &&
			    ((flags & SHF_EXECINSTR) || size >= KIMG_SPARSE_SECTION_DROP);
		if (drop && !add(plan->drop, &plan->n_drop, off, size))
			return false;
	}
	sort(plan->drop, plan->n_drop);
	sort(plan->fatbin, plan->n_fatbin);
	for (unsigned i = 1; i < plan->n_drop; i++)
		if (plan->drop[i].off < plan->drop[i - 1].off + plan->drop[i - 1].size)
			return false; /* overlapping code sections: read whole */
	return true;
}

void kimg_fatbin_stream_begin(struct kimg_fatbin_stream *s, uint64_t off, uint64_t size)
{
	memset(s, 0, sizeof *s);
	s->cont = off;
	s->sec_end = off + size;
}

int kimg_fatbin_stream_next(struct kimg_fatbin_stream *s, struct kimg_span bytes, uint64_t have,
			    struct kimg_sparse_range *drop)
{
	while (!s->done) {
		if (!s->cont_end) {
			/* a container header; zero padding between containers skipped */
			if (s->cont + KIMG_FATBIN_HEADER_SIZE > s->sec_end) {
				s->done = true;
				break;
			}
			if (have < s->cont + KIMG_FATBIN_HEADER_SIZE)
				return 0;
			uint32_t magic;
			uint16_t version, hdr;
			uint64_t fat;
			kimg_span_u32(&bytes, s->cont, &magic);
			if (magic == 0) {
				s->cont += 8;
				continue;
			}
			kimg_span_u16(&bytes, s->cont + 4, &version);
			kimg_span_u16(&bytes, s->cont + 6, &hdr);
			kimg_span_u64(&bytes, s->cont + 8, &fat);
			if (magic != KIMG_FATBIN_MAGIC || hdr < KIMG_FATBIN_HEADER_SIZE || hdr % 8 ||
			    fat > s->sec_end - s->cont || hdr > s->sec_end - s->cont - fat) {
				s->done = true; /* not what it should be: keep the rest */
				break;
			}
			s->cont_end = s->cont + hdr + fat;
			s->entry = s->cont + hdr;
			continue;
		}
		if (s->entry + KIMG_FATBIN_ENTRY_HEADER_SIZE > s->cont_end) {
			s->cont = s->cont_end;
			s->cont_end = 0;
			continue;
		}
		if (have < s->entry + KIMG_FATBIN_ENTRY_HEADER_SIZE)
			return 0;
		uint32_t hs;
		uint64_t size;
		kimg_span_u32(&bytes, s->entry + 4, &hs);
		kimg_span_u64(&bytes, s->entry + 8, &size);
		if (hs < KIMG_FATBIN_ENTRY_HEADER_SIZE || hs > s->cont_end - s->entry || size > s->cont_end - s->entry - hs) {
			s->done = true;
			break;
		}
		uint64_t payload = s->entry + hs;
		s->entry = payload + size;
		if (size > KIMG_SPARSE_PAYLOAD_KEEP) {
			drop->off = payload;
			drop->size = size;
			return 1;
		}
	}
	return 0;
}
