/* SPDX-License-Identifier: Apache-2.0 */
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
#include "elf64.h"
#include "cubin.h"

#include <limits.h>
#include <string.h>

/* The opened cubin: its section table, range-checked by elf_open. */
struct elf {
	struct kimg_span bytes;
	uint64_t shoff;
	uint32_t shnum;
	uint32_t shstrndx;
};

static uint64_t shdr_off(const struct elf *e, uint32_t idx)
{
	return kimg_elf_entry_offset(e->shoff, idx, KIMG_ELF_SHDR_SIZE);
}

/* Section header idx; the table itself was range-checked by elf_open
 * (except section 0 read before shnum is known, which checks itself). */
static int elf_shdr(const struct elf *e, uint32_t idx, struct kimg_elf_shdr *sh, struct kimg_error *err)
{
	if (!kimg_elf_shdr_read(&e->bytes, e->shoff, idx, sh))
		return kimg_error_set(err, -KIMG_ETRUNC, shdr_off(e, idx), "cubin section header %u past the end", idx);
	return 0;
}

/* The bytes of a section; NOBITS and NULL sections occupy none. */
static int elf_sec_data(const struct elf *e, uint32_t idx, const struct kimg_elf_shdr *sh, struct kimg_span *out,
			struct kimg_error *err)
{
	*out = kimg_span_make(NULL, 0);
	if (sh->type == KIMG_SHT_NOBITS || sh->type == KIMG_SHT_NULL)
		return 0;
	if (sh->offset + sh->size < sh->offset)
		return kimg_error_set(err, -KIMG_EFORMAT, shdr_off(e, idx) + KIMG_SH_OFFSET_AT,
				      "cubin section %u offset+size wraps", idx);
	if (!kimg_span_has(&e->bytes, sh->offset, sh->size))
		return kimg_error_set(err, -KIMG_ETRUNC, shdr_off(e, idx) + KIMG_SH_OFFSET_AT,
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
static int elf_check_segments(const struct elf *e, const struct kimg_elf_ehdr *eh, struct kimg_error *err)
{
	uint64_t phoff = eh->phoff, phnum = eh->phnum;
	if (phoff == 0 && phnum == 0)
		return 0;
	if (eh->phentsize != KIMG_ELF_PHDR_SIZE)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_PHENTSIZE_AT, "cubin program header size %u, expected 56",
				      eh->phentsize);
	if (eh->phnum == KIMG_ELF_PN_XNUM) {
		/* Extended numbering: the real count is section 0's sh_info. */
		struct kimg_elf_shdr sh0;
		if (!kimg_elf_shdr_read(&e->bytes, e->shoff, 0, &sh0))
			return kimg_error_set(err, -KIMG_ETRUNC, e->shoff, "cubin section 0 past the end");
		phnum = kimg_elf_phnum(eh, &sh0);
	}
	uint64_t table = phnum * KIMG_ELF_PHDR_SIZE; /* < 2^38: no overflow */
	if (phoff + table < phoff)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_PHOFF_AT, "cubin program header table offset wraps");
	if (!kimg_elf_table_fits(&e->bytes, phoff, phnum, KIMG_ELF_PHDR_SIZE))
		return kimg_error_set(err, -KIMG_ETRUNC, KIMG_EH_PHOFF_AT,
				      "cubin program header table (%llu entries at %llu) past the end (%llu bytes)",
				      (unsigned long long)phnum, (unsigned long long)phoff,
				      (unsigned long long)e->bytes.size);
	for (uint64_t i = 0; i < phnum; i++) {
		uint64_t h = kimg_elf_entry_offset(phoff, i, KIMG_ELF_PHDR_SIZE) + KIMG_PH_OFFSET_AT;
		struct kimg_elf_phdr ph;
		kimg_elf_phdr_read(&e->bytes, phoff, i, &ph);
		if (ph.filesz == 0)
			continue;
		if (ph.offset + ph.filesz < ph.offset)
			return kimg_error_set(err, -KIMG_EFORMAT, h, "cubin segment %llu offset+size wraps",
					      (unsigned long long)i);
		if (!kimg_span_has(&e->bytes, ph.offset, ph.filesz))
			return kimg_error_set(err, -KIMG_ETRUNC, h,
					      "cubin segment %llu [%llu, +%llu) past the end (%llu bytes)",
					      (unsigned long long)i, (unsigned long long)ph.offset,
					      (unsigned long long)ph.filesz, (unsigned long long)e->bytes.size);
	}
	return 0;
}

static int elf_open(struct kimg_span bytes, struct elf *e, struct kimg_cubin_info *info, struct kimg_error *err)
{
	const uint8_t *ident = kimg_span_at(&bytes, 0, KIMG_ELF_IDENT_SIZE);
	struct kimg_elf_ehdr eh;
	uint32_t flags;
	int rc;

	memset(e, 0, sizeof *e);
	memset(info, 0, sizeof *info);
	e->bytes = bytes;
	if (!kimg_elf_has_magic(bytes))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not an ELF file");
	if (!ident)
		return kimg_error_set(err, -KIMG_ETRUNC, 0, "cubin ELF header cut at %llu bytes",
				      (unsigned long long)bytes.size);
	if (ident[KIMG_EI_CLASS] != KIMG_ELFCLASS64 || ident[KIMG_EI_DATA] != KIMG_ELFDATA2LSB)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EI_CLASS,
				      "cubin is not ELF64 little-endian (class %u, data %u)", ident[KIMG_EI_CLASS],
				      ident[KIMG_EI_DATA]);
	if (!kimg_elf_ehdr_read(&bytes, &eh))
		return kimg_error_set(err, -KIMG_ETRUNC, 0, "cubin ELF header cut at %llu bytes",
				      (unsigned long long)bytes.size);
	flags = eh.flags;
	if (eh.machine != KIMG_EM_CUDA)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_MACHINE_AT, "ELF machine %u is not EM_CUDA (190)",
				      eh.machine);
	if ((rc = elf_abi(ident[KIMG_EI_OSABI], ident[KIMG_EI_ABIVERSION], &info->abi, err)))
		return rc;
	if (eh.type != KIMG_ET_REL && eh.type != KIMG_ET_EXEC)
		return kimg_error_set(err, -KIMG_ENOTSUP, KIMG_EH_TYPE_AT, "cubin ELF type %u is neither REL nor EXEC",
				      eh.type);
	info->e_type = eh.type;
	info->e_flags = flags;
	if (info->abi == 1) {
		info->sm = flags & 0xff;
		info->sm_a_v1 = (flags & KIMG_EF_CUDA_ACCELERATORS_V1) != 0;
	} else {
		/* V2 has no reliable a/f mark (§8 caveats): the fatbin entry
		 * flags carry the suffix. */
		info->sm = (flags >> 8) & 0xff;
	}

	if (eh.shoff == 0)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_SHOFF_AT, "cubin has no section header table");
	if (eh.shentsize != KIMG_ELF_SHDR_SIZE)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_SHENTSIZE_AT, "cubin section header size %u, expected 64",
				      eh.shentsize);
	e->shoff = eh.shoff;
	e->shnum = eh.shnum;
	e->shstrndx = eh.shstrndx;
	if (kimg_elf_needs_section0(&eh)) {
		struct kimg_elf_shdr sh0;
		uint64_t shnum;
		if ((rc = elf_shdr(e, 0, &sh0, err)))
			return rc;
		shnum = kimg_elf_shnum(&eh, &sh0);
		if (shnum > UINT32_MAX)
			return kimg_error_set(err, -KIMG_EFORMAT, eh.shoff + KIMG_SH_SIZE_AT, "cubin section count %llu too large",
					      (unsigned long long)shnum);
		e->shnum = (uint32_t)shnum;
		e->shstrndx = (uint32_t)kimg_elf_shstrndx(&eh, &sh0);
	}
	if (e->shnum == 0)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_SHNUM_AT, "cubin has no sections");
	uint64_t table = (uint64_t)e->shnum * KIMG_ELF_SHDR_SIZE; /* < 2^38: no overflow */
	if (eh.shoff + table < eh.shoff)
		return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_SHOFF_AT, "cubin section header table offset wraps");
	if (!kimg_elf_table_fits(&bytes, eh.shoff, e->shnum, KIMG_ELF_SHDR_SIZE))
		return kimg_error_set(err, -KIMG_ETRUNC, KIMG_EH_SHOFF_AT, "cubin section header table (%u entries) past the end",
				      e->shnum);

	/* Every section's extent, once, so later readers need not care. */
	for (uint32_t i = 0; i < e->shnum; i++) {
		struct kimg_elf_shdr sh;
		struct kimg_span data;
		if ((rc = elf_shdr(e, i, &sh, err)) || (rc = elf_sec_data(e, i, &sh, &data, err)))
			return rc;
	}
	if ((rc = elf_check_segments(e, &eh, err)))
		return rc;
	if (e->shstrndx != KIMG_SHN_UNDEF) {
		struct kimg_elf_shdr sh;
		if (e->shstrndx >= e->shnum)
			return kimg_error_set(err, -KIMG_EFORMAT, KIMG_EH_SHSTRNDX_AT,
					      "cubin section-name table index %u out of %u", e->shstrndx, e->shnum);
		if ((rc = elf_shdr(e, e->shstrndx, &sh, err)))
			return rc;
		if (sh.type != KIMG_SHT_STRTAB)
			return kimg_error_set(err, -KIMG_EFORMAT, shdr_off(e, e->shstrndx) + KIMG_SH_TYPE_AT,
					      "cubin section-name table %u has type %u, not STRTAB", e->shstrndx, sh.type);
	}
	return 0;
}

/* Walks .symtab (the first SHT_SYMTAB; ELF allows one) and calls fn for
 * each kernel entry. A cubin without .symtab has no kernels. */
static int elf_walk_kernels(const struct elf *e, kimg_name_fn fn, void *ctx, struct kimg_error *err)
{
	struct kimg_elf_shdr sym, str;
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
		return kimg_error_set(err, -KIMG_EFORMAT, at + KIMG_SH_ENTSIZE_AT, "cubin .symtab entry size %llu, size %llu",
				      (unsigned long long)sym.entsize, (unsigned long long)sym.size);
	if (sym.link == KIMG_SHN_UNDEF || sym.link >= e->shnum)
		return kimg_error_set(err, -KIMG_EFORMAT, at + KIMG_SH_LINK_AT,
				      "cubin .symtab string table index %u out of %u", sym.link, e->shnum);
	if ((rc = elf_shdr(e, sym.link, &str, err)))
		return rc;
	if (str.type != KIMG_SHT_STRTAB)
		return kimg_error_set(err, -KIMG_EFORMAT, at + KIMG_SH_LINK_AT,
				      "cubin .symtab links section %u of type %u, not STRTAB", sym.link, str.type);
	if ((rc = elf_sec_data(e, idx, &sym, &syms, err)) || (rc = elf_sec_data(e, sym.link, &str, &strs, err)))
		return rc;

	struct kimg_elf_sym s;
	for (uint64_t j = 0; kimg_elf_sym_read(&syms, j, &s); j++) {
		uint64_t off = j * KIMG_ELF_SYM_SIZE;
		size_t len;
		if (KIMG_ELF_ST_TYPE(s.info) != KIMG_STT_FUNC || !(s.other & KIMG_STO_CUDA_ENTRY))
			continue;
		/* The name must end inside the table (libbpf checks its
		 * string sections the same way before reading a string). */
		const char *name = kimg_elf_string(strs, s.name, &len);
		if (!name)
			return kimg_error_set(err, -KIMG_EFORMAT, sym.offset + off,
					      "cubin kernel symbol name %u not NUL-terminated inside its %llu-byte table",
					      s.name, (unsigned long long)strs.size);
		if (count == INT_MAX)
			return kimg_error_set(err, -KIMG_ELIMIT, sym.offset + off, "more than %d kernels", INT_MAX);
		count++;
		if (fn && (rc = fn(ctx, name, len)))
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
