/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the failure report (shim/diag/diagnose.c, emit.c):
 * built from the module the registry names, judged against the device the
 * stand-in driver shows (driver_standin.c), written once per (module,
 * error) in KIMG_FORMAT, counted for the exit summary, followed by
 * KIMG_ON_ERROR. The diagnosis layer is linked as a library
 * (build/libkimgdiag.a). Expectations by hand from the fixtures' recipes
 * (tests/fixtures/fixtures.mk): sm80.cubin is sm_80 SASS only, so on 9.0
 * it cannot run (another major version) and the fix adds sm_90; on 8.6 it
 * runs; multi.fatbin carries sm_90 SASS. */
#include <stdlib.h>

#include "driver_standin.h"
#include "testutil.h"

static const char *const json[] = { "KIMG_FORMAT=json", NULL };
static const char *const text[] = { "KIMG_FORMAT=text", NULL };

/* A kernel lookup failing in a module loaded from memory. */
static void lookup_fails(const void *module, const void *image, const char *kernel, int error)
{
	struct kimg_origin o = { .image = image };
	kimg_registry_add(KIMG_HANDLE_MODULE, module, &o);
	struct kimg_failure f = {
		.call = "cuModuleGetFunction", .error = error, .kernel = kernel,
		.handle_kind = KIMG_HANDLE_MODULE, .handle = module,
	};
	kimg_report_failure(&f);
}

#define MOD(n) ((const void *)(uintptr_t)(0x7000 + (n)))

START_TEST(wrong_arch_names_cause_device_and_fix)
{
	diag_start(90, json);
	struct kimg_span cubin = fixture_load("sm80.cubin");
	lookup_fails(MOD(1), cubin.data, "axpy", 209);
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"code\":209,\"name\":\"CUDA_ERROR_NO_BINARY_FOR_GPU\""));
	ck_assert_ptr_nonnull(strstr(log, "\"call\":\"cuModuleGetFunction\""));
	ck_assert_ptr_nonnull(strstr(log, "\"kernel\":{\"name\":\"axpy\""));
	ck_assert_ptr_nonnull(strstr(log, "\"name\":\"Fake GPU\",\"sm\":\"9.0\""));
	ck_assert_ptr_nonnull(strstr(log, "\"arch\":\"sm_80\""));
	ck_assert_ptr_nonnull(strstr(log, "\"outcome\":\"cannot_run\""));
	ck_assert_ptr_nonnull(strstr(log, "\"reason\":\"different_major\""));
	ck_assert_ptr_nonnull(strstr(log, "\"rule\":\"S1\""));
	ck_assert_ptr_nonnull(strstr(log, "code=sm_90"));
	ck_assert_ptr_nonnull(strstr(log, "\"program\":\"kimg-unit\""));
	free(log);
	fixture_free(cubin);
	diag_end();
}
END_TEST

START_TEST(one_report_per_module_and_error)
{
	diag_start(90, json);
	struct kimg_span a = fixture_load("sm80.cubin"), b = fixture_load("sm80.cubin");
	lookup_fails(MOD(1), a.data, "axpy", 209);
	lookup_fails(MOD(1), a.data, "other", 209);
	lookup_fails(MOD(1), a.data, "axpy", 209);
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	free(log);
	/* the same bytes at another address are another module */
	lookup_fails(MOD(2), b.data, "axpy", 209);
	log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 2);
	free(log);
	fixture_free(a);
	fixture_free(b);
	diag_end();
}
END_TEST

START_TEST(summary_counts_kernels_and_modules)
{
	diag_start(90, text);
	struct kimg_span a = fixture_load("sm80.cubin"), b = fixture_load("sm80.cubin");
	lookup_fails(MOD(1), a.data, "axpy", 209);
	lookup_fails(MOD(1), a.data, "other", 209);
	lookup_fails(MOD(2), b.data, "axpy", 209);
	kimg_report_summary();
	char *log = diag_log_text();
	ck_assert_uint_eq(count_of(log, "kimg: cuModuleGetFunction returned 209 CUDA_ERROR_NO_BINARY_FOR_GPU"), 2);
	ck_assert_ptr_nonnull(strstr(log, "kimg:   kernel: axpy\n"));
	ck_assert_ptr_nonnull(strstr(log, "kimg: 3 kernels in 2 modules failed to load (see above)\n"));
	free(log);
	fixture_free(a);
	fixture_free(b);
	diag_end();
}
END_TEST

/* 500 (not found) is an image error only when no image fits */
START_TEST(not_found_in_a_fitting_module_is_silent)
{
	diag_start(90, json);
	struct kimg_span fat = fixture_load("multi.fatbin");
	lookup_fails(MOD(1), fat.data, "no_such_kernel", 500);
	char *log = diag_log_text();
	ck_assert_str_eq(log, "");
	free(log);
	fixture_free(fat);
	diag_end();
}
END_TEST

START_TEST(not_found_in_a_module_that_cannot_run_is_reported)
{
	diag_start(90, json);
	struct kimg_span cubin = fixture_load("sm80.cubin");
	lookup_fails(MOD(1), cubin.data, "axpy", 500);
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"code\":500"));
	ck_assert_ptr_nonnull(strstr(log, "\"rule\":\"S1\""));
	free(log);
	fixture_free(cubin);
	diag_end();
}
END_TEST

/* the driver said 209 where the rules say the module runs: reported, with
 * the note that the error may have another cause, and no fix */
START_TEST(error_the_rules_do_not_expect_says_so)
{
	diag_start(86, json);
	struct kimg_span cubin = fixture_load("sm80.cubin");
	lookup_fails(MOD(1), cubin.data, "axpy", 209);
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"sm\":\"8.6\""));
	ck_assert_ptr_nonnull(strstr(log, "the error may have another cause"));
	ck_assert_ptr_null(strstr(log, "code=sm_86"));
	free(log);
	fixture_free(cubin);
	diag_end();
}
END_TEST

START_TEST(unknown_handle_is_said)
{
	diag_start(90, json);
	struct kimg_failure f = { .call = "cuModuleGetFunction", .error = 209, .kernel = "axpy",
				  .handle_kind = KIMG_HANDLE_MODULE, .handle = MOD(9) };
	kimg_report_failure(&f);
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "kimg did not see this handle being loaded"));
	free(log);
	diag_end();
}
END_TEST

START_TEST(on_error_exit_after_the_report)
{
	static const char *const vars[] = { "KIMG_FORMAT=json", "KIMG_ON_ERROR=exit:86", NULL };
	diag_start(90, vars);
	struct kimg_span cubin = fixture_load("sm80.cubin");
	lookup_fails(MOD(1), cubin.data, "axpy", 209);
	ck_abort_msg("KIMG_ON_ERROR=exit:86 did not end the process");
}
END_TEST

START_TEST(disabled_writes_nothing)
{
	static const char *const vars[] = { "KIMG_FORMAT=json", "KIMG_DISABLE=1", NULL };
	diag_start(90, vars);
	struct kimg_span cubin = fixture_load("sm80.cubin");
	lookup_fails(MOD(1), cubin.data, "axpy", 209);
	char *log = diag_log_text();
	ck_assert_str_eq(log, "");
	free(log);
	fixture_free(cubin);
	diag_end();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("diagnose");
	TCase *tc = tcase_create("report");
	tcase_add_test(tc, wrong_arch_names_cause_device_and_fix);
	tcase_add_test(tc, one_report_per_module_and_error);
	tcase_add_test(tc, summary_counts_kernels_and_modules);
	tcase_add_test(tc, not_found_in_a_fitting_module_is_silent);
	tcase_add_test(tc, not_found_in_a_module_that_cannot_run_is_reported);
	tcase_add_test(tc, error_the_rules_do_not_expect_says_so);
	tcase_add_test(tc, unknown_handle_is_said);
	tcase_add_exit_test(tc, on_error_exit_after_the_report, 86);
	tcase_add_test(tc, disabled_writes_nothing);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	/* each test in its own process: the layer's state is per process */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
