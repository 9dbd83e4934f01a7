/* SPDX-License-Identifier: Apache-2.0 */
/* The exit (kimg_report_summary, a down-call of shim/diag.h): a held audit
 * report is written first (deferred.c keeps it), then the summary, which
 * stats.c alone writes from what the units left there. The top of the
 * layer: it calls down, nothing calls it but the hooks' destructor. */
#include "diag_internal.h"
#include "stats.h"

void kimg_report_summary(void)
{
	/* a forked child that reported nothing: the counts are its parent's */
	if (!kimg_stats_counts_are_ours())
		return;
	if (!kimg_in_diagnosis)
		kimg_report_flush_held();
	kimg_stats_summary();
	kimg_log_say_dropped();
}
