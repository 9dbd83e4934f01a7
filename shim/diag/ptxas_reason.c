/* SPDX-License-Identifier: Apache-2.0 */
/* ptxas's reason for refusing PTX (218 CUDA_ERROR_INVALID_PTX, 222
 * CUDA_ERROR_UNSUPPORTED_PTX_VERSION). The driver's error log says only
 * "JIT compilation failed"; the reason ("Unsupported .version 9.9; current
 * version is '9.0'", "SM version specified by .target is higher than
 * default") is only in CU_JIT_ERROR_LOG_BUFFER ([V] driver 580.159.04),
 * which most programs never pass. So the report's cold path compiles the
 * same bytes once more with a log buffer.
 *
 * Nothing the program can see changes: the call goes to the real
 * cuModuleLoadDataEx (no hook runs, kimg_in_diagnosis is up), in the
 * calling thread's current context, with only the two log options; a
 * module that loads after all is unloaded at once; the driver's log lines
 * of this compile are marked taken (driver_log.c), so they never reach a
 * report. They do reach the driver's own log (CUDA_LOG_FILE, other
 * callbacks): KIMG_PTXAS_REASON=0 turns the re-compile off.
 *
 * Bounded: once per (module, error), as the report itself; images above
 * KIMG_PTXAS_REASON_MAX_BYTES are not compiled; the log buffer is a fixed
 * static one (the report lock serialises its use). A compile the driver
 * already refused stops at the same point again, so its time is about
 * that of the failed load. */
#include <string.h>

#include "bound.h"
#include "diag_internal.h"

#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

static char jit_error_log[4096];

bool kimg_ptxas_reason(const void *image, uint64_t size, char *log, size_t log_size)
{
	struct kimg_error err = { 0 };
	if (image && !size && kimg_image_bound(image, KIMG_PTXAS_REASON_MAX_BYTES, &image, &size, &err) < 0)
		return false;
	const struct kimg_driver_api *d = kimg_driver_real();
	if (!image || size == 0 || size > KIMG_PTXAS_REASON_MAX_BYTES || !d || !d->cuModuleLoadDataEx || log_size == 0)
		return false;
	memset(jit_error_log, 0, sizeof jit_error_log);
	int opts[2] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[2] = { jit_error_log, (void *)(uintptr_t)(sizeof jit_error_log - 1) };
	void *mod = NULL;
	CUresult_t r = d->cuModuleLoadDataEx(&mod, image, 2, opts, vals);
	if (r == 0) {
		if (mod && d->cuModuleUnload)
			d->cuModuleUnload(mod);
		return false; /* it loads now: there is no reason to quote */
	}
	size_t n = strnlen(jit_error_log, sizeof jit_error_log - 1);
	while (n > 0 && (jit_error_log[n - 1] == '\n' || jit_error_log[n - 1] == ' ' || jit_error_log[n - 1] == '\r'))
		n--;
	if (n == 0)
		return false;
	if (n > log_size - 1)
		n = log_size - 1;
	memcpy(log, jit_error_log, n);
	log[n] = '\0';
	return true;
}
