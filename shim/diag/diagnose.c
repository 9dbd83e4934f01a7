/* SPDX-License-Identifier: Apache-2.0 */
/* The cold path: a hooked call returned an image-class error. Find the
 * module, ask the driver about the device, run the core rules and the fix
 * generator, collect the stacks, render, write once per (module, error),
 * count for the exit summary, and apply KIMG_ON_ERROR.
 *
 * Never changes the error and never faults: the module's images are read
 * by module_read.c (bounded to readable memory) through the core's
 * bounded parsers. One report at a time (a mutex): failures are rare, the
 * report model is large, and serialising keeps thread stacks small and
 * output whole. The seen sets that dedupe reports and count for the
 * summary share that lock and stay private to this file.
 *
 * Calls go one way: the policy units (audit.c, fallback.c) and the exit
 * (summary.c) call in here; from here calls go down only, to the module's
 * facts (module_read.c), the reports that wait (deferred.c, which gets
 * its writers handed in), the record of arch-dispatched failures
 * (dispatch_track.c, which never reports), the writer (emit.c) and the
 * counters (stats.c). tests/scripts/layers.sh checks it on the objects.
 * The driver's lines and ptxas's reason live in driver_log.c and
 * ptxas_reason.c. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cubin.h"
#include "cuda_errors.h"
#include "diag_internal.h"
#include "fix.h"
#include "link_fix.h"
#include "dispatch_track.h"
#include "device_query.h"
#include "emit.h"
#include "locate.h"
#include "module_read.h"
#include "ptx.h"
#include "report.h"
#include "rules.h"
#include "seen.h"
#include "stats.h"
#include "stack.h"

__thread int kimg_in_diagnosis;

/* ---- seen sets (seen.h): dedupe reports, count for the summary ---- */

static struct kimg_seen_set reported;      /* (module, error): report written */
static struct kimg_seen_set failed_kernels;/* (module, kernel): counted */
static struct kimg_seen_set failed_modules;/* module: counted */
static struct kimg_seen_set fitting;       /* (module, device CC): the rules say it runs */
/* Under report_lock; getpid() is a syscall, so only on the report path.
 * A forked child starts its own sets (its failures are its to report; the
 * parent's are not its to count); stats.c knows whose the counts are. */
static void forget_parent_after_fork(void)
{
	if (kimg_stats_adopt_process((long)getpid())) {
		memset(&reported, 0, sizeof reported);
		memset(&failed_kernels, 0, sizeof failed_kernels);
		memset(&failed_modules, 0, sizeof failed_modules);
		memset(&fitting, 0, sizeof fitting);
	}
}

/* Distinct named kernels that failed, for the summary; a failed load
 * names none and counts only as a module. */
static void count_kernel(uint64_t module_key, const char *kernel)
{
	if (kernel && kimg_seen_insert(&failed_kernels, kimg_seen_mix(module_key ^ kimg_hash_str(kernel))))
		kimg_stat_add(KIMG_STAT_FAILED_KERNELS, 1);
}

/* ---- the entry point ---- */

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kimg_report report;
/* The process whose threads use report_lock; -1 while it is being reset. */
static _Atomic long lock_pid;

/* A thread of the parent may have been inside a report at fork(): the
 * child has a copy of the held lock and no thread to release it. The first
 * report of each process (by pid, asked on this cold path only) makes the
 * lock new before anyone in that process takes it. */
static void lock_reports(void)
{
	long pid = (long)getpid();
	for (;;) {
		long owner = atomic_load(&lock_pid);
		if (owner == pid)
			break;
		if (owner == -1) {
			sched_yield(); /* another thread of this process is resetting it */
			continue;
		}
		if (atomic_compare_exchange_strong(&lock_pid, &owner, -1)) {
			if (owner != 0)
				pthread_mutex_init(&report_lock, NULL);
			atomic_store(&lock_pid, pid);
			break;
		}
	}
	pthread_mutex_lock(&report_lock);
}

static void diagnose(const struct kimg_failure *f, const struct kimg_driver_lines *dl)
{
	struct kimg_report *r = &report;
	struct kimg_located loc;
	/* seen only in the driver's log (driver_log.c): no handle, no module */
	bool net = f->driver_lines != NULL;
	bool located = !net && kimg_locate(f, &loc);
	uint64_t module_key = located ? kimg_module_key(loc.image, loc.path)
			      : net ? kimg_seen_mix(kimg_hash_str(f->call) ^ 0x6e6574ull)
				    : kimg_seen_mix((uint64_t)(uintptr_t)f->handle);
	/* a program may reuse one buffer for several link inputs */
	if (f->link && f->link->inputs && f->link->refused < f->link->n_inputs)
		module_key = kimg_seen_mix(module_key ^ kimg_hash_str(f->link->inputs[f->link->refused].name));
	const char *kernel = located ? loc.kernel : net ? kimg_driver_lines_kernel(dl) : f->kernel;
	/* a symbol API: the registered name is the variable's, not a kernel's */
	const char *symbol = NULL;
	if (f->symbol_lookup) {
		symbol = f->symbol && f->symbol[0] ? f->symbol : kernel;
		kernel = NULL;
	}
	/* the safety net's 500 / 98 come with the driver's words for an image problem */
	bool confirm = !net && kimg_cuda_error_needs_confirmation(f->error);

	uint64_t report_key = kimg_report_key(module_key, f->error);
	/* already reported: count the kernel, stay quiet (not for 500/98,
	 * which count only once the rules confirm them). Marked reported only
	 * when written: a recorded dispatched failure must not hide the
	 * launch failure that follows it. */
	if (!confirm && kimg_seen_contains(&reported, report_key)) {
		count_kernel(module_key, kernel);
		/* the first report of this module may have been a load-time
		 * event (shim/diag/fallback.c) that left KIMG_ON_ERROR to this failure;
		 * after a failure's own report the process is already gone */
		if (!net)
			kimg_report_apply_on_error();
		return;
	}

	/* a library probing the same module again: counted with its record */
	if (!net && !f->launch && !f->replay &&
	    !kimg_dispatch_call_is_programs(f->caller, located ? loc.image : NULL, located ? loc.path : NULL) &&
	    kimg_dispatch_repeat(module_key, f->error))
		return;

	memset(r, 0, sizeof *r);
	r->device_known = kimg_device_query(&r->device);
	/* a program probing names with cuModuleGetFunction gets 500 for each
	 * miss: once the rules said this module runs here, answer at once */
	uint64_t fit_key = kimg_seen_mix(module_key ^ ((uint64_t)r->device.cc.sm << 48));
	if (confirm && kimg_seen_contains(&fitting, fit_key))
		return;
	r->call = f->call;
	r->error = f->error;
	r->kernel = kernel;
	if (kernel)
		kimg_demangle(kernel, r->kernel_demangled, sizeof r->kernel_demangled);
	r->symbol = symbol;
	if (symbol)
		kimg_demangle(symbol, r->symbol_demangled, sizeof r->symbol_demangled);
	kimg_driver_lines_to_report(r, dl);
	r->safety_net = net;
	r->exit_status = net ? f->exit_status : 0;
	if (f->link)
		kimg_report_read_link(r, f->link);
	if (located)
		kimg_report_read_module(r, &loc);
	else if (net)
		snprintf(r->module_note, sizeof r->module_note,
			 "kimg does not hook %s: this failure was seen in the driver's log, which names no module",
			 f->call ? f->call : "?");
	else if (f->link && f->link->inputs)
		snprintf(r->module_note, sizeof r->module_note,
			 "no input of this link is in memory for kimg to read (added from files, or not remembered)");
	else
		snprintf(r->module_note, sizeof r->module_note,
			 "kimg did not see this handle being loaded (loaded before libkimg, or through an unhooked path)");

	if (r->device_known && (r->image_total > 0 || located)) {
		kimg_rules_check_module(r->images, r->image_count, &r->device, r->image_verdicts, &r->verdict);
		r->verdict_known = r->image_count > 0 || !r->module_note[0];
	}
	bool cannot_run = r->verdict_known && r->verdict.outcome == KIMG_OUTCOME_CANNOT_RUN;
	if (r->verdict_known && !cannot_run)
		kimg_seen_insert(&fitting, fit_key);
	if (confirm) {
		/* 500 / 98 are image errors only when no image fits */
		if (!cannot_run)
			return;
		if (kimg_seen_contains(&reported, report_key)) {
			count_kernel(module_key, kernel);
			return;
		}
	}
	/* A module for other GPUs in a file with code for this one: recorded
	 * unless the failure reaches the program (dispatch_track.h). */
	if (cannot_run && f->replay) {
		r->escalation = f->replay->escalation;
		r->exit_status = f->replay->exit_status;
		r->dispatch_modules = f->replay->modules;
	} else if (cannot_run && f->launch) {
		if (kimg_dispatch_escalate(module_key, r->module_file))
			r->escalation = KIMG_ESCALATION_LAUNCH;
	} else if (cannot_run && r->module_file[0] && !f->launch) {
		struct kimg_dispatch_verdict dv;
		/* F1 needs every image: a truncated list leaves only the table (F2) */
		bool all_images = r->image_total == r->image_count;
		kimg_dispatch_judge_module(r->module_file, all_images ? r->images : NULL, all_images ? r->image_count : 0,
					   &r->device, kimg_dispatch_file_runs_here(r->module_file, &r->device), &dv);
		if (dv.dispatched) {
			if (!kimg_dispatch_call_is_programs(f->caller, loc.image, loc.path)) {
				kimg_dispatch_record(f, module_key, r, &dv);
				kimg_report_arm_exit_replay(kimg_report_failure);
				return;
			}
			r->escalation = KIMG_ESCALATION_PROGRAM_CALL;
			kimg_dispatch_escalate(module_key, r->module_file);
		}
	}
	kimg_seen_insert(&reported, report_key);
	if (cannot_run && r->link.present)
		kimg_link_fix_for(&r->device, &r->verdict, r->images, r->image_count, r->link.advice,
				  sizeof r->link.advice);
	if (cannot_run)
		r->fix_known = kimg_fix_for_file(&r->device, &r->verdict, r->images, r->image_count, r->module_file[0] ? r->module_file : NULL, &r->fix) == 0;
	else if (r->verdict_known && !r->module_note[0])
		snprintf(r->module_note, sizeof r->module_note,
			 "kimg's rules expect this module to load on this device; the error may have another cause");

	if (f->replay) {
		/* the stacks of the failure, not of the exit */
		r->stack_count = kimg_stack_format(f->replay->ips, f->replay->n_ips, r->stack, KIMG_REPORT_MAX_FRAMES);
		for (size_t i = 0; i < f->replay->n_python && i < KIMG_REPORT_MAX_FRAMES; i++)
			r->python[r->python_count++] = f->replay->python[i];
	} else {
		r->stack_count = kimg_stack_host(r->stack, KIMG_REPORT_MAX_FRAMES, true, KIMG_UNWIND_AUTO);
		r->python_count = kimg_stack_python_any(r->python, KIMG_REPORT_MAX_FRAMES, r->python_note, sizeof r->python_note);
	}
	kimg_report_fill_process(&r->process);
	if (located && (f->error == 218 || f->error == 222) && !r->jit_log[0] && kimg_opts.ptxas_reason)
		r->jit_log_by_kimg = kimg_ptxas_reason(loc.image, loc.size, r->jit_log, sizeof r->jit_log);

	count_kernel(module_key, kernel);
	if (kimg_seen_insert(&failed_modules, module_key))
		kimg_stat_add(KIMG_STAT_FAILED_MODULES, 1);
	kimg_report_emit(r);
	/* at exit the process is failing already: KIMG_ON_ERROR must not
	 * change its status */
	if (!f->replay && !net)
		kimg_report_apply_on_error();
}

/* ---- the entry points ---- */

void kimg_report_flush_held(void)
{
	kimg_report_write_held(kimg_report_load_event);
}

void kimg_report_failure(const struct kimg_failure *f)
{
	if (!f || kimg_opts.disabled || kimg_in_diagnosis)
		return;
	/* a held audit report comes first, in load order */
	kimg_report_flush_held();
	int saved_errno = errno;
	kimg_in_diagnosis++;
	/* first, before kimg's own driver calls log anything: the driver's
	 * lines of this call on this thread (none for a replay: its call was
	 * long ago) */
	struct kimg_driver_lines taken;
	const struct kimg_driver_lines *dl = f->driver_lines;
	unsigned mark = 0;
	bool own_lines = !dl && !f->replay;
	if (own_lines) {
		mark = kimg_driver_log_take(&taken);
		dl = &taken;
	}
	lock_reports();
	forget_parent_after_fork();
	diagnose(f, dl);
	pthread_mutex_unlock(&report_lock);
	if (own_lines)
		kimg_driver_log_settle(mark);
	kimg_in_diagnosis--;
	errno = saved_errno;
}

bool kimg_report_load_event(const struct kimg_load_event *e)
{
	struct kimg_report *r = &report;
	if (!e || kimg_opts.disabled || kimg_in_diagnosis)
		return false;
	int saved_errno = errno;
	bool written = false;
	/* the same key as diagnose() derives for a failure of this module */
	uint64_t module_key = kimg_module_key(e->image, e->path);
	kimg_in_diagnosis++;
	lock_reports();
	forget_parent_after_fork();
	if (e->cannot_run && !kimg_seen_insert(&reported, kimg_report_key(module_key, e->error)))
		goto out;
	memset(r, 0, sizeof *r);
	if (e->device) {
		r->device = *e->device;
		r->device_known = true;
	} else {
		r->device_known = kimg_device_query(&r->device);
	}
	r->call = e->call;
	r->error = e->error;
	r->audit = e->audit;
	if (e->fallback)
		r->fallback = *e->fallback;
	struct kimg_located loc = { .image = e->image, .path = e->path, .how = e->call };
	kimg_report_read_module(r, &loc);
	if (r->device_known && r->image_count > 0) {
		kimg_rules_check_module(r->images, r->image_count, &r->device, r->image_verdicts, &r->verdict);
		r->verdict_known = true;
		if (r->verdict.outcome == KIMG_OUTCOME_CANNOT_RUN)
			r->fix_known = kimg_fix_for_file(&r->device, &r->verdict, r->images, r->image_count, r->module_file[0] ? r->module_file : NULL, &r->fix) == 0;
	}
	r->audit_modules = e->audit_modules;
	if (e->replay) {
		/* stacks of the group's first module, taken when it was loaded */
		r->stack_count = kimg_stack_format(e->replay->ips, e->replay->n_ips, r->stack, KIMG_REPORT_MAX_FRAMES);
		for (size_t i = 0; i < e->replay->n_python && i < KIMG_REPORT_MAX_FRAMES; i++)
			r->python[r->python_count++] = e->replay->python[i];
	} else {
		r->stack_count = kimg_stack_host(r->stack, KIMG_REPORT_MAX_FRAMES, true, KIMG_UNWIND_AUTO);
		r->python_count = kimg_stack_python_any(r->python, KIMG_REPORT_MAX_FRAMES, r->python_note, sizeof r->python_note);
	}
	kimg_report_fill_process(&r->process);
	if (e->cannot_run && kimg_seen_insert(&failed_modules, module_key))
		kimg_stat_add(KIMG_STAT_FAILED_MODULES, 1);
	kimg_report_emit(r);
	written = true;
	if (e->cannot_run && e->audit)
		kimg_report_apply_on_error();
out:
	pthread_mutex_unlock(&report_lock);
	kimg_in_diagnosis--;
	errno = saved_errno;
	return written;
}

void kimg_report_mark_counted(const void *image, const char *path, int error)
{
	uint64_t module_key = kimg_module_key(image, path);
	kimg_seen_insert(&reported, kimg_report_key(module_key, error));
	if (kimg_seen_insert(&failed_modules, module_key))
		kimg_stat_add(KIMG_STAT_FAILED_MODULES, 1);
}
