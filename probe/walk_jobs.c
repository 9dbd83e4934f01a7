/* SPDX-License-Identifier: Apache-2.0 */
/* Each file of a walk (or a problem met while listing) as a worker's job
 * (pool.c): rendered into buffers of its own, which the main thread
 * writes in walk order, so the output is the one-thread output byte for
 * byte. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "glibc_pins.h"
#include "file.h"
#include "gate.h"
#include "probe.h"
#include "walk.h"

/* While the walk's gate is closed (probe_walker.gate), files below
 * this size are held back: what they do before they wait takes little,
 * and each would keep a worker from a large one (with --sm native on the
 * H200, cuBLASLt, found at 11 ms, started only at 33 ms, after 16 small
 * files that had waited for the 22 ms GPU query). */
#define WALK_HOLD_BELOW ((uint64_t)16 << 20)

struct walk_job {
	struct probe_pool_job base;
	struct walk_state *ws;         /* the main thread's */
	char *path;
	char *problem;                 /* a problem of the listing itself, or NULL */
	bool explicit_path;
	struct probe_out *out;         /* the job's copy of the command state */
	struct walk_unread zlib, tar;
	char *out_buf, *err_buf;
	size_t out_len, err_len;
	bool in_finish;                /* no buffers, or run by the submitter in order: finish does the work */
};

static void job_run(struct probe_pool_job *base)
{
	struct walk_job *job = (struct walk_job *)base;
	const struct probe_walker *w = job->ws->w;
	if (probe_gate_called_off(w->gate))
		return; /* finish drops the job */
	if (base->in_order) {
		job->in_finish = true; /* its finish follows at once, on this thread: no buffers */
		return;
	}
	FILE *out = open_memstream(&job->out_buf, &job->out_len);
	FILE *err = open_memstream(&job->err_buf, &job->err_len);
	if (!out || !err) {
		if (out)
			fclose(out);
		if (err)
			fclose(err);
		free(job->out_buf);
		free(job->err_buf);
		job->out_buf = job->err_buf = NULL;
		job->in_finish = true; /* finish runs it on the main thread instead */
		return;
	}
	struct probe_out *o = job->out;
	o->f = out;
	o->j.out = out;
	struct probe_walker jw = *w;
	jw.ctx = o;
	jw.out = o;
	struct walk_state jws;
	memset(&jws, 0, sizeof jws);
	jws.w = &jw;
	walk_set_error_stream(err);
	if (job->problem)
		jw.on_error(jw.ctx, job->path, job->problem, false);
	else
		walk_file_now(&jws, job->path, job->explicit_path);
	walk_set_error_stream(NULL);
	fclose(out);
	fclose(err);
	job->zlib = jws.zlib;
	job->tar = jws.tar;
}

static void job_finish(struct probe_pool_job *base)
{
	struct walk_job *job = (struct walk_job *)base;
	struct walk_state *ws = job->ws;
	const struct probe_walker *w = ws->w;
	struct probe_out *main_out = w->out, *o = job->out;
	if (!probe_gate_pass(w->gate)) {
		o->errors = 0;
		w->job_end(w->ctx, o); /* called off: the job's output dropped */
		free(job->zlib.paths);
		free(job->tar.paths);
	} else if (job->in_finish) {
		/* Out of memory for buffers, or the job's turn came before a
		 * worker took it: the same work, here and unbuffered. */
		w->job_end(w->ctx, o);
		struct probe_pool *pool = ws->pool;
		ws->pool = NULL;
		if (job->problem)
			w->on_error(w->ctx, job->path, job->problem, false);
		else
			walk_file_now(ws, job->path, job->explicit_path);
		ws->pool = pool;
	} else {
		if (job->err_len)
			fwrite(job->err_buf, 1, job->err_len, stderr);
		if (job->out_len) {
			/* The job wrote its file objects at the top of a writer of
			 * its own, as if first in "files": the comma between them
			 * and the ones before is added here, after what the main
			 * writer holds. */
			if (main_out->json)
				kimg_json_flush(&main_out->j);
			int d = main_out->j.depth;
			if (main_out->json && !o->j.first[0]) {
				if (!main_out->j.first[d])
					fputc(',', main_out->f);
				main_out->j.first[d] = false;
			}
			fwrite(job->out_buf, 1, job->out_len, main_out->f);
		}
		main_out->errors += o->errors;
		o->errors = 0;
		w->job_end(w->ctx, o);
		walk_unread_merge(&ws->zlib, &job->zlib);
		walk_unread_merge(&ws->tar, &job->tar);
	}
	free(job->out_buf);
	free(job->err_buf);
	free(job->path);
	free(job->problem);
	free(job);
}

void walk_submit(struct walk_state *ws, const char *path, const char *problem, bool explicit_path)
{
	const struct probe_walker *w = ws->w;
	struct walk_job *job = NULL;
	if (probe_gate_called_off(w->gate))
		return;
	if (ws->pool && (job = calloc(1, sizeof *job)) != NULL) {
		job->path = strdup(path);
		job->problem = problem ? strdup(problem) : NULL;
		job->out = job->path && (!problem || job->problem) ? w->job_begin(w->ctx) : NULL;
		if (!job->out) {
			free(job->path);
			free(job->problem);
			free(job);
			job = NULL;
		}
	}
	if (!job) {
		/* One thread, or no memory for a job: the work itself, here. */
		if (!probe_gate_pass(w->gate))
			return;
		if (problem)
			w->on_error(w->ctx, path, problem, false);
		else
			walk_file_now(ws, path, explicit_path);
		return;
	}
	struct probe_out *o = job->out;
	o->errors = 0;
	/* Its file objects need nothing of the writer before them (which
	 * may not have begun: the gate), so its writer starts afresh. */
	kimg_json_init(&o->j, NULL);
	job->ws = ws;
	job->explicit_path = explicit_path;
	job->base.run = job_run;
	job->base.finish = job_finish;
	if (w->gate && probe_pool_gate_closed(ws->pool)) {
		struct stat st;
		job->base.held = problem || kimg_file_stat(path, &st, true) != 0 || !S_ISREG(st.st_mode) ||
				 (uint64_t)st.st_size < WALK_HOLD_BELOW;
	}
	probe_pool_submit(ws->pool, &job->base);
}

