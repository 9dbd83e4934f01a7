/* SPDX-License-Identifier: Apache-2.0 */
/* A built report leaves the process (emit.h): the process facts it
 * carries, one write() in the KIMG_FORMAT the user chose, and the
 * KIMG_ON_ERROR action after it. Below the report builders (diagnose.c):
 * it calls only the log and the counters. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "diag_internal.h"
#include "emit.h"
#include "stats.h"

/* ---- process ---- */

/* Asked at report time, not in the constructor: a forked worker (a
 * DataLoader, multiprocessing) has its own pid. */
void kimg_report_fill_process(struct kimg_report_process *p)
{
	struct utsname u;
	p->present = true;
	p->pid = (long)getpid();
	if (uname(&u) == 0)
		snprintf(p->host, sizeof p->host, "%s", u.nodename);
	p->rank = kimg_env.rank;
	p->local_rank = kimg_env.local_rank;
	p->world_size = kimg_env.world_size;
	snprintf(p->program, sizeof p->program, "%s", kimg_env.program);
}

/* ---- writing ---- */

/* Rendered into memory first so the report leaves in one write(). */
void kimg_report_emit(const struct kimg_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		return;
	if (kimg_opts.format == KIMG_FORMAT_JSON)
		kimg_report_write_json(r, out);
	else
		kimg_report_write_text(r, out);
	if (fclose(out) == 0 && buf && len > 0)
		kimg_log_write(buf, len);
	free(buf);
}

void kimg_report_apply_on_error(void)
{
	if (kimg_opts.on_error == KIMG_ON_ERROR_CONTINUE)
		return;
	kimg_stats_summary();
	/* only because the user asked for it (KIMG_ON_ERROR) */
	if (kimg_opts.on_error == KIMG_ON_ERROR_ABORT)
		abort();
	_exit(kimg_opts.exit_code);
}
