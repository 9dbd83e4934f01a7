/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/dispatch.c: one failing module judged against
 * its file (F0-F3), and the dispatching-library table's matching. */
#include "testutil.h"
#include "file_rules.h"

static struct kimg_image img(enum kimg_image_kind k, unsigned sm, enum kimg_arch_variant v)
{
	return test_image(k, sm, v, k == KIMG_IMAGE_PTX ? 900 : 0);
}

static struct kimg_dispatch_verdict judge(const char *file, const struct kimg_image *imgs, size_t n, bool runs_here)
{
	struct kimg_device d = device(90, 13000);
	struct kimg_dispatch_verdict v;
	kimg_dispatch_judge_module(file, imgs, n, &d, runs_here, &v);
	return v;
}

/* NCCL's case: sm_100f only, in a file with sm_90 code */
START_TEST(family_code_for_other_gpus)
{
	struct kimg_image m[] = { img(KIMG_IMAGE_SASS, 100, KIMG_VARIANT_F) };
	struct kimg_dispatch_verdict v = judge("/x/libfoo.so", m, 1, true);
	ck_assert(v.dispatched);
	ck_assert_str_eq(v.rule, "F1");
	ck_assert_ptr_null(v.library);
	struct kimg_image a[] = { img(KIMG_IMAGE_SASS, 100, KIMG_VARIANT_A), img(KIMG_IMAGE_PTX, 100, KIMG_VARIANT_A) };
	ck_assert_str_eq(judge(NULL, a, 2, true).rule, "F1");
}
END_TEST

/* F0 before anything: a file with no code for the GPU fails */
START_TEST(file_without_code_here)
{
	struct kimg_image m[] = { img(KIMG_IMAGE_SASS, 100, KIMG_VARIANT_F) };
	struct kimg_dispatch_verdict v = judge("libnccl.so.2", m, 1, false);
	ck_assert(!v.dispatched);
	ck_assert_str_eq(v.rule, "F0");
}
END_TEST

/* plain code for another GPU: dispatched only in a table library (F2) */
START_TEST(plain_code_needs_the_table)
{
	struct kimg_image m[] = { img(KIMG_IMAGE_SASS, 80, KIMG_VARIANT_PLAIN) };
	struct kimg_dispatch_verdict v = judge("/usr/lib/libcudnn_engines_precompiled.so.9", m, 1, true);
	ck_assert(v.dispatched);
	ck_assert_str_eq(v.rule, "F2");
	ck_assert_str_eq(v.library, "cuDNN");
	v = judge("/home/me/libmyext.so", m, 1, true);
	ck_assert(!v.dispatched);
	ck_assert_str_eq(v.rule, "F3");
	/* mixed a + plain: not F1 */
	struct kimg_image mixed[] = { img(KIMG_IMAGE_SASS, 100, KIMG_VARIANT_A), img(KIMG_IMAGE_SASS, 80, KIMG_VARIANT_PLAIN) };
	ck_assert_str_eq(judge("libx.so", mixed, 2, true).rule, "F3");
	/* LTO-IR only: never loaded, not dispatch */
	struct kimg_image lto[] = { img(KIMG_IMAGE_LTOIR, 100, KIMG_VARIANT_A) };
	ck_assert_str_eq(judge("libx.so", lto, 1, true).rule, "F3");
	/* sm_90a on 9.0 fits: not code for other GPUs */
	struct kimg_image here[] = { img(KIMG_IMAGE_SASS, 90, KIMG_VARIANT_A), img(KIMG_IMAGE_SASS, 100, KIMG_VARIANT_A) };
	ck_assert_str_eq(judge("libx.so", here, 2, true).rule, "F3");
}
END_TEST

START_TEST(library_table)
{
	ck_assert_str_eq(kimg_dispatch_library("/a/b/libcublasLt.so.13"), "cuBLASLt");
	ck_assert_str_eq(kimg_dispatch_library("libcublas.so.13"), "cuBLAS");
	ck_assert_str_eq(kimg_dispatch_library("libnccl.so.2"), "NCCL");
	ck_assert_str_eq(kimg_dispatch_library("libnvshmem_host.so.3"), "NVSHMEM");
	ck_assert_ptr_null(kimg_dispatch_library("libcublasfoo.so"));
	ck_assert_ptr_null(kimg_dispatch_library("/x/libnccl"));
	ck_assert_ptr_null(kimg_dispatch_library("libtorch_cuda.so"));
	ck_assert_ptr_null(kimg_dispatch_library(NULL));
}
END_TEST

static Suite *dispatch_suite(void)
{
	Suite *s = suite_create("dispatch");
	TCase *tc = tcase_create("rows");
	tcase_add_test(tc, family_code_for_other_gpus);
	tcase_add_test(tc, file_without_code_here);
	tcase_add_test(tc, plain_code_needs_the_table);
	tcase_add_test(tc, library_table);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(dispatch_suite());
}
