/* SPDX-License-Identifier: Apache-2.0 */
/* core/cubin.c: device ELF reader.
 * Pins docs/format.md §8 (both CUDA ELF ABIs, SM decoding, OSABI cross-
 * check, e_type), §9 (extended section numbering) and §10 (kernel entries =
 * STT_FUNC with STO_CUDA_ENTRY in .symtab), plus the malformed-input
 * contract of docs/design.md §5 (exact error codes, never a crash). */
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "testutil.h"

/* ---- nvcc 13.0 fixtures: ABI V2 for every SM [V] ---- */

struct names {
	int n;
	char v[8][64];
};

static int collect(void *ctx, const char *name, size_t len)
{
	struct names *ns = ctx;
	ck_assert_uint_eq(strlen(name), len); /* NUL-terminated at len */
	if (ns->n < 8 && len < 64)
		memcpy(ns->v[ns->n], name, len + 1);
	ns->n++;
	return 0;
}

static void check_fixture(const char *file, uint16_t sm, uint32_t e_flags)
{
	struct kimg_span f = fixture_load(file);
	struct kimg_cubin_info info;
	struct kimg_error err = { 0 };
	struct names ns = { 0 };
	ck_assert_int_eq(kimg_cubin_parse(f, &info, &err), 0);
	ck_assert_uint_eq(info.abi, 2);
	ck_assert_uint_eq(info.sm, sm);
	ck_assert_uint_eq(info.e_flags, e_flags);
	ck_assert(!info.sm_a_v1);
	ck_assert_uint_eq(info.e_type, 2);
	ck_assert_uint_eq(info.kernel_count, 3);
	/* §10: exactly the three kernels of kern.cu, mangled, in .symtab order. */
	ck_assert_int_eq(kimg_cubin_for_each_kernel(f, collect, &ns, &err), 3);
	ck_assert_int_eq(ns.n, 3);
	ck_assert_str_eq(ns.v[0], "_Z5scaleIfEvPT_S0_i");
	ck_assert_str_eq(ns.v[1], "_Z4fillPii");
	ck_assert_str_eq(ns.v[2], "axpy");
	fixture_free(f);
}

/* §8 table, V2 examples: sm_80 0x06005004 ... sm_120 0x06007802. */
START_TEST(fixture_sm80_is_v2_sm80) { check_fixture("sm80.cubin", 80, 0x06005004); }
END_TEST
/* §8 caveat [V]: under CUDA 13 sm_90a has the e_flags of sm_90. */
START_TEST(fixture_sm90a_reads_as_plain_sm90) { check_fixture("sm90a.cubin", 90, 0x06005a04); }
END_TEST
/* §8 caveat [V]: sm_100f has the e_flags of sm_100. */
START_TEST(fixture_sm100f_reads_as_plain_sm100) { check_fixture("sm100f.cubin", 100, 0x06006402); }
END_TEST
START_TEST(fixture_sm120) { check_fixture("sm120.cubin", 120, 0x06007802); }
END_TEST
/* §8 caveat [V]: top byte 0x09 with -lineinfo; only the SM byte is decoded. */
START_TEST(fixture_lineinfo_top_byte_ignored) { check_fixture("sm90_lineinfo.cubin", 90, 0x09005a04); }
END_TEST

/* ---- hand-built ELF: sections NULL, .shstrtab, .strtab, .symtab ---- */

enum { SEC_NULL, SEC_SHSTRTAB, SEC_STRTAB, SEC_SYMTAB, SEC_COUNT };
/* layout */
#define SHSTR_OFF 64
#define STR_OFF 96
#define SYM_OFF 128
#define SYM_COUNT 5
#define SHDR_OFF (SYM_OFF + SYM_COUNT * 24) /* 248 */
#define ELF_SIZE (SHDR_OFF + SEC_COUNT * 64) /* 504 */

static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab"; /* 27 bytes incl. final NUL */
static const char str[] = "\0k1\0dev\0var\0k2";              /* 15 bytes incl. final NUL */

struct elfbuf {
	uint8_t b[ELF_SIZE];
};

static uint8_t *shdr(struct elfbuf *e, int i) { return e->b + SHDR_OFF + 64 * i; }

static void set_shdr(struct elfbuf *e, int i, uint32_t name, uint32_t type, uint64_t off, uint64_t size,
		     uint32_t link, uint64_t entsize)
{
	uint8_t *h = shdr(e, i);
	put_le32(h + 0, name);
	put_le32(h + 4, type);
	put_le64(h + 24, off);
	put_le64(h + 32, size);
	put_le32(h + 40, link);
	put_le64(h + 56, entsize);
}

static void set_sym(struct elfbuf *e, int i, uint32_t name, uint8_t info, uint8_t other)
{
	uint8_t *s = e->b + SYM_OFF + 24 * i;
	put_le32(s, name);
	s[4] = info;
	s[5] = other;
}

/* Symbols: 0 null, 1 k1 (FUNC|entry), 2 dev (FUNC, not entry), 3 var
 * (OBJECT with the entry bit), 4 k2 (GLOBAL FUNC|entry|managed 0x14). */
static void build(struct elfbuf *e, uint8_t osabi, uint8_t abiversion, uint32_t e_flags, uint16_t e_type)
{
	memset(e, 0, sizeof *e);
	memcpy(e->b, "\x7f" "ELF", 4);
	e->b[4] = 2; /* ELFCLASS64 */
	e->b[5] = 1; /* little endian */
	e->b[6] = 1;
	e->b[7] = osabi;
	e->b[8] = abiversion;
	put_le16(e->b + 16, e_type);
	put_le16(e->b + 18, 190);
	put_le32(e->b + 20, 1);
	put_le64(e->b + 40, SHDR_OFF);
	put_le32(e->b + 48, e_flags);
	put_le16(e->b + 52, 64);
	put_le16(e->b + 58, 64);
	put_le16(e->b + 60, SEC_COUNT);
	put_le16(e->b + 62, SEC_SHSTRTAB);
	memcpy(e->b + SHSTR_OFF, shstr, sizeof shstr);
	memcpy(e->b + STR_OFF, str, sizeof str);
	set_sym(e, 1, 1, 0x02, 0x10);
	set_sym(e, 2, 4, 0x02, 0x00);
	set_sym(e, 3, 8, 0x01, 0x10);
	set_sym(e, 4, 12, 0x12, 0x14);
	set_shdr(e, SEC_SHSTRTAB, 1, 3, SHSTR_OFF, sizeof shstr, 0, 0);
	set_shdr(e, SEC_STRTAB, 11, 3, STR_OFF, sizeof str, 0, 0);
	set_shdr(e, SEC_SYMTAB, 19, 2, SYM_OFF, SYM_COUNT * 24, SEC_STRTAB, 24);
}

static void build_v2(struct elfbuf *e) { build(e, 0x41, 8, 0x06005a04, 2); }

static struct kimg_span span_of(struct elfbuf *e) { return kimg_span_make(e->b, ELF_SIZE); }

static int parse_code(struct kimg_span s, struct kimg_error *err)
{
	struct kimg_cubin_info info;
	return kimg_cubin_parse(s, &info, err);
}

static void expect_err(struct elfbuf *e, int code)
{
	struct kimg_error err = { 0 };
	ck_assert_int_eq(parse_code(span_of(e), &err), code);
	ck_assert_int_eq(err.code, code);
	ck_assert(err.what[0] != '\0');
	ck_assert_int_eq(kimg_cubin_for_each_kernel(span_of(e), NULL, NULL, NULL), code);
}

/* §8: V1 = OSABI 0x33 / ABI version 7, SM = e_flags & 0xff (sm_80 0x00500550). */
START_TEST(v1_sm80_from_low_byte)
{
	struct elfbuf e;
	struct kimg_cubin_info info;
	build(&e, 0x33, 7, 0x00500550, 2);
	ck_assert_int_eq(kimg_cubin_parse(span_of(&e), &info, NULL), 0);
	ck_assert_uint_eq(info.abi, 1);
	ck_assert_uint_eq(info.sm, 80);
	ck_assert(!info.sm_a_v1);
	ck_assert_uint_eq(info.kernel_count, 2);
}
END_TEST

/* §8: V1 EF_CUDA_ACCELERATORS_V1 (0x800) marks sm_90a. */
START_TEST(v1_sm90a_from_0x800)
{
	struct elfbuf e;
	struct kimg_cubin_info info;
	build(&e, 0x33, 7, 0x005a0d5a, 1); /* 0x500 texmode + 64-bit, 0x800 accelerators, SM 0x5a */
	ck_assert_int_eq(kimg_cubin_parse(span_of(&e), &info, NULL), 0);
	ck_assert_uint_eq(info.abi, 1);
	ck_assert_uint_eq(info.sm, 90);
	ck_assert(info.sm_a_v1);
	ck_assert_uint_eq(info.e_type, 1);
}
END_TEST

/* §8: V2 SM = (e_flags >> 8) & 0xff; the same word read as V1 would say 4. */
START_TEST(v2_sm_from_second_byte)
{
	struct elfbuf e;
	struct kimg_cubin_info info;
	build_v2(&e);
	ck_assert_int_eq(kimg_cubin_parse(span_of(&e), &info, NULL), 0);
	ck_assert_uint_eq(info.abi, 2);
	ck_assert_uint_eq(info.sm, 90);
	ck_assert_uint_eq(info.e_flags, 0x06005a04);
	ck_assert(!info.sm_a_v1);
	/* A V2 word with bit 0x800 set is not an `a` mark. */
	build(&e, 0x41, 8, 0x06005a04 | 0x800, 2);
	ck_assert_int_eq(kimg_cubin_parse(span_of(&e), &info, NULL), 0);
	ck_assert_uint_eq(info.sm, 0x5a | 0x8);
	ck_assert(!info.sm_a_v1);
}
END_TEST

/* §8: "choose the ABI from EI_ABIVERSION or from OSABI": each alone suffices. */
START_TEST(abi_from_either_field)
{
	struct elfbuf e;
	struct kimg_cubin_info info;
	build(&e, 0x00, 8, 0x06005004, 2); /* ABI version only */
	ck_assert_int_eq(kimg_cubin_parse(span_of(&e), &info, NULL), 0);
	ck_assert_uint_eq(info.abi, 2);
	ck_assert_uint_eq(info.sm, 80);
	build(&e, 0x33, 0, 0x00500550, 2); /* OSABI only */
	ck_assert_int_eq(kimg_cubin_parse(span_of(&e), &info, NULL), 0);
	ck_assert_uint_eq(info.abi, 1);
	ck_assert_uint_eq(info.sm, 80);
}
END_TEST

START_TEST(abi_fields_contradict)
{
	struct elfbuf e;
	build(&e, 0x41, 7, 0x00500550, 2);
	expect_err(&e, -KIMG_EFORMAT);
	build(&e, 0x33, 8, 0x06005004, 2);
	expect_err(&e, -KIMG_EFORMAT);
}
END_TEST

START_TEST(abi_unknown_is_enotsup)
{
	struct elfbuf e;
	build(&e, 0x00, 9, 0x06005004, 2);
	expect_err(&e, -KIMG_ENOTSUP);
}
END_TEST

/* §8: e_type 1 (REL) or 2 (EXEC) only. */
START_TEST(etype_dyn_is_enotsup)
{
	struct elfbuf e;
	build(&e, 0x41, 8, 0x06005004, 3);
	expect_err(&e, -KIMG_ENOTSUP);
}
END_TEST

/* §10: FUNC + STO_CUDA_ENTRY only; a managed bit beside it does not matter. */
START_TEST(kernels_are_entry_functions_only)
{
	struct elfbuf e;
	struct names ns = { 0 };
	build_v2(&e);
	ck_assert_int_eq(kimg_cubin_for_each_kernel(span_of(&e), collect, &ns, NULL), 2);
	ck_assert_int_eq(ns.n, 2);
	ck_assert_str_eq(ns.v[0], "k1");
	ck_assert_str_eq(ns.v[1], "k2");
}
END_TEST

static int stop_at_first(void *ctx, const char *name, size_t len)
{
	(*(int *)ctx)++;
	return 7;
}

START_TEST(callback_stops_walk)
{
	struct elfbuf e;
	int calls = 0;
	build_v2(&e);
	ck_assert_int_eq(kimg_cubin_for_each_kernel(span_of(&e), stop_at_first, &calls, NULL), 7);
	ck_assert_int_eq(calls, 1);
}
END_TEST

START_TEST(no_symtab_means_no_kernels)
{
	struct elfbuf e;
	struct kimg_cubin_info info;
	build_v2(&e);
	set_shdr(&e, SEC_SYMTAB, 19, 1 /* PROGBITS */, SYM_OFF, SYM_COUNT * 24, 0, 0);
	ck_assert_int_eq(kimg_cubin_parse(span_of(&e), &info, NULL), 0);
	ck_assert_uint_eq(info.kernel_count, 0);
}
END_TEST

/* §9: extended numbering: e_shnum 0 -> count in sh[0].sh_size;
 * e_shstrndx SHN_XINDEX -> index in sh[0].sh_link. */
START_TEST(extended_section_numbering)
{
	struct elfbuf e;
	struct kimg_cubin_info info;
	build_v2(&e);
	put_le16(e.b + 60, 0);
	put_le16(e.b + 62, 0xffff);
	set_shdr(&e, SEC_NULL, 0, 0, 0, SEC_COUNT, SEC_SHSTRTAB, 0);
	ck_assert_int_eq(kimg_cubin_parse(span_of(&e), &info, NULL), 0);
	ck_assert_uint_eq(info.kernel_count, 2);
	/* A count that runs the table past the end. */
	set_shdr(&e, SEC_NULL, 0, 0, 0, 1000, SEC_SHSTRTAB, 0);
	expect_err(&e, -KIMG_ETRUNC);
	set_shdr(&e, SEC_NULL, 0, 0, 0, 1ull << 40, SEC_SHSTRTAB, 0);
	expect_err(&e, -KIMG_EFORMAT);
	/* An index through SHN_XINDEX out of range. */
	set_shdr(&e, SEC_NULL, 0, 0, 0, SEC_COUNT, 9, 0);
	expect_err(&e, -KIMG_EFORMAT);
}
END_TEST

/* ---- malformed input: exact codes (docs/design.md §5) ---- */

START_TEST(truncations)
{
	struct elfbuf e;
	struct kimg_error err = { 0 };
	build_v2(&e);
	struct kimg_span s = span_of(&e);
	ck_assert_int_eq(parse_code(kimg_span_make(e.b, 0), &err), -KIMG_EFORMAT); /* not even a magic */
	ck_assert_int_eq(parse_code(kimg_span_make(e.b, 10), &err), -KIMG_ETRUNC);  /* magic, then cut */
	ck_assert_int_eq(parse_code(kimg_span_make(e.b, 63), &err), -KIMG_ETRUNC);  /* header cut */
	ck_assert_int_eq(parse_code(kimg_span_make(e.b, ELF_SIZE - 1), &err), -KIMG_ETRUNC); /* header table */
	ck_assert_uint_eq(err.offset, 40);
	/* Every prefix fails: all structures are needed. */
	for (uint64_t n = 0; n < s.size; n++) {
		int rc = parse_code(kimg_span_make(e.b, n), &err);
		ck_assert_msg(rc == -KIMG_ETRUNC || rc == -KIMG_EFORMAT, "prefix %llu: %d", (unsigned long long)n, rc);
	}
	ck_assert_int_eq(parse_code(s, &err), 0);
}
END_TEST

/* The gABI's "no program header table" is e_phoff 0 and e_phnum 0 both.
 * A table claimed at offset 0 (e_phnum 2, 56-byte entries) is read where
 * it says, over the ELF header and .shstrtab: its second entry's segment
 * lies past the end, so the image is refused; a count of 0 with an offset
 * set is no table, and the image parses. */
START_TEST(program_header_table_at_offset_0)
{
	struct elfbuf e;
	struct kimg_error err = { 0 };
	build_v2(&e);
	put_le16(e.b + 54, 56);
	put_le16(e.b + 56, 2);
	int rc = parse_code(span_of(&e), &err);
	ck_assert_msg(rc == -KIMG_ETRUNC || rc == -KIMG_EFORMAT, "table at 0: %d (%s)", rc, err.what);
	build_v2(&e);
	put_le64(e.b + 32, SHDR_OFF);
	put_le16(e.b + 54, 56);
	ck_assert_int_eq(parse_code(span_of(&e), &err), 0);
}
END_TEST

/* A cubin cut inside its program header table (issue 12, item 11): the
 * section headers are intact, but the driver loads the image by its
 * segments and rejects it, so it must not parse as runnable. The table's
 * place comes from readelf's view of the fixture: e_phoff at 32, e_phnum
 * at 56, 56-byte entries, after the section header table. */
START_TEST(cut_inside_program_headers)
{
	struct kimg_span f = fixture_load("sm80.cubin");
	struct kimg_error err = { 0 };
	uint64_t phoff, shoff;
	uint16_t phnum;
	ck_assert(kimg_span_u64(&f, 32, &phoff) && kimg_span_u16(&f, 56, &phnum) && kimg_span_u64(&f, 40, &shoff));
	ck_assert_uint_gt(phnum, 0);
	ck_assert_uint_gt(phoff, shoff); /* nvcc writes the segments' table last */
	ck_assert_uint_eq(phoff + 56u * phnum, f.size);
	struct kimg_cubin_info info;
	for (uint64_t cut = phoff + 1; cut < f.size; cut += 13) {
		ck_assert_int_eq(kimg_cubin_parse(kimg_span_make(f.data, cut), &info, &err), -KIMG_ETRUNC);
		ck_assert_uint_eq(err.offset, 32);
	}
	ck_assert_int_eq(kimg_cubin_parse(f, &info, &err), 0);
	/* A segment whose file bytes pass the end is cut off too. */
	uint8_t *copy = malloc(f.size);
	memcpy(copy, f.data, f.size);
	uint64_t big = f.size;
	memcpy(copy + phoff + 32, &big, 8); /* p_filesz of segment 0 */
	ck_assert_int_eq(kimg_cubin_parse(kimg_span_make(copy, f.size), &info, &err), -KIMG_ETRUNC);
	ck_assert_uint_eq(err.offset, phoff + 8);
	free(copy);
	fixture_free(f);
}
END_TEST

START_TEST(header_identity)
{
	struct elfbuf e;
	build_v2(&e);
	e.b[0] = 0x7e;
	expect_err(&e, -KIMG_EFORMAT);
	build_v2(&e);
	e.b[4] = 1; /* ELFCLASS32 */
	expect_err(&e, -KIMG_EFORMAT);
	build_v2(&e);
	e.b[5] = 2; /* big endian */
	expect_err(&e, -KIMG_EFORMAT);
	build_v2(&e);
	put_le16(e.b + 18, 62); /* x86-64 */
	expect_err(&e, -KIMG_EFORMAT);
	build_v2(&e);
	put_le16(e.b + 58, 40); /* e_shentsize */
	expect_err(&e, -KIMG_EFORMAT);
	build_v2(&e);
	put_le64(e.b + 40, 0); /* no section headers */
	expect_err(&e, -KIMG_EFORMAT);
	build_v2(&e);
	put_le64(e.b + 40, UINT64_MAX - 64); /* table offset wraps */
	expect_err(&e, -KIMG_EFORMAT);
}
END_TEST

START_TEST(bad_shstrndx)
{
	struct elfbuf e;
	struct kimg_error err = { 0 };
	build_v2(&e);
	put_le16(e.b + 62, SEC_COUNT); /* one past the last */
	expect_err(&e, -KIMG_EFORMAT);
	parse_code(span_of(&e), &err);
	ck_assert_uint_eq(err.offset, 62);
	build_v2(&e);
	put_le16(e.b + 62, SEC_SYMTAB); /* not a string table */
	expect_err(&e, -KIMG_EFORMAT);
}
END_TEST

START_TEST(symtab_link_out_of_range)
{
	struct elfbuf e;
	build_v2(&e);
	set_shdr(&e, SEC_SYMTAB, 19, 2, SYM_OFF, SYM_COUNT * 24, 99, 24);
	expect_err(&e, -KIMG_EFORMAT);
	set_shdr(&e, SEC_SYMTAB, 19, 2, SYM_OFF, SYM_COUNT * 24, 0, 24);
	expect_err(&e, -KIMG_EFORMAT);
	set_shdr(&e, SEC_SYMTAB, 19, 2, SYM_OFF, SYM_COUNT * 24, SEC_SYMTAB, 24); /* links itself */
	expect_err(&e, -KIMG_EFORMAT);
}
END_TEST

START_TEST(symtab_entry_size)
{
	struct elfbuf e;
	build_v2(&e);
	set_shdr(&e, SEC_SYMTAB, 19, 2, SYM_OFF, SYM_COUNT * 24, SEC_STRTAB, 16);
	expect_err(&e, -KIMG_EFORMAT);
	set_shdr(&e, SEC_SYMTAB, 19, 2, SYM_OFF, SYM_COUNT * 24 - 1, SEC_STRTAB, 24);
	expect_err(&e, -KIMG_EFORMAT);
}
END_TEST

/* §10: names must end inside the linked string table. */
START_TEST(name_not_nul_terminated)
{
	struct elfbuf e;
	struct kimg_error err = { 0 };
	build_v2(&e);
	/* Cut .strtab before k2's NUL: "\0k1\0dev\0var\0k2" is 15 bytes, k2 at 12. */
	set_shdr(&e, SEC_STRTAB, 11, 3, STR_OFF, sizeof str - 1, 0, 0);
	expect_err(&e, -KIMG_EFORMAT);
	parse_code(span_of(&e), &err);
	ck_assert_uint_eq(err.offset, SYM_OFF + 4 * 24);
	/* Name offset past the table. */
	build_v2(&e);
	set_sym(&e, 1, sizeof str, 0x02, 0x10);
	expect_err(&e, -KIMG_EFORMAT);
	/* Non-entry symbols' names are never read. */
	build_v2(&e);
	set_sym(&e, 2, 5000, 0x02, 0x00);
	ck_assert_int_eq(parse_code(span_of(&e), NULL), 0);
}
END_TEST

START_TEST(section_extent)
{
	struct elfbuf e;
	struct kimg_error err = { 0 };
	build_v2(&e);
	/* offset + size wraps 2^64 */
	set_shdr(&e, SEC_STRTAB, 11, 3, UINT64_MAX - 2, 16, 0, 0);
	expect_err(&e, -KIMG_EFORMAT);
	parse_code(span_of(&e), &err);
	ck_assert_uint_eq(err.offset, SHDR_OFF + 64 * SEC_STRTAB + 24);
	/* inside 2^64 but past the end of the bytes */
	set_shdr(&e, SEC_STRTAB, 11, 3, STR_OFF, ELF_SIZE, 0, 0);
	expect_err(&e, -KIMG_ETRUNC);
	/* NOBITS occupies no file bytes: any extent is fine. */
	build_v2(&e);
	set_shdr(&e, SEC_NULL, 0, 8, UINT64_MAX - 2, 16, 0, 0);
	ck_assert_int_eq(parse_code(span_of(&e), NULL), 0);
}
END_TEST

static Suite *cubin_suite(void)
{
	Suite *s = suite_create("cubin");
	TCase *fx = tcase_create("fixtures");
	tcase_add_test(fx, fixture_sm80_is_v2_sm80);
	tcase_add_test(fx, fixture_sm90a_reads_as_plain_sm90);
	tcase_add_test(fx, fixture_sm100f_reads_as_plain_sm100);
	tcase_add_test(fx, fixture_sm120);
	tcase_add_test(fx, fixture_lineinfo_top_byte_ignored);
	suite_add_tcase(s, fx);
	TCase *abi = tcase_create("abi");
	tcase_add_test(abi, v1_sm80_from_low_byte);
	tcase_add_test(abi, v1_sm90a_from_0x800);
	tcase_add_test(abi, v2_sm_from_second_byte);
	tcase_add_test(abi, abi_from_either_field);
	tcase_add_test(abi, abi_fields_contradict);
	tcase_add_test(abi, abi_unknown_is_enotsup);
	tcase_add_test(abi, etype_dyn_is_enotsup);
	suite_add_tcase(s, abi);
	TCase *k = tcase_create("kernels");
	tcase_add_test(k, kernels_are_entry_functions_only);
	tcase_add_test(k, callback_stops_walk);
	tcase_add_test(k, no_symtab_means_no_kernels);
	tcase_add_test(k, extended_section_numbering);
	suite_add_tcase(s, k);
	TCase *bad = tcase_create("malformed");
	tcase_add_test(bad, truncations);
	tcase_add_test(bad, cut_inside_program_headers);
	tcase_add_test(bad, program_header_table_at_offset_0);
	tcase_add_test(bad, header_identity);
	tcase_add_test(bad, bad_shstrndx);
	tcase_add_test(bad, symtab_link_out_of_range);
	tcase_add_test(bad, symtab_entry_size);
	tcase_add_test(bad, name_not_nul_terminated);
	tcase_add_test(bad, section_extent);
	suite_add_tcase(s, bad);
	return s;
}

int main(void) { return run_suite(cubin_suite()); }
