/* SPDX-License-Identifier: Apache-2.0 */
/* The model behind `kimg-probe summarize` (cmd_summarize.c renders it):
 * JSON Lines reports of libkimg.so merged into groups keyed by (module
 * file, module offset, error code), with the distinct hosts, ranks, GPUs
 * and kernels of each group. Filled by probe_summary_read, one file at a
 * time; every line goes through the bounded core reader (json_read.h). */
#ifndef KIMG_PROBE_SUMMARY_H
#define KIMG_PROBE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_read.h"
#include "span.h"

/* One report line may take this much parsed (a full report is ~30 KB). */
#define LINE_ARENA ((size_t)4 << 20)
/* Distinct values kept per group and column; beyond, "+N more" is counted. */
#define MAX_DISTINCT 4096
#define TEXT_SHOWN 4      /* hosts / GPUs / kernels named in a text cell */
#define JSON_KERNELS 64   /* kernels listed per group in --json */

struct probe_devpair {
	char *name, *sm;
};

struct probe_strlist {
	char **v;
	size_t n, cap;
	unsigned long more; /* distinct values not kept */
};

struct probe_summary_group {
	char *file;            /* NULL: in memory / unknown */
	bool offset_known;
	int64_t offset;
	int64_t code;
	char *name;            /* error.name, else error.runtime_name; may be NULL */
	bool driver_mismatch;  /* a "report": "driver_mismatch" group (no module) */
	unsigned long reports, unknown_rank;
	struct probe_strlist hosts, kernels;
	struct probe_devpair *devs;
	size_t n_devs, cap_devs;
	int64_t *ranks;        /* sorted, distinct */
	size_t n_ranks, cap_ranks;
	char *first_line;      /* the first report, re-read for its fix */
	size_t first_len;
};

struct probe_fleet;

struct probe_summary {
	struct probe_summary_group *g;
	size_t n, cap;
	unsigned long files, reports, skipped;
	/* Of the skipped lines, those that open like a report ('{') but are
	 * not valid JSON: a report cut short, damaged, or not UTF-8. Each is
	 * a failure that could not be read, so it counts as an error. */
	unsigned long unreadable;
	unsigned char *arena;
	struct probe_fleet *inventory; /* `device --json` documents met beside the reports (fleet.h) */
};

/* Ready s (allocates the line arena; exits 2 when out of memory, as the
 * probe's other allocations do). */
void probe_summary_init(struct probe_summary *s);
void probe_summary_free(struct probe_summary *s);

/* Merge every report line of one file; counts and skips other non-blank
 * lines and names them once on stderr ("kimg-probe: PATH: skipped ..."),
 * and the unreadable reports among them once more ("... could not be
 * read"). */
void probe_summary_read(struct probe_summary *s, const char *path, struct kimg_span bytes);

/* A `device --json` document (inventory.h): its GPUs merged into
 * s->inventory (summary_inventory.c). False when root is not one. */
bool probe_summary_add_inventory(struct probe_summary *s, const struct kimg_jval *root, struct kimg_span line);
/* The inventory table after the report groups (text) / "inventory" (JSON). */
void probe_summary_print_inventory(const struct probe_summary *s);
struct kimg_json;
void probe_summary_json_inventory(const struct probe_summary *s, struct kimg_json *j);
void probe_summary_free_inventory(struct probe_summary *s);

/* The fix object of a group's first report (parsed again into the arena:
 * valid until the next call), or NULL when it had none. */
const struct kimg_jval *probe_summary_first_fix(const struct probe_summary *s, const struct probe_summary_group *g,
						struct kimg_jdoc *doc);

/* Add str to l when it is not there yet (insertion order kept); past
 * limit entries, only l->more is counted. NULL is ignored. */
void probe_summary_strlist_add(struct probe_strlist *l, const char *str, size_t limit);

#endif
