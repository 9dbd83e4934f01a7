/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of KIMG_FALLBACK's policy at a load (kimg_load_intercept,
 * shim/diag/fallback.c), with the diagnosis layer linked as a library
 * (build/libkimgdiag.a) and the stand-in driver behind its up-calls
 * (driver_standin.c). The driver decides on its own reading whether the
 * PTX stand-in loads and JIT-compiles (tests/fake_cuda/fake_cuda.c), so
 * "accepted" here is the driver's word, not kimg's. Expectations by hand:
 * ptx100.fatbin and compute100.ptx hold compute_100 PTX only (too new for
 * 9.0, lowered to sm_90 it runs); sm80.fatbin holds sm_80 SASS and no PTX
 * (nothing to stand in); multi.fatbin has sm_90 SASS (nothing to do). */
#include <stdlib.h>

#include "driver_standin.h"
#include "testutil.h"

static const char *const ptx_json[] = { "KIMG_FALLBACK=ptx", "KIMG_FORMAT=json", NULL };

/* The load hook's call for in-memory code (cuModuleLoadData). */
static bool intercept(const void *image, CUhandle *handle, CUresult *result)
{
	struct kimg_load_req req = { .call = "cuModuleLoadData", .kind = KIMG_HANDLE_MODULE, .image = image };
	*handle = NULL;
	*result = -1;
	return kimg_load_intercept(&req, standin_module_load, NULL, handle, result);
}

/* fixture bytes with a NUL after them (PTX text is loaded as a C string) */
static char *text_fixture(const char *name, const char *append)
{
	struct kimg_span s = fixture_load(name);
	size_t extra = append ? strlen(append) : 0;
	char *t = malloc(s.size + extra + 1);
	ck_assert(t != NULL);
	memcpy(t, s.data, s.size);
	if (extra)
		memcpy(t + s.size, append, extra);
	t[s.size + extra] = '\0';
	fixture_free(s);
	return t;
}

START_TEST(ptx_too_new_is_rescued_and_the_driver_runs_it)
{
	diag_start(90, ptx_json);
	struct kimg_span fat = fixture_load("ptx100.fatbin");
	CUhandle mod, fn = NULL;
	CUresult result;
	ck_assert(intercept(fat.data, &mod, &result));
	ck_assert_int_eq(result, KIMG_CUDA_SUCCESS);
	ck_assert_uint_eq(standin_loads, 1);
	ck_assert_ptr_nonnull(mod);
	/* the driver holds a module whose kernel it gives out */
	ck_assert_int_eq(standin_module_get_function(&fn, mod, "axpy"), 0);
	/* later failures on the handle are judged against the stand-in */
	struct kimg_origin o;
	ck_assert(kimg_registry_find(KIMG_HANDLE_MODULE, mod, &o));
	ck_assert_ptr_ne(o.image, fat.data);
	ck_assert_ptr_nonnull(strstr(o.image, ".target sm_90"));
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"applied\":true"));
	ck_assert_ptr_nonnull(strstr(log, "\"from\":\"sm_100\",\"to\":\"sm_90\""));
	/* without kimg the program would have had 209 at this load */
	ck_assert_ptr_nonnull(strstr(log, "\"code\":209"));
	free(log);
	fixture_free(fat);
	diag_end();
}
END_TEST

START_TEST(sass_only_is_refused_and_left_to_the_driver)
{
	diag_start(90, ptx_json);
	struct kimg_span fat = fixture_load("sm80.fatbin");
	CUhandle mod;
	CUresult result;
	ck_assert(!intercept(fat.data, &mod, &result));
	ck_assert_uint_eq(standin_loads, 0); /* nothing loaded in the program's place */
	ck_assert_ptr_null(mod);
	char *log = diag_log_text();
	/* said once, with the fix: not rescuable, the cause S1 */
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"applied\":false"));
	ck_assert_ptr_nonnull(strstr(log, "\"rule\":\"S1\""));
	ck_assert_ptr_nonnull(strstr(log, "code=sm_90"));
	free(log);
	fixture_free(fat);
	diag_end();
}
END_TEST

START_TEST(module_that_runs_is_not_touched)
{
	diag_start(90, ptx_json);
	struct kimg_span fat = fixture_load("multi.fatbin");
	CUhandle mod;
	CUresult result;
	ck_assert(!intercept(fat.data, &mod, &result));
	ck_assert_uint_eq(standin_loads, 0);
	char *log = diag_log_text();
	ck_assert_str_eq(log, "");
	free(log);
	fixture_free(fat);
	diag_end();
}
END_TEST

/* A library's load succeeds whatever the code: the fallback forces the
 * JIT with a kernel lookup, so a rejection is seen while it can be undone. */
static bool intercept_library(const void *image, CUhandle *handle, CUresult *result)
{
	struct kimg_load_req req = { .call = "cuLibraryLoadData", .kind = KIMG_HANDLE_LIBRARY, .image = image };
	*handle = NULL;
	*result = -1;
	return kimg_load_intercept(&req, standin_library_load, NULL, handle, result);
}

START_TEST(library_stand_in_is_compiled_at_load)
{
	diag_start(90, ptx_json);
	struct kimg_span fat = fixture_load("ptx100.fatbin");
	CUhandle lib, kernel;
	CUresult result;
	ck_assert(intercept_library(fat.data, &lib, &result));
	ck_assert_int_eq(result, KIMG_CUDA_SUCCESS);
	ck_assert_uint_eq(standin_loads, 1);
	ck_assert_int_eq(standin_library_get_kernel(&kernel, lib, "axpy"), 0);
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"applied\":true"));
	free(log);
	fixture_free(fat);
	diag_end();
}
END_TEST

/* PTX the stand-in driver's JIT rejects (its FAKE_JIT_REJECT marker, for
 * an instruction the lower target lacks), as a module and as a library
 * (whose load the fallback checks with a kernel lookup): unloaded,
 * reported, and the original load is the hook's to make */
static bool (*const rejecting_loads[])(const void *, CUhandle *, CUresult *) = { intercept, intercept_library };

START_TEST(jit_rejection_is_undone_and_reported)
{
	diag_start(90, ptx_json);
	char *ptx = text_fixture("compute100.ptx", "\n// FAKE_JIT_REJECT: uses an instruction sm_90 lacks\n");
	CUhandle handle;
	CUresult result;
	ck_assert_msg(!rejecting_loads[_i](ptx, &handle, &result), "%s", _i ? "library" : "module");
	ck_assert_uint_eq(standin_loads, 1);
	ck_assert_ptr_null(handle);
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"applied\":false"));
	ck_assert_ptr_nonnull(strstr(log, "JIT rejected the rewritten PTX: 218"));
	free(log);
	free(ptx);
	diag_end();
}
END_TEST

/* force-ptx:GLOB acts only on modules of matching files; heap memory
 * belongs to no file */
START_TEST(force_ptx_glob_selects_by_file)
{
	static const char *const vars[] = { "KIMG_FALLBACK=force-ptx:libnothing*.so", "KIMG_FORMAT=json", NULL };
	diag_start(90, vars);
	struct kimg_span fat = fixture_load("multi.fatbin");
	CUhandle mod;
	CUresult result;
	ck_assert(!intercept(fat.data, &mod, &result));
	ck_assert_uint_eq(standin_loads, 0);
	char *log = diag_log_text();
	ck_assert_str_eq(log, "");
	free(log);
	fixture_free(fat);
	diag_end();
}
END_TEST

/* force-ptx on a file it selects: the module runs as it is, but its PTX
 * is JIT-compiled in place of the SASS */
START_TEST(force_ptx_replaces_runnable_sass)
{
	static const char *const vars[] = { "KIMG_FALLBACK=force-ptx:*.fatbin", "KIMG_FORMAT=json", NULL };
	diag_start(90, vars);
	struct kimg_load_req req = { .call = "cuModuleLoad", .kind = KIMG_HANDLE_MODULE,
				     .path = fixture_path("multi.fatbin") };
	CUhandle mod = NULL;
	CUresult result = -1;
	ck_assert(kimg_load_intercept(&req, standin_module_load, NULL, &mod, &result));
	ck_assert_int_eq(result, KIMG_CUDA_SUCCESS);
	ck_assert_uint_eq(standin_loads, 1);
	CUhandle fn;
	ck_assert_int_eq(standin_module_get_function(&fn, mod, "axpy"), 0);
	char *log = diag_log_text();
	ck_assert_uint_eq(diag_reports(log), 1);
	ck_assert_ptr_nonnull(strstr(log, "\"mode\":\"force-ptx\""));
	ck_assert_ptr_nonnull(strstr(log, "\"applied\":true"));
	free(log);
	diag_end();
}
END_TEST

START_TEST(off_does_nothing)
{
	static const char *const vars[] = { "KIMG_FORMAT=json", NULL };
	diag_start(90, vars);
	struct kimg_span fat = fixture_load("ptx100.fatbin");
	CUhandle mod;
	CUresult result;
	ck_assert(!intercept(fat.data, &mod, &result));
	ck_assert_uint_eq(standin_loads, 0);
	char *log = diag_log_text();
	ck_assert_str_eq(log, "");
	free(log);
	fixture_free(fat);
	diag_end();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fallback");
	TCase *tc = tcase_create("policy");
	tcase_add_test(tc, ptx_too_new_is_rescued_and_the_driver_runs_it);
	tcase_add_test(tc, sass_only_is_refused_and_left_to_the_driver);
	tcase_add_test(tc, module_that_runs_is_not_touched);
	tcase_add_loop_test(tc, jit_rejection_is_undone_and_reported, 0, 2);
	tcase_add_test(tc, library_stand_in_is_compiled_at_load);
	tcase_add_test(tc, force_ptx_glob_selects_by_file);
	tcase_add_test(tc, force_ptx_replaces_runnable_sass);
	tcase_add_test(tc, off_does_nothing);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	/* each test in its own process: the layer's state is per process */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
