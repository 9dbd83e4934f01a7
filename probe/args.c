/* SPDX-License-Identifier: Apache-2.0 */
/* The arguments scan and check share: PATHs, "--", --json, --deep, --all,
 * --every-file and
 * --help, and the wording of their usage errors. Each subcommand handles
 * its own options (--kernels, --sm, --driver) around these. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_versions.h"
#include "probe.h"
#include "rules_tables.h"

int probe_args_init(struct probe_args *a, const char *cmd, int argc, struct probe_out *out)
{
	memset(a, 0, sizeof *a);
	a->cmd = cmd;
	a->out = out;
	out->f = stdout;
	/* Every argument could be a PATH: argc entries always suffice. */
	a->paths = calloc(argc > 0 ? (size_t)argc : 1, sizeof *a->paths);
	if (!a->paths) {
		fprintf(stderr, "kimg-probe: %s: out of memory\n", cmd);
		return -1;
	}
	return 0;
}

void probe_args_free(struct probe_args *a)
{
	free(a->paths);
	a->paths = NULL;
	a->n_paths = 0;
}

/* "-j N": 1 to PROBE_JOBS_MAX threads. */
static enum probe_arg take_jobs(struct probe_args *a, const char *text)
{
	char *end;
	unsigned long n = strtoul(text, &end, 10);
	a->expect_jobs = false;
	if (end == text || *end || text[0] == '-' || n == 0 || n > PROBE_JOBS_MAX) {
		probe_usage_error(a, true, "-j takes a number of threads from 1 to %d, not '%s'", PROBE_JOBS_MAX, text);
		return PROBE_ARG_BAD;
	}
	a->out->jobs = (unsigned)n;
	return PROBE_ARG_TAKEN;
}

int probe_args_done(const struct probe_args *a)
{
	if (a->expect_jobs)
		return probe_usage_error(a, true, "-j needs a number of threads");
	if (a->expect_platform)
		return probe_usage_error(a, true, "--platform needs OS/ARCH[/VARIANT]");
	return 0;
}

/* "--platform OS/ARCH[/VARIANT]": which platform of an image index. */
static enum probe_arg take_platform(struct probe_args *a, const char *text)
{
	a->expect_platform = false;
	if (!text[0] || text[0] == '-' || !strchr(text, '/')) {
		probe_usage_error(a, true, "--platform takes OS/ARCH[/VARIANT] (e.g. linux/arm64), not '%s'", text);
		return PROBE_ARG_BAD;
	}
	a->out->platform = text;
	return PROBE_ARG_TAKEN;
}

enum probe_arg probe_args_take(struct probe_args *a, char *arg)
{
	if (a->expect_jobs)
		return take_jobs(a, arg);
	if (a->expect_platform)
		return take_platform(a, arg);
	/* A lone "-" is not an option: it is taken as a PATH. */
	if (a->options_done || arg[0] != '-' || arg[1] == '\0') {
		a->paths[a->n_paths++] = arg;
		return PROBE_ARG_TAKEN;
	}
	if (strcmp(arg, "--") == 0) {
		a->options_done = true;
	} else if (strcmp(arg, "--json") == 0) {
		a->out->json = true;
	} else if (strcmp(arg, "--all") == 0) {
		a->out->all_modules = true;
	} else if (strcmp(arg, "--every-file") == 0) {
		a->out->every_file = true;
	} else if (strcmp(arg, "--deep") == 0) {
		a->out->walk_flags |= KIMG_INPUT_SCAN_DATA;
	} else if (strcmp(arg, "-j") == 0 || strcmp(arg, "--jobs") == 0) {
		a->expect_jobs = true;
	} else if (strncmp(arg, "--jobs=", 7) == 0) {
		return take_jobs(a, arg + 7);
	} else if (strncmp(arg, "-j", 2) == 0) {
		return take_jobs(a, arg + 2);
	} else if (strcmp(arg, "--platform") == 0) {
		a->expect_platform = true;
	} else if (strncmp(arg, "--platform=", 11) == 0) {
		return take_platform(a, arg + 11);
	} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
		return PROBE_ARG_HELP;
	} else {
		return PROBE_ARG_OTHER;
	}
	return PROBE_ARG_TAKEN;
}

int probe_usage_error(const struct probe_args *a, bool see_help, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "kimg-probe %s: ", a->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (see_help)
		fprintf(stderr, " (see kimg-probe %s --help)", a->cmd);
	fputc('\n', stderr);
	return PROBE_EXIT_ERROR;
}

int probe_args_driver(const struct probe_args *a, const char *value, bool note_outside_table)
{
	int driver;
	if (!value || (driver = kimg_cuda_version_parse(value)) < 0) {
		probe_usage_error(a, false, "--driver needs a CUDA version X.Y (e.g. 12.4)");
		return -1;
	}
	/* Outside kimg's PTX ISA table the limit is unknown: say so rather
	 * than check against a guess. */
	if (note_outside_table && kimg_driver_max_ptx_isa(driver) == 0)
		fprintf(stderr, "kimg-probe %s: note: --driver %s is %s than kimg's PTX ISA table "
			"(CUDA 7.0 to %d.%d): PTX ISA versions are not checked against it\n", a->cmd, value,
			driver < kimg_ptx_isa_table_oldest_cuda() ? "older" : "newer",
			kimg_ptx_isa_table_newest_cuda() / 1000, kimg_ptx_isa_table_newest_cuda() % 1000 / 10);
	return driver;
}
