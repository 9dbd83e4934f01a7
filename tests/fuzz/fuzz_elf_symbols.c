/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for core/elf_symbols.c (and the shared section reader,
 * core/elf64.c): look up an address taken from the input, then check
 * the answer's contract (elf_symbols.h): the name is a C string inside the
 * input, the symbol covers the address, a second lookup at the start of a
 * .symtab answer finds a symbol starting there, and every failure carries
 * its code. The core
 * never prints, so nothing needs silencing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool known_error(int rc)
{
	return rc == -KIMG_EFORMAT || rc == -KIMG_ETRUNC || rc == -KIMG_ENOTSUP || rc == -KIMG_ELIMIT ||
	       rc == -KIMG_ENOTFOUND;
}

static void check(struct kimg_span s, uint64_t vaddr, int depth)
{
	struct kimg_elf_symbol sym;
	struct kimg_error err = { 0, 0, "" };
	int rc = kimg_elf_symbol_find(s, vaddr, &sym, &err);
	if (rc < 0) {
		if (!known_error(rc) || err.code != rc || sym.name != NULL)
			abort();
		return;
	}
	if (rc != 0 || !sym.name)
		abort();
	/* the name lies inside the input and ends there */
	if ((const uint8_t *)sym.name < s.data || (const uint8_t *)sym.name >= s.data + s.size ||
	    !memchr(sym.name, 0, (size_t)(s.data + s.size - (const uint8_t *)sym.name)) || sym.name[0] == '\0')
		abort();
	if (sym.value > vaddr || sym.offset != vaddr - sym.value)
		abort();
	if (sym.size ? sym.offset >= sym.size : sym.offset != 0)
		abort();
	/* from .symtab, the symbol starting last wins, so at its own start it
	 * wins again (a .dynsym answer may lose there to a .symtab symbol).
	 * Or that start is also covered by another symbol whose name lies
	 * outside the string table, which is -KIMG_EFORMAT (names are checked
	 * only for covering symbols): found by this target on the base code. */
	if (depth == 0 && !sym.dynamic) {
		struct kimg_elf_symbol again;
		int rc2 = kimg_elf_symbol_find(s, sym.value, &again, NULL);
		if (rc2 == 0 ? again.value != sym.value : rc2 != -KIMG_EFORMAT)
			abort();
		check(s, sym.value + (sym.size ? sym.size - 1 : 0), 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kimg_span s = kimg_span_make(data, size);
	uint64_t vaddr = 0;
	/* the last 8 bytes name the address: mutations reach it without
	 * disturbing the ELF header; real files end in section headers */
	if (size >= 8)
		memcpy(&vaddr, data + size - 8, 8);
	check(s, vaddr, 0);
	check(s, 0x1010, 0); /* inside the synthetic files of test_elf_symbols.c */
	return 0;
}
