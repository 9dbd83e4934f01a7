/* SPDX-License-Identifier: Apache-2.0 */
/* The core's ELF64 reader (see elf64.h). */
#include "elf64.h"

#include <string.h>


bool kimg_elf_has_magic(struct kimg_span in)
{
	const uint8_t *m = kimg_span_at(&in, 0, KIMG_ELF_MAGIC_SIZE);
	return m && memcmp(m, KIMG_ELF_MAGIC, KIMG_ELF_MAGIC_SIZE) == 0;
}

bool kimg_elf_is_foreign(struct kimg_span in)
{
	const uint8_t *id = kimg_span_at(&in, 0, KIMG_EI_DATA + 1);
	return id && kimg_elf_has_magic(in) && (id[KIMG_EI_CLASS] != KIMG_ELFCLASS64 || id[KIMG_EI_DATA] != KIMG_ELFDATA2LSB);
}

bool kimg_elf_ehdr_read(const struct kimg_span *in, struct kimg_elf_ehdr *eh)
{
	const uint8_t *id = kimg_span_at(in, 0, KIMG_ELF_EHDR_SIZE);
	memset(eh, 0, sizeof *eh);
	if (!id)
		return false;
	memcpy(eh->ident, id, KIMG_ELF_IDENT_SIZE);
	kimg_span_u16(in, KIMG_EH_TYPE_AT, &eh->type);
	kimg_span_u16(in, KIMG_EH_MACHINE_AT, &eh->machine);
	kimg_span_u64(in, KIMG_EH_PHOFF_AT, &eh->phoff);
	kimg_span_u64(in, KIMG_EH_SHOFF_AT, &eh->shoff);
	kimg_span_u32(in, KIMG_EH_FLAGS_AT, &eh->flags);
	kimg_span_u16(in, KIMG_EH_PHENTSIZE_AT, &eh->phentsize);
	kimg_span_u16(in, KIMG_EH_PHNUM_AT, &eh->phnum);
	kimg_span_u16(in, KIMG_EH_SHENTSIZE_AT, &eh->shentsize);
	kimg_span_u16(in, KIMG_EH_SHNUM_AT, &eh->shnum);
	kimg_span_u16(in, KIMG_EH_SHSTRNDX_AT, &eh->shstrndx);
	return true;
}

bool kimg_elf_table_fits(const struct kimg_span *in, uint64_t off, uint64_t count, uint64_t entsize)
{
	return entsize != 0 && off <= in->size && count <= (in->size - off) / entsize;
}

bool kimg_elf_phdr_read(const struct kimg_span *in, uint64_t phoff, uint64_t i, struct kimg_elf_phdr *ph)
{
	uint64_t at = kimg_elf_entry_offset(phoff, i, KIMG_ELF_PHDR_SIZE);
	memset(ph, 0, sizeof *ph);
	if (phoff > in->size || i >= (in->size - phoff) / KIMG_ELF_PHDR_SIZE)
		return false;
	kimg_span_u32(in, at + 0x00, &ph->type);
	kimg_span_u32(in, at + 0x04, &ph->flags);
	kimg_span_u64(in, at + 0x08, &ph->offset);
	kimg_span_u64(in, at + 0x10, &ph->vaddr);
	kimg_span_u64(in, at + 0x20, &ph->filesz);
	kimg_span_u64(in, at + 0x28, &ph->memsz);
	return true;
}

bool kimg_elf_sym_read(const struct kimg_span *table, uint64_t j, struct kimg_elf_sym *sym)
{
	uint64_t at = j * KIMG_ELF_SYM_SIZE;
	const uint8_t *p;
	memset(sym, 0, sizeof *sym);
	if (j >= table->size / KIMG_ELF_SYM_SIZE)
		return false;
	p = kimg_span_at(table, at, KIMG_ELF_SYM_SIZE);
	kimg_span_u32(table, at + 0, &sym->name);
	sym->info = p[4];
	sym->other = p[5];
	kimg_span_u16(table, at + 6, &sym->shndx);
	kimg_span_u64(table, at + 8, &sym->value);
	kimg_span_u64(table, at + 16, &sym->size);
	return true;
}

bool kimg_elf_dyn_read(const struct kimg_span *table, uint64_t j, uint64_t *tag, uint64_t *val)
{
	bool ok = j < table->size / KIMG_ELF_DYN_SIZE;
	*tag = *val = 0;
	if (ok) {
		kimg_span_u64(table, j * KIMG_ELF_DYN_SIZE, tag);
		kimg_span_u64(table, j * KIMG_ELF_DYN_SIZE + 8, val);
	}
	return ok;
}

bool kimg_elf_needs_section0(const struct kimg_elf_ehdr *eh)
{
	return eh->shnum == 0 || eh->shstrndx == KIMG_SHN_XINDEX;
}

uint64_t kimg_elf_shnum(const struct kimg_elf_ehdr *eh, const struct kimg_elf_shdr *sh0)
{
	return eh->shnum ? eh->shnum : sh0->size;
}

uint64_t kimg_elf_shstrndx(const struct kimg_elf_ehdr *eh, const struct kimg_elf_shdr *sh0)
{
	return eh->shstrndx == KIMG_SHN_XINDEX ? sh0->link : eh->shstrndx;
}

uint64_t kimg_elf_phnum(const struct kimg_elf_ehdr *eh, const struct kimg_elf_shdr *sh0)
{
	return eh->phnum == KIMG_ELF_PN_XNUM ? sh0->info : eh->phnum;
}

const char *kimg_elf_string(struct kimg_span strtab, uint64_t off, size_t *len)
{
	const uint8_t *s = off < strtab.size ? strtab.data + off : NULL;
	const uint8_t *nul = s ? memchr(s, 0, (size_t)(strtab.size - off)) : NULL;
	if (len)
		*len = nul ? (size_t)(nul - s) : 0;
	return nul ? (const char *)s : NULL;
}

int kimg_elf_open(struct kimg_span in, struct kimg_elf *e, struct kimg_error *err)
{
	const uint8_t *ident = kimg_span_at(&in, 0, KIMG_EI_DATA + 1);
	struct kimg_elf_ehdr eh;
	struct kimg_elf_shdr sh0, strtab;
	uint64_t shstrndx;

	e->in = in;
	e->shoff = e->shnum = 0;
	e->names = kimg_span_make(NULL, 0);
	/* Class and byte order first: a 32-bit header is shorter than 64 bytes. */
	if (ident && ident[KIMG_EI_CLASS] != KIMG_ELFCLASS64)
		return kimg_error_set(err, -KIMG_ENOTSUP, KIMG_EI_CLASS,
				      "32-bit ELF file (class %u): kimg reads 64-bit little-endian ELF only",
				      ident[KIMG_EI_CLASS]);
	if (ident && ident[KIMG_EI_DATA] != KIMG_ELFDATA2LSB)
		return kimg_error_set(err, -KIMG_ENOTSUP, KIMG_EI_DATA,
				      "big-endian ELF file: kimg reads 64-bit little-endian ELF only");
	if (!kimg_elf_ehdr_read(&in, &eh))
		return kimg_error_set(err, -KIMG_ETRUNC, 0, "host ELF: %llu bytes, shorter than the ELF header",
				      (unsigned long long)in.size);
	if (eh.shoff == 0)
		return 0; /* no section headers: nothing to find by name */
	if (eh.shentsize != KIMG_ELF_SHDR_SIZE)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_SHENTSIZE_AT, "host ELF: e_shentsize %u, expected 64",
				      eh.shentsize);
	/* Section 0 always: it holds the counts that overflow 16 bits
	 * (large cubins use extended numbering, §9; host files may too). */
	if (!kimg_elf_shdr_read(&in, eh.shoff, 0, &sh0))
		return kimg_error_set(err, -KIMG_ETRUNC, KIMG_EH_SHOFF_AT, "host ELF: section headers at %llu past the end",
				      (unsigned long long)eh.shoff);
	e->shoff = eh.shoff;
	e->shnum = kimg_elf_shnum(&eh, &sh0);
	shstrndx = kimg_elf_shstrndx(&eh, &sh0);
	if (!kimg_elf_table_fits(&in, e->shoff, e->shnum, KIMG_ELF_SHDR_SIZE))
		return kimg_error_set(err, -KIMG_ETRUNC, e->shoff, "host ELF: %llu section headers pass the end",
				      (unsigned long long)e->shnum);
	if (shstrndx == 0 || shstrndx >= e->shnum)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_SHSTRNDX_AT,
				      "host ELF: section-name table index %llu of %llu", (unsigned long long)shstrndx,
				      (unsigned long long)e->shnum);
	strtab = kimg_elf_shdr(e, shstrndx);
	if (strtab.type == KIMG_SHT_NOBITS || strtab.size == 0)
		return kimg_error_set(err, -KIMG_EFORMAT, kimg_elf_shdr_offset(e, shstrndx),
				      "host ELF: section-name table has no contents");
	if (!kimg_elf_has_data(e, &strtab))
		return kimg_error_set(err, -KIMG_ETRUNC, kimg_elf_shdr_offset(e, shstrndx),
				      "host ELF: section-name table [%llu, +%llu) past the end",
				      (unsigned long long)strtab.offset, (unsigned long long)strtab.size);
	e->names = kimg_span_sub(&in, strtab.offset, strtab.size);
	if (e->names.data[e->names.size - 1] != 0)
		return kimg_error_set(err, -KIMG_EFORMAT, strtab.offset,
				      "host ELF: section-name table not NUL-terminated");
	for (uint64_t i = 0; i < e->shnum; i++) {
		struct kimg_elf_shdr h = kimg_elf_shdr(e, i);
		if (h.name >= e->names.size)
			return kimg_error_set(err, -KIMG_EFORMAT, kimg_elf_shdr_offset(e, i),
					      "host ELF: section %llu name offset %u outside the name table",
					      (unsigned long long)i, h.name);
	}
	return 0;
}
