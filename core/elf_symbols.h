/* SPDX-License-Identifier: Apache-2.0 */
/* Function names for addresses in a host ELF file, from its symbol tables.
 *
 * Why: dladdr sees only dynamic symbols, so a frame in a program built
 * without -rdynamic (main, static functions) prints as "?? (prog+0x8e4d)"
 * (seen on the H200 machine, where libunwind is absent). .symtab has those
 * names; this reads it from the file's bytes. Pure: no I/O, no allocation,
 * a linear scan per lookup (cold path: one report's stack). */
#ifndef KIMG_ELF_SYMBOLS_H
#define KIMG_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "span.h"

/* Symbol tables larger than this are refused (-KIMG_ELIMIT): a scan per
 * frame must stay bounded in a process that is already failing.
 * libtorch_cuda.so's .dynsym has ~10^5 entries; 2^24 is far above any
 * real table (384 MiB of Elf64_Sym). */
#define KIMG_ELF_SYMBOLS_MAX ((uint64_t)1 << 24)

struct kimg_elf_symbol {
	const char *name;  /* NUL-terminated, inside the ELF bytes (valid while they are) */
	uint64_t value;    /* st_value: the function's first address */
	uint64_t size;     /* st_size */
	uint64_t offset;   /* vaddr - value */
	bool dynamic;      /* found in .dynsym (no covering symbol in .symtab) */
};

/* The STT_FUNC (or STT_GNU_IFUNC) symbol of `elf` covering `vaddr`, an
 * address as the file's program headers lay it out (for a loaded object:
 * pc - dlpi_addr, the link map's l_addr). .symtab is searched first, then
 * .dynsym. A symbol covers vaddr when value <= vaddr < value + size, or
 * when its size is 0 and value == vaddr. Among several covering symbols
 * the one starting last wins (the innermost), then by binding GLOBAL >
 * WEAK > LOCAL, then the first in the table. Undefined symbols and those
 * with an empty name are skipped. Meaningless for relocatable (.o) files, whose
 * values are section-relative.
 *
 * Returns 0 and fills *out; -KIMG_ENOTFOUND when no symbol covers vaddr
 * (stripped file, address outside any function, no section headers);
 * -KIMG_EFORMAT (not an ELF file, a table's entry size, link or string
 * table does not hold, a covering symbol's name outside its string table), -KIMG_ETRUNC (a
 * table or header past the end), -KIMG_ENOTSUP (32-bit or big-endian),
 * -KIMG_ELIMIT (a table over KIMG_ELF_SYMBOLS_MAX entries); err (may be
 * NULL) names the field and its file offset. Thread-safe. */
int kimg_elf_symbol_find(struct kimg_span elf, uint64_t vaddr, struct kimg_elf_symbol *out,
			 struct kimg_error *err);

#endif
