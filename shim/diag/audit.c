/* SPDX-License-Identifier: Apache-2.0 */
/* KIMG_AUDIT (audit.h): every module checked at its load. Reading the
 * module is module_read.c's; the device facts are device_query.c's.
 *
 * Cost matters here, unlike on the failure path: with KIMG_AUDIT=1 every
 * fatbin a process registers is read (libtorch_cuda registers hundreds at
 * import). So images are bounded through the program headers of the
 * object they lie in, with the last segments cached, instead of a read of
 * /proc/self/maps per module; only the entry headers are touched, never a
 * payload; and device facts are asked once per device. A module that runs
 * costs that walk and nothing else: no allocation, no lock, no output. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "device_query.h"
#include "dispatch_track.h"
#include "stack.h"
#include "diag_internal.h"
#include "rules.h"
#include "seen.h"
#include "stats.h"

/* ---- KIMG_AUDIT ----
 * One report per (file, cause), never one per module: libtorch_cuda.so
 * registers hundreds of fatbins in one burst at import, all failing for
 * the same reason under CUDA_FORCE_PTX_JIT. The first module of a group
 * is held (diagnose.c keeps its facts and stacks: kimg_report_hold) while
 * more of the same group arrive, and written with the group's count when
 * another group starts, when a failure is reported, or at exit; it is
 * written at once when KIMG_ON_ERROR stops the process. Modules for other GPUs in files with code for this one are
 * arch-dispatched (core/file_rules.h): counted, not reported. */

#define AUDIT_GROUPS 64
_Static_assert(AUDIT_GROUPS <= KIMG_NOTES_MAX, "a summary line per group");
struct audit_group {
	uint64_t key;          /* hash(file) ^ cause */
	char file[512];
	unsigned modules;
	int error;
	enum kimg_reason reason;
	const char *rule;
	const void *first_image;  /* the representative, which the runtime may load again */
	bool first_by_path;       /* ... or loaded from the group's file by path, as any later
				   * path load of it is: the same module (one key, seen.c) */
};

static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;
static struct audit_group groups[AUDIT_GROUPS];
static unsigned n_groups;

/* "kimg: audit: FILE: 445 modules cannot run (why [rule], error 209)": the
 * group's line of the exit summary (stats.h), once it has several modules;
 * under audit_lock. */
static void note_group(const struct audit_group *g)
{
	char line[800];
	if (g->modules < 2)
		return;
	int n = snprintf(line, sizeof line, "kimg: audit:   %s: %u modules cannot run (%s [%s], error %d), one report\n",
			 g->file, g->modules, kimg_reason_text(g->reason), g->rule ? g->rule : "?", g->error);
	if (n > 0)
		kimg_stats_note(KIMG_NOTE_AUDIT_GROUP, (unsigned)(g - groups), line);
}

static struct audit_group *group_of(const char *file, const struct kimg_module_verdict *v)
{
	uint64_t key = kimg_hash_str(file) ^ ((uint64_t)(unsigned)v->expected_error << 40) ^ ((uint64_t)v->reason << 32);
	for (unsigned i = 0; i < n_groups; i++)
		if (groups[i].key == key)
			return &groups[i];
	if (n_groups == AUDIT_GROUPS)
		return NULL;
	struct audit_group *g = &groups[n_groups++];
	memset(g, 0, sizeof *g);
	g->key = key;
	snprintf(g->file, sizeof g->file, "%s", file);
	g->error = v->expected_error;
	g->reason = v->reason;
	g->rule = v->rule;
	return g;
}

bool kimg_audit_check(const struct kimg_load_module *m, const struct kimg_device *d)
{
	struct kimg_module_verdict v;
	kimg_stat_add(KIMG_STAT_AUDIT_CHECKED, 1);
	kimg_rules_check_module(m->imgs, m->n, d, NULL, &v);
	if (KIMG_LIKELY(v.outcome != KIMG_OUTCOME_CANNOT_RUN))
		return false;

	char file[512] = "";
	uint64_t off = 0;
	bool off_known = false;
	if (m->path)
		snprintf(file, sizeof file, "%s", m->path);
	else if (m->image)
		kimg_locate_file(m->image, file, sizeof file, &off, &off_known);
	if (file[0] && !m->path) {
		struct kimg_dispatch_verdict dv;
		kimg_dispatch_judge_module(file, m->imgs, m->n, d, kimg_dispatch_file_runs_here(file, d), &dv);
		if (dv.dispatched) {
			kimg_stat_add(KIMG_STAT_AUDIT_DISPATCHED, 1);
			return true;
		}
	}
	kimg_stat_add(KIMG_STAT_AUDIT_CANNOT_RUN, 1);

	pthread_mutex_lock(&audit_lock);
	struct audit_group *g = file[0] ? group_of(file, &v) : NULL;
	bool same_module = g && g->modules > 0 &&
			   (m->image ? m->image == g->first_image : g->first_by_path && m->path);
	if (same_module) {
		/* the same module again (registration, then the runtime's own
		 * load; a file loaded by path once more) */
		pthread_mutex_unlock(&audit_lock);
		kimg_stat_sub(KIMG_STAT_AUDIT_CANNOT_RUN, 1); /* counted once */
		return true;
	}
	if (g && g->modules == 0) {
		g->first_image = m->image;
		g->first_by_path = !m->image && m->path;
	}
	if (g && g->modules++ > 0) {
		note_group(g);
		/* under audit_lock, as the hold below: counts arrive in order */
		kimg_report_hold_count(g, g->modules);
		pthread_mutex_unlock(&audit_lock);
		kimg_report_mark_counted(m->image, m->path, v.expected_error);
		return true; /* counted with its group */
	}
	pthread_mutex_unlock(&audit_lock);
	/* the previous group's held report first, in load order */
	kimg_report_flush_held();

	struct kimg_load_event e = {
		.call = m->call, .error = v.expected_error, .image = m->image, .path = m->path,
		.device = d, .audit = true, .cannot_run = true, .audit_modules = 1,
	};
	if (!g || kimg_opts.on_error != KIMG_ON_ERROR_CONTINUE) {
		/* no group (table full, file unknown) or the process stops here */
		if (kimg_report_load_event(&e))
			kimg_stat_add(KIMG_STAT_AUDIT_REPORTS, 1);
		return true;
	}
	/* held while more modules of its group arrive (its stacks now) */
	void *ips[KIMG_HELD_FRAMES];
	struct kimg_python_frame python[KIMG_HELD_PYTHON];
	struct kimg_replay rp = { .escalation = KIMG_ESCALATION_NONE };
	rp.n_ips = kimg_stack_capture(ips, KIMG_HELD_FRAMES);
	rp.n_python = kimg_stack_python_any(python, KIMG_HELD_PYTHON, NULL, 0);
	rp.ips = ips;
	rp.python = python;
	e.replay = &rp;
	pthread_mutex_lock(&audit_lock);
	e.audit_modules = g->modules; /* more may have come meanwhile */
	kimg_report_hold(&e, g);
	pthread_mutex_unlock(&audit_lock);
	return true;
}

void kimg_audit_registration(const void *wrapper)
{
	struct kimg_load_module m;
	struct kimg_device d;
	int saved = errno;
	if (kimg_load_module_read(&m, "__cudaRegisterFatBinary", wrapper, NULL) == 0) {
		if (kimg_load_device(&d))
			kimg_audit_check(&m, &d);
		else
			kimg_stat_add(KIMG_STAT_AUDIT_UNKNOWN, 1);
	}
	kimg_load_module_close(&m);
	errno = saved;
}
