/* SPDX-License-Identifier: Apache-2.0 */
/* Counters of the diagnosis layer and the lines that print them (stats.h). */
#include "stats.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "diag_internal.h"
#include "report.h"

static _Atomic unsigned long long counters[KIMG_STAT_COUNT];
static _Atomic int summary_done;
/* The process the counts are of; 0 before the first report. */
static _Atomic long owner_pid;
/* Each kind has one writer, under its own lock (audit.c's, dispatch_track.c's);
 * the summary reads them at exit unlocked, as it reads the counters: no lock
 * a forked child or an exiting thread could be left waiting on. */
static char notes[KIMG_NOTE_KIND_COUNT][KIMG_NOTES_MAX][KIMG_NOTE_SIZE];

void kimg_stat_add(enum kimg_stat s, unsigned long long n)
{
	atomic_fetch_add_explicit(&counters[s], n, memory_order_relaxed);
}

void kimg_stat_sub(enum kimg_stat s, unsigned long long n)
{
	atomic_fetch_sub_explicit(&counters[s], n, memory_order_relaxed);
}

unsigned long long kimg_stat_get(enum kimg_stat s)
{
	return atomic_load_explicit(&counters[s], memory_order_relaxed);
}

bool kimg_stats_adopt_process(long pid)
{
	long owner = atomic_load(&owner_pid);
	if (owner == pid)
		return false;
	if (owner != 0) {
		atomic_store(&counters[KIMG_STAT_FAILED_KERNELS], 0);
		atomic_store(&counters[KIMG_STAT_FAILED_MODULES], 0);
		atomic_store(&summary_done, 0);
	}
	atomic_store(&owner_pid, pid);
	return owner != 0;
}

bool kimg_stats_counts_are_ours(void)
{
	long owner = atomic_load(&owner_pid);
	return owner == 0 || owner == (long)getpid();
}

void kimg_stats_note(enum kimg_note_kind kind, unsigned slot, const char *line)
{
	if (kind >= KIMG_NOTE_KIND_COUNT || slot >= KIMG_NOTES_MAX)
		return;
	snprintf(notes[kind][slot], KIMG_NOTE_SIZE, "%s", line);
}

static void print_notes(enum kimg_note_kind kind)
{
	for (unsigned i = 0; i < KIMG_NOTES_MAX; i++)
		if (notes[kind][i][0])
			kimg_log_write_human(notes[kind][i], strnlen(notes[kind][i], KIMG_NOTE_SIZE - 1));
}

static void put(const char *line, int n, size_t size)
{
	if (n > 0)
		kimg_log_write_human(line, (size_t)n < size ? (size_t)n : size - 1);
}

/* "kimg: fallback: 2 modules ran from rewritten PTX (JIT 35.124 ms in all); ..." */
static void fallback_line(char *line, size_t size)
{
	unsigned n = (unsigned)kimg_stat_get(KIMG_STAT_FALLBACK_APPLIED);
	if (n == 0)
		return;
	put(line,
	    snprintf(line, size, "kimg: fallback: %u module%s ran from rewritten PTX (JIT %.3f ms in all); %s\n", n,
		     n == 1 ? "" : "s", (double)kimg_stat_get(KIMG_STAT_FALLBACK_JIT_NS) / 1e6, KIMG_FALLBACK_CAVEAT_TEXT),
	    size);
}

/* "kimg: audit: 12 module loads checked, 1 cannot run on this device (see above)" */
static void audit_line(char *line, size_t size)
{
	unsigned checked = (unsigned)kimg_stat_get(KIMG_STAT_AUDIT_CHECKED);
	unsigned bad = (unsigned)kimg_stat_get(KIMG_STAT_AUDIT_CANNOT_RUN);
	unsigned unknown = (unsigned)kimg_stat_get(KIMG_STAT_AUDIT_UNKNOWN);
	unsigned dispatched = (unsigned)kimg_stat_get(KIMG_STAT_AUDIT_DISPATCHED);
	unsigned reports = (unsigned)kimg_stat_get(KIMG_STAT_AUDIT_REPORTS);
	if (!kimg_opts.audit || (checked == 0 && unknown == 0))
		return;
	char extra[160] = "", see[64] = "", disp[128] = "";
	if (unknown)
		snprintf(extra, sizeof extra, "; %u registered before the device could be asked, not checked", unknown);
	if (bad && reports && reports < bad)
		snprintf(see, sizeof see, " (see above: %u report%s)", reports, reports == 1 ? "" : "s");
	else if (bad)
		snprintf(see, sizeof see, " (see above)");
	if (dispatched)
		snprintf(disp, sizeof disp, "; %u arch-dispatched (for other GPUs, in files with code for this one), not reported",
			 dispatched);
	put(line,
	    snprintf(line, size, "kimg: audit: %u module load%s checked, %u cannot run on this device%s%s%s\n", checked,
		     checked == 1 ? "" : "s", bad, see, disp, extra),
	    size);
}

static void counting_lines(void)
{
	char line[400];
	size_t n = kimg_report_summary_line((unsigned)kimg_stat_get(KIMG_STAT_FAILED_KERNELS),
					    (unsigned)kimg_stat_get(KIMG_STAT_FAILED_MODULES), line, sizeof line);
	if (n > 0)
		kimg_log_write_human(line, n);
	fallback_line(line, sizeof line);
	audit_line(line, sizeof line);
}

void kimg_stats_summary(void)
{
	if (!kimg_stats_counts_are_ours() || atomic_exchange(&summary_done, 1))
		return;
	counting_lines();
	if (kimg_opts.audit)
		print_notes(KIMG_NOTE_AUDIT_GROUP);
	if (kimg_opts.verbose)
		print_notes(KIMG_NOTE_DISPATCH_FILE);
}
