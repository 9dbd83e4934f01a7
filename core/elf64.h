/* SPDX-License-Identifier: Apache-2.0 */
/* The core's one ELF64 reader: every ELF constant kimg uses, the decoding
 * of the file header, section headers, program headers and symbols, the
 * gABI escapes for large counts (extended numbering, docs/format.md §9),
 * overflow-safe table bounds, and the full open of a host file (header,
 * section table and section-name table) that input_elf.c, elf_symbols.c
 * and cuda_libs.c share. The cubin reader (cubin.c) and the extent of
 * in-memory images (extent.c) read their headers through it and keep only
 * their own policy: which field must hold what, and what to say when not.
 *
 * Pure: no globals, no I/O, no allocation; every read goes through
 * core/span.h and is bounds-checked. KIMG_-prefixed so that nothing clashes
 * with the system's <elf.h>, and not named elf.h: with -Icore that name
 * would shadow <elf.h> for the system headers too (<link.h> includes it). */
#ifndef KIMG_ELF64_H
#define KIMG_ELF64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "span.h"

/* ---- constants (System V gABI; CUDA's extensions: docs/format.md §8, §10) ---- */

/* sizes of the ELF64 structures */
#define KIMG_ELF_IDENT_SIZE 16u
#define KIMG_ELF_EHDR_SIZE 64u
#define KIMG_ELF_SHDR_SIZE 64u
#define KIMG_ELF_PHDR_SIZE 56u
#define KIMG_ELF_SYM_SIZE 24u
#define KIMG_ELF_DYN_SIZE 16u
#define KIMG_ELF_PN_XNUM 0xffff     /* e_phnum escape: the count is in section 0 */

/* e_ident */
#define KIMG_ELF_MAGIC "\177ELF"
#define KIMG_ELF_MAGIC_SIZE 4u
#define KIMG_EI_CLASS 4u
#define KIMG_EI_DATA 5u
#define KIMG_EI_OSABI 7u
#define KIMG_EI_ABIVERSION 8u
#define KIMG_ELFCLASS64 2
#define KIMG_ELFDATA2LSB 1

/* e_type, e_machine */
#define KIMG_ET_REL 1
#define KIMG_ET_EXEC 2
#define KIMG_ET_DYN 3
#define KIMG_EM_CUDA 190u

/* file offsets of the ELF64 header fields (where errors point) */
#define KIMG_EH_TYPE_AT 0x10u
#define KIMG_EH_MACHINE_AT 0x12u
#define KIMG_EH_PHOFF_AT 0x20u
#define KIMG_EH_SHOFF_AT 0x28u
#define KIMG_EH_FLAGS_AT 0x30u
#define KIMG_EH_PHENTSIZE_AT 0x36u
#define KIMG_EH_PHNUM_AT 0x38u
#define KIMG_EH_SHENTSIZE_AT 0x3Au
#define KIMG_EH_SHNUM_AT 0x3Cu
#define KIMG_EH_SHSTRNDX_AT 0x3Eu

/* offsets inside one section header, program header and symbol */
#define KIMG_SH_TYPE_AT 0x04u
#define KIMG_SH_OFFSET_AT 0x18u
#define KIMG_SH_SIZE_AT 0x20u
#define KIMG_SH_LINK_AT 0x28u
#define KIMG_SH_INFO_AT 0x2Cu
#define KIMG_SH_ENTSIZE_AT 0x38u
#define KIMG_PH_OFFSET_AT 0x08u

/* section indices, types and flags */
#define KIMG_SHN_UNDEF 0u
#define KIMG_SHN_XINDEX 0xffffu
#define KIMG_SHT_NULL 0u
#define KIMG_SHT_PROGBITS 1u
#define KIMG_SHT_SYMTAB 2u
#define KIMG_SHT_STRTAB 3u
#define KIMG_SHT_DYNAMIC 6u
#define KIMG_SHT_NOBITS 8u
#define KIMG_SHT_DYNSYM 11u
#define KIMG_SHT_GNU_VERDEF 0x6ffffffdu
#define KIMG_SHF_ALLOC 0x2u
#define KIMG_SHF_EXECINSTR 0x4u

/* symbols: st_info is bind << 4 | type */
#define KIMG_ELF_ST_TYPE(info) ((unsigned)(info) & 0xfu)
#define KIMG_ELF_ST_BIND(info) ((unsigned)(info) >> 4)
#define KIMG_STT_FUNC 2u
#define KIMG_STT_GNU_IFUNC 10u
#define KIMG_STB_LOCAL 0u
#define KIMG_STB_GLOBAL 1u
#define KIMG_STB_WEAK 2u

/* dynamic section tags */
#define KIMG_DT_NULL 0
#define KIMG_DT_SONAME 14

/* CUDA's ELF extensions (docs/format.md §10): the two ABI generations of
 * e_ident[EI_OSABI] / [EI_ABIVERSION], the "a" (accelerator) flag of ABI
 * V1, and the kernel-entry mark in st_other */
#define KIMG_ELFOSABI_CUDA_V1 0x33
#define KIMG_ELFOSABI_CUDA_V2 0x41
#define KIMG_ELFABIVERSION_CUDA_V1 7
#define KIMG_ELFABIVERSION_CUDA_V2 8
#define KIMG_EF_CUDA_ACCELERATORS_V1 0x800
#define KIMG_STO_CUDA_ENTRY 0x10

/* ---- decoded structures (only the fields kimg reads) ---- */

struct kimg_elf_ehdr {
	uint8_t ident[KIMG_ELF_IDENT_SIZE];
	uint16_t type, machine;
	uint64_t phoff, shoff;
	uint32_t flags;
	uint16_t phentsize, phnum, shentsize, shnum, shstrndx;
};

struct kimg_elf_shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t entsize;
};

struct kimg_elf_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, filesz, memsz;
};

struct kimg_elf_sym {
	uint32_t name;
	uint8_t info, other;
	uint16_t shndx;
	uint64_t value, size;
};

/* ---- decoding: each read false (and the output zeroed) when outside `in` ---- */

/* The first four bytes are the ELF magic. */
bool kimg_elf_has_magic(struct kimg_span in);

/* An ELF file this tool cannot read: 32-bit or big-endian (x86 objects
 * valgrind ships, other machines' files). Walks of directories, wheels
 * and archives skip them as they skip other non-device files; named on
 * the command line they are an error (kimg_elf_open says which). */
bool kimg_elf_is_foreign(struct kimg_span in);

/* The 64-byte ELF64 little-endian header; false when `in` is shorter.
 * Nothing is validated: the class and byte order are in ident. */
bool kimg_elf_ehdr_read(const struct kimg_span *in, struct kimg_elf_ehdr *eh);

/* Section header i of the table at shoff, program header i of the table
 * at phoff (entries of the ELF64 sizes), symbol j of a symbol table's bytes. */
bool kimg_elf_phdr_read(const struct kimg_span *in, uint64_t phoff, uint64_t i, struct kimg_elf_phdr *ph);
bool kimg_elf_sym_read(const struct kimg_span *table, uint64_t j, struct kimg_elf_sym *sym);
/* Entry j of a dynamic section's bytes (Elf64_Dyn: d_tag, d_val). */
bool kimg_elf_dyn_read(const struct kimg_span *table, uint64_t j, uint64_t *tag, uint64_t *val);

/* File offset of entry i of a table at `table`: for error offsets only
 * (wraps silently for absurd inputs; reads go through the checks above). */
static inline uint64_t kimg_elf_entry_offset(uint64_t table, uint64_t i, uint64_t entsize)
{
	return table + i * entsize;
}

/* (inline: input_elf.c reads a section header per wrapper) */
static inline bool kimg_elf_shdr_read(const struct kimg_span *in, uint64_t shoff, uint64_t i,
				      struct kimg_elf_shdr *sh)
{
	uint64_t at = kimg_elf_entry_offset(shoff, i, KIMG_ELF_SHDR_SIZE);
	if (shoff > in->size || i >= (in->size - shoff) / KIMG_ELF_SHDR_SIZE) {
		memset(sh, 0, sizeof *sh);
		return false;
	}
	kimg_span_u32(in, at + 0x00, &sh->name);
	kimg_span_u32(in, at + KIMG_SH_TYPE_AT, &sh->type);
	kimg_span_u64(in, at + 0x08, &sh->flags);
	kimg_span_u64(in, at + 0x10, &sh->addr);
	kimg_span_u64(in, at + KIMG_SH_OFFSET_AT, &sh->offset);
	kimg_span_u64(in, at + KIMG_SH_SIZE_AT, &sh->size);
	kimg_span_u32(in, at + KIMG_SH_LINK_AT, &sh->link);
	kimg_span_u32(in, at + KIMG_SH_INFO_AT, &sh->info);
	kimg_span_u64(in, at + KIMG_SH_ENTSIZE_AT, &sh->entsize);
	return true;
}

/* `count` entries of `entsize` bytes at `off` lie inside `in`; no product
 * or sum can overflow (the count is divided, never multiplied). */
bool kimg_elf_table_fits(const struct kimg_span *in, uint64_t off, uint64_t count, uint64_t entsize);

/* Extended numbering (gABI): e_shnum 0 means the section count is section
 * 0's sh_size, e_shstrndx SHN_XINDEX that the name table's index is its
 * sh_link, e_phnum PN_XNUM that the segment count is its sh_info.
 * needs_section0: the section count or name-table index is there. */
bool kimg_elf_needs_section0(const struct kimg_elf_ehdr *eh);
uint64_t kimg_elf_shnum(const struct kimg_elf_ehdr *eh, const struct kimg_elf_shdr *sh0);
uint64_t kimg_elf_shstrndx(const struct kimg_elf_ehdr *eh, const struct kimg_elf_shdr *sh0);
uint64_t kimg_elf_phnum(const struct kimg_elf_ehdr *eh, const struct kimg_elf_shdr *sh0);

/* The NUL-terminated string at `off` of a string table's bytes, or NULL
 * when it does not end inside them; *len (may be NULL) its length. */
const char *kimg_elf_string(struct kimg_span strtab, uint64_t off, size_t *len);

/* ---- a host ELF file opened whole ---- */

struct kimg_elf {
	struct kimg_span in;
	uint64_t shoff, shnum;  /* shnum 0: the file has no section headers */
	struct kimg_span names; /* section-name table, ends in NUL */
};

/* Open `in` (whose ELF magic the caller has seen). Validates, in order
 * (docs/design.md §5): the class and byte order, the ELF header, the
 * section header table (extended numbering), the section-name table and
 * every section's name offset; after it succeeds the accessors below
 * never read outside the table. Returns 0, or -KIMG_ETRUNC,
 * -KIMG_EFORMAT, -KIMG_ENOTSUP (32-bit, big-endian) with err naming the
 * field; offsets in err are relative to `in`. */
int kimg_elf_open(struct kimg_span in, struct kimg_elf *e, struct kimg_error *err);

/* File offset of section header i (for error offsets). */
static inline uint64_t kimg_elf_shdr_offset(const struct kimg_elf *e, uint64_t i)
{
	return kimg_elf_entry_offset(e->shoff, i, KIMG_ELF_SHDR_SIZE);
}

/* Section header i < e->shnum. */
static inline struct kimg_elf_shdr kimg_elf_shdr(const struct kimg_elf *e, uint64_t i)
{
	struct kimg_elf_shdr h;
	kimg_elf_shdr_read(&e->in, e->shoff, i, &h);
	return h;
}

/* Names were checked to start inside the table, which ends in NUL. */
static inline const char *kimg_elf_section_name(const struct kimg_elf *e, const struct kimg_elf_shdr *h)
{
	return (const char *)e->names.data + h->name;
}

/* The section occupies bytes of the file, all inside it. */
static inline bool kimg_elf_has_data(const struct kimg_elf *e, const struct kimg_elf_shdr *h)
{
	return h->type != KIMG_SHT_NOBITS && kimg_span_has(&e->in, h->offset, h->size);
}

/* The bytes of section h (empty when it has none inside the file). */
static inline struct kimg_span kimg_elf_section_bytes(const struct kimg_elf *e, const struct kimg_elf_shdr *h)
{
	return kimg_elf_has_data(e, h) ? kimg_span_sub(&e->in, h->offset, h->size) : kimg_span_make(NULL, 0);
}

#endif
