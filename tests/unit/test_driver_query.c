/* SPDX-License-Identifier: Apache-2.0 */
/* sys/driver_query.c: the pure part, reading the driver release from
 * /proc/driver/nvidia/version text; sys/cuda_device.c: the one device
 * query, given a table of driver functions (here a scripted stand-in, the
 * oracle being the values it was told to give). The driver itself is
 * exercised by tests/probe/device.sh (no driver, fake driver),
 * tests/shim/device_facts.sh and tests/gpu. */
#include "testutil.h"

#include "cuda_attrs.h"
#include "cuda_device.h"
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

/* ---- sys/cuda_device.c against a scripted driver ---- */

static struct {
	int count, count_rc;   /* cuDeviceGetCount */
	int ctx_rc, ctx_dev;   /* cuCtxGetDevice */
	int get_calls;         /* cuDeviceGet(ordinal 0) */
	int major, minor, integrated, attr_rc, integrated_rc;
	int version;
	const char *name;      /* NULL: cuDeviceGetName fails */
	int asked_dev;         /* the device the attributes were asked for */
} drv;

static int s_count(int *n) { *n = drv.count; return drv.count_rc; }
static int s_ctx(int *dev) { *dev = drv.ctx_dev; return drv.ctx_rc; }
static int s_get(int *dev, int ordinal) { drv.get_calls++; *dev = 100 + ordinal; return 0; }
static int s_version(int *v) { *v = drv.version; return 0; }
static int s_name(char *buf, int len, int dev)
{
	(void)dev;
	if (!drv.name)
		return 1;
	snprintf(buf, (size_t)len, "%s", drv.name);
	return 0;
}
static int s_attr(int *v, int attr, int dev)
{
	drv.asked_dev = dev;
	switch (attr) {
	case KIMG_ATTR_CC_MAJOR: *v = drv.major; return drv.attr_rc;
	case KIMG_ATTR_CC_MINOR: *v = drv.minor; return drv.attr_rc;
	case KIMG_ATTR_INTEGRATED: *v = drv.integrated; return drv.integrated_rc;
	default: return 1;
	}
}

static const struct kimg_cu_api scripted = {
	.cuDriverGetVersion = s_version, .cuDeviceGetCount = s_count, .cuDeviceGet = s_get,
	.cuCtxGetDevice = s_ctx, .cuDeviceGetName = s_name, .cuDeviceGetAttribute = s_attr,
};

static void script(int major, int minor, int integrated, const char *name)
{
	memset(&drv, 0, sizeof drv);
	drv.count = 1;
	drv.major = major, drv.minor = minor, drv.integrated = integrated;
	drv.version = 13000;
	drv.name = name;
}

START_TEST(device_facts_hopper)
{
	struct kimg_device d;
	bool igpu = true;
	script(9, 0, 0, "NVIDIA H200");
	ck_assert_int_eq(kimg_cu_device_facts(&scripted, 3, &d, &igpu), 0);
	ck_assert_int_eq(drv.asked_dev, 3);
	ck_assert_uint_eq(d.cc.sm, 90);
	ck_assert_int_eq(d.cc.variant, KIMG_VARIANT_PLAIN);
	ck_assert(!d.tegra && !igpu);
	ck_assert_int_eq(d.ordinal, 3);
	ck_assert_int_eq(d.driver_version, 13000);
	ck_assert_str_eq(d.name, "NVIDIA H200");
	ck_assert(!d.force_ptx_jit && !d.disable_ptx_jit);
}
END_TEST

/* Orin (8.7) is Tegra; GB10 (12.1) is integrated but runs desktop cubins */
START_TEST(device_facts_integrated_is_tegra_only_by_the_table)
{
	struct kimg_device d;
	bool igpu = false;
	script(8, 7, 1, "Orin");
	ck_assert_int_eq(kimg_cu_device_facts(&scripted, 0, &d, &igpu), 0);
	ck_assert(d.tegra && igpu);
	script(12, 1, 1, "NVIDIA GB10");
	ck_assert_int_eq(kimg_cu_device_facts(&scripted, 0, &d, &igpu), 0);
	ck_assert(!d.tegra && igpu);
	script(8, 7, 1, "Orin");
	drv.integrated_rc = 1; /* the attribute unknown: not integrated */
	ck_assert_int_eq(kimg_cu_device_facts(&scripted, 0, &d, &igpu), 0);
	ck_assert(!d.tegra && !igpu);
}
END_TEST

START_TEST(device_facts_failures)
{
	struct kimg_device d;
	memset(&d, 0x5a, sizeof d);
	script(9, 0, 0, "x");
	drv.attr_rc = 101; /* CUDA_ERROR_INVALID_DEVICE */
	ck_assert_int_eq(kimg_cu_device_facts(&scripted, 0, &d, NULL), 101);
	ck_assert_int_eq(d.ordinal, 0x5a5a5a5a); /* untouched */
	script(9, 0, 0, NULL); /* no name: "" */
	ck_assert_int_eq(kimg_cu_device_facts(&scripted, 0, &d, NULL), 0);
	ck_assert_str_eq(d.name, "");
	struct kimg_cu_api none = { 0 };
	ck_assert_int_eq(kimg_cu_device_facts(&none, 0, &d, NULL), -1);
}
END_TEST

START_TEST(current_device_context_else_ordinal_0)
{
	int dev = -1;
	script(9, 0, 0, "x");
	drv.ctx_dev = 2;
	ck_assert_int_eq(kimg_cu_current_device(&scripted, &dev), 0);
	ck_assert_int_eq(dev, 2);
	ck_assert_int_eq(drv.get_calls, 0);
	drv.ctx_rc = 201; /* CUDA_ERROR_INVALID_CONTEXT: none current */
	ck_assert_int_eq(kimg_cu_current_device(&scripted, &dev), 0);
	ck_assert_int_eq(dev, 100); /* the driver's handle for ordinal 0 */
	ck_assert_int_eq(drv.get_calls, 1);
	struct kimg_cu_api no_ctx = scripted;
	no_ctx.cuCtxGetDevice = NULL;
	ck_assert_int_eq(kimg_cu_current_device(&no_ctx, &dev), 0);
	ck_assert_int_eq(dev, 100);
}
END_TEST

START_TEST(current_device_needs_an_initialised_driver)
{
	int dev = -1;
	script(9, 0, 0, "x");
	drv.count_rc = 3; /* CUDA_ERROR_NOT_INITIALIZED: before cuInit */
	ck_assert_int_eq(kimg_cu_current_device(&scripted, &dev), 3);
	script(9, 0, 0, "x");
	drv.count = 0;
	ck_assert_int_eq(kimg_cu_current_device(&scripted, &dev), 100);
	ck_assert_int_eq(drv.get_calls, 0);
	struct kimg_cu_api none = { 0 };
	ck_assert_int_eq(kimg_cu_current_device(&none, &dev), -1);
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
	tcase_add_test(tc, device_facts_hopper);
	tcase_add_test(tc, device_facts_integrated_is_tegra_only_by_the_table);
	tcase_add_test(tc, device_facts_failures);
	tcase_add_test(tc, current_device_context_else_ordinal_0);
	tcase_add_test(tc, current_device_needs_an_initialised_driver);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
