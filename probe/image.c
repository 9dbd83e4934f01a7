/* SPDX-License-Identifier: Apache-2.0 */
/* Container images as the final file system of their layers (image.h):
 * one image's run from its plan: the config read, pass one over every
 * layer, the final file system settled (records and compat libraries
 * named by their final paths), pass two; and what the walker asks about
 * the member being handed on (its layer, its owner).
 *
 * Why two passes over each layer: which entries survive depends on the
 * layers above (whiteouts, replacements, and symlinked directories below
 * decide where an entry lands), and a layer's owning-package records may
 * sit in any layer. Nothing is written to disk; what is held is the path
 * table, the package records, one file at a time and libarchive's window.
 * One pass, top-down, would judge a file as it streams, before its
 * section table (at its end) says which pages the check reads: the whole
 * file held (cuBLASLt 541 MB, not the 175 MB read sparsely), over the
 * 256 MiB goal of bench/image_bench.sh, and its output would come in
 * another order than the final file system's.
 *
 * The parts: image_source.c (the container and its blobs), image_plan.c
 * (manifests and indexes), image_pass1.c, image_pass2.c, image_owners.c,
 * image_facts.c; the pure parts in core/ (image_format, layer_fs,
 * tar_header, elf_sparse, nvidia_require). */
#include "image.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "image_format.h"
#include "image_int.h"
#include "layer_fs.h"
#include "probe.h"

static _Thread_local struct run *current_run;

static void layer_label(const struct run *r, unsigned i, char *buf, size_t size)
{
	const struct layer_plan *l = &r->pl->layers[i];
	snprintf(buf, size, "layer %u of %u (%.19s%s)", i + 1, r->pl->n_layers, l->digest[0] ? l->digest : l->member,
		 strlen(l->digest[0] ? l->digest : l->member) > 19 ? "..." : "");
}

void image_run_error(struct run *r, int layer, const char *fmt, ...)
{
	char msg[900], label[160] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (layer >= 0)
		layer_label(r, (unsigned)layer, label, sizeof label);
	char line[1100];
	snprintf(line, sizeof line, "%s%s%s", label, label[0] ? ": " : "", msg);
	r->w->on_error(r->w->ctx, r->info.name, line);
	r->errors++;
}

/* -- the config -- */

struct config_ctx {
	struct run *r;
	unsigned cap_env;
	char diff_ids[KIMG_IMAGE_LAYERS_MAX][72];
	unsigned n_diff_ids;
};

static int on_env(void *ctx, const char *entry)
{
	struct config_ctx *c = ctx;
	struct run *r = c->r;
	if (r->n_env == c->cap_env) {
		unsigned cap = c->cap_env ? c->cap_env * 2 : 32;
		char **e = realloc(r->env, cap * sizeof *e);
		if (!e)
			return -ENOMEM;
		r->env = e;
		c->cap_env = cap;
	}
	if (!(r->env[r->n_env] = strdup(entry)))
		return -ENOMEM;
	r->n_env++;
	return 0;
}

static int on_history(void *ctx, int layer, const char *created_by)
{
	struct config_ctx *c = ctx;
	if (layer >= 0 && (unsigned)layer < c->r->pl->n_layers)
		snprintf(c->r->pl->layers[layer].created_by, sizeof c->r->pl->layers[layer].created_by, "%s", created_by);
	return 0;
}

static int on_diff_id(void *ctx, unsigned index, const char *digest)
{
	struct config_ctx *c = ctx;
	if (index < KIMG_IMAGE_LAYERS_MAX) {
		snprintf(c->diff_ids[index], sizeof c->diff_ids[index], "%s", digest);
		c->n_diff_ids = index + 1;
	}
	return 0;
}

static int read_config(struct run *r)
{
	struct plan *pl = r->pl;
	unsigned char *doc;
	uint64_t len;
	struct kimg_error err = { 0, 0, "" };
	int rc = image_blob_read_doc(r->src, pl->config_member, pl->config_digest[0] ? pl->config_digest + 7 : NULL, &doc,
			       &len, &err);
	if (rc < 0) {
		image_run_error(r, -1, "config: %s", err.what);
		return rc;
	}
	struct config_ctx *c = calloc(1, sizeof *c);
	size_t arena_size = (size_t)len * 4 + 65536;
	void *arena = malloc(arena_size);
	struct kimg_image_config cfg;
	if (!c || !arena) {
		free(c);
		free(arena);
		free(doc);
		image_run_error(r, -1, "config: out of memory");
		return -ENOMEM;
	}
	c->r = r;
	struct kimg_image_config_visitor v = { c, on_env, on_history, on_diff_id };
	rc = kimg_image_config_parse(kimg_span_make(doc, len), arena, arena_size, &v, &cfg, &err);
	if (rc < 0) {
		image_run_error(r, -1, "config %.200s: %s", pl->config_member, err.what);
	} else {
		if (!pl->platform[0] && cfg.os[0])
			snprintf(pl->platform, sizeof pl->platform, "%s/%s%s%s", cfg.os, cfg.arch, cfg.variant[0] ? "/" : "",
				 cfg.variant);
		/* docker save's "ID/layer.tar" layers are checked by diff_id */
		for (unsigned i = 0; i < pl->n_layers; i++)
			if (!pl->layers[i].digest[0] && i < c->n_diff_ids)
				snprintf(pl->layers[i].digest, sizeof pl->layers[i].digest, "%s", c->diff_ids[i]);
		if (c->n_diff_ids && c->n_diff_ids != pl->n_layers)
			image_run_error(r, -1, "config lists %u diff_ids for %u layers", c->n_diff_ids, pl->n_layers);
	}
	free(c);
	free(arena);
	free(doc);
	return rc;
}


/* Records named by their final path; the others dropped. */
static void settle_records(struct run *r)
{
	size_t kept = 0;
	for (size_t i = 0; i < r->n_recs; i++) {
		struct probe_image_record *rec = &r->recs[i];
		unsigned layer, ordinal;
		const char *as = rec->path && sscanf(rec->path, "%u:%u", &layer, &ordinal) == 2
				 ? kimg_layer_fs_judged_as(r->fs, layer, ordinal) : NULL;
		free(rec->path);
		rec->path = as ? strdup(as) : NULL;
		if (!rec->path || probe_image_record_kind(rec->path) != rec->kind) {
			free(rec->bytes);
			free(rec->path);
			continue;
		}
		r->recs[kept++] = *rec;
	}
	r->n_recs = kept;
}

/* The compat libcuda files that survive, by their final names. */
static void find_compat(struct run *r)
{
	if (!r->n_maybe_compat || !(r->compat = calloc(r->n_maybe_compat, sizeof *r->compat)))
		return;
	for (size_t i = 0; i < r->n_maybe_compat; i++) {
		const char *as = kimg_layer_fs_judged_as(r->fs, (unsigned)(r->maybe_compat[i] >> 32),
							 (uint32_t)r->maybe_compat[i]);
		struct probe_image_compat *c = &r->compat[r->n_compat];
		if (as && kimg_compat_lib_identify(as, &c->lib)) {
			snprintf(c->path, sizeof c->path, "%s", as);
			r->n_compat++;
		}
	}
}

static void run_image(const struct source *src, const struct probe_image_walker *w, struct plan *pl, bool many)
{
	struct run *r = calloc(1, sizeof *r);
	unsigned char *chunk = malloc(IMAGE_CHUNK);
	if (!r || !chunk) {
		free(r);
		free(chunk);
		w->on_error(w->ctx, src->path, "out of memory");
		return;
	}
	r->src = src;
	r->w = w;
	r->pl = pl;
	r->info.input = src->path;
	r->info.format = src->format;
	snprintf(pl->name, sizeof pl->name, "%s", src->path);
	r->info.name = pl->name;
	if (read_config(r) < 0)
		goto out;
	if (w->platform && pl->platform[0]) {
		char os[32], arch[32], var[32], hos[32], harch[32], hvar[32];
		if (kimg_platform_parse(w->platform, os, arch, var) == 0 &&
		    kimg_platform_parse(pl->platform, hos, harch, hvar) == 0 &&
		    !kimg_platform_matches(hos, harch, hvar, os, arch, var))
			goto out; /* docker save of another platform */
	}
	if (many)
		snprintf(pl->name, sizeof pl->name, "%s[%s]", src->path, pl->platform[0] ? pl->platform : "?");
	r->info.platform = pl->platform;
	r->info.ref = pl->ref;
	r->info.config_digest = pl->config_digest;
	r->info.env = (const char *const *)r->env;
	r->info.n_env = r->n_env;
	kimg_jit_env_read(r->info.env, r->info.n_env, &r->info.jit);
	r->linfo = calloc(pl->n_layers ? pl->n_layers : 1, sizeof *r->linfo);
	r->cand = calloc(pl->n_layers ? pl->n_layers : 1, sizeof *r->cand);
	r->n_cand = calloc(pl->n_layers ? pl->n_layers : 1, sizeof *r->n_cand);
	r->fs = kimg_layer_fs_new(pl->n_layers, PROBE_IMAGE_ENTRIES_MAX);
	r->owners = probe_image_owners_new();
	if (!r->linfo || !r->cand || !r->n_cand || !r->fs || !r->owners) {
		image_run_error(r, -1, "out of memory");
		goto out;
	}
	r->info.layers = r->linfo;
	r->info.n_layers = pl->n_layers;
	for (unsigned i = 0; i < pl->n_layers; i++)
		image_pass1_layer(r, i, chunk);
	for (unsigned i = 0; i < pl->n_layers; i++)
		r->linfo[i] = (struct probe_image_layer_info){ pl->layers[i].digest, pl->layers[i].media_type,
							       pl->layers[i].size, pl->layers[i].created_by, pl->layers[i].read };
	if (kimg_layer_fs_finish(r->fs) < 0) {
		image_run_error(r, -1, "out of memory");
		goto out;
	}
	settle_records(r);
	find_compat(r);
	r->info.compat = r->compat;
	r->info.n_compat = r->n_compat;
	if (w->on_image)
		w->on_image(w->ctx, &r->info);
	probe_image_owners_build(r->owners, r->recs, r->n_recs);
	struct run *outer = current_run;
	current_run = r;
	for (unsigned i = 0; i < pl->n_layers; i++)
		if (pl->layers[i].read)
			image_pass2_layer(r, i, chunk);
	current_run = outer;
out:
	for (unsigned i = 0; r->cand && i < pl->n_layers; i++)
		free(r->cand[i]);
	free(r->cand);
	free(r->n_cand);
	free(r->linfo);
	free(r->maybe_compat);
	free(r->compat);
	free(r->sparse);
	for (unsigned i = 0; i < r->n_env; i++)
		free(r->env[i]);
	free(r->env);
	image_drop_records(r, 0);
	free(r->recs);
	probe_image_owners_free(r->owners);
	kimg_layer_fs_free(r->fs);
	free(r);
	free(chunk);
}

int probe_image_walk(const char *path, const struct probe_image_walker *w)
{
	struct source src;
	struct kimg_error err = { 0, 0, "" };
	if (image_source_open(path, &src, &err) < 0) {
		w->on_error(w->ctx, path, err.what);
		image_source_close(&src);
		return 0;
	}
	struct planner p;
	memset(&p, 0, sizeof p);
	p.src = &src;
	p.w = w;
	if (w->platform) {
		if (kimg_platform_parse(w->platform, p.os, p.arch, p.variant) < 0) {
			w->on_error(w->ctx, path, "--platform must be OS/ARCH[/VARIANT], e.g. linux/arm64");
			image_source_close(&src);
			return 0;
		}
		p.want_platform = true;
	}
	int rc = image_plan_all(&p);
	if (rc < 0)
		w->on_error(w->ctx, path, p.err.what);
	int walked = 0;
	unsigned good = 0;
	for (unsigned i = 0; i < p.n; i++)
		good += !p.plans[i].bad;
	for (unsigned i = 0; i < p.n; i++) {
		if (p.plans[i].bad)
			continue;
		run_image(&src, w, &p.plans[i], good > 1);
		walked++;
	}
	if (rc >= 0 && walked == 0 && p.n == 0)
		w->on_error(w->ctx, path, w->platform ? "no image of the platform asked (--platform)" : "no image in it");
	image_plans_free(&p);
	image_source_close(&src);
	return walked;
}

/* ---- provenance and owners of the member being handed on ---- */

const struct probe_image_member *probe_image_member_of(const char *path)
{
	const struct run *r = current_run;
	if (!r || !r->member_set || strcmp(path, r->member_name) != 0)
		return NULL;
	return &r->member;
}

bool probe_image_owner(const char *path, const struct kimg_pkg **pkg)
{
	const struct run *r = current_run;
	size_t n = r ? strlen(r->info.name) : 0;
	if (!r || strncmp(path, r->info.name, n) != 0 || path[n] != ':')
		return false;
	*pkg = probe_image_owners_lookup(r->owners, path + n + 1);
	return true;
}

bool probe_image_jit_env(const char *path, struct kimg_jit_env *jit)
{
	const struct run *r = current_run;
	size_t n = r ? strlen(r->info.name) : 0;
	if (!r || strncmp(path, r->info.name, n) != 0 || path[n] != ':')
		return false;
	*jit = r->info.jit;
	return true;
}

void probe_image_text_origin(FILE *f, const char *path)
{
	const struct probe_image_member *m = probe_image_member_of(path);
	if (!m)
		return;
	const struct probe_image_layer_info *l = &m->image->layers[m->layer];
	struct probe_esc e;
	char cb[160];
	snprintf(cb, sizeof cb, "%s%s", l->created_by, strlen(l->created_by) > 140 ? "..." : "");
	if (strlen(l->created_by) > 140)
		snprintf(cb + 140, sizeof cb - 140, "...");
	fprintf(f, "  layer: %u of %u, %.19s...%s%s\n", m->layer + 1, m->image->n_layers, l->digest,
		cb[0] ? ", " : "", cb[0] ? probe_esc(&e, cb) : "");
}

void probe_image_json_origin(struct kimg_json *j, const char *path)
{
	const struct probe_image_member *m = probe_image_member_of(path);
	if (!m)
		return;
	const struct probe_image_layer_info *l = &m->image->layers[m->layer];
	kimg_json_key(j, "image");
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "name", m->image->name);
	kimg_json_kv_string(j, "path", m->path);
	kimg_json_kv_uint(j, "layer", m->layer + 1);
	kimg_json_kv_string(j, "layer_digest", l->digest);
	kimg_json_kv_string(j, "created_by", l->created_by[0] ? l->created_by : NULL);
	kimg_json_end_object(j);
}
