/* SPDX-License-Identifier: Apache-2.0 */
/* Extent of an in-memory device image whose length nobody passed us
 * (cuModuleLoadData, cuLibraryLoadData, __cudaRegisterFatBinary take bare
 * pointers). The object's own headers bound it; `limit` bounds how far we
 * are willing to believe them. Reads stay inside what has been established. */
#include "elf64.h"
#include "fatbin.h"

#define WRAPPER_SIZE 24u

static void grow(uint64_t *end, uint64_t off, uint64_t len, bool *overflow)
{
	if (len > UINT64_MAX - off)
		*overflow = true;
	else if (off + len > *end)
		*end = off + len;
}

/* ELF: the furthest of the header, the section and program header tables,
 * and every section / segment with file contents. */
static int elf_extent(const struct kimg_span *s, uint64_t *size, struct kimg_error *err)
{
	struct kimg_elf_ehdr eh;
	uint64_t end = KIMG_ELF_EHDR_SIZE, shnum;
	bool overflow = false;

	if (!kimg_elf_ehdr_read(s, &eh))
		return kimg_error_set(err, -KIMG_ETRUNC, 0, "ELF image: limit ends inside the ELF header");
	if (eh.ident[KIMG_EI_CLASS] != KIMG_ELFCLASS64 || eh.ident[KIMG_EI_DATA] != KIMG_ELFDATA2LSB)
		return kimg_error_set(err, -KIMG_ENOTSUP, 0, "ELF image: class %u / data %u, only ELF64 little-endian",
				      eh.ident[KIMG_EI_CLASS], eh.ident[KIMG_EI_DATA]);

	shnum = eh.shnum;
	if (eh.shoff != 0) {
		if (eh.shentsize != KIMG_ELF_SHDR_SIZE)
			return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_SHENTSIZE_AT, "ELF image: e_shentsize %u",
					      eh.shentsize);
		/* Extended numbering: e_shnum 0 means the count is in section 0. */
		if (eh.shnum == 0) {
			struct kimg_elf_shdr sh0;
			if (!kimg_elf_shdr_read(s, eh.shoff, 0, &sh0))
				return kimg_error_set(err, -KIMG_ETRUNC, eh.shoff, "ELF image: section 0 past the limit");
			shnum = kimg_elf_shnum(&eh, &sh0);
		}
		if (!kimg_elf_table_fits(s, eh.shoff, shnum, KIMG_ELF_SHDR_SIZE))
			return kimg_error_set(err, -KIMG_ETRUNC, eh.shoff, "ELF image: %llu section headers pass the limit",
					      (unsigned long long)shnum);
		grow(&end, eh.shoff, shnum * KIMG_ELF_SHDR_SIZE, &overflow);
		for (uint64_t i = 1; i < shnum; i++) {
			struct kimg_elf_shdr sh;
			kimg_elf_shdr_read(s, eh.shoff, i, &sh);
			if (sh.type != KIMG_SHT_NOBITS)
				grow(&end, sh.offset, sh.size, &overflow);
		}
	}
	if (eh.phoff != 0 && eh.phnum != 0) {
		if (eh.phentsize != KIMG_ELF_PHDR_SIZE)
			return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_PHENTSIZE_AT, "ELF image: e_phentsize %u",
					      eh.phentsize);
		if (!kimg_elf_table_fits(s, eh.phoff, eh.phnum, KIMG_ELF_PHDR_SIZE))
			return kimg_error_set(err, -KIMG_ETRUNC, eh.phoff, "ELF image: program headers pass the limit");
		grow(&end, eh.phoff, (uint64_t)eh.phnum * KIMG_ELF_PHDR_SIZE, &overflow);
		for (uint64_t i = 0; i < eh.phnum; i++) {
			struct kimg_elf_phdr ph;
			kimg_elf_phdr_read(s, eh.phoff, i, &ph);
			grow(&end, ph.offset, ph.filesz, &overflow);
		}
	}
	if (overflow || end > s->size)
		return kimg_error_set(err, -KIMG_ETRUNC, 0, "ELF image: contents pass the limit of %llu bytes",
				      (unsigned long long)s->size);
	*size = end;
	return 0;
}

/* PTX handed to cuModuleLoadData is NUL-terminated text (§11). */
static int ptx_extent(const struct kimg_span *s, uint64_t *size, struct kimg_error *err)
{
	const uint8_t *nul = memchr(s->data, 0, s->size);
	uint64_t n;
	if (!nul)
		return kimg_error_set(err, -KIMG_ELIMIT, 0, "text image: no NUL within %llu bytes",
				      (unsigned long long)s->size);
	n = (uint64_t)(nul - s->data);
	if (!memmem(s->data, n, ".version", 8) && !memmem(s->data, n, ".target", 7))
		return kimg_error_set(err, -KIMG_EUNKNOWN, 0, "image is neither fatbin, ELF nor PTX text");
	*size = n;
	return 0;
}

static int container_extent(const struct kimg_span *s, uint64_t *size, struct kimg_error *err)
{
	struct kimg_fatbin fb;
	int rc = kimg_fatbin_open(*s, 0, &fb, err);
	if (rc < 0)
		return rc;
	*size = fb.bytes.size;
	return 0;
}

int kimg_memory_image_extent(const void *p, uint64_t limit, const void **target, uint64_t *size, struct kimg_error *err)
{
	struct kimg_span s = kimg_span_make(p, limit);
	uint32_t magic;

	*target = p;
	*size = 0;
	if (!p || !kimg_span_u32(&s, 0, &magic))
		return kimg_error_set(err, -KIMG_ETRUNC, 0, "image: fewer than 4 bytes");
	if (magic == KIMG_FATBIN_WRAPPER_MAGIC) {
		/* §2: the wrapper holds the container's run-time address; the
		 * container is trusted with the same limit as the wrapper. */
		uint32_t version;
		uint64_t data;
		if (!kimg_span_has(&s, 0, WRAPPER_SIZE))
			return kimg_error_set(err, -KIMG_ETRUNC, 0, "fatbin wrapper: limit ends inside 24 bytes");
		kimg_span_u32(&s, 4, &version);
		kimg_span_u64(&s, 8, &data);
		if (version != 1 && version != 2)
			return kimg_error_set(err, -KIMG_EFORMAT, 4, "fatbin wrapper: version %u", version);
		if (data == 0 || data > UINTPTR_MAX)
			return kimg_error_set(err, -KIMG_EFORMAT, 8, "fatbin wrapper: null container address");
		*target = (const void *)(uintptr_t)data;
		s = kimg_span_make(*target, limit);
		if (!kimg_span_u32(&s, 0, &magic) || magic != KIMG_FATBIN_MAGIC)
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "fatbin wrapper: target is not a fatbin container");
		return container_extent(&s, size, err);
	}
	if (magic == KIMG_FATBIN_MAGIC)
		return container_extent(&s, size, err);
	if (kimg_elf_has_magic(s))
		return elf_extent(&s, size, err);
	return ptx_extent(&s, size, err);
}
