/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of NVIDIA_REQUIRE_* judging (core/nvidia_require.c): the
 * grammar and version order of libnvidia-container's src/cli/dsl.c (space
 * = OR, comma = AND, numeric parts, trailing ".0" ignored), the real
 * requirement of NVIDIA's CUDA 13.0 images, and kimg's third answer for
 * facts a target does not have (no driver, no brand). */
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
	ck_assert(kimg_compat_lib_identify("/usr/local/cuda/compat/libcuda.so.580.65.06", &lib));
	ck_assert_int_eq(kimg_compat_judge(&lib, 12040), KIMG_COMPAT_FORWARD);
	ck_assert_int_eq(kimg_compat_judge(&lib, 13000), KIMG_COMPAT_NOT_NEEDED);
	ck_assert_int_eq(kimg_compat_judge(&lib, 13010), KIMG_COMPAT_OLDER);
	ck_assert_int_eq(kimg_compat_judge(&lib, 0), KIMG_COMPAT_UNKNOWN);
	ck_assert_str_eq(kimg_compat_outcome_name(KIMG_COMPAT_OLDER), "older_than_driver");
	ck_assert_int_eq(kimg_require_branch_cuda(550), 12040);
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
	suite_add_tcase(s, tc);
	return run_suite(s);
}
