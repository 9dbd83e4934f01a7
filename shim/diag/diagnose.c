/* SPDX-License-Identifier: Apache-2.0 */
/* The cold path: a hooked call returned an image-class error. Find the
 * module, ask the driver about the device, run the core rules and the fix
 * generator, collect the stacks, render, write once per (module, error),
 * count for the exit summary, and apply KIMG_ON_ERROR.
 *
 * Never changes the error and never faults: every image read goes through
 * kimg_image_bound (readable mappings) and the core's bounded parsers.
 * One report at a time (a mutex): failures are rare, the report model is
 * large, and serialising keeps thread stacks small and output whole.
 *
 * Calls go one way: the policy units (audit.c, fallback.c) and the exit
 * (summary.c) call in here; from here calls go down only, to the record
 * of arch-dispatched failures (dispatch_track.c, which never reports), the
 * writer (emit.c) and the counters (stats.c). A report audit.c holds back
 * is kept here, so that a failure's report can write it first without
 * calling back. tests/scripts/layers.sh checks it on the objects.
 *
 * Past 500 lines on purpose: the one report path (failures, load events,
 * the held report) shares the report lock, the model and the seen sets,
 * which stay private to this file; the driver's lines and ptxas's reason
 * live in driver_log.c and ptxas_reason.c. */
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
#include "module_images.h"
#include "input.h"
#include "fatbin.h"
#include "dispatch_track.h"
#include "device_query.h"
#include "emit.h"
#include "bound.h"
#include "locate.h"
#include "ptx.h"
#include "report.h"
#include "rules.h"
#include "seen.h"
#include "stats.h"
#include "stack.h"

__thread int kimg_in_diagnosis;

/* Trust an in-memory image's own headers no further than this. */
#define IMAGE_LIMIT ((uint64_t)4 << 30)

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

/* ---- module -> images ---- */

struct walk {
	struct kimg_report *r;
	int modules;
};

static void add_image(struct kimg_report *r, const struct kimg_image *img)
{
	if (r->image_count < KIMG_REPORT_MAX_IMAGES)
		r->images[r->image_count++] = *img;
	r->image_total++;
}

static int on_image(void *ctx, const struct kimg_image *img)
{
	add_image(ctx, img);
	return 0;
}

/* The first module of the input is the one loaded: an image passed to the
 * driver is one container, cubin or PTX text. */
static int on_module(void *ctx, const struct kimg_module_ref *m)
{
	struct walk *w = ctx;
	struct kimg_report *r = w->r;
	if (w->modules++ > 0)
		return 0;
	r->module_offset += m->offset;
	enum kimg_module_step step;
	struct kimg_error err = { 0 };
	static const char *const what[] = { [KIMG_MODULE_CONTAINER] = "fatbin: ", [KIMG_MODULE_ENTRY] = "",
					    [KIMG_MODULE_CUBIN] = "cubin: ", [KIMG_MODULE_PTX] = "PTX: " };
	if (kimg_module_images(m, on_image, r, &step, &err) < 0)
		snprintf(r->module_note, sizeof r->module_note, "%s%s", what[step], err.what);
	return 0;
}

static void read_images(struct kimg_report *r, struct kimg_span bytes)
{
	struct walk w = { r, 0 };
	struct kimg_error err = { 0 };
	int rc = kimg_input_for_each_module(bytes, on_module, &w, &err);
	if (rc < 0 || (w.modules == 0 && !r->module_note[0]))
		snprintf(r->module_note, sizeof r->module_note, "no device code found: %s",
			 err.code ? err.what : "unrecognised image");
}

static void load_module(struct kimg_report *r, const struct kimg_located *loc)
{
	r->module_origin = loc->how;
	if (loc->image && loc->size) {
		/* the caller said how long it is (a JIT link input): read exactly that */
		if (kimg_readable_run(loc->image, loc->size) < loc->size) {
			snprintf(r->module_note, sizeof r->module_note, "input at %p (%zu bytes) is not readable", loc->image,
				 loc->size);
			return;
		}
		bool off_known = false;
		if (kimg_locate_file(loc->image, r->module_file, sizeof r->module_file, &r->module_offset, &off_known))
			r->module_offset_known = off_known;
		read_images(r, kimg_span_make(loc->image, loc->size));
		return;
	}
	if (loc->image) {
		const void *target = NULL;
		uint64_t size = 0;
		struct kimg_error err = { 0 };
		if (kimg_image_bound(loc->image, IMAGE_LIMIT, &target, &size, &err) < 0) {
			snprintf(r->module_note, sizeof r->module_note, "image at %p: %s", loc->image, err.what);
			return;
		}
		bool off_known = false;
		if (kimg_locate_file(target, r->module_file, sizeof r->module_file, &r->module_offset, &off_known))
			r->module_offset_known = off_known;
		read_images(r, kimg_span_make(target, size));
		return;
	}
	snprintf(r->module_file, sizeof r->module_file, "%s", loc->path);
	struct kimg_mapped_file file;
	struct kimg_error err = { 0 };
	if (kimg_map_path(loc->path, &file, &err) < 0) {
		snprintf(r->module_note, sizeof r->module_note, "%s", err.what);
		return;
	}
	r->module_offset_known = true;
	r->module_offset = 0;
	read_images(r, file.bytes);
	/* the images' spans point into the mapping; the renderers use only
	 * their values, so it can go now */
	for (size_t i = 0; i < r->image_count; i++) {
		r->images[i].payload = kimg_span_make(NULL, 0);
		r->images[i].identifier = kimg_span_make(NULL, 0);
		r->images[i].options = kimg_span_make(NULL, 0);
	}
	kimg_unmap_path(&file);
}

/* ---- the JIT linker ---- */

static const char *const link_types[] = { "cubin", "ptx", "fatbin", "object", "library", "nvvm" };

static const char *link_type_name(int type)
{
	return type >= 0 && (size_t)type < sizeof link_types / sizeof link_types[0] ? link_types[type] : "?";
}

static void link_input(struct kimg_report_link_input *out, const struct kimg_link_input *in)
{
	snprintf(out->name, sizeof out->name, "%s", in->name);
	out->type = link_type_name(in->type);
}

/* The driver's JIT error log, read no further than the buffer's
 * capacity, its first NUL and the readable memory. */
static void copy_jit_log(struct kimg_report *r, const char *log, size_t cap)
{
	if (!log || cap == 0)
		return;
	if (cap > sizeof r->jit_log - 1)
		cap = sizeof r->jit_log - 1;
	uint64_t run = kimg_readable_run(log, cap);
	size_t n = strnlen(log, (size_t)run);
	while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' '))
		n--;
	memcpy(r->jit_log, log, n);
	r->jit_log[n] = '\0';
}

static void fill_link(struct kimg_report *r, const struct kimg_failure *f)
{
	const struct kimg_link_facts *lf = f->link;
	copy_jit_log(r, lf->log, lf->log_size);
	if (!lf->inputs)
		return; /* cuModuleLoadDataEx: only the log */
	struct kimg_report_link *l = &r->link;
	l->present = true;
	l->at_complete = lf->refused >= lf->n_inputs;
	if (!l->at_complete)
		link_input(&l->input, &lf->inputs[lf->refused]);
	for (size_t i = 0; i < lf->n_inputs && l->input_count < KIMG_REPORT_MAX_LINK_INPUTS; i++)
		link_input(&l->inputs[l->input_count++], &lf->inputs[i]);
	l->inputs_dropped = lf->dropped;
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

static void arm_exit_replay(void);

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
		fill_link(r, f);
	if (located)
		load_module(r, &loc);
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
				arm_exit_replay();
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

/* ---- recorded failures at a failing exit (dispatch_track.h) ---- */

/* glibc's on_exit: the status is what tells a failing run. Each file whose
 * records were never reported in full is reported now, with the stacks of
 * its first failure. */
static void report_recorded_at_exit(int status, void *arg)
{
	struct kimg_failure f;
	struct kimg_replay rp;
	(void)arg;
	if (status == 0 || kimg_opts.disabled)
		return;
	while (kimg_dispatch_take_unreported(status, &f, &rp)) {
		f.replay = &rp;
		kimg_report_failure(&f);
	}
}

/* At the first record of the process (under report_lock), so nothing is
 * done at start-up. */
static void arm_exit_replay(void)
{
	static bool armed;
	if (armed)
		return;
	armed = true;
	on_exit(report_recorded_at_exit, NULL);
}

/* ---- a held load report (diag_internal.h) ---- */

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool present;
	const void *tag;
	struct kimg_load_event e;
	struct kimg_device d;
	char path[512];
	void *ips[KIMG_HELD_FRAMES];
	struct kimg_python_frame python[KIMG_HELD_PYTHON];
	struct kimg_replay replay;
} held;

void kimg_report_hold(const struct kimg_load_event *e, const void *tag)
{
	pthread_mutex_lock(&held_lock);
	held.present = true;
	held.tag = tag;
	held.e = *e;
	memset(&held.d, 0, sizeof held.d);
	if (e->device)
		held.d = *e->device;
	held.path[0] = '\0';
	if (e->path)
		snprintf(held.path, sizeof held.path, "%s", e->path);
	memset(&held.replay, 0, sizeof held.replay);
	if (e->replay) {
		held.replay = *e->replay;
		held.replay.n_ips = e->replay->n_ips < KIMG_HELD_FRAMES ? e->replay->n_ips : KIMG_HELD_FRAMES;
		held.replay.n_python = e->replay->n_python < KIMG_HELD_PYTHON ? e->replay->n_python : KIMG_HELD_PYTHON;
		if (held.replay.n_ips)
			memcpy(held.ips, e->replay->ips, held.replay.n_ips * sizeof held.ips[0]);
		if (held.replay.n_python)
			memcpy(held.python, e->replay->python, held.replay.n_python * sizeof held.python[0]);
	}
	pthread_mutex_unlock(&held_lock);
}

void kimg_report_hold_count(const void *tag, unsigned modules)
{
	pthread_mutex_lock(&held_lock);
	if (held.present && held.tag == tag)
		held.e.audit_modules = modules;
	pthread_mutex_unlock(&held_lock);
}

/* Take the held report out (under held_lock) and write it (without). */
void kimg_report_flush_held(void)
{
	struct kimg_load_event e;
	struct kimg_device d;
	struct kimg_replay rp;
	char path[512];
	void *ips[KIMG_HELD_FRAMES];
	struct kimg_python_frame python[KIMG_HELD_PYTHON];
	pthread_mutex_lock(&held_lock);
	if (!held.present) {
		pthread_mutex_unlock(&held_lock);
		return;
	}
	e = held.e;
	d = held.d;
	rp = held.replay;
	memcpy(path, held.path, sizeof path);
	memcpy(ips, held.ips, sizeof ips);
	memcpy(python, held.python, sizeof python);
	held.present = false;
	pthread_mutex_unlock(&held_lock);
	e.device = &d;
	if (e.path)
		e.path = path;
	rp.ips = ips;
	rp.python = python;
	e.replay = &rp;
	/* only KIMG_AUDIT holds reports (audit.c) */
	if (kimg_report_load_event(&e))
		kimg_stat_add(KIMG_STAT_AUDIT_REPORTS, 1);
}

/* ---- the entry points ---- */

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
	load_module(r, &loc);
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
