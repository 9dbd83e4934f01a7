/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of NVIDIA_REQUIRE_* judging (core/nvidia_require.c): the
 * grammar and version order of libnvidia-container's src/cli/dsl.c (space
 * = OR, comma = AND, numeric parts, trailing ".0" ignored), the real
 * requirement of NVIDIA's CUDA 13.0 images, and kimg's third answer for
 * facts a target does not have (no driver, no brand). */
#include <stdlib.h>
#include <string.h>

#include "cuda_compat.h"
#include "nvidia_require.h"
#include "testutil.h"

/* nvidia/cuda:13.0.1-base-ubuntu24.04 (its config's Env) */
static const char cuda13[] = "cuda>=13.0 brand=unknown,driver>=535,driver<536 brand=tesla,driver>=535,driver<536 "
			     "brand=nvidia,driver>=550,driver<551 brand=tesla,driver>=570,driver<571";

static enum kimg_tri judge(const char *expr, int cuda, const char *driver, const char *arch, const char *brand,
			   char *why)
{
	struct kimg_require_facts f = { cuda, "", "", "" };
	snprintf(f.driver, sizeof f.driver, "%s", driver);
	snprintf(f.arch, sizeof f.arch, "%s", arch);
	snprintf(f.brand, sizeof f.brand, "%s", brand);
	struct kimg_require_verdict v;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_require_judge(expr, &f, &v, &err), 0);
	if (why)
		strcpy(why, v.decided_by);
	return v.satisfied;
}

START_TEST(version_order_is_dsl_compare_version)
{
	ck_assert_int_eq(kimg_require_compare_version("12.4", ">=", "12.4.0"), 1);
	ck_assert_int_eq(kimg_require_compare_version("12.4", "<", "12.10"), 1);
	ck_assert_int_eq(kimg_require_compare_version("550.54.14", ">", "550"), 1);
	ck_assert_int_eq(kimg_require_compare_version("550.54.14", "<=", "550.54"), 0);
	ck_assert_int_eq(kimg_require_compare_version("9.0", "=", "9"), 1);
	ck_assert_int_eq(kimg_require_compare_version("9.0", "!=", "9.0.0"), 0);
	ck_assert_int_eq(kimg_require_compare_version("9.x", "=", "9"), -1);
	ck_assert_int_eq(kimg_require_compare_version("9.0", "=>", "9"), -1);
}
END_TEST

START_TEST(the_cuda_13_image_requirement)
{
	char why[128];
	/* a 13.0 driver: the first alternative */
	ck_assert_int_eq(judge(cuda13, 13000, "", "9.0", "", NULL), KIMG_TRI_YES);
	/* R550 (CUDA 12.4): none of the driver ranges is 550 for a known brand ... but brand=nvidia,550 may be */
	ck_assert_int_eq(judge(cuda13, 12040, "", "9.0", "", why), KIMG_TRI_UNKNOWN);
	ck_assert_str_eq(why, "brand=nvidia");
	ck_assert_int_eq(judge(cuda13, 12040, "550.54.14", "9.0", "geforce", why), KIMG_TRI_NO);
	ck_assert_str_eq(why, "cuda>=13.0");
	ck_assert_int_eq(judge(cuda13, 12040, "550.54.14", "9.0", "NVIDIA", NULL), KIMG_TRI_YES);
	/* R560 (12.6): no alternative has its branch: refused, whatever the brand */
	ck_assert_int_eq(judge(cuda13, 12060, "", "9.0", "", why), KIMG_TRI_NO);
	ck_assert_str_eq(why, "cuda>=13.0");
	/* no driver known at all: unknown */
	ck_assert_int_eq(judge(cuda13, 0, "", "9.0", "", NULL), KIMG_TRI_UNKNOWN);
	ck_assert_int_eq(kimg_require_driver_branch(12040), 550);
	ck_assert_int_eq(kimg_require_driver_branch(12045), 0);
}
END_TEST

START_TEST(and_or_arch_and_invalid_expressions)
{
	ck_assert_int_eq(judge("arch>=8.0,cuda>=12.0", 12040, "", "9.0", "", NULL), KIMG_TRI_YES);
	ck_assert_int_eq(judge("arch>=10.0 cuda>=12.8", 12040, "", "9.0", "", NULL), KIMG_TRI_NO);
	ck_assert_int_eq(judge("  cuda>=9.0  ", 12040, "", "9.0", "", NULL), KIMG_TRI_YES);
	ck_assert_int_eq(judge("", 12040, "", "9.0", "", NULL), KIMG_TRI_YES);
	struct kimg_require_facts f = { 12040, "", "9.0", "" };
	struct kimg_require_verdict v;
	struct kimg_error err = { 0, 0, "" };
	/* as dsl_evaluate: a satisfied alternative ends the reading, a false
	 * constraint ends its alternative; what is read must be valid */
	ck_assert_int_eq(kimg_require_judge("cuda>=12.0 gpu=h100", &f, &v, &err), 0);
	ck_assert_int_eq(v.satisfied, KIMG_TRI_YES);
	ck_assert_int_eq(kimg_require_judge("cuda>=13.0,gpu=h100 cuda>=12.0", &f, &v, &err), 0);
	ck_assert_int_eq(v.satisfied, KIMG_TRI_YES);
	ck_assert_int_eq(kimg_require_judge("gpu=h100 cuda>=12.0", &f, &v, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(v.satisfied, KIMG_TRI_NO);
	ck_assert_int_eq(kimg_require_judge("cuda>=twelve", &f, &v, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_require_judge("brand<tesla", &f, &v, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_require_judge("cuda", &f, &v, &err), -KIMG_EFORMAT);
}
END_TEST

/* cuda-compat's libcuda by its versioned name; the soname link is not one */
START_TEST(compat_libraries_against_drivers)
{
	struct kimg_compat_lib lib;
	ck_assert(kimg_compat_lib_identify("/usr/local/cuda-13.0/compat/libcuda.so.580.65.06", &lib));
	ck_assert_str_eq(lib.driver, "580.65.06");
	ck_assert_int_eq(lib.cuda_version, 13000);
	ck_assert(!kimg_compat_lib_identify("/usr/local/cuda-13.0/compat/libcuda.so.1", &lib));
	ck_assert(!kimg_compat_lib_identify("/usr/lib/libcuda.so.580.65.06", &lib));
	/* only a driver version after "libcuda.so." (digits and dots, with a
	 * dot, under 32 bytes) names a compat driver: not a copy's suffix, not
	 * a bare branch, not a version longer than any driver's */
	ck_assert(!kimg_compat_lib_identify("/usr/local/cuda/compat/libcuda.so.580.65.06.bak", &lib));
	ck_assert(!kimg_compat_lib_identify("/usr/local/cuda/compat/libcuda.so.580", &lib));
	ck_assert(!kimg_compat_lib_identify("/usr/local/cuda/compat/libcuda.so.580.65.06.0000000000000000000000", &lib));
	ck_assert(kimg_compat_lib_identify("/usr/local/cuda/compat/libcuda.so.580.65.06.000000000000000000000", &lib));
	ck_assert_str_eq(lib.driver, "580.65.06.000000000000000000000"); /* 31 bytes and its NUL: fits */
	ck_assert(kimg_compat_lib_identify("/usr/local/cuda/compat/libcuda.so.580.65.06", &lib));
	ck_assert_int_eq(kimg_compat_judge(&lib, 12040), KIMG_COMPAT_FORWARD);
	ck_assert_int_eq(kimg_compat_judge(&lib, 13000), KIMG_COMPAT_NOT_NEEDED);
	ck_assert_int_eq(kimg_compat_judge(&lib, 13010), KIMG_COMPAT_OLDER);
	ck_assert_int_eq(kimg_compat_judge(&lib, 0), KIMG_COMPAT_UNKNOWN);
	ck_assert_str_eq(kimg_compat_outcome_name(KIMG_COMPAT_OLDER), "older_than_driver");
	ck_assert_int_eq(kimg_require_branch_cuda(550), 12040);
}
END_TEST

/* Every operator on every pair of a set of versions, against an order
 * computed here independently: the numbers as a list, the shorter padded
 * with zeros (dsl_compare_version: numeric parts, trailing zeros ignored). */
static int order_of(const char *a, const char *b)
{
	unsigned long x[8] = { 0 }, y[8] = { 0 };
	int nx = 0, ny = 0;
	for (const char *p = a; *p && nx < 8; nx++) {
		x[nx] = strtoul(p, (char **)&p, 10);
		p += *p == '.';
	}
	for (const char *p = b; *p && ny < 8; ny++) {
		y[ny] = strtoul(p, (char **)&p, 10);
		p += *p == '.';
	}
	for (int i = 0; i < 8; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

START_TEST(every_operator_on_every_pair)
{
	static const char *const v[] = { "0", "1", "1.0", "1.0.0", "1.2", "1.10", "1.2.1", "2", "10", "10.0.1",
					 "535.104.05", "535.104.5", "535.99", "12.4", "12.4.0", "12.10" };
	static const char *const ops[] = { "=", "!=", "<", "<=", ">", ">=" };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		for (size_t j = 0; j < sizeof v / sizeof v[0]; j++) {
			int o = order_of(v[i], v[j]);
			int want[6] = { o == 0, o != 0, o < 0, o <= 0, o > 0, o >= 0 };
			for (int k = 0; k < 6; k++)
				ck_assert_msg(kimg_require_compare_version(v[i], ops[k], v[j]) == want[k], "%s %s %s: want %d",
					      v[i], ops[k], v[j], want[k]);
		}
	/* not a version on either side, or an empty one */
	ck_assert_int_eq(kimg_require_compare_version("", "=", "1"), -1);
	ck_assert_int_eq(kimg_require_compare_version("1", "=", ""), -1);
	ck_assert_int_eq(kimg_require_compare_version("1", "<", "1-2"), -1);
	ck_assert_int_eq(kimg_require_compare_version(".1", "=", "1"), -1);
	ck_assert_int_eq(kimg_require_compare_version("1", "==", "1"), -1);
	ck_assert_int_eq(kimg_require_compare_version("1", "", "1"), -1);
}
END_TEST

/* The release notes' table, both ways, at its two ends and off it. */
START_TEST(driver_branch_table_ends)
{
	ck_assert_int_eq(kimg_require_driver_branch(11000), 450);
	ck_assert_int_eq(kimg_require_driver_branch(13000), 580);
	ck_assert_int_eq(kimg_require_driver_branch(10020), 0);
	ck_assert_int_eq(kimg_require_branch_cuda(450), 11000);
	ck_assert_int_eq(kimg_require_branch_cuda(580), 13000);
	ck_assert_int_eq(kimg_require_branch_cuda(440), 0);
	ck_assert_int_eq(kimg_require_branch_cuda(0), 0);
}
END_TEST

/* A driver known by its branch only (from the CUDA version): a bound of
 * whole branches is decided, one inside the branch is not; each fact a
 * target lacks leaves its constraint unknown. */
START_TEST(facts_known_in_part)
{
	char why[128];
	ck_assert_int_eq(judge("driver>=550", 12040, "", "", "", NULL), KIMG_TRI_YES);
	ck_assert_int_eq(judge("driver<551", 12040, "", "", "", NULL), KIMG_TRI_YES);
	ck_assert_int_eq(judge("driver>=551", 12040, "", "", "", NULL), KIMG_TRI_NO);
	ck_assert_int_eq(judge("driver<550", 12040, "", "", "", NULL), KIMG_TRI_NO);
	ck_assert_int_eq(judge("driver>=550.54", 12040, "", "", "", why), KIMG_TRI_UNKNOWN);
	ck_assert_str_eq(why, "driver>=550.54");
	ck_assert_int_eq(judge("driver>=550", 12045, "", "", "", NULL), KIMG_TRI_UNKNOWN); /* no branch known */
	ck_assert_int_eq(judge("driver>=550", 0, "550.54.14", "", "", NULL), KIMG_TRI_YES);
	ck_assert_int_eq(judge("driver>550.54.14", 0, "550.54.14", "", "", why), KIMG_TRI_NO);
	ck_assert_str_eq(why, "driver>550.54.14");
	ck_assert_int_eq(judge("arch>=8.0", 12040, "", "", "", why), KIMG_TRI_UNKNOWN);
	ck_assert_str_eq(why, "arch>=8.0");
	ck_assert_int_eq(judge("arch<8.0", 12040, "", "9.0", "", NULL), KIMG_TRI_NO);
	ck_assert_int_eq(judge("brand=tesla", 12040, "", "", "", NULL), KIMG_TRI_UNKNOWN);
	ck_assert_int_eq(judge("brand=Tesla", 12040, "", "", "tesla", NULL), KIMG_TRI_YES);
	ck_assert_int_eq(judge("brand!=tesla", 12040, "", "", "tesla", NULL), KIMG_TRI_NO);
	ck_assert_int_eq(judge("brand!=tesla", 12040, "", "", "nvidia", NULL), KIMG_TRI_YES);
	ck_assert_int_eq(judge("cuda>=12.0", 0, "", "", "", NULL), KIMG_TRI_UNKNOWN);
	ck_assert_int_eq(judge("cuda>=12.4", 12040, "", "", "", NULL), KIMG_TRI_YES);
	ck_assert_int_eq(judge("cuda>12.4", 12040, "", "", "", NULL), KIMG_TRI_NO);
	ck_assert_int_eq(judge("CUDA=12.10", 12100, "", "", "", NULL), KIMG_TRI_YES);
	/* unknown before false in one alternative: the false one decides */
	ck_assert_int_eq(judge("arch>=8.0,cuda>=13.0", 12040, "", "", "", why), KIMG_TRI_NO);
	ck_assert_str_eq(why, "cuda>=13.0");
	/* a constraint of 128 bytes or more is invalid */
	char longc[140];
	memset(longc, '1', sizeof longc - 1);
	memcpy(longc, "cuda>=", 6);
	longc[sizeof longc - 1] = '\0';
	struct kimg_require_facts f = { 12040, "", "", "" };
	struct kimg_require_verdict v;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_require_judge(longc, &f, &v, &err), -KIMG_EFORMAT);
	longc[128] = '\0';
	ck_assert_int_eq(kimg_require_judge(longc, &f, &v, &err), -KIMG_EFORMAT);
	longc[127] = '\0'; /* 127 bytes: read, a version too large for CUDA 12.4 */
	ck_assert_int_eq(kimg_require_judge(longc, &f, &v, &err), 0);
	ck_assert_int_eq(v.satisfied, KIMG_TRI_NO);
	ck_assert_int_eq(kimg_require_judge("cuda>=", &f, &v, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_require_judge(">=12", &f, &v, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_require_judge("cuda>=12,cuda>=x", &f, &v, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "invalid constraint 'cuda>=x'");
	ck_assert_uint_eq(err.offset, 9);
	ck_assert_str_eq(v.decided_by, "cuda>=x");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nvidia_require");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, version_order_is_dsl_compare_version);
	tcase_add_test(tc, the_cuda_13_image_requirement);
	tcase_add_test(tc, and_or_arch_and_invalid_expressions);
	tcase_add_test(tc, compat_libraries_against_drivers);
	tcase_add_test(tc, every_operator_on_every_pair);
	tcase_add_test(tc, driver_branch_table_ends);
	tcase_add_test(tc, facts_known_in_part);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
