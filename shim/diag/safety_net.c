/* SPDX-License-Identifier: Apache-2.0 */
/* The safety net: a failure of an entry point kimg does not hook, seen
 * only as the driver's "Returning N (...) from FN" line for an image-class
 * N that no report took (driver_log.c).
 *
 * Its module is unknown, so the dispatch rules (docs/loading.md section
 * 4.3) cannot tell a library's probe for other GPUs from the program's
 * need: it is reported as a recorded dispatched failure is, only when the
 * process exits with a failure status, once per (call, code), with what
 * is known: the call, the code, the device, the stack at the exit and the
 * driver's lines (the kernel when they name one). 500 and 98 count only
 * when the call's own lines name an image problem. */
#include <stdatomic.h>
#include <stdlib.h>

#include "cuda_errors.h"
#include "diag_internal.h"

static void report_one(void *ctx, const char *call, int code, bool image_words, const struct kimg_driver_lines *lines)
{
	int status = *(const int *)ctx;
	if (kimg_cuda_error_needs_confirmation(code) && !image_words)
		return;
	struct kimg_failure f = { .call = call, .error = code, .driver_lines = lines, .exit_status = status };
	kimg_report_failure(&f);
}

static void safety_net_at_exit(int status, void *arg)
{
	(void)arg;
	if (status == 0 || kimg_opts.disabled || !kimg_opts.driver_log)
		return;
	kimg_driver_log_for_each_untaken(report_one, &status);
}

void kimg_driver_log_attached(void)
{
	static _Atomic int armed;
	int expected = 0;
	if (atomic_compare_exchange_strong(&armed, &expected, 1))
		on_exit(safety_net_at_exit, NULL);
}
