/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for core/elf64.c, the core's one ELF64 reader: open the
 * input as a host ELF file, then read everything the accessors reach and
 * check the reader's contract (elf64.h): after a successful open every
 * section header index below shnum reads, every section name is a C string
 * inside the name table, and section bytes lie inside the input; the raw
 * decoders never read outside what they are given (ASan) and fail past the
 * end; every failure carries its code. The core never prints. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool inside(struct kimg_span outer, struct kimg_span inner)
{
	return inner.size == 0 ||
	       (inner.data >= outer.data && inner.size <= outer.size && (uint64_t)(inner.data - outer.data) <= outer.size - inner.size);
}

static void walk_symbols(const struct kimg_elf *e, const struct kimg_elf_shdr *h)
{
	struct kimg_span table = kimg_elf_section_bytes(e, h), strtab = { NULL, 0 };
	struct kimg_elf_sym sym;
	if (h->link < e->shnum) {
		struct kimg_elf_shdr s = kimg_elf_shdr(e, h->link);
		strtab = kimg_elf_section_bytes(e, &s);
	}
	for (uint64_t j = 0; j < 4096 && kimg_elf_sym_read(&table, j, &sym); j++) {
		size_t len;
		const char *name = kimg_elf_string(strtab, sym.name, &len);
		if (name && ((const uint8_t *)name < strtab.data || sym.name + len >= strtab.size || name[len] != '\0'))
			abort();
	}
	if (kimg_elf_sym_read(&table, table.size / KIMG_ELF_SYM_SIZE, &sym) || sym.value != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kimg_span in = kimg_span_make(data, size);
	struct kimg_elf_ehdr eh;
	struct kimg_elf e;
	struct kimg_error err = { 0, 0, "" };

	if (kimg_elf_ehdr_read(&in, &eh) != (size >= KIMG_ELF_EHDR_SIZE))
		abort();
	if (kimg_elf_is_foreign(in) && !kimg_elf_has_magic(in))
		abort();
	/* the raw decoders, on whatever the header claims */
	struct kimg_elf_shdr sh0;
	bool have0 = kimg_elf_shdr_read(&in, eh.shoff, 0, &sh0);
	if (have0 != kimg_elf_table_fits(&in, eh.shoff, 1, KIMG_ELF_SHDR_SIZE))
		abort();
	uint64_t phnum = kimg_elf_phnum(&eh, &sh0);
	struct kimg_elf_phdr ph;
	for (uint64_t i = 0; i < phnum && i < 4096; i++)
		if (kimg_elf_phdr_read(&in, eh.phoff, i, &ph) != kimg_elf_table_fits(&in, eh.phoff, i + 1, KIMG_ELF_PHDR_SIZE))
			abort();

	int rc = kimg_elf_open(in, &e, &err);
	if (rc < 0) {
		if ((rc != -KIMG_EFORMAT && rc != -KIMG_ETRUNC && rc != -KIMG_ENOTSUP) || err.code != rc || !err.what[0])
			abort();
		return 0;
	}
	if (rc != 0 || (e.shnum && !kimg_elf_table_fits(&in, e.shoff, e.shnum, KIMG_ELF_SHDR_SIZE)))
		abort();
	if (e.shnum && (!inside(in, e.names) || e.names.size == 0 || e.names.data[e.names.size - 1] != 0))
		abort();
	for (uint64_t i = 0; i < e.shnum && i < 65536; i++) {
		struct kimg_elf_shdr h, raw;
		h = kimg_elf_shdr(&e, i);
		if (!kimg_elf_shdr_read(&in, e.shoff, i, &raw) || memcmp(&h, &raw, sizeof h) != 0)
			abort();
		const char *name = kimg_elf_section_name(&e, &h);
		if ((const uint8_t *)name < e.names.data || h.name >= e.names.size || strlen(name) >= e.names.size - h.name)
			abort();
		struct kimg_span bytes = kimg_elf_section_bytes(&e, &h);
		if (!inside(in, bytes) || (kimg_elf_has_data(&e, &h) && bytes.size != h.size))
			abort();
		if (h.type == KIMG_SHT_SYMTAB || h.type == KIMG_SHT_DYNSYM)
			walk_symbols(&e, &h);
		if (h.type == KIMG_SHT_DYNAMIC) {
			uint64_t tag, val;
			for (uint64_t j = 0; j < 4096 && kimg_elf_dyn_read(&bytes, j, &tag, &val); j++)
				;
		}
	}
	if (e.shnum && kimg_elf_shdr_read(&in, e.shoff, UINT64_MAX, &sh0))
		abort();
	return 0;
}
