/* SPDX-License-Identifier: Apache-2.0 */
/* The walk's problem lines ("kimg-probe: PATH: problem" on stderr, or a
 * worker's buffer while it runs a job) and the on_error that subcommands
 * with a struct probe_out share. */
#include <stdio.h>

#include "probe.h"
#include "walk.h"

/* Where a worker's problem lines go while it runs a job (its buffer). */
static _Thread_local FILE *err_stream;

void walk_set_error_stream(FILE *f)
{
	err_stream = f;
}

void probe_report_error(const char *path, const char *problem)
{
	struct probe_esc p, q;
	fprintf(err_stream ? err_stream : stderr, "kimg-probe: %s: %s\n", probe_esc(&p, path), probe_esc(&q, problem));
}

void probe_input_unreadable(void *ctx, const char *path, const char *problem, bool said)
{
	struct probe_out *out = ctx;
	if (!said)
		probe_report_error(path, problem);
	out->errors++;
	if (out->json)
		probe_json_unreadable_file(&out->j, path, problem);
}

unsigned long probe_report_problems(const struct probe_file *pf)
{
	unsigned long n = 0;
	if (pf->error[0]) {
		probe_report_error(pf->path, pf->error);
		n++;
	}
	for (size_t i = 0; i < pf->n_mods; i++)
		if (pf->mods[i].error) {
			char place[256], msg[512];
			probe_format_module_place(&pf->mods[i], place, sizeof place);
			snprintf(msg, sizeof msg, "module %s: %s", place, pf->mods[i].error);
			probe_report_error(pf->path, msg);
			n++;
		}
	return n;
}
