/* SPDX-License-Identifier: Apache-2.0 */
/* core/arch.c: the arch spellings users type (core/arch.h contract;
 * docs/rules.md names targets sm_XY / compute_XY with a/f suffixes). */
#include "testutil.h"

#include "arch.h"
#include "error.h"

static const struct {
	const char *text;
	unsigned sm;
	uint8_t variant;
	bool is_virtual;
} accepted[] = {
	{ "9.0", 90, KIMG_VARIANT_PLAIN, false },
	{ "90", 90, KIMG_VARIANT_PLAIN, false },
	{ "sm_90", 90, KIMG_VARIANT_PLAIN, false },
	{ "sm_90a", 90, KIMG_VARIANT_A, false },
	{ "compute_90", 90, KIMG_VARIANT_PLAIN, true },
	{ "compute_100f", 100, KIMG_VARIANT_F, true },
	{ "9.0a", 90, KIMG_VARIANT_A, false },
	{ "10.0f", 100, KIMG_VARIANT_F, false },
	{ "SM_90", 90, KIMG_VARIANT_PLAIN, false },
	{ "Compute_120A", 120, KIMG_VARIANT_A, true },
	{ "12.1", 121, KIMG_VARIANT_PLAIN, false },
	{ "sm_75", 75, KIMG_VARIANT_PLAIN, false },
	{ "100a", 100, KIMG_VARIANT_A, false },
};

static const char *const rejected[] = {
	"", "sm_", "compute_", "9.", "9", "sm_9", ".0", "garbage", "sm_90x", "sm_90 ", " sm_90", "9.0.1",
	"12.10", "sm_9.0", "compute_9.0", "sm_99999999999999999999", "4294967386", "1000", "sm_90af",
	"sm90", "lto_90", "0.0", "00", "-90", "+90", "sm_-90", "9,0",
	"0.2", "0.9a", /* major 0: no such CC, and "sm_2" could not name it again (fuzz_tokens) */
};

START_TEST(arch_parse_accepts_every_documented_spelling)
{
	struct kimg_arch a;
	bool virt = !accepted[_i].is_virtual;
	ck_assert_int_eq(kimg_arch_parse(accepted[_i].text, &a, &virt), 0);
	ck_assert_uint_eq(a.sm, accepted[_i].sm);
	ck_assert_uint_eq(a.variant, accepted[_i].variant);
	ck_assert(virt == accepted[_i].is_virtual);
}
END_TEST

START_TEST(arch_parse_rejects_malformed_tokens_untouched)
{
	struct kimg_arch a = { 77, KIMG_VARIANT_F };
	ck_assert_msg(kimg_arch_parse(rejected[_i], &a, NULL) == -KIMG_EFORMAT, "accepted \"%s\"", rejected[_i]);
	/* a failed parse leaves the output as it was */
	ck_assert_uint_eq(a.sm, 77);
	ck_assert_uint_eq(a.variant, KIMG_VARIANT_F);
}
END_TEST

START_TEST(arch_parse_null_is_an_error)
{
	struct kimg_arch a;
	ck_assert_int_eq(kimg_arch_parse(NULL, &a, NULL), -KIMG_EFORMAT);
}
END_TEST

START_TEST(arch_format_spells_sm_compute_and_cc)
{
	char buf[32];
	struct kimg_arch a = { 100, KIMG_VARIANT_F };
	ck_assert_int_eq(kimg_arch_format(a, false, buf, sizeof buf), 7);
	ck_assert_str_eq(buf, "sm_100f");
	ck_assert_int_eq(kimg_arch_format(a, true, buf, sizeof buf), 12);
	ck_assert_str_eq(buf, "compute_100f");
	ck_assert_int_eq(kimg_arch_format_cc(a, buf, sizeof buf), 5);
	ck_assert_str_eq(buf, "10.0f");
	a = (struct kimg_arch){ 90, KIMG_VARIANT_A };
	kimg_arch_format(a, false, buf, sizeof buf);
	ck_assert_str_eq(buf, "sm_90a");
	kimg_arch_format_cc(a, buf, sizeof buf);
	ck_assert_str_eq(buf, "9.0a");
	a = (struct kimg_arch){ 121, KIMG_VARIANT_PLAIN };
	kimg_arch_format_cc(a, buf, sizeof buf);
	ck_assert_str_eq(buf, "12.1");
}
END_TEST

START_TEST(arch_format_truncates_like_snprintf)
{
	char buf[4];
	struct kimg_arch a = { 90, KIMG_VARIANT_A };
	ck_assert_int_eq(kimg_arch_format(a, true, buf, sizeof buf), 11);
	ck_assert_str_eq(buf, "com");
}
END_TEST

START_TEST(arch_format_then_parse_round_trips)
{
	static const char *const names[] = { "sm_80", "sm_90a", "compute_100f", "compute_90", "sm_120" };
	for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct kimg_arch a;
		bool virt;
		char buf[32];
		ck_assert_int_eq(kimg_arch_parse(names[i], &a, &virt), 0);
		kimg_arch_format(a, virt, buf, sizeof buf);
		ck_assert_str_eq(buf, names[i]);
	}
}
END_TEST

/* core/error.c: codes are negative, context is kept, messages never NULL. */
START_TEST(error_set_records_negative_code_offset_and_text)
{
	struct kimg_error e;
	ck_assert_int_eq(kimg_error_set(&e, -KIMG_ETRUNC, 42, "entry %d at %s", 3, "x"), -KIMG_ETRUNC);
	ck_assert_int_eq(e.code, -KIMG_ETRUNC);
	ck_assert_uint_eq(e.offset, 42);
	ck_assert_str_eq(e.what, "entry 3 at x");
	/* a positive code is normalised, never returned as "success" */
	ck_assert_int_eq(kimg_error_set(&e, KIMG_EFORMAT, 0, "x"), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_error_set(NULL, -KIMG_ELIMIT, 0, "x"), -KIMG_ELIMIT);
}
END_TEST

START_TEST(error_set_truncates_long_messages)
{
	struct kimg_error e;
	char big[300];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	kimg_error_set(&e, -KIMG_EFORMAT, 0, "%s", big);
	ck_assert_uint_eq(strlen(e.what), sizeof e.what - 1);
}
END_TEST

START_TEST(strerror_covers_kimg_codes_and_errno)
{
	ck_assert_str_eq(kimg_strerror(-KIMG_EFORMAT), "malformed input");
	ck_assert_str_eq(kimg_strerror(-KIMG_ETRUNC), "input truncated");
	ck_assert_str_eq(kimg_strerror(-KIMG_EUNKNOWN), "unrecognised input");
	ck_assert_str_eq(kimg_strerror(0), "success");
	ck_assert_str_eq(kimg_strerror(-4999), "unknown error");
	ck_assert_ptr_nonnull(kimg_strerror(-2));
	ck_assert_str_ne(kimg_strerror(-2), "unknown error");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("arch");
	TCase *tc = tcase_create("arch");
	tcase_add_loop_test(tc, arch_parse_accepts_every_documented_spelling, 0, sizeof accepted / sizeof accepted[0]);
	tcase_add_loop_test(tc, arch_parse_rejects_malformed_tokens_untouched, 0, sizeof rejected / sizeof rejected[0]);
	tcase_add_test(tc, arch_parse_null_is_an_error);
	tcase_add_test(tc, arch_format_spells_sm_compute_and_cc);
	tcase_add_test(tc, arch_format_truncates_like_snprintf);
	tcase_add_test(tc, arch_format_then_parse_round_trips);
	suite_add_tcase(s, tc);
	tc = tcase_create("error");
	tcase_add_test(tc, error_set_records_negative_code_offset_and_text);
	tcase_add_test(tc, error_set_truncates_long_messages);
	tcase_add_test(tc, strerror_covers_kimg_codes_and_errno);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
