/* The diagnosis layer's counters (stats.c), as mimalloc's stats.c: every
 * unit adds to them, only kimg_stats_print writes them (the exit summary's
 * counting lines). Relaxed atomics: they are read once, at exit. */
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

/* A forked child's first report: the failure counts and the summary are
 * its own from now on. */
void kimg_stats_forget_parent(void);

/* True once per process: the caller writes the exit summary. */
bool kimg_stats_claim_summary(void);

/* The exit summary's counting lines, each only when it has something to
 * say: failures, KIMG_FALLBACK, KIMG_AUDIT. */
void kimg_stats_print(void);

#endif
