/* SPDX-License-Identifier: Apache-2.0 */
/* For the unit tests of the diagnosis layer (test_audit, test_fallback,
 * test_diagnose): the stand-in driver behind shim/diag.h's up-calls
 * (driver_standin.c), and the set-up a test needs: options read as the
 * constructor reads them, reports written to a log file of the test's own,
 * read back as text. Each test runs in its own process (Check's fork mode),
 * so the layer's process-wide state starts empty in each. */
#ifndef KIMG_DRIVER_STANDIN_H
#define KIMG_DRIVER_STANDIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "diag_internal.h"

/* kimg_load_fn for the fallback: the stand-in driver's cuModuleLoadData,
 * counting its calls in standin_loads. */
extern unsigned standin_loads;
CUresult standin_module_load(void *ctx, const void *image, CUhandle *handle);
/* The same for libraries: cuLibraryLoadData, which succeeds whatever the
 * code (the driver's verdict comes at the kernel lookup). */
CUresult standin_library_load(void *ctx, const void *image, CUhandle *handle);
/* The stand-in driver's own lookups, to ask it about a handle. */
CUresult standin_module_get_function(CUhandle *fn, CUhandle mod, const char *name);
CUresult standin_library_get_kernel(CUhandle *kernel, CUhandle lib, const char *name);

/* The log file of this test's reports. */
static char diag_log[256];

/* The options of a process whose environment is `vars` (NULL-terminated
 * "KIMG_X=..." strings) plus KIMG_LOG=a fresh file; the device the stand-in
 * driver shows is SM `sm`. */
static inline void diag_start(unsigned sm, const char *const *vars)
{
	char smtext[16], logvar[300], warn[512] = "";
	char *envp[32];
	size_t n = 0;
	snprintf(diag_log, sizeof diag_log, "%s/kimg-unit-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	int fd = mkstemp(diag_log);
	ck_assert_msg(fd >= 0, "mkstemp %s", diag_log);
	close(fd);
	snprintf(smtext, sizeof smtext, "%u", sm);
	ck_assert_int_eq(setenv("FAKE_CUDA_SM", smtext, 1), 0);
	snprintf(logvar, sizeof logvar, "KIMG_LOG=%s", diag_log);
	envp[n++] = logvar;
	for (; vars && *vars && n < 31; vars++)
		envp[n++] = (char *)*vars;
	envp[n] = NULL;
	struct kimg_options_ctx ctx = { .exe = "kimg-unit", .short_name = "kimg-unit", .hostname = "unit", .pid = getpid() };
	ck_assert_int_eq(kimg_options_parse(envp, &ctx, &kimg_opts, &kimg_env, warn, sizeof warn), 0);
}

/* Everything written to the log so far (malloc'd, NUL-terminated). */
static inline char *diag_log_text(void)
{
	FILE *f = fopen(diag_log, "rb");
	ck_assert_msg(f != NULL, "log %s", diag_log);
	size_t cap = 1 << 16, len = 0, got;
	char *buf = malloc(cap);
	ck_assert(buf != NULL);
	while ((got = fread(buf + len, 1, cap - 1 - len, f)) > 0) {
		len += got;
		if (len == cap - 1) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert(buf != NULL);
		}
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* How often `needle` occurs in `text`. */
static inline unsigned count_of(const char *text, const char *needle)
{
	unsigned n = 0;
	for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* JSON Lines reports in the log (each object starts with its error). */
static inline unsigned diag_reports(const char *text)
{
	return count_of(text, "{\"kimg_version\":\"" KIMG_VERSION "\",\"error\":{");
}

static inline void diag_end(void)
{
	unlink(diag_log);
}

/* $KIMG_FIXTURES/name (default build/fixtures). */
static inline const char *fixture_path(const char *name)
{
	static char path[1024];
	const char *dir = getenv("KIMG_FIXTURES");
	snprintf(path, sizeof path, "%s/%s", dir ? dir : "build/fixtures", name);
	ck_assert_msg(access(path, R_OK) == 0, "fixture %s missing (run make fixtures)", path);
	return path;
}

#endif
