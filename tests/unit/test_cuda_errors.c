/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/cuda_errors.c: docs/rules.md §9. */
#include <string.h>

#include "testutil.h"
#include "cuda_errors.h"

struct err_case {
	int code;
	const char *driver;
	const char *runtime;
	bool image;
	bool confirm;
};

static const struct err_case errs[] = {
	{ 0, "CUDA_SUCCESS", "cudaSuccess", false, false },
	{ 34, "CUDA_ERROR_STUB_LIBRARY", "cudaErrorStubLibrary", false, false },
	{ 35, NULL, "cudaErrorInsufficientDriver", false, false },          /* runtime only */
	{ 36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "cudaErrorCallRequiresNewerDriver", false, false },
	{ 98, NULL, "cudaErrorInvalidDeviceFunction", true, true },          /* runtime only; needs the rules */
	{ 100, "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice", false, false },
	{ 101, "CUDA_ERROR_INVALID_DEVICE", "cudaErrorInvalidDevice", false, false },
	{ 200, "CUDA_ERROR_INVALID_IMAGE", "cudaErrorInvalidKernelImage", true, false },
	{ 209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "cudaErrorNoKernelImageForDevice", true, false },
	{ 218, "CUDA_ERROR_INVALID_PTX", "cudaErrorInvalidPtx", true, false },
	{ 221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "cudaErrorJitCompilerNotFound", true, false },
	{ 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "cudaErrorUnsupportedPtxVersion", true, false },
	{ 223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "cudaErrorJitCompilationDisabled", true, false },
	{ 224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "cudaErrorUnsupportedExecAffinity", false, false },
	{ 225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", "cudaErrorUnsupportedDevSideSync", false, false },
	{ 300, "CUDA_ERROR_INVALID_SOURCE", "cudaErrorInvalidSource", true, false },
	{ 301, "CUDA_ERROR_FILE_NOT_FOUND", "cudaErrorFileNotFound", false, false },
	{ 302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "cudaErrorSharedObjectSymbolNotFound", false, false },
	{ 303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "cudaErrorSharedObjectInitFailed", false, false },
	{ 500, "CUDA_ERROR_NOT_FOUND", "cudaErrorSymbolNotFound", true, true }, /* Tegra case, §5 */
	{ 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cudaErrorSystemDriverMismatch", false, false },
	{ 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "cudaErrorCompatNotSupportedOnDevice", false, false },
};

static void assert_str_or_null(const char *got, const char *want, int code)
{
	if (!want)
		ck_assert_msg(got == NULL, "%d: expected no name, got %s", code, got);
	else
		ck_assert_msg(got && strcmp(got, want) == 0, "%d: %s, want %s", code, got ? got : "(null)", want);
}

START_TEST(table_rows)
{
	const struct err_case *c = &errs[_i];
	assert_str_or_null(kimg_cuda_error_name(c->code), c->driver, c->code);
	assert_str_or_null(kimg_cuda_runtime_error_name(c->code), c->runtime, c->code);
	ck_assert_ptr_nonnull(kimg_cuda_error_text(c->code));
	ck_assert_int_eq(kimg_cuda_error_is_image_class(c->code), c->image);
	ck_assert_int_eq(kimg_cuda_error_needs_confirmation(c->code), c->confirm);
}
END_TEST

START_TEST(texts_and_unknown)
{
	ck_assert_str_eq(kimg_cuda_error_text(209), "no kernel image suitable for the device");
	ck_assert_str_eq(kimg_cuda_error_text(222), "PTX from a newer, unsupported toolchain");
	ck_assert_str_eq(kimg_cuda_error_text(223), "PTX JIT disabled");
	ck_assert_ptr_null(kimg_cuda_error_name(999));
	ck_assert_ptr_null(kimg_cuda_runtime_error_name(-1));
	ck_assert_ptr_null(kimg_cuda_error_text(48)); /* pre-10.1 runtime number: not a current code */
	ck_assert(!kimg_cuda_error_is_image_class(999));
	ck_assert(!kimg_cuda_error_needs_confirmation(209));
}
END_TEST

/* Every image-class code says what the driver means (for failures the
 * image rules cannot explain); other codes have no cause. */
START_TEST(causes_for_image_class_codes)
{
	static const int image_codes[] = { 98, 200, 209, 218, 221, 222, 223, 300, 500 };
	for (size_t i = 0; i < sizeof image_codes / sizeof image_codes[0]; i++) {
		ck_assert(kimg_cuda_error_is_image_class(image_codes[i]));
		ck_assert_ptr_nonnull(kimg_cuda_error_cause(image_codes[i]));
	}
	ck_assert_ptr_nonnull(strstr(kimg_cuda_error_cause(221), "libnvidia-ptxjitcompiler.so.1"));
	ck_assert_ptr_nonnull(strstr(kimg_cuda_error_cause(200), "550.54.14"));
	ck_assert_ptr_null(kimg_cuda_error_cause(0));
	ck_assert_ptr_null(kimg_cuda_error_cause(100));
	ck_assert_ptr_null(kimg_cuda_error_cause(804));
}
END_TEST

static Suite *errors_suite(void)
{
	Suite *s = suite_create("cuda_errors");
	TCase *tc = tcase_create("table");
	tcase_add_loop_test(tc, table_rows, 0, (int)(sizeof errs / sizeof errs[0]));
	tcase_add_test(tc, texts_and_unknown);
	tcase_add_test(tc, causes_for_image_class_codes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(errors_suite());
}
