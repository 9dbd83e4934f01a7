/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe check, split by job as doctor is (doctor.h): a per-file
 * judge, run on the walk's worker, builds a result (check_judge.c); a
 * renderer writes it as text or JSON (check_render.c); the command wires
 * them to the walk and adds up the totals (cmd_check.c). The verdicts
 * and fixes come from the core (kimg_rules_judge_file, kimg_fix_for_file). */
#ifndef KIMG_PROBE_CHECK_RUN_H
#define KIMG_PROBE_CHECK_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "cluster_groups.h"
#include "extras.h"
#include "file_rules.h"
#include "fix.h"
#include "probe.h"
#include "rules.h"

struct probe_gate;

/* What every file is judged against. With --sm native and workers the
 * GPUs are still being asked when the walk begins: targets is NULL until
 * check_run_targets finds them, behind the gate. */
struct check_run {
	struct probe_target *targets;
	int n_targets;
	int label_width;                 /* text: widest target label */
	bool strict;                     /* --strict: KIMG_FILE_STRICT */
	bool all_modules;                /* --all: list the -rdc link inputs */
	unsigned walk_flags;             /* probe_file.walk_flags (--deep) */
	unsigned jobs;                   /* -j N, for the link-stub test's helpers */
	struct probe_gate *gate;         /* NULL: the targets are known */
	struct probe_targets_async *pending;
	struct probe_extras *extras;     /* the owners index (check_owner_of) */
};

/* The targets once known (waits at the gate): false when asking failed,
 * and the run is called off. */
bool check_run_targets(struct check_run *r);
/* Is "Where it may run" written: is some target a cluster's group? */
bool check_run_places(const struct check_run *r);
/* "9.0", "9.0 (H100)", "9.0 (GPU 0 NVIDIA H200)" */
void check_target_label(const struct probe_target *t, char *buf, size_t size);
int check_label_width(const struct probe_target *t, int n);
/* Add each image target of m not yet in the space-separated list. */
void check_add_archs(const struct probe_module *m, char *list, size_t size);

/* One module on one target. */
struct check_row {
	struct kimg_module_judgement j;  /* verdict, fate and file-level rule */
	struct kimg_fix *fix;            /* failing rows only (2 KB each: cuBLASLt has
	                                    2,782 modules that nearly all run); NULL: none */
};

/* Per file and target: how many modules run, are dispatched, fail. */
struct check_tally {
	unsigned long runs, dispatched, fails;
	char dispatched_archs[256];      /* distinct targets of the dispatched modules */
};

/* One file judged: what the renderer writes and the totals add. */
struct check_file {
	struct probe_file pf;            /* its modules and images (collect.c) */
	bool judged;                     /* rows, stub and tally are set (false: out of memory) */
	struct check_row *rows;          /* rows[i * n_targets + t] */
	bool *stub;                      /* stub[i]: module i is a device-link stub */
	struct check_tally *tally;       /* per target */
	size_t shown;                    /* modules listed (--all: link inputs too) */
	size_t shown_stubs;
	bool is_lib;                     /* a CUDA runtime or library (extras.h) */
	struct kimg_cuda_lib lib;
	unsigned long lib_needs_driver;  /* targets' drivers it needs a newer one than */
	const struct kimg_pkg *pkg;      /* the package that installed it, or NULL;
	                                    valid until the walk leaves the file */
	unsigned long cannot;            /* failing (module, target) pairs */
	char advice[640];                /* the package advice for the first of them */
	/* Per target: what cannot run and its first fix, for "Where it may
	 * run"; NULL unless some target is a node group. */
	struct probe_place_row *place;
	/* Module verdicts counted for the summary, link inputs too. */
	unsigned long checks, dispatched, by_outcome[KIMG_OUTCOME_COUNT];
	unsigned long problems;          /* lines on stderr: unreadable parts, out of memory */
};

/* Collect, judge on every target of r (once more when the link-stub test
 * finds stubs), look up the owner. false: the run was called off while
 * the GPUs were asked (nothing to say; cf is empty). Problems go to
 * stderr and are counted in cf->problems. */
bool check_judge_file(struct check_run *r, const char *path, struct kimg_span bytes, struct check_file *cf);
void check_file_free(struct check_file *cf, size_t n_targets);

/* The package that installed path (a container image's own records for
 * its files). Lookups wait for the prewarm (check_owners.c). */
const struct kimg_pkg *check_owner_of(struct probe_extras *x, const char *path);
/* With workers: read the owners index of the directories among paths on
 * a thread of its own while the GPUs are asked and the tree is listed. */
struct check_prewarm;
struct check_prewarm *check_owners_prewarm(struct probe_extras *x, char *const *paths, int n_paths);
void check_owners_prewarm_end(struct check_prewarm *p);

/* Totals of a run (the summary). */
struct check_totals {
	unsigned long files, modules, stubs, checks, cannot, dispatched;
	unsigned long by_outcome[KIMG_OUTCOME_COUNT];
	unsigned long images, image_refusals; /* container images; NVIDIA_REQUIRE_* the toolkit refuses */
};

/* ---- check_render.c ---- */

/* One file: its lines (text; explicit: named on the command line, shown
 * even without modules) or its object in "files" (JSON). */
void check_render_file(struct probe_out *out, const struct check_run *r, const struct check_file *cf,
		       bool explicit_path);
/* The JSON before the files: {"kimg_version": ..., "targets": [...], "files": [ */
void check_render_json_header(struct kimg_json *j, const struct check_run *r);
/* After the files: the by-package table, "Where it may run" and the
 * summary line (text), or "ok", "summary" and "placement" (JSON). */
void check_render_end(struct probe_out *out, const struct check_run *r, const struct check_totals *t,
		      struct probe_extras *x, const struct probe_place_row *place, int status);

#endif
