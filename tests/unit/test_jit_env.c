/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the JIT switches read from an image's Env
 * (core/jit_env.c), against the CUDA Programming Guide's environment
 * variables (docs/loading.md section 9): "=1" turns a switch on, the
 * specific name wins over the generic one, other values are off, the last
 * entry of a name wins; the device's switches are replaced, not merged. */
#include <string.h>

#include "jit_env.h"
#include "testutil.h"

#define READ(...)                                                                   \
	do {                                                                        \
		const char *env_[] = { __VA_ARGS__ };                               \
		kimg_jit_env_read(env_, sizeof env_ / sizeof env_[0], &e);          \
	} while (0)

START_TEST(switches_as_the_driver_reads_them)
{
	struct kimg_jit_env e;
	READ("PATH=/usr/bin", "CUDA_FORCE_PTX_JIT=1");
	ck_assert(e.on[KIMG_JIT_FORCE_PTX] && !e.on[KIMG_JIT_DISABLE_PTX]);
	ck_assert_str_eq(e.set_by[KIMG_JIT_FORCE_PTX], "CUDA_FORCE_PTX_JIT=1");
	READ("CUDA_FORCE_JIT=1");
	ck_assert(e.on[KIMG_JIT_FORCE_PTX]);
	READ("CUDA_FORCE_PTX_JIT=0", "CUDA_FORCE_JIT=1");
	ck_assert(!e.on[KIMG_JIT_FORCE_PTX]);
	ck_assert_str_eq(e.set_by[KIMG_JIT_FORCE_PTX], "CUDA_FORCE_PTX_JIT=0");
	READ("CUDA_DISABLE_JIT=1");
	ck_assert(e.on[KIMG_JIT_DISABLE_PTX] && !e.on[KIMG_JIT_FORCE_PTX]);
	READ("CUDA_DISABLE_PTX_JIT=yes", "CUDA_FORCE_PTX_JIT=", "CUDA_FORCE_PTX_JITX=1", "XCUDA_DISABLE_JIT=1");
	ck_assert(!kimg_jit_env_any(&e));
	READ("CUDA_FORCE_PTX_JIT=1", "CUDA_FORCE_PTX_JIT=0");
	ck_assert(!e.on[KIMG_JIT_FORCE_PTX]);
	READ("CUDA_FORCE_PTX_JIT=01");
	ck_assert(e.on[KIMG_JIT_FORCE_PTX]);
	READ("CUDA_FORCE_PTX_JIT");
	ck_assert(!kimg_jit_env_any(&e) && !e.set_by[KIMG_JIT_FORCE_PTX]);
	kimg_jit_env_read(NULL, 0, &e);
	ck_assert(!kimg_jit_env_any(&e));
}
END_TEST

START_TEST(the_image_env_replaces_the_device_switches)
{
	struct kimg_jit_env e;
	struct kimg_device d;
	memset(&d, 0, sizeof d);
	d.force_ptx_jit = true; /* kimg-probe's own environment */
	READ("CUDA_DISABLE_PTX_JIT=1");
	kimg_jit_env_apply(&e, &d);
	ck_assert(!d.force_ptx_jit && d.disable_ptx_jit);
	ck_assert_str_eq(kimg_jit_switch_name(KIMG_JIT_FORCE_PTX), "CUDA_FORCE_PTX_JIT");
	ck_assert_str_eq(kimg_jit_switch_name(KIMG_JIT_SWITCH_COUNT), "?");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jit_env");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, switches_as_the_driver_reads_them);
	tcase_add_test(tc, the_image_env_replaces_the_device_switches);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
