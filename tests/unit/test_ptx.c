/* SPDX-License-Identifier: Apache-2.0 */
/* core/ptx.c (+ core/ptx_scan.c): PTX reader.
 * Pins docs/format.md §11 (nvcc output: .version, .target, entries; text
 * ends at the first NUL), docs/rules.md P7 (the highest of several
 * .target directives decides) and the robustness contract of docs/design.md §5. */
#include <string.h>

#include "image.h"
#include "ptx.h"
#include "testutil.h"

struct names {
	int n;
	char v[8][64];
};

static int collect(void *ctx, const char *name, size_t len)
{
	struct names *ns = ctx;
	ck_assert_uint_eq(strlen(name), len);
	if (ns->n < 8 && len < 64)
		memcpy(ns->v[ns->n], name, len + 1);
	ns->n++;
	return 0;
}


static struct kimg_ptx_info parse_ok(const char *text)
{
	struct kimg_ptx_info info;
	struct kimg_error err = { 0 };
	ck_assert_msg(kimg_ptx_parse(str_span(text), &info, &err) == 0, "%s: %s", text, err.what);
	return info;
}

static void expect_format_error(const char *text, uint64_t offset)
{
	struct kimg_ptx_info info;
	struct kimg_error err = { 0 };
	ck_assert_int_eq(kimg_ptx_parse(str_span(text), &info, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(err.code, -KIMG_EFORMAT);
	ck_assert_uint_eq(err.offset, offset);
	ck_assert_int_eq(kimg_ptx_for_each_entry(str_span(text), NULL, NULL, NULL), -KIMG_EFORMAT);
}

static void check_fixture(const char *file, uint16_t sm, uint8_t variant)
{
	struct kimg_span f = fixture_load(file);
	struct kimg_ptx_info info;
	struct names ns = { 0 };
	ck_assert_int_eq(kimg_ptx_parse(f, &info, NULL), 0);
	ck_assert_uint_eq(info.isa, KIMG_ISA(9, 0)); /* P5: nvcc 13.0 stamps 9.0 whatever the target */
	ck_assert_uint_eq(info.target.sm, sm);
	ck_assert_uint_eq(info.target.variant, variant);
	ck_assert_uint_eq(info.entry_count, 3);
	ck_assert_int_eq(kimg_ptx_for_each_entry(f, collect, &ns, NULL), 3);
	ck_assert_str_eq(ns.v[0], "axpy");
	ck_assert_str_eq(ns.v[1], "_Z4fillPii");
	ck_assert_str_eq(ns.v[2], "_Z5scaleIfEvPT_S0_i");
	fixture_free(f);
}

/* §11 [V]: nvcc writes .version 9.0, .target sm_80, ".visible .entry name(". */
START_TEST(fixture_compute80) { check_fixture("compute80.ptx", 80, KIMG_VARIANT_PLAIN); }
END_TEST
START_TEST(fixture_compute90a) { check_fixture("compute90a.ptx", 90, KIMG_VARIANT_A); }
END_TEST

/* Directive words inside comments and strings are not directives; nvcc
 * itself writes "// .globl name" before each entry. */
START_TEST(comments_and_strings_hide_directives)
{
	struct names ns = { 0 };
	const char *t = "// .version 1.0\n"
			"/* .target sm_999\n .entry fake( */\n"
			".version 8.5\n"
			".target sm_75 // , sm_90\n"
			".file 1 \".entry fake2(\"\n"
			"\t// .globl\treal\n"
			".visible .entry real(\n"
			") { ld.entry.param %r1; st.version 2; }\n"
			"/* unterminated .entry fake3(";
	struct kimg_ptx_info info = parse_ok(t);
	ck_assert_uint_eq(info.isa, KIMG_ISA(8, 5));
	ck_assert_uint_eq(info.target.sm, 75);
	ck_assert_uint_eq(info.target.variant, KIMG_VARIANT_PLAIN);
	ck_assert_uint_eq(info.entry_count, 1);
	ck_assert_int_eq(kimg_ptx_for_each_entry(str_span(t), collect, &ns, NULL), 1);
	ck_assert_str_eq(ns.v[0], "real");
}
END_TEST

START_TEST(entry_spellings)
{
	struct names ns = { 0 };
	const char *t = ".version 9.0\n.target sm_90\n"
			".entry plain()\n{ ret; }\n"
			".visible .entry vis(.param .u32 a)\n{ ret; }\n"
			".weak .entry weak_one (\n)\n{ ret; }\n"
			".visible\n.entry\n$split_lines\n()\n{ ret; }\n"
			".func notakernel()\n{ ret; }\n";
	ck_assert_int_eq(kimg_ptx_for_each_entry(str_span(t), collect, &ns, NULL), 4);
	ck_assert_str_eq(ns.v[0], "plain");
	ck_assert_str_eq(ns.v[1], "vis");
	ck_assert_str_eq(ns.v[2], "weak_one");
	ck_assert_str_eq(ns.v[3], "$split_lines");
}
END_TEST

/* P7: several targets -> the highest; same SM: the suffixed one. */
START_TEST(highest_target_wins)
{
	struct kimg_ptx_info info = parse_ok(".version 9.0\n.target sm_80, sm_90a, texmode_independent\n");
	ck_assert_uint_eq(info.target.sm, 90);
	ck_assert_uint_eq(info.target.variant, KIMG_VARIANT_A);
	info = parse_ok(".version 9.0\n.target sm_100f\n.target sm_90\n");
	ck_assert_uint_eq(info.target.sm, 100);
	ck_assert_uint_eq(info.target.variant, KIMG_VARIANT_F);
	info = parse_ok(".target sm_90, sm_90a, sm_90f");
	ck_assert_uint_eq(info.target.sm, 90);
	ck_assert_uint_eq(info.target.variant, KIMG_VARIANT_A);
	info = parse_ok(".target sm_120 , /* comment */ debug,map_f64_to_f32");
	ck_assert_uint_eq(info.target.sm, 120);
	ck_assert_uint_eq(info.target.variant, KIMG_VARIANT_PLAIN);
	/* A target list of options only names no SM. */
	info = parse_ok(".target texmode_unified");
	ck_assert_uint_eq(info.target.sm, 0);
}
END_TEST

/* §11: nvFatbin strips .version; the reader reports 0 and the caller takes
 * the ISA from the entry header. */
START_TEST(missing_version_is_zero)
{
	struct kimg_ptx_info info = parse_ok("\n\n.target sm_90\n.address_size 64\n.entry k()\n{ ret; }\n");
	ck_assert_uint_eq(info.isa, 0);
	ck_assert_uint_eq(info.target.sm, 90);
	ck_assert_uint_eq(info.entry_count, 1);
}
END_TEST

START_TEST(first_version_counts)
{
	struct kimg_ptx_info info = parse_ok(".version 7.8\n.version 9.9\n.target sm_90\n");
	ck_assert_uint_eq(info.isa, KIMG_ISA(7, 8));
	info = parse_ok(".version 10.12\n");
	ck_assert_uint_eq(info.isa, KIMG_ISA(10, 12));
}
END_TEST

/* §11: the text ends at the first NUL (payloads are zero-padded). */
START_TEST(text_ends_at_nul)
{
	static const char t[] = ".version 9.0\n.target sm_80\n\0.target sm_120\n.entry hidden(";
	struct kimg_ptx_info info;
	ck_assert_int_eq(kimg_ptx_parse(kimg_span_make(t, sizeof t - 1), &info, NULL), 0);
	ck_assert_uint_eq(info.isa, KIMG_ISA(9, 0));
	ck_assert_uint_eq(info.target.sm, 80);
	ck_assert_uint_eq(info.entry_count, 0);
	/* The span end also ends it, without a NUL. */
	ck_assert_int_eq(kimg_ptx_parse(kimg_span_make(t, 15), &info, NULL), 0);
	ck_assert_uint_eq(info.isa, KIMG_ISA(9, 0));
	ck_assert_uint_eq(info.target.sm, 0);
	/* ".version 9.0\n.t" cut inside the version value: "9." */
	ck_assert_int_eq(kimg_ptx_parse(kimg_span_make(t, 11), &info, NULL), -KIMG_EFORMAT);
}
END_TEST

START_TEST(empty_and_null)
{
	struct kimg_ptx_info info;
	memset(&info, 0xff, sizeof info);
	ck_assert_int_eq(kimg_ptx_parse(kimg_span_make(NULL, 100), &info, NULL), 0);
	ck_assert_uint_eq(info.isa, 0);
	ck_assert_uint_eq(info.target.sm, 0);
	ck_assert_uint_eq(info.entry_count, 0);
	ck_assert_int_eq(kimg_ptx_for_each_entry(kimg_span_make("", 0), NULL, NULL, NULL), 0);
}
END_TEST

/* Bytes that are not PTX: no directive, no crash, all zero. */
START_TEST(garbage_bytes)
{
	uint8_t junk[4096];
	struct kimg_ptx_info info;
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof junk; i++) {
		x = x * 1103515245 + 12345;
		junk[i] = (uint8_t)((x >> 16) | 0x80); /* high bytes: never '.', never NUL */
	}
	ck_assert_int_eq(kimg_ptx_parse(kimg_span_make(junk, sizeof junk), &info, NULL), 0);
	ck_assert_uint_eq(info.isa, 0);
	ck_assert_uint_eq(info.target.sm, 0);
	ck_assert_uint_eq(info.entry_count, 0);
}
END_TEST

/* Malformed directive values: -KIMG_EFORMAT at the offending token. */
START_TEST(malformed_directives)
{
	expect_format_error(".version 9\n", 9);
	expect_format_error(".version x.y\n", 9);
	expect_format_error(".version 9.0.1\n", 9);
	expect_format_error(".version 100.0\n", 9);
	expect_format_error(".version 0.5\n", 9);
	expect_format_error(".version\n.target sm_90\n", 9); /* a directive is no value */
	expect_format_error(".version", 8);                 /* end of text */
	expect_format_error(".target sm_\n", 8);
	expect_format_error(".target sm_90q\n", 8);
	expect_format_error(".target sm_90af\n", 8);
	expect_format_error(".target sm_0\n", 8);
	expect_format_error(".target sm_65536\n", 8);
	expect_format_error(".target sm_80,\n.address_size 64\n", 15);
	expect_format_error(".target , sm_80\n", 8);
	expect_format_error(".entry (\n", 7);
}
END_TEST

static int stop_at_second(void *ctx, const char *name, size_t len)
{
	return ++*(int *)ctx == 2 ? 42 : 0;
}

START_TEST(callback_stops_walk)
{
	int calls = 0;
	const char *t = ".entry a()\n{}\n.entry b()\n{}\n.entry c()\n{}\n";
	ck_assert_int_eq(kimg_ptx_for_each_entry(str_span(t), stop_at_second, &calls, NULL), 42);
	ck_assert_int_eq(calls, 2);
}
END_TEST

/* Entry names are handed out as C strings up to 8191 bytes; longer ones are
 * refused (a cut name would match nothing). */
START_TEST(long_entry_name)
{
	static char t[9000];
	struct names ns = { 0 };
	memcpy(t, ".entry ", 7);
	memset(t + 7, 'k', 8191);
	ck_assert_int_eq(kimg_ptx_for_each_entry(kimg_span_make(t, 7 + 8191), NULL, NULL, NULL), 1);
	memset(t + 7, 'k', 8192);
	ck_assert_int_eq(kimg_ptx_for_each_entry(kimg_span_make(t, 7 + 8192), collect, &ns, NULL), -KIMG_ELIMIT);
	ck_assert_int_eq(ns.n, 0);
}
END_TEST

static Suite *ptx_suite(void)
{
	Suite *s = suite_create("ptx");
	TCase *fx = tcase_create("fixtures");
	tcase_add_test(fx, fixture_compute80);
	tcase_add_test(fx, fixture_compute90a);
	suite_add_tcase(s, fx);
	TCase *lex = tcase_create("lexing");
	tcase_add_test(lex, comments_and_strings_hide_directives);
	tcase_add_test(lex, entry_spellings);
	tcase_add_test(lex, text_ends_at_nul);
	tcase_add_test(lex, empty_and_null);
	tcase_add_test(lex, garbage_bytes);
	suite_add_tcase(s, lex);
	TCase *dir = tcase_create("directives");
	tcase_add_test(dir, highest_target_wins);
	tcase_add_test(dir, missing_version_is_zero);
	tcase_add_test(dir, first_version_counts);
	tcase_add_test(dir, malformed_directives);
	tcase_add_test(dir, callback_stops_walk);
	tcase_add_test(dir, long_entry_name);
	suite_add_tcase(s, dir);
	return s;
}

int main(void) { return run_suite(ptx_suite()); }
