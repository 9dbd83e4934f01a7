/* SPDX-License-Identifier: Apache-2.0 */
/* Reports written after their moment (diag_internal.h): the held KIMG_AUDIT
 * report of a group of modules, written when the group ends, and the
 * recorded failures of modules for other GPUs, written at a failing exit.
 * Both are written by diagnose.c's report path, which hands its writer in
 * (kimg_report_flush_held, kimg_report_arm_exit_replay): this file only
 * keeps them and picks the moment, and calls nothing above it
 * (tests/scripts/layers.sh checks the objects for call circles). Neither
 * is on a hot path. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_internal.h"
#include "dispatch_track.h"
#include "stats.h"

/* ---- recorded failures at a failing exit (dispatch_track.h) ---- */

/* glibc's on_exit: the status is what tells a failing run. Each file whose
 * records were never reported in full is reported now, with the stacks of
 * its first failure. */
static void (*replay_write)(const struct kimg_failure *f);

static void report_recorded_at_exit(int status, void *arg)
{
	struct kimg_failure f;
	struct kimg_replay rp;
	(void)arg;
	if (status == 0 || kimg_opts.disabled)
		return;
	while (kimg_dispatch_take_unreported(status, &f, &rp)) {
		f.replay = &rp;
		replay_write(&f);
	}
}

/* At the first record of the process (under diagnose.c's report lock), so
 * nothing is done at start-up. */
void kimg_report_arm_exit_replay(void (*write)(const struct kimg_failure *f))
{
	static bool armed;
	if (armed)
		return;
	armed = true;
	replay_write = write;
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
void kimg_report_write_held(bool (*write)(const struct kimg_load_event *e))
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
	if (write(&e))
		kimg_stat_add(KIMG_STAT_AUDIT_REPORTS, 1);
}
