/* The exit summary (kimg_report_summary, a down-call of shim/diag.h): the
 * one place that sees every policy at once, so that none of them needs
 * another: the held audit report first, then the counting lines
 * (stats.c), the audit's per-file groups and the arch-dispatch notes. */
#include "audit.h"
#include "diag_internal.h"
#include "dispatch_track.h"
#include "stats.h"

void kimg_report_summary(void)
{
	/* a forked child that reported nothing: the counts are its parent's */
	if (!kimg_report_counts_are_ours())
		return;
	if (!kimg_in_diagnosis)
		kimg_audit_flush();
	if (!kimg_stats_claim_summary())
		return;
	kimg_stats_print();
	kimg_audit_group_lines();
	kimg_dispatch_summary();
}
