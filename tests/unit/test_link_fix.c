/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/link_fix.c: the advice for PTX the JIT linker
 * refuses names the PTX's producer, the device's own compute target and
 * the driver's limits; other reasons get none (the module fix stands). */
#include <string.h>

#include "testutil.h"
#include "link_fix.h"
#include "rules.h"

static size_t advice(struct kimg_device d, struct kimg_image img, char *buf, size_t size, int *err)
{
	struct kimg_module_verdict v;
	kimg_rules_check_module(&img, 1, &d, NULL, &v);
	*err = v.expected_error;
	return kimg_link_fix_for(&d, &v, &img, 1, buf, size);
}

/* P3: .target above the device (the driver answers 218 at cuLinkAddData) */
START_TEST(target_above_device)
{
	char buf[512];
	int err;
	size_t n = advice(device(90, 13000), test_image(KIMG_IMAGE_PTX, 100, KIMG_VARIANT_PLAIN, 900), buf, sizeof buf, &err);
	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_msg(strstr(buf, "this PTX targets compute_100: generate it for compute_90 or lower") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "nvcc -ptx -arch=compute_90") != NULL, "%s", buf);
}
END_TEST

/* P4: .version above the driver's JIT (222): the producing CUDA, the
 * driver's ISA, the driver to upgrade to, forward compatibility */
START_TEST(isa_above_driver)
{
	char buf[512];
	int err;
	advice(device(90, 12080), test_image(KIMG_IMAGE_PTX, 80, KIMG_VARIANT_PLAIN, 808), buf, sizeof buf, &err);
	ck_assert_int_eq(err, 222);
	ck_assert_msg(strstr(buf, "is ISA 8.8, written by CUDA 12.9 or newer") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "this driver (CUDA 12.8) JIT-compiles ISA 8.7 at most") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "upgrade the driver to 575.") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "forward-compatibility package") != NULL, "%s", buf);
}
END_TEST

START_TEST(isa_unknown_to_tables)
{
	char buf[512];
	int err;
	advice(device(90, 13000), test_image(KIMG_IMAGE_PTX, 80, KIMG_VARIANT_PLAIN, 909), buf, sizeof buf, &err);
	ck_assert_int_eq(err, 222);
	ck_assert_msg(strstr(buf, "written by a CUDA newer than kimg knows") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "upgrade the driver, or") != NULL, "%s", buf);
}
END_TEST

/* No advice for inputs that run, for cubins of another GPU, and a
 * truncated buffer stays terminated. */
START_TEST(other_cases)
{
	char buf[512];
	int err;
	ck_assert_uint_eq(advice(device(90, 13000), test_image(KIMG_IMAGE_PTX, 80, KIMG_VARIANT_PLAIN, 900), buf,
				 sizeof buf, &err), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_uint_eq(advice(device(90, 13000), test_image(KIMG_IMAGE_SASS, 80, KIMG_VARIANT_PLAIN, 0), buf,
				 sizeof buf, &err), 0);
	char small[16];
	size_t n = advice(device(90, 13000), test_image(KIMG_IMAGE_PTX, 100, KIMG_VARIANT_PLAIN, 900), small,
			  sizeof small, &err);
	ck_assert_uint_eq(n, sizeof small - 1);
	ck_assert_uint_eq(strlen(small), sizeof small - 1);
}
END_TEST

static Suite *link_fix_suite(void)
{
	Suite *s = suite_create("link_fix");
	TCase *tc = tcase_create("cases");
	tcase_add_test(tc, target_above_device);
	tcase_add_test(tc, isa_above_driver);
	tcase_add_test(tc, isa_unknown_to_tables);
	tcase_add_test(tc, other_cases);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(link_fix_suite());
}
