/* sys/driver_query.c: the pure part, reading the driver release from
 * /proc/driver/nvidia/version text. The driver itself is exercised by
 * tests/probe/device.sh (no driver, fake driver) and tests/gpu. */
#include "testutil.h"

#include "driver_query.h"
#include "error.h"

START_TEST(proc_version_proprietary_module)
{
	char out[32];
	ck_assert_int_eq(kimg_driver_parse_proc_version(
				 " Kernel Module  580.159.04  Thu Oct  2 19:19:39 UTC 2025\n", out, sizeof out), 0);
	ck_assert_str_eq(out, "580.159.04");
}
END_TEST

START_TEST(proc_version_open_module_skips_x86_64)
{
	char out[32];
	/* "x86_64" and "for" are not version-shaped; the first N.N.N is. */
	ck_assert_int_eq(kimg_driver_parse_proc_version(
				 "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build", out,
				 sizeof out), 0);
	ck_assert_str_eq(out, "570.86.15");
}
END_TEST

START_TEST(proc_version_two_part_release)
{
	char out[32];
	ck_assert_int_eq(kimg_driver_parse_proc_version("NVRM version: NVIDIA UNIX aarch64 Kernel Module  540.4  x", out,
							sizeof out), 0);
	ck_assert_str_eq(out, "540.4");
}
END_TEST

START_TEST(proc_version_none_or_too_long)
{
	char out[8];
	ck_assert_int_eq(kimg_driver_parse_proc_version("no version here 1.2.3.4 1. .5", out, sizeof out), -KIMG_ENOTFOUND);
	/* Longer than the buffer: not truncated into a wrong version. */
	ck_assert_int_eq(kimg_driver_parse_proc_version("580.159.04", out, sizeof out), -KIMG_ENOTFOUND);
	ck_assert_int_eq(kimg_driver_parse_proc_version("", out, sizeof out), -KIMG_ENOTFOUND);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("driver_query");
	TCase *tc = tcase_create("proc_version");
	tcase_add_test(tc, proc_version_proprietary_module);
	tcase_add_test(tc, proc_version_open_module_skips_x86_64);
	tcase_add_test(tc, proc_version_two_part_release);
	tcase_add_test(tc, proc_version_none_or_too_long);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
