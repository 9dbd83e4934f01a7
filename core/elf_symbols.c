/* SPDX-License-Identifier: Apache-2.0 */
/* Symbol lookup in host ELF files (see elf_symbols.h). The section table
 * and every symbol are read by elf64.c, the reader input_elf.c uses. */
#include "elf_symbols.h"

#include <string.h>

#include "elf64.h"


static bool sym_covers(const struct kimg_elf_sym *s, uint64_t vaddr)
{
	unsigned type = KIMG_ELF_ST_TYPE(s->info);
	if ((type != KIMG_STT_FUNC && type != KIMG_STT_GNU_IFUNC) || s->shndx == KIMG_SHN_UNDEF || s->name == 0)
		return false;
	if (vaddr < s->value)
		return false;
	return s->size ? vaddr - s->value < s->size : vaddr == s->value;
}

/* Tie-break between symbols starting at one address (an alias pair such
 * as a local and a global name): the exported name is the one users know. */
static int binding_rank(const struct kimg_elf_sym *s)
{
	switch (KIMG_ELF_ST_BIND(s->info)) {
	case KIMG_STB_GLOBAL:
		return 3;
	case KIMG_STB_WEAK:
		return 2;
	case KIMG_STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

/* The string table of symbol section h (index i), checked whole: a
 * STRTAB inside the file that ends in NUL, so any name offset below its
 * size is a terminated string. */
static int sym_strtab(const struct kimg_elf *e, uint64_t i, const struct kimg_elf_shdr *h,
		      struct kimg_span *out, struct kimg_error *err)
{
	uint64_t at = kimg_elf_shdr_offset(e, i);
	struct kimg_elf_shdr s;
	if (h->link == 0 || h->link >= e->shnum)
		return kimg_error_set(err, -KIMG_EFORMAT, at + KIMG_SH_LINK_AT, "host ELF: %s links to section %u of %llu",
				      kimg_elf_section_name(e, h), h->link, (unsigned long long)e->shnum);
	s = kimg_elf_shdr(e, h->link);
	at = kimg_elf_shdr_offset(e, h->link);
	if (s.type != KIMG_SHT_STRTAB || s.size == 0)
		return kimg_error_set(err, -KIMG_EFORMAT, at, "host ELF: string table of %s (section %u) is not one",
				      kimg_elf_section_name(e, h), h->link);
	if (!kimg_elf_has_data(e, &s))
		return kimg_error_set(err, -KIMG_ETRUNC, at + KIMG_SH_OFFSET_AT, "host ELF: string table [%llu, +%llu) past the end",
				      (unsigned long long)s.offset, (unsigned long long)s.size);
	*out = kimg_elf_section_bytes(e, &s);
	if (out->data[out->size - 1] != 0)
		return kimg_error_set(err, -KIMG_EFORMAT, s.offset + s.size - 1,
				      "host ELF: string table of %s not NUL-terminated", kimg_elf_section_name(e, h));
	return 0;
}

/* Best covering symbol in one symbol section: 0, -KIMG_ENOTFOUND (err
 * untouched) or an error. */
static int search_section(const struct kimg_elf *e, uint64_t i, const struct kimg_elf_shdr *h,
			  uint64_t vaddr, struct kimg_elf_symbol *out, struct kimg_error *err)
{
	uint64_t at = kimg_elf_shdr_offset(e, i), n;
	struct kimg_span table, strtab = { NULL, 0 };
	struct kimg_elf_sym best = { 0, 0, 0, 0, 0, 0 };
	bool found = false;
	int rc;

	if (h->entsize != KIMG_ELF_SYM_SIZE)
		return kimg_error_set(err, -KIMG_EFORMAT, at + KIMG_SH_ENTSIZE_AT, "host ELF: %s entry size %llu, expected 24",
				      kimg_elf_section_name(e, h), (unsigned long long)h->entsize);
	if (h->size % KIMG_ELF_SYM_SIZE != 0)
		return kimg_error_set(err, -KIMG_EFORMAT, at + KIMG_SH_SIZE_AT, "host ELF: %s size %llu not a multiple of 24",
				      kimg_elf_section_name(e, h), (unsigned long long)h->size);
	n = h->size / KIMG_ELF_SYM_SIZE;
	if (n > KIMG_ELF_SYMBOLS_MAX)
		return kimg_error_set(err, -KIMG_ELIMIT, at + KIMG_SH_SIZE_AT, "host ELF: %s has %llu symbols, limit %llu",
				      kimg_elf_section_name(e, h), (unsigned long long)n,
				      (unsigned long long)KIMG_ELF_SYMBOLS_MAX);
	if (!kimg_elf_has_data(e, h))
		return kimg_error_set(err, -KIMG_ETRUNC, at + KIMG_SH_OFFSET_AT, "host ELF: %s [%llu, +%llu) past the end",
				      kimg_elf_section_name(e, h), (unsigned long long)h->offset,
				      (unsigned long long)h->size);
	rc = sym_strtab(e, i, h, &strtab, err);
	if (rc < 0)
		return rc;
	table = kimg_elf_section_bytes(e, h);
	/* entry 0 is the reserved null symbol (gABI) */
	for (uint64_t j = 1; j < n; j++) {
		struct kimg_elf_sym s;
		kimg_elf_sym_read(&table, j, &s);
		if (!sym_covers(&s, vaddr))
			continue;
		if (s.name >= strtab.size)
			return kimg_error_set(err, -KIMG_EFORMAT, h->offset + j * KIMG_ELF_SYM_SIZE,
					      "host ELF: %s symbol %llu name offset %u outside its string table",
					      kimg_elf_section_name(e, h), (unsigned long long)j, s.name);
		if (strtab.data[s.name] == 0)
			continue; /* an empty name names nothing */
		if (found && (s.value < best.value || (s.value == best.value && binding_rank(&s) <= binding_rank(&best))))
			continue;
		best = s;
		found = true;
	}
	if (!found)
		return -KIMG_ENOTFOUND;
	out->name = (const char *)strtab.data + best.name;
	out->value = best.value;
	out->size = best.size;
	out->offset = vaddr - best.value;
	out->dynamic = h->type == KIMG_SHT_DYNSYM;
	return 0;
}

/* Every section of `type` (normally one); the best match across them. */
static int search_type(const struct kimg_elf *e, uint32_t type, uint64_t vaddr, struct kimg_elf_symbol *out,
		       struct kimg_error *err)
{
	int result = -KIMG_ENOTFOUND;
	for (uint64_t i = 1; i < e->shnum; i++) {
		struct kimg_elf_shdr h = kimg_elf_shdr(e, i);
		struct kimg_elf_symbol cand;
		int rc;
		if (h.type != type)
			continue;
		rc = search_section(e, i, &h, vaddr, &cand, err);
		if (rc == -KIMG_ENOTFOUND)
			continue;
		if (rc < 0)
			return rc;
		if (result == 0 && cand.value <= out->value)
			continue;
		*out = cand;
		result = 0;
	}
	return result;
}

int kimg_elf_symbol_find(struct kimg_span elf, uint64_t vaddr, struct kimg_elf_symbol *out,
			 struct kimg_error *err)
{
	struct kimg_elf e;
	int rc;

	memset(out, 0, sizeof *out);
	if (!kimg_elf_has_magic(elf))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "host ELF: not an ELF file");
	rc = kimg_elf_open(elf, &e, err);
	if (rc < 0)
		return rc;
	rc = search_type(&e, KIMG_SHT_SYMTAB, vaddr, out, err);
	if (rc == -KIMG_ENOTFOUND)
		rc = search_type(&e, KIMG_SHT_DYNSYM, vaddr, out, err);
	if (rc == -KIMG_ENOTFOUND)
		rc = kimg_error_set(err, -KIMG_ENOTFOUND, 0, "host ELF: no function symbol covers 0x%llx",
				    (unsigned long long)vaddr);
	/* A later section of the type may fail after an earlier one matched:
	 * a failure leaves no symbol (found by fuzz_elf_symbols). */
	if (rc < 0)
		memset(out, 0, sizeof *out);
	return rc;
}
