/* SPDX-License-Identifier: Apache-2.0 */
/* Writing a report and acting on it (emit.c), for diagnose.c's failure and
 * load-event paths. */
#ifndef KIMG_SHIM_EMIT_H
#define KIMG_SHIM_EMIT_H

#include "report.h"

/* The process a report is about: pid (asked now: a forked worker has its
 * own), host, launcher ranks, program. */
void kimg_report_fill_process(struct kimg_report_process *p);

/* Render r in KIMG_FORMAT into memory and write it in one write() to the
 * KIMG_LOG target. */
void kimg_report_emit(const struct kimg_report *r);

/* KIMG_ON_ERROR after a report: nothing (continue), or the exit summary
 * (stats.c) and then abort() or _exit(N). Nothing is held then: audit.c
 * holds reports only under KIMG_ON_ERROR=continue. */
void kimg_report_apply_on_error(void);

#endif
