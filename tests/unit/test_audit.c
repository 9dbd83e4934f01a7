/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of KIMG_AUDIT's policy (shim/diag/audit.c), with the
 * diagnosis layer linked as a library (build/libkimgdiag.a) and the
 * stand-in driver behind its up-calls (driver_standin.c): a module that
 * cannot run on the device is reported at its load, once per (file,
 * cause) however many modules share them, with the cause and the fix;
 * a module that runs costs no output; KIMG_ON_ERROR stops the process at
 * the load. The expectations are written by hand from how the fixtures are
 * built (tests/fixtures/fixtures.mk: sm80.* carry sm_80 SASS only,
 * multi.fatbin sm_80 ... sm_120 with compute_90 PTX) and from CUDA's rule
 * that SASS runs only on its own major version. */
#include <stdlib.h>

#include "audit.h"
#include "device_query.h"
#include "driver_standin.h"
#include "testutil.h"

static const char *const audit_json[] = { "KIMG_AUDIT=1", "KIMG_FORMAT=json", NULL };
static const char *const audit_text[] = { "KIMG_AUDIT=1", "KIMG_FORMAT=text", NULL };

/* Audit one module loaded from memory (as cuLibraryLoadData hands it). */
static bool audit_memory(const void *image)
{
	struct kimg_load_module m;
	struct kimg_device d;
	ck_assert_int_eq(kimg_load_module_read(&m, "cuLibraryLoadData", image, NULL), 0);
	ck_assert(kimg_load_device(&d));
	bool cannot_run = kimg_audit_check(&m, &d);
	kimg_load_module_close(&m);
	return cannot_run;
}

/* Audit one module loaded from a file (cuModuleLoad). */
static bool audit_path(const char *path)
{
	struct kimg_load_module m;
	struct kimg_device d;
	ck_assert_int_eq(kimg_load_module_read(&m, "cuModuleLoad", NULL, path), 0);
	ck_assert(kimg_load_device(&d));
	bool cannot_run = kimg_audit_check(&m, &d);
	kimg_load_module_close(&m);
	return cannot_run;
}

START_TEST(device_comes_from_the_driver)
{
	struct kimg_device d;
	diag_start(87, audit_json);
	ck_assert(kimg_load_device(&d));
	ck_assert_uint_eq(d.cc.sm, 87);
	ck_assert_int_eq(d.driver_version, 13000); /* the stand-in's default */
	ck_assert_str_eq(d.name, "Fake GPU");
	diag_end();
}
END_TEST

START_TEST(wrong_arch_reported_at_load_with_cause_and_fix)
{
	diag_start(90, audit_json);
	struct kimg_span fat = fixture_load("sm80.fatbin");
	ck_assert(audit_memory(fat.data));
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"call\":\"cuLibraryLoadData\""));
	ck_assert_ptr_nonnull(strstr(log, "\"code\":209"));
	ck_assert_ptr_nonnull(strstr(log, "\"arch\":\"sm_80\""));
	ck_assert_ptr_nonnull(strstr(log, "\"sm\":\"9.0\""));
	/* another major version: S1, and the fix builds sm_90 */
	ck_assert_ptr_nonnull(strstr(log, "\"reason\":\"different_major\""));
	ck_assert_ptr_nonnull(strstr(log, "\"rule\":\"S1\""));
	ck_assert_ptr_nonnull(strstr(log, "code=sm_90"));
	ck_assert_ptr_nonnull(strstr(log, "\"audit\":true"));
	free(log);
	fixture_free(fat);
	diag_end();
}
END_TEST

START_TEST(module_that_runs_is_silent)
{
	diag_start(86, audit_json);
	/* sm_80 SASS runs on 8.6 (same major, not above it) */
	struct kimg_span sm80 = fixture_load("sm80.fatbin");
	ck_assert(!audit_memory(sm80.data));
	ck_assert(!audit_path(fixture_path("sm80.cubin")));
	/* multi.fatbin has sm_80 SASS for 8.6 */
	struct kimg_span multi = fixture_load("multi.fatbin");
	ck_assert(!audit_memory(multi.data));
	kimg_report_flush_held();
	char *log = diag_log_text();
	ck_assert_str_eq(log, "");
	free(log);
	fixture_free(sm80);
	fixture_free(multi);
	diag_end();
}
END_TEST

/* Three modules inside one loaded file, as the fatbins libtorch_cuda.so
 * registers lie in it: copies of sm80.fatbin in this program's own memory
 * (the main program is a loaded object, so each copy belongs to its file). */
#define SLOT 16384
static unsigned char in_program[3][SLOT] __attribute__((aligned(16)));

static void *module_in_program(int i, const char *fixture)
{
	struct kimg_span s = fixture_load(fixture);
	ck_assert_uint_le(s.size, SLOT);
	memcpy(in_program[i], s.data, s.size);
	fixture_free(s);
	return in_program[i];
}

/* libtorch_cuda.so registers hundreds of fatbins failing for one reason:
 * one report for the file and cause, with the count */
START_TEST(once_per_file_and_cause)
{
	diag_start(90, audit_json);
	for (int i = 0; i < 3; i++)
		ck_assert(audit_memory(module_in_program(i, "sm80.fatbin")));
	/* the first is held while its group grows: nothing written yet */
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 0);
	free(log);
	/* another file: the first group's report is written, the second held */
	ck_assert(audit_path(fixture_path("sm80.cubin")));
	log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"audit_modules\":3"));
	free(log);
	kimg_report_flush_held();
	log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 2);
	ck_assert_uint_eq(count_of(log, "\"audit_modules\":1"), 1);
	ck_assert_uint_eq(count_of(log, "\"verdict\":{\"outcome\":\"cannot_run\""), 2);
	free(log);
	/* flushed once: a second flush writes nothing more */
	kimg_report_flush_held();
	log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 2);
	free(log);
	diag_end();
}
END_TEST

START_TEST(group_line_counts_the_modules)
{
	diag_start(90, audit_text);
	for (int i = 0; i < 3; i++)
		ck_assert(audit_memory(module_in_program(i, "sm80.fatbin")));
	kimg_report_flush_held();
	kimg_report_summary();
	char *log = diag_log_text();
	char exe[512], want[1200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	snprintf(want, sizeof want, "kimg: audit:   %s: 3 modules cannot run (", exe);
	ck_assert_msg(strstr(log, want) != NULL, "no group line '%s' in:\n%s", want, log);
	ck_assert_ptr_nonnull(strstr(log, "[S1], error 209), one report\n"));
	/* one text report stands for the three */
	ck_assert_uint_eq(count_of(log, "kimg: audit: cuLibraryLoadData loads a module that cannot run on this device: 209 "), 1);
	ck_assert_ptr_nonnull(strstr(log, "; 3 modules of this file, same cause: this report stands for all\n"));
	free(log);
	diag_end();
}
END_TEST

/* one file loaded by path again and again is one module (one report) */
START_TEST(same_path_again_is_one_module)
{
	diag_start(90, audit_json);
	const char *path = fixture_path("sm80.cubin");
	for (int i = 0; i < 3; i++)
		ck_assert(audit_path(path));
	kimg_report_flush_held();
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"audit_modules\":1"));
	ck_assert_ptr_nonnull(strstr(log, "\"call\":\"cuModuleLoad\""));
	free(log);
	diag_end();
}
END_TEST

/* the same in-memory module seen twice (registered, then loaded by the
 * runtime): one report, counted once */
START_TEST(same_module_again_counted_once)
{
	diag_start(90, audit_json);
	struct kimg_span fat = fixture_load("sm80.fatbin");
	ck_assert(audit_memory(fat.data));
	ck_assert(audit_memory(fat.data));
	kimg_report_flush_held();
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	free(log);
	fixture_free(fat);
	diag_end();
}
END_TEST

START_TEST(on_error_exit_stops_at_the_load)
{
	static const char *const vars[] = { "KIMG_AUDIT=1", "KIMG_FORMAT=json", "KIMG_ON_ERROR=exit:7", NULL };
	diag_start(90, vars);
	struct kimg_span fat = fixture_load("sm80.fatbin");
	audit_memory(fat.data);
	ck_abort_msg("KIMG_ON_ERROR=exit:7 did not end the process at the audit");
}
END_TEST

START_TEST(unreadable_module_is_left_to_the_driver)
{
	struct kimg_load_module m;
	static const char junk[4096] = "not a CUDA module";
	diag_start(90, audit_json);
	ck_assert_int_lt(kimg_load_module_read(&m, "cuModuleLoadData", junk, NULL), 0);
	kimg_load_module_close(&m);
	ck_assert_int_lt(kimg_load_module_read(&m, "cuModuleLoad", NULL, "/nonexistent/kimg.cubin"), 0);
	kimg_load_module_close(&m);
	char *log = diag_log_text();
	ck_assert_str_eq(log, "");
	free(log);
	diag_end();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("policy");
	tcase_add_test(tc, device_comes_from_the_driver);
	tcase_add_test(tc, wrong_arch_reported_at_load_with_cause_and_fix);
	tcase_add_test(tc, module_that_runs_is_silent);
	tcase_add_test(tc, once_per_file_and_cause);
	tcase_add_test(tc, group_line_counts_the_modules);
	tcase_add_test(tc, same_path_again_is_one_module);
	tcase_add_test(tc, same_module_again_counted_once);
	tcase_add_exit_test(tc, on_error_exit_stops_at_the_load, 7);
	tcase_add_test(tc, unreadable_module_is_left_to_the_driver);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	/* each test in its own process: the layer's state is per process */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
