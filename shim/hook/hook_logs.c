/* SPDX-License-Identifier: Apache-2.0 */
/* Joining the driver's error log (CUDA 12.9+): kimg's callback
 * (kimg_driver_log_callback, shim/diag/driver_log.c) registered once with
 * cuLogsRegisterCallback.
 *
 * The function is asked of the real cuGetProcAddress at version 12090, the
 * one door every driver answers by; a driver older than 12.9 has no such
 * name and then nothing changes. The callback can be registered before
 * cuInit and coexists with the application's own ([V] driver 580.159.04),
 * so kimg joins at the first moment it meets the driver: the cuInit
 * wrapper (before the real call) or the first cuGetProcAddress answered.
 * It is never unregistered: libkimg is linked -z nodelete, so the
 * callback's code stays mapped for the life of the process. */
#include "hook.h"

typedef void (*logs_callback_fn)(void *data, int level, char *message, size_t length);
typedef CUresult (*logs_register_fn)(logs_callback_fn fn, void *data, void **handle_out);
typedef CUresult (*gpa5_fn)(const char *, void **, int, unsigned long long, int *);
typedef CUresult (*gpa4_fn)(const char *, void **, int, unsigned long long);

static _Atomic int logs_state; /* 0 not tried (or no driver yet), 1 trying, 2 done (registered or not) */
static _Atomic bool tried_at_registration;

/* cuLogsRegisterCallback through the real cuGetProcAddress. *driver_found
 * says whether a cuGetProcAddress was found at all: before the driver is
 * loaded (a shared cudart registers its fatbins first, and loads libcuda
 * at its first call) there is none, and the attach must be tried again. */
static logs_register_fn find_register(bool *driver_found)
{
	void *p = NULL;
	gpa5_fn g5 = (gpa5_fn)kimg_hook_get(KIMG_HOOK_cuGetProcAddress_v2);
	gpa4_fn g4 = g5 ? NULL : (gpa4_fn)kimg_hook_get(KIMG_HOOK_cuGetProcAddress);
	*driver_found = g5 || g4;
	if (g5) {
		int status = 0;
		if (g5("cuLogsRegisterCallback", &p, KIMG_LOGS_VERSION, 0, &status) != KIMG_CUDA_SUCCESS)
			p = NULL;
	} else if (g4 && g4("cuLogsRegisterCallback", &p, KIMG_LOGS_VERSION, 0) != KIMG_CUDA_SUCCESS) {
		p = NULL;
	}
	return (logs_register_fn)p;
}

static KIMG_COLD void attach(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&logs_state, &expected, 1))
		return; /* another thread is at it: its callback serves all threads */
	kimg_shim_ensure_init();
	if (kimg_hooks_active() && kimg_opts.driver_log) {
		kimg_in_diagnosis++; /* the lookups below are kimg's, not the program's */
		bool driver_found = false;
		logs_register_fn reg = find_register(&driver_found);
		void *handle = NULL;
		if (reg && reg(kimg_driver_log_callback, NULL, &handle) == KIMG_CUDA_SUCCESS)
			kimg_driver_log_attached();
		kimg_in_diagnosis--;
		if (!driver_found) {
			/* no driver in the process yet: the next meeting tries again */
			atomic_store_explicit(&logs_state, 0, memory_order_release);
			return;
		}
	}
	atomic_store_explicit(&logs_state, 2, memory_order_release);
}

void kimg_hook_logs_attach(void)
{
	if (KIMG_LIKELY(atomic_load_explicit(&logs_state, memory_order_acquire) != 0))
		return;
	attach();
}

/* At a fatbin's registration the runtime may or may not have loaded the
 * driver. The search for a driver that is not there walks every loaded
 * object, so it is made once here, not at each of a large library's
 * thousands of registrations; the driver calls that follow try again. */
void kimg_hook_logs_attach_at_registration(void)
{
	if (KIMG_LIKELY(atomic_load_explicit(&logs_state, memory_order_acquire) != 0))
		return;
	if (atomic_exchange_explicit(&tried_at_registration, true, memory_order_acq_rel))
		return;
	attach();
}
