/* SPDX-License-Identifier: Apache-2.0 */
/* The diagnosis layer's counters (stats.c), as mimalloc's stats.c: every
 * unit adds to them, only stats.c writes them (the exit summary). Besides
 * the numbers, the per-item lines of the summary (one per KIMG_AUDIT group,
 * one per file with arch-dispatched failures) are left here by the units
 * that know them, so that the summary reads stats.c alone and calls no
 * policy unit. Counters are relaxed atomics: they are read once, at exit.
 * stats.c calls nothing of the layer but the log. */
#ifndef KIMG_SHIM_STATS_H
#define KIMG_SHIM_STATS_H

#include <stdbool.h>

enum kimg_stat {
	/* diagnose.c: distinct failed kernels and modules (a forked child
	 * starts again at 0: the parent's failures are not its to count) */
	KIMG_STAT_FAILED_KERNELS = 0,
	KIMG_STAT_FAILED_MODULES,
	/* audit.c: KIMG_AUDIT */
	KIMG_STAT_AUDIT_CHECKED,     /* module loads checked */
	KIMG_STAT_AUDIT_CANNOT_RUN,  /* of them, cannot run on the device */
	KIMG_STAT_AUDIT_UNKNOWN,     /* registered before the device could be asked */
	KIMG_STAT_AUDIT_DISPATCHED,  /* cannot run, but arch-dispatched: not reported */
	KIMG_STAT_AUDIT_REPORTS,     /* reports written */
	/* fallback.c: KIMG_FALLBACK */
	KIMG_STAT_FALLBACK_APPLIED,  /* modules that run rewritten PTX */
	KIMG_STAT_FALLBACK_JIT_NS,   /* their JIT time */
	KIMG_STAT_COUNT
};

void kimg_stat_add(enum kimg_stat s, unsigned long long n);
/* Takes back an addition (audit.c: the same module seen twice). */
void kimg_stat_sub(enum kimg_stat s, unsigned long long n);
unsigned long long kimg_stat_get(enum kimg_stat s);

/* The process the counts belong to, told on each report path (the pid,
 * asked there: a cold path). True when pid is a forked child taking over
 * from its parent: the failure counts and the summary are its own from now
 * on, and the caller forgets its own per-process sets too. */
bool kimg_stats_adopt_process(long pid);

/* False in a forked child that has not reported anything yet: the counts
 * then still hold its parent's failures. */
bool kimg_stats_counts_are_ours(void);

/* The exit summary's per-item lines, kept by slot (the owner's index of
 * the group or file) and rewritten by the owner whenever its facts change;
 * "" leaves the slot silent. One writer per kind (under its own lock);
 * lines longer than KIMG_NOTE_SIZE - 1 are cut. */
enum kimg_note_kind {
	KIMG_NOTE_AUDIT_GROUP = 0, /* audit.c: a (file, cause) group of several modules; KIMG_AUDIT */
	KIMG_NOTE_DISPATCH_FILE,   /* dispatch_track.c: a file's recorded failures; KIMG_VERBOSE */
	KIMG_NOTE_KIND_COUNT
};
#define KIMG_NOTES_MAX 64
#define KIMG_NOTE_SIZE 1024
void kimg_stats_note(enum kimg_note_kind kind, unsigned slot, const char *line);

/* The exit summary, once per process and only for this process's counts
 * (KIMG_ON_ERROR's stop, or the exit): the counting lines (failures,
 * KIMG_FALLBACK, KIMG_AUDIT), each only when it has something to say, then
 * the audit groups (KIMG_AUDIT) and the dispatch files (KIMG_VERBOSE). */
void kimg_stats_summary(void);

#endif
