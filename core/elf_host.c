/* Host ELF64 header and section tables (see elf_host.h). */
#include "elf_defs.h"
#include "elf_host.h"

#include <string.h>


bool kimg_elf_is_foreign(struct kimg_span in)
{
	const uint8_t *id = kimg_span_at(&in, 0, 6);
	return id && memcmp(id, "\177ELF", 4) == 0 && (id[4] != 2 || id[5] != 1);
}

int kimg_host_elf_open(struct kimg_span in, struct kimg_host_elf *e, struct kimg_error *err)
{
	const uint8_t *id = kimg_span_at(&in, 0, KIMG_ELF_EHDR_SIZE);
	uint16_t shentsize, shnum16, shstrndx16;
	uint64_t shstrndx;
	struct kimg_elf_shdr sh0, strtab;

	e->in = in;
	e->shoff = e->shnum = 0;
	e->names = kimg_span_make(NULL, 0);
	const uint8_t *ident = kimg_span_at(&in, 0, 6);
	/* Class and byte order first: a 32-bit header is shorter than 64 bytes. */
	if (ident && ident[4] != 2)
		return kimg_error_set(err, -KIMG_ENOTSUP, 4,
				      "32-bit ELF file (class %u): kimg reads 64-bit little-endian ELF only", ident[4]);
	if (ident && ident[5] != 1)
		return kimg_error_set(err, -KIMG_ENOTSUP, 5,
				      "big-endian ELF file: kimg reads 64-bit little-endian ELF only");
	if (!id)
		return kimg_error_set(err, -KIMG_ETRUNC, 0, "host ELF: %llu bytes, shorter than the ELF header",
				      (unsigned long long)in.size);
	kimg_span_u64(&in, 0x28, &e->shoff);
	kimg_span_u16(&in, 0x3A, &shentsize);
	kimg_span_u16(&in, 0x3C, &shnum16);
	kimg_span_u16(&in, 0x3E, &shstrndx16);
	if (e->shoff == 0)
		return 0; /* no section headers: nothing to find by name */
	if (shentsize != KIMG_ELF_SHDR_SIZE)
		return kimg_error_set(err, -KIMG_EFORMAT, 0x3A, "host ELF: e_shentsize %u, expected 64", shentsize);
	if (!kimg_span_has(&in, e->shoff, KIMG_ELF_SHDR_SIZE))
		return kimg_error_set(err, -KIMG_ETRUNC, 0x28, "host ELF: section headers at %llu past the end",
				      (unsigned long long)e->shoff);
	e->shnum = 1;
	sh0 = kimg_host_elf_shdr(e, 0);
	/* Extended numbering (gABI): counts that overflow 16 bits live in
	 * section 0. Large cubins use it (§9); host files may too. */
	e->shnum = shnum16 ? shnum16 : sh0.size;
	shstrndx = shstrndx16 == KIMG_SHN_XINDEX ? sh0.link : shstrndx16;
	if (e->shnum > (in.size - e->shoff) / KIMG_ELF_SHDR_SIZE)
		return kimg_error_set(err, -KIMG_ETRUNC, e->shoff, "host ELF: %llu section headers pass the end",
				      (unsigned long long)e->shnum);
	if (shstrndx == 0 || shstrndx >= e->shnum)
		return kimg_error_set(err, -KIMG_EFORMAT, 0x3E, "host ELF: section-name table index %llu of %llu",
				      (unsigned long long)shstrndx, (unsigned long long)e->shnum);
	strtab = kimg_host_elf_shdr(e, shstrndx);
	if (strtab.type == KIMG_SHT_NOBITS || strtab.size == 0)
		return kimg_error_set(err, -KIMG_EFORMAT, e->shoff + shstrndx * KIMG_ELF_SHDR_SIZE,
				      "host ELF: section-name table has no contents");
	if (!kimg_host_elf_has_data(e, &strtab))
		return kimg_error_set(err, -KIMG_ETRUNC, e->shoff + shstrndx * KIMG_ELF_SHDR_SIZE,
				      "host ELF: section-name table [%llu, +%llu) past the end",
				      (unsigned long long)strtab.offset, (unsigned long long)strtab.size);
	e->names = kimg_span_sub(&in, strtab.offset, strtab.size);
	if (e->names.data[e->names.size - 1] != 0)
		return kimg_error_set(err, -KIMG_EFORMAT, strtab.offset,
				      "host ELF: section-name table not NUL-terminated");
	for (uint64_t i = 0; i < e->shnum; i++) {
		struct kimg_elf_shdr h = kimg_host_elf_shdr(e, i);
		if (h.name >= e->names.size)
			return kimg_error_set(err, -KIMG_EFORMAT, e->shoff + i * KIMG_ELF_SHDR_SIZE,
					      "host ELF: section %llu name offset %u outside the name table",
					      (unsigned long long)i, h.name);
	}
	return 0;
}
