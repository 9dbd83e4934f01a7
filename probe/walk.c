/* SPDX-License-Identifier: Apache-2.0 */
/* Turning command-line paths into inputs: regular files are mapped,
 * directories recursed, .whl/.zip archives read member by member in
 * memory (sys/zip.h). Every problem is reported and the walk goes on.
 * With worker threads (probe_walker.job_begin, pool.c) the main thread
 * only lists the tree: each file, and each problem met while listing, is
 * one job, rendered into its own buffers by a worker and written by the
 * main thread in walk order (walk_jobs.c; walk.h names the other files). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "glibc_pins.h"
#include "file.h"
#include "gate.h"
#include "image.h"
#include "probe.h"
#include "walk.h"

/* Files read ahead of the one whose output is written next, per thread:
 * when a slow file (cuBLASLt's 2,782 modules) holds up the output, the
 * workers go on with the files after it instead of waiting. A warm check
 * of the H200's site-packages took 0.09-0.10 s with 256, 0.10-0.12 s with
 * 16 (-j 8, seven runs each); the memory is the rendered output of those
 * files. */
#define WALK_JOBS_IN_FLIGHT_PER_THREAD 256

static void walk_file(struct walk_state *ws, const char *path, bool explicit_path)
{
	walk_submit(ws, path, NULL, explicit_path);
}

static void walk_error(struct walk_state *ws, const char *path, const char *problem)
{
	walk_submit(ws, path, problem, false);
}

/* probe_gate_on_settle: the files held back may start. */
static void open_pool_gate(void *pool)
{
	probe_pool_open_gate(pool);
}

static bool tree_stop(void *ctx)
{
	const struct walk_state *ws = ctx;
	return probe_gate_called_off(ws->w->gate);
}

static void tree_file(void *ctx, const char *path)
{
	walk_file(ctx, path, false);
}

static void tree_problem(void *ctx, const char *path, const char *problem)
{
	walk_error(ctx, path, problem);
}

/* On the main thread, in walk order. */
static void tree_dangling(void *ctx, const char *path, const char *problem)
{
	struct walk_state *ws = ctx;
	if (ws->w->strict_links) {
		walk_error(ws, path, problem);
		return;
	}
	if (ws->dangling++ == 0)
		ws->first_dangling = strdup(path);
}

static void dangling_report(const struct walk_state *ws)
{
	if (!ws->dangling)
		return;
	struct probe_esc e;
	fprintf(stderr,
		"kimg-probe: %lu symbolic link%s inside the directories lead%s nowhere and %s no device code (not an "
		"error; check --strict makes %s): %s%s\n",
		ws->dangling, ws->dangling == 1 ? "" : "s", ws->dangling == 1 ? "s" : "", ws->dangling == 1 ? "holds" : "hold",
		ws->dangling == 1 ? "it one" : "each one", probe_esc(&e, ws->first_dangling ? ws->first_dangling : "?"),
		ws->dangling > 1 ? " and others" : "");
}

void probe_walk(char *const *paths, int n, const struct probe_walker *w)
{
	struct walk_state ws;
	memset(&ws, 0, sizeof ws);
	ws.w = w;
	unsigned jobs = w->out ? probe_jobs(w->out->jobs) : 1;
	if (jobs > 1 && w->job_begin && w->job_end)
		ws.pool = probe_pool_start(jobs, WALK_JOBS_IN_FLIGHT_PER_THREAD * jobs);
	if (ws.pool && w->gate) {
		probe_pool_close_gate(ws.pool);
		probe_gate_on_settle(w->gate, open_pool_gate, ws.pool);
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (kimg_file_stat(paths[i], &st, true) != 0) {
			walk_error(&ws, paths[i], strerror(errno));
			continue;
		}
		if (S_ISDIR(st.st_mode) && probe_image_detect(paths[i])) {
			walk_file(&ws, paths[i], true); /* an OCI image layout: read as an image */
		} else if (S_ISDIR(st.st_mode)) {
			struct probe_tree_visitor v = { &ws, walk_tree_wants, tree_file, tree_problem, tree_stop, tree_dangling };
			probe_tree_walk(paths[i], jobs, &v);
		}
		else
			walk_file(&ws, paths[i], true); /* named explicitly: pipes and devices are read too */
	}
	/* Returns once the gate is settled, and so its call to
	 * open_pool_gate over: the pool outlives it. A lone job (one file)
	 * runs here meanwhile, beside the wait. */
	if (ws.pool && w->gate) {
		probe_pool_help(ws.pool);
		(void)probe_gate_wait(w->gate);
	}
	probe_pool_end(ws.pool);
	ws.pool = NULL;
	if (probe_gate_pass(w->gate)) {
		walk_unread_report(&ws, &ws.zlib, "install zlib (Debian: zlib1g) or name it with KIMG_ZLIB");
		walk_unread_report(&ws, &ws.tar, "install libarchive (Debian: libarchive13) or name it with KIMG_LIBARCHIVE");
		dangling_report(&ws);
	}
	free(ws.first_dangling);
	free(ws.zlib.paths);
	free(ws.tar.paths);
}
