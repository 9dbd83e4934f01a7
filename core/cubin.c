/* Device ELF (cubin) reader.
 *
 * Checks, in order: ELF64 little-endian EM_CUDA header, the CUDA ELF ABI
 * (docs/format.md §8), the section header table (with extended numbering,
 * §9), every section's extent, the section-name table; then walks .symtab
 * for kernel entries (§10). Nothing is trusted before it is checked, every
 * read goes through core/span.h, and sums are done in 64 bits.
 *
 * Error split: -KIMG_ETRUNC when a declared structure runs past the end of
 * the bytes (a cut-off payload), -KIMG_EFORMAT when a field cannot hold
 * (wrapping offsets, indices out of range, wrong sizes or types),
 * -KIMG_ENOTSUP for a well-formed ELF of a CUDA ABI or type kimg does not
 * know. */
#include "elf_defs.h"
#include "cubin.h"

#include <limits.h>
#include <string.h>

/* ELF constants (System V gABI); CUDA-specific ones from docs/format.md §8/§10. */

struct shdr {
	uint32_t name, type, link;
	uint64_t offset, size, entsize;
};

struct elf {
	struct kimg_span bytes;
	uint64_t shoff;
	uint32_t shnum;
	uint32_t shstrndx;
};

static uint64_t shdr_off(const struct elf *e, uint32_t idx)
{
	return e->shoff + (uint64_t)idx * KIMG_ELF_SHDR_SIZE;
}

/* Section header idx; the table itself was range-checked by elf_open
 * (except section 0 read before shnum is known, which checks itself). */
static int elf_shdr(const struct elf *e, uint32_t idx, struct shdr *sh, struct kimg_error *err)
{
	uint64_t off = shdr_off(e, idx);
	uint64_t o = off;
	if (!kimg_span_has(&e->bytes, off, KIMG_ELF_SHDR_SIZE))
		return kimg_error_set(err, -KIMG_ETRUNC, off, "cubin section header %u past the end", idx);
	kimg_span_u32(&e->bytes, o + 0, &sh->name);
	kimg_span_u32(&e->bytes, o + 4, &sh->type);
	kimg_span_u64(&e->bytes, o + 24, &sh->offset);
	kimg_span_u64(&e->bytes, o + 32, &sh->size);
	kimg_span_u32(&e->bytes, o + 40, &sh->link);
	kimg_span_u64(&e->bytes, o + 56, &sh->entsize);
	return 0;
}

/* The bytes of a section; NOBITS and NULL sections occupy none. */
static int elf_sec_data(const struct elf *e, uint32_t idx, const struct shdr *sh, struct kimg_span *out,
			struct kimg_error *err)
{
	*out = kimg_span_make(NULL, 0);
	if (sh->type == KIMG_SHT_NOBITS || sh->type == KIMG_SHT_NULL)
		return 0;
	if (sh->offset + sh->size < sh->offset)
		return kimg_error_set(err, -KIMG_EFORMAT, shdr_off(e, idx) + 24,
				      "cubin section %u offset+size wraps", idx);
	if (!kimg_span_has(&e->bytes, sh->offset, sh->size))
		return kimg_error_set(err, -KIMG_ETRUNC, shdr_off(e, idx) + 24,
				      "cubin section %u [%llu, +%llu) past the end (%llu bytes)", idx,
				      (unsigned long long)sh->offset, (unsigned long long)sh->size,
				      (unsigned long long)e->bytes.size);
	*out = kimg_span_sub(&e->bytes, sh->offset, sh->size);
	return 0;
}

/* CUDA ELF ABI: from EI_ABIVERSION (7/8), else from EI_OSABI (0x33/0x41);
 * when both are known they must agree (§8: never guess from e_flags). */
static int elf_abi(uint8_t osabi, uint8_t abiversion, uint8_t *abi, struct kimg_error *err)
{
	uint8_t by_version = abiversion == KIMG_ELFABIVERSION_CUDA_V1 ? 1 : abiversion == KIMG_ELFABIVERSION_CUDA_V2 ? 2 : 0;
	uint8_t by_osabi = osabi == KIMG_ELFOSABI_CUDA_V1 ? 1 : osabi == KIMG_ELFOSABI_CUDA_V2 ? 2 : 0;
	if (by_version && by_osabi && by_version != by_osabi)
		return kimg_error_set(err, -KIMG_EFORMAT, 7, "cubin OS/ABI 0x%x contradicts ABI version %u", osabi,
				      abiversion);
	*abi = by_version ? by_version : by_osabi;
	if (!*abi)
		return kimg_error_set(err, -KIMG_ENOTSUP, 8, "cubin OS/ABI 0x%x, ABI version %u: unknown CUDA ELF ABI",
				      osabi, abiversion);
	return 0;
}

/* The program header table and every segment's file extent: the driver
 * loads an EXEC cubin by its segments, so a table or segment cut off
 * (a truncated download) is an image it rejects, not a runnable one. */
static int elf_check_segments(const struct elf *e, uint64_t phoff, uint16_t phentsize, uint16_t phnum16,
			      struct kimg_error *err)
{
	uint64_t phnum = phnum16;
	if (phoff == 0 && phnum == 0)
		return 0;
	if (phentsize != KIMG_ELF_PHDR_SIZE)
		return kimg_error_set(err, -KIMG_EFORMAT, 54, "cubin program header size %u, expected 56", phentsize);
	if (phnum16 == KIMG_ELF_PN_XNUM) {
		/* Extended numbering: the real count is section 0's sh_info. */
		uint32_t info;
		if (!kimg_span_u32(&e->bytes, e->shoff + 44, &info))
			return kimg_error_set(err, -KIMG_ETRUNC, e->shoff, "cubin section 0 past the end");
		phnum = info;
	}
	uint64_t table = phnum * KIMG_ELF_PHDR_SIZE; /* < 2^38: no overflow */
	if (phoff + table < phoff)
		return kimg_error_set(err, -KIMG_EFORMAT, 32, "cubin program header table offset wraps");
	if (!kimg_span_has(&e->bytes, phoff, table))
		return kimg_error_set(err, -KIMG_ETRUNC, 32,
				      "cubin program header table (%llu entries at %llu) past the end (%llu bytes)",
				      (unsigned long long)phnum, (unsigned long long)phoff,
				      (unsigned long long)e->bytes.size);
	for (uint64_t i = 0; i < phnum; i++) {
		uint64_t h = phoff + i * KIMG_ELF_PHDR_SIZE, off, filesz;
		kimg_span_u64(&e->bytes, h + 8, &off);
		kimg_span_u64(&e->bytes, h + 32, &filesz);
		if (filesz == 0)
			continue;
		if (off + filesz < off)
			return kimg_error_set(err, -KIMG_EFORMAT, h + 8, "cubin segment %llu offset+size wraps",
					      (unsigned long long)i);
		if (!kimg_span_has(&e->bytes, off, filesz))
			return kimg_error_set(err, -KIMG_ETRUNC, h + 8,
					      "cubin segment %llu [%llu, +%llu) past the end (%llu bytes)",
					      (unsigned long long)i, (unsigned long long)off,
					      (unsigned long long)filesz, (unsigned long long)e->bytes.size);
	}
	return 0;
}

static int elf_open(struct kimg_span bytes, struct elf *e, struct kimg_cubin_info *info, struct kimg_error *err)
{
	static const uint8_t magic[4] = { 0x7f, 'E', 'L', 'F' };
	const uint8_t *ident = kimg_span_at(&bytes, 0, 16);
	uint16_t type, machine, shentsize, shnum16, shstrndx16, phentsize, phnum16;
	uint32_t flags;
	uint64_t shoff, phoff;
	int rc;

	memset(e, 0, sizeof *e);
	memset(info, 0, sizeof *info);
	e->bytes = bytes;
	if (!ident || memcmp(ident, magic, 4) != 0) {
		const uint8_t *m = kimg_span_at(&bytes, 0, 4);
		if (!ident && m && memcmp(m, magic, 4) == 0)
			return kimg_error_set(err, -KIMG_ETRUNC, 0, "cubin ELF header cut at %llu bytes",
					      (unsigned long long)bytes.size);
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not an ELF file");
	}
	if (ident[4] != KIMG_ELFCLASS64 || ident[5] != KIMG_ELFDATA2LSB)
		return kimg_error_set(err, -KIMG_EFORMAT, 4, "cubin is not ELF64 little-endian (class %u, data %u)",
				      ident[4], ident[5]);
	if (!kimg_span_has(&bytes, 0, KIMG_ELF_EHDR_SIZE))
		return kimg_error_set(err, -KIMG_ETRUNC, 0, "cubin ELF header cut at %llu bytes",
				      (unsigned long long)bytes.size);
	kimg_span_u16(&bytes, 16, &type);
	kimg_span_u16(&bytes, 18, &machine);
	kimg_span_u64(&bytes, 32, &phoff);
	kimg_span_u64(&bytes, 40, &shoff);
	kimg_span_u32(&bytes, 48, &flags);
	kimg_span_u16(&bytes, 54, &phentsize);
	kimg_span_u16(&bytes, 56, &phnum16);
	kimg_span_u16(&bytes, 58, &shentsize);
	kimg_span_u16(&bytes, 60, &shnum16);
	kimg_span_u16(&bytes, 62, &shstrndx16);
	if (machine != KIMG_EM_CUDA)
		return kimg_error_set(err, -KIMG_EFORMAT, 18, "ELF machine %u is not EM_CUDA (190)", machine);
	if ((rc = elf_abi(ident[7], ident[8], &info->abi, err)))
		return rc;
	if (type != KIMG_ET_REL && type != KIMG_ET_EXEC)
		return kimg_error_set(err, -KIMG_ENOTSUP, 16, "cubin ELF type %u is neither REL nor EXEC", type);
	info->e_type = type;
	info->e_flags = flags;
	if (info->abi == 1) {
		info->sm = flags & 0xff;
		info->sm_a_v1 = (flags & KIMG_EF_CUDA_ACCELERATORS_V1) != 0;
	} else {
		/* V2 has no reliable a/f mark (§8 caveats): the fatbin entry
		 * flags carry the suffix. */
		info->sm = (flags >> 8) & 0xff;
	}

	if (shoff == 0)
		return kimg_error_set(err, -KIMG_EFORMAT, 40, "cubin has no section header table");
	if (shentsize != KIMG_ELF_SHDR_SIZE)
		return kimg_error_set(err, -KIMG_EFORMAT, 58, "cubin section header size %u, expected 64", shentsize);
	e->shoff = shoff;
	e->shnum = shnum16;
	e->shstrndx = shstrndx16;
	if (shnum16 == 0 || shstrndx16 == KIMG_SHN_XINDEX) {
		/* Extended numbering: section 0 holds the real count in
		 * sh_size and the real name-table index in sh_link. */
		struct shdr sh0;
		if ((rc = elf_shdr(e, 0, &sh0, err)))
			return rc;
		if (shnum16 == 0) {
			if (sh0.size > UINT32_MAX)
				return kimg_error_set(err, -KIMG_EFORMAT, shoff + 32, "cubin section count %llu too large",
						      (unsigned long long)sh0.size);
			e->shnum = (uint32_t)sh0.size;
		}
		if (shstrndx16 == KIMG_SHN_XINDEX)
			e->shstrndx = sh0.link;
	}
	if (e->shnum == 0)
		return kimg_error_set(err, -KIMG_EFORMAT, 60, "cubin has no sections");
	uint64_t table = (uint64_t)e->shnum * KIMG_ELF_SHDR_SIZE; /* < 2^38: no overflow */
	if (shoff + table < shoff)
		return kimg_error_set(err, -KIMG_EFORMAT, 40, "cubin section header table offset wraps");
	if (!kimg_span_has(&bytes, shoff, table))
		return kimg_error_set(err, -KIMG_ETRUNC, 40, "cubin section header table (%u entries) past the end",
				      e->shnum);

	/* Every section's extent, once, so later readers need not care. */
	for (uint32_t i = 0; i < e->shnum; i++) {
		struct shdr sh;
		struct kimg_span data;
		if ((rc = elf_shdr(e, i, &sh, err)) || (rc = elf_sec_data(e, i, &sh, &data, err)))
			return rc;
	}
	if ((rc = elf_check_segments(e, phoff, phentsize, phnum16, err)))
		return rc;
	if (e->shstrndx != KIMG_SHN_UNDEF) {
		struct shdr sh;
		if (e->shstrndx >= e->shnum)
			return kimg_error_set(err, -KIMG_EFORMAT, 62, "cubin section-name table index %u out of %u",
					      e->shstrndx, e->shnum);
		if ((rc = elf_shdr(e, e->shstrndx, &sh, err)))
			return rc;
		if (sh.type != KIMG_SHT_STRTAB)
			return kimg_error_set(err, -KIMG_EFORMAT, shdr_off(e, e->shstrndx) + 4,
					      "cubin section-name table %u has type %u, not STRTAB", e->shstrndx, sh.type);
	}
	return 0;
}

/* Walks .symtab (the first SHT_SYMTAB; ELF allows one) and calls fn for
 * each kernel entry. A cubin without .symtab has no kernels. */
static int elf_walk_kernels(const struct elf *e, kimg_name_fn fn, void *ctx, struct kimg_error *err)
{
	struct shdr sym, str;
	struct kimg_span syms, strs;
	uint32_t idx;
	int rc, count = 0;

	for (idx = 0; idx < e->shnum; idx++) {
		if ((rc = elf_shdr(e, idx, &sym, err)))
			return rc;
		if (sym.type == KIMG_SHT_SYMTAB)
			break;
	}
	if (idx == e->shnum)
		return 0;
	uint64_t at = shdr_off(e, idx);
	if (sym.entsize != KIMG_ELF_SYM_SIZE || sym.size % KIMG_ELF_SYM_SIZE != 0)
		return kimg_error_set(err, -KIMG_EFORMAT, at + 56, "cubin .symtab entry size %llu, size %llu",
				      (unsigned long long)sym.entsize, (unsigned long long)sym.size);
	if (sym.link == KIMG_SHN_UNDEF || sym.link >= e->shnum)
		return kimg_error_set(err, -KIMG_EFORMAT, at + 40, "cubin .symtab string table index %u out of %u",
				      sym.link, e->shnum);
	if ((rc = elf_shdr(e, sym.link, &str, err)))
		return rc;
	if (str.type != KIMG_SHT_STRTAB)
		return kimg_error_set(err, -KIMG_EFORMAT, at + 40, "cubin .symtab links section %u of type %u, not STRTAB",
				      sym.link, str.type);
	if ((rc = elf_sec_data(e, idx, &sym, &syms, err)) || (rc = elf_sec_data(e, sym.link, &str, &strs, err)))
		return rc;

	for (uint64_t off = 0; off + KIMG_ELF_SYM_SIZE <= syms.size; off += KIMG_ELF_SYM_SIZE) {
		uint32_t name;
		const uint8_t *info_other = kimg_span_at(&syms, off + 4, 2);
		kimg_span_u32(&syms, off, &name);
		if (!info_other || (info_other[0] & 0xf) != KIMG_STT_FUNC || !(info_other[1] & KIMG_STO_CUDA_ENTRY))
			continue;
		/* The name must end inside the table (libbpf checks its
		 * string sections the same way before reading a string). */
		uint64_t rest = name < strs.size ? strs.size - name : 0;
		const uint8_t *s = kimg_span_at(&strs, name, rest);
		const uint8_t *nul = s && rest ? memchr(s, 0, (size_t)rest) : NULL;
		if (!nul)
			return kimg_error_set(err, -KIMG_EFORMAT, sym.offset + off,
					      "cubin kernel symbol name %u not NUL-terminated inside its %llu-byte table",
					      name, (unsigned long long)strs.size);
		if (count == INT_MAX)
			return kimg_error_set(err, -KIMG_ELIMIT, sym.offset + off, "more than %d kernels", INT_MAX);
		count++;
		if (fn && (rc = fn(ctx, (const char *)s, (size_t)(nul - s))))
			return rc;
	}
	return count;
}

int kimg_cubin_parse(struct kimg_span bytes, struct kimg_cubin_info *info, struct kimg_error *err)
{
	struct elf e;
	int rc = elf_open(bytes, &e, info, err);
	if (rc)
		return rc;
	rc = elf_walk_kernels(&e, NULL, NULL, err);
	if (rc < 0)
		return rc;
	info->kernel_count = (uint32_t)rc;
	return 0;
}

int kimg_cubin_for_each_kernel(struct kimg_span bytes, kimg_name_fn fn, void *ctx, struct kimg_error *err)
{
	struct elf e;
	struct kimg_cubin_info info;
	int rc = elf_open(bytes, &e, &info, err);
	return rc ? rc : elf_walk_kernels(&e, fn, ctx, err);
}
