/* SPDX-License-Identifier: Apache-2.0 */
/* Library start and end: read the options once, print the summary at exit.
 *
 * The constructor does nothing heavy (no driver query, no file opened): a
 * process that never touches CUDA must run exactly as without kimg. A
 * preloaded library's constructor can run after constructors of the
 * program's libraries that already register fatbins, so the hooks call
 * kimg_shim_ensure_init() on their cold paths instead of trusting the
 * constructor to have run. */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>

#include "copies.h"
#include "diag.h"
#include "hook.h"

/* kimg_in_diagnosis (shim/diag.h) is defined by diagnose.c, which raises it
 * for the whole diagnosis; the hooks only read it. */

static _Atomic int init_state; /* 0 not started, 1 running, 2 done */

/* KIMG_VERBOSE only: why this copy is silent. */
static void stand_down_note(const char *first)
{
	char line[768];
	Dl_info me;
	static const char self = 0;
	const char *mine = dladdr(&self, &me) && me.dli_fname ? me.dli_fname : "?";
	int n = snprintf(line, sizeof line, "kimg: %s stays inactive: another copy of libkimg (%s) was loaded first\n",
			 mine, first);
	if (n > 0)
		kimg_log_stderr(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

void kimg_shim_ensure_init(void)
{
	if (KIMG_LIKELY(atomic_load_explicit(&init_state, memory_order_acquire) == 2))
		return;
	int expected = 0;
	if (atomic_compare_exchange_strong_explicit(&init_state, &expected, 1, memory_order_acq_rel,
						    memory_order_acquire)) {
		kimg_options_init();
		/* another copy of libkimg was loaded first: it does the work */
		char first[256];
		bool acts = kimg_copies_this_one_acts(first, sizeof first);
		if (!acts)
			kimg_opts.disabled = true;
		atomic_store_explicit(&init_state, 2, memory_order_release);
		if (kimg_opts.verbose && !kimg_opts.disabled)
			kimg_options_print_banner();
		else if (kimg_opts.verbose && !acts)
			stand_down_note(first);
		return;
	}
	/* Another thread is reading the environment: microseconds. Returning
	 * early would let this one act on half-written options. */
	while (atomic_load_explicit(&init_state, memory_order_acquire) != 2)
		sched_yield();
}

__attribute__((constructor)) static void kimg_shim_init(void)
{
	kimg_shim_ensure_init();
}

/* A destructor, not atexit(): it also runs when libkimg is dlopen'ed and
 * the process exits, and it registers nothing with libc. libkimg is linked
 * -z nodelete, so it never runs before process exit. */
__attribute__((destructor)) static void kimg_shim_fini(void)
{
	if (atomic_load_explicit(&init_state, memory_order_acquire) != 2 || kimg_opts.disabled)
		return;
	kimg_report_summary();
}
