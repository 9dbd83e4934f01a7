/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/driver_log.c: reading the driver's error-log
 * messages (docs/loading.md §11). The oracle is the wording measured on the
 * H200 with driver 580.159.04, copied here by hand. */
#include <string.h>

#include "testutil.h"
#include "driver_log.h"

static bool parse(const char *msg, int *code, char *fn, size_t fn_size)
{
	return kimg_driver_log_parse_return(msg, strlen(msg), code, fn, fn_size);
}

START_TEST(returning_lines_as_measured)
{
	int code = 0;
	char fn[64];
	ck_assert(parse("Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel", &code, fn, sizeof fn));
	ck_assert_int_eq(code, 209);
	ck_assert_str_eq(fn, "cuLibraryGetKernel");
	ck_assert(parse("Returning 201 (CUDA_ERROR_INVALID_CONTEXT) from cuCtxGetDevice_v2", &code, fn, sizeof fn));
	ck_assert_int_eq(code, 201);
	ck_assert_str_eq(fn, "cuCtxGetDevice_v2");
	ck_assert(parse("Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetGlobal", &code, fn, sizeof fn));
	ck_assert_str_eq(fn, "cuLibraryGetGlobal");
}
END_TEST

START_TEST(prefix_and_trailing_text_are_skipped)
{
	int code = 0;
	char fn[64];
	ck_assert(parse("[12:01:02.003][140234][CUDA][E] Returning 222 (CUDA_ERROR_UNSUPPORTED_PTX_VERSION) from "
			"cuModuleLoadData\n",
			&code, fn, sizeof fn));
	ck_assert_int_eq(code, 222);
	ck_assert_str_eq(fn, "cuModuleLoadData");
	/* the name in parentheses is optional */
	ck_assert(parse("Returning 218 from cuLinkAddData_v2", &code, fn, sizeof fn));
	ck_assert_int_eq(code, 218);
	ck_assert_str_eq(fn, "cuLinkAddData_v2");
	/* a first "Returning" that is not the form does not hide a later one */
	ck_assert(parse("Returning soon; Returning 300 (CUDA_ERROR_INVALID_SOURCE) from cuFuncLoad", &code, fn, sizeof fn));
	ck_assert_int_eq(code, 300);
	ck_assert_str_eq(fn, "cuFuncLoad");
}
END_TEST

START_TEST(not_the_form)
{
	int code = 7;
	char fn[64] = "unchanged";
	static const char *const bad[] = {
		"No device code available for GPU ISA 90",
		"Returning",
		"Returning 209",
		"Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU",
		"Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from ",
		"Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from 9lives",
		"Returning -1 (x) from cuInit",
		"Returning 1234567890 (x) from cuInit", /* 10 digits: no overflow, no match */
		"Returning 209 (x) to cuInit",
		"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(!parse(bad[i], &code, fn, sizeof fn), "matched: %s", bad[i]);
	ck_assert_int_eq(code, 7);
	ck_assert(!kimg_driver_log_parse_return(NULL, 10, &code, fn, sizeof fn));
}
END_TEST

/* The length bounds the read: a message that is not NUL-terminated, cut
 * in the middle of the name, gives the name up to the cut. */
START_TEST(length_bounds_the_read)
{
	const char msg[] = "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernelXXXX";
	int code = 0;
	char fn[64];
	size_t cut = strlen(msg) - 4 - 6; /* "cuLibraryGet" + "Kernel" cut to "cuLibraryGet" */
	ck_assert(kimg_driver_log_parse_return(msg, cut, &code, fn, sizeof fn));
	ck_assert_str_eq(fn, "cuLibraryGet");
	ck_assert(!kimg_driver_log_parse_return(msg, 20, &code, fn, sizeof fn));
	/* a small output buffer cuts the name, NUL-terminated */
	char small[6];
	ck_assert(parse("Returning 209 (X) from cuLibraryGetKernel", &code, small, sizeof small));
	ck_assert_str_eq(small, "cuLib");
	ck_assert(!parse("Returning 209 (X) from cuLibraryGetKernel", &code, small, 0));
	/* fuzz_driver_log's finding: a 1-byte buffer matched with an empty name */
	ck_assert(!parse("Returning 2 (X) from cuInit", &code, small, 1));
}
END_TEST

START_TEST(image_phrases)
{
	static const char *const yes[] = {
		"No device code available for GPU ISA 90",
		"Kernel (rk) cannot be found in library due to compilation error",
		"JIT compilation failed",
	};
	static const char *const no[] = {
		"Returning 201 (CUDA_ERROR_INVALID_CONTEXT) from cuCtxGetDevice_v2",
		"Returning 500 (CUDA_ERROR_NOT_FOUND) from cuGetProcAddress_v2",
		"No device code",
		"",
	};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		ck_assert_msg(kimg_driver_log_names_image_problem(yes[i], strlen(yes[i])), "%s", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		ck_assert_msg(!kimg_driver_log_names_image_problem(no[i], strlen(no[i])), "%s", no[i]);
	/* bounded by the length */
	ck_assert(!kimg_driver_log_names_image_problem(yes[2], 10));
	/* no message (a callback given NULL with a length): names nothing */
	ck_assert(!kimg_driver_log_names_image_problem(NULL, 64));
}
END_TEST

START_TEST(kernel_names)
{
	char k[16];
	const char *m = "Kernel (rk) cannot be found in library due to compilation error";
	ck_assert(kimg_driver_log_kernel(m, strlen(m), k, sizeof k));
	ck_assert_str_eq(k, "rk");
	const char *longer = "Kernel (_Z20a_rather_long_kernelPf) cannot be found in library";
	ck_assert(kimg_driver_log_kernel(longer, strlen(longer), k, sizeof k));
	ck_assert_str_eq(k, "_Z20a_rather_lo"); /* cut to the buffer */
	const char *none[] = { "Kernel () cannot be found", "Kernel (rk", "Kernel (rk) was found", "no kernel" };
	for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
		ck_assert_msg(!kimg_driver_log_kernel(none[i], strlen(none[i]), k, sizeof k), "%s", none[i]);
}
END_TEST

static Suite *driver_log_suite(void)
{
	Suite *s = suite_create("driver_log");
	TCase *tc = tcase_create("messages");
	tcase_add_test(tc, returning_lines_as_measured);
	tcase_add_test(tc, prefix_and_trailing_text_are_skipped);
	tcase_add_test(tc, not_the_form);
	tcase_add_test(tc, length_bounds_the_read);
	tcase_add_test(tc, image_phrases);
	tcase_add_test(tc, kernel_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(driver_log_suite());
}
