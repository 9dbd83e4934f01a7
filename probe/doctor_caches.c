/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe doctor: the JIT caches. Code compiled once and kept is
 * loaded again without a build, so code built for another GPU (or by a
 * toolkit that could not target this one) gives 209 for kernels that
 * would now build: CuPy's kernel cache (cupy#9106), FlashInfer's JIT cache
 * built for 120a on a 12.1 GPU (flashinfer PR#2839), torch_extensions
 * build directories, Triton's cache. Every cached file with device code
 * is walked as `check` walks it (probe_walk, probe_collect) and its
 * modules judged together on each target (kimg_rules_judge_file); one
 * that cannot run is stale, named with what to remove. The driver's own
 * cache (~/.nv/ComputeCache) is keyed by GPU and driver, in a format of
 * its own: it is located and its switches named, and any cubin, PTX or
 * fatbin found in it is judged like the others. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doctor.h"
#include "file.h"
#include "file_rules.h"
#include "rules.h"

/* Where each cache is: the variable that moves it, else the default under
 * $HOME (or $XDG_CACHE_HOME for ~/.cache), as each project documents it. */
static const struct {
	const char *name, *env;
	const char *home_default;   /* under $HOME */
	bool under_xdg_cache;       /* ~/.cache/...: $XDG_CACHE_HOME when set */
} caches[] = {
	/* cupy/cupy docs "Environment variables": CUPY_CACHE_DIR, default ~/.cupy/kernel_cache */
	{ "cupy", "CUPY_CACHE_DIR", ".cupy/kernel_cache", false },
	/* torch.utils.cpp_extension: TORCH_EXTENSIONS_DIR, default ~/.cache/torch_extensions */
	{ "torch_extensions", "TORCH_EXTENSIONS_DIR", ".cache/torch_extensions", true },
	/* triton knobs: TRITON_CACHE_DIR, default ~/.triton/cache */
	{ "triton", "TRITON_CACHE_DIR", ".triton/cache", false },
	/* flashinfer jit/env.py: FLASHINFER_WORKSPACE_BASE (default $HOME) + .cache/flashinfer */
	{ "flashinfer", "FLASHINFER_WORKSPACE_BASE", ".cache/flashinfer", false },
	/* the driver: CUDA_CACHE_PATH, default ~/.nv/ComputeCache (CUDA C Programming Guide, JIT caching) */
	{ "nv_compute_cache", "CUDA_CACHE_PATH", ".nv/ComputeCache", false },
};

struct cache_walk {
	struct doctor *d;
	struct doc_cache *c;
};

/* What to remove for a stale file: its directory below the cache root
 * (a torch_extensions build, a Triton kernel's hash directory, a
 * FlashInfer op), or the file itself when it sits in the root. */
static char *removal_of(const char *root, const char *path)
{
	size_t rl = strlen(root);
	const char *slash = strrchr(path, '/');
	const char *bang = strstr(path, "!/"); /* a member of an archive: the archive */
	size_t end = bang ? (size_t)(bang - path) : strlen(path);
	if (!bang && slash && (size_t)(slash - path) > rl && strncmp(path, root, rl) == 0)
		end = (size_t)(slash - path);
	char *r = malloc(end + 1);
	if (r) {
		memcpy(r, path, end);
		r[end] = '\0';
	}
	return r;
}

static void cache_input(void *ctx, const char *path, struct kimg_span bytes, bool explicit_path)
{
	struct cache_walk *w = ctx;
	struct doctor *d = w->d;
	struct doc_cache *c = w->c;
	struct probe_file pf = { .path = path, .bytes = bytes };
	(void)explicit_path;
	probe_collect(&pf);
	if (pf.n_mods == 0) {
		c->unreadable += pf.error[0] != '\0' && pf.kind != KIMG_INPUT_HOST_ELF;
		probe_file_free(&pf);
		return;
	}
	c->files++;
	struct kimg_file_module *fm = calloc(pf.n_mods, sizeof *fm);
	struct kimg_module_judgement *mj = calloc(pf.n_mods, sizeof *mj);
	for (size_t i = 0; fm && mj && i < pf.n_mods; i++) {
		const struct probe_module *m = &pf.mods[i];
		fm[i].imgs = m->imgs;
		fm[i].n_imgs = m->n_imgs;
		bool fails = false;
		for (int t = 0; t < d->n_targets && m->n_imgs && !m->link_input && !fails; t++) {
			struct kimg_module_verdict v;
			kimg_rules_check_module(m->imgs, m->n_imgs, &d->targets[t].dev, NULL, &v);
			fails = v.outcome == KIMG_OUTCOME_CANNOT_RUN;
		}
		fm[i].role = m->link_input ? KIMG_ROLE_LINK_INPUT
			     : (m->n_imgs == 0 || (fails && probe_module_is_link_stub(m))) ? KIMG_ROLE_SKIP : KIMG_ROLE_LOADED;
	}
	bool stale = false;
	for (int t = 0; fm && mj && t < d->n_targets && !stale; t++) {
		kimg_rules_judge_file(path, fm, pf.n_mods, &d->targets[t].dev, 0, mj);
		for (size_t i = 0; i < pf.n_mods && !stale; i++) {
			if (mj[i].fate != KIMG_FATE_FAILS)
				continue;
			stale = true;
			if (c->n_shown == DOC_STALE_SHOWN)
				break;
			struct doc_stale *s = &c->shown[c->n_shown];
			memset(s, 0, sizeof *s);
			s->path = strdup(path);
			s->remove = removal_of(c->dir, path);
			kimg_arch_format_cc(d->targets[t].dev.cc, s->sm, sizeof s->sm);
			s->reason = mj[i].verdict.reason;
			s->rule = mj[i].verdict.rule;
			s->expected_error = mj[i].verdict.expected_error;
			const struct probe_module *m = &pf.mods[i];
			size_t used = 0;
			for (size_t k = 0; k < m->n_imgs; k++) {
				char a[32];
				kimg_image_arch_name(&m->imgs[k], a, sizeof a);
				if (!strstr(s->archs, a) && used + strlen(a) + 2 < sizeof s->archs)
					used += (size_t)snprintf(s->archs + used, sizeof s->archs - used, "%s%s", used ? " " : "", a);
			}
			if (s->path && s->remove)
				c->n_shown++;
			else {
				free(s->path);
				free(s->remove);
			}
		}
	}
	c->stale += stale;
	free(fm);
	free(mj);
	probe_file_free(&pf);
}

static void cache_unreadable(void *ctx, const char *path, const char *problem, bool said)
{
	struct cache_walk *w = ctx;
	(void)path;
	(void)problem;
	(void)said;
	w->c->unreadable++;
}

static bool env_true(const char *v)
{
	return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
		     strcasecmp(v, "on") == 0);
}

void probe_doctor_caches(struct doctor *d)
{
	struct doc_caches *cs = &d->caches;
	const char *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	memset(cs, 0, sizeof *cs);
	for (size_t i = 0; i < sizeof caches / sizeof caches[0] && cs->n < DOC_CACHES_MAX; i++) {
		struct doc_cache *c = &cs->v[cs->n++];
		const char *env = getenv(caches[i].env);
		c->name = caches[i].name;
		c->env = caches[i].env;
		if (env && *env && strcmp(c->name, "flashinfer") == 0) {
			snprintf(c->dir, sizeof c->dir, "%s/.cache/flashinfer", env);
			c->from_env = true;
		} else if (env && *env) {
			snprintf(c->dir, sizeof c->dir, "%s", env);
			c->from_env = true;
		} else if (caches[i].under_xdg_cache && xdg && *xdg) {
			snprintf(c->dir, sizeof c->dir, "%s/%s", xdg, caches[i].home_default + strlen(".cache/"));
		} else if (home && *home) {
			snprintf(c->dir, sizeof c->dir, "%s/%s", home, caches[i].home_default);
		} else {
			cs->n--; /* no HOME and not moved: nowhere to look */
			continue;
		}
		if (strcmp(c->name, "nv_compute_cache") == 0)
			c->disabled = env_true(getenv("CUDA_CACHE_DISABLE"));
		struct stat st;
		c->exists = kimg_file_stat(c->dir, &st, true) == 0 && S_ISDIR(st.st_mode);
		if (!c->exists)
			continue;
		struct cache_walk w = { d, c };
		char *paths[1] = { c->dir };
		struct probe_walker walker = { .ctx = &w, .on_input = cache_input, .on_error = cache_unreadable,
					       .unread_each = true };
		probe_walk(paths, 1, &walker);
		cs->stale += c->stale;
	}
}

void probe_doctor_caches_free(struct doctor *d)
{
	for (size_t i = 0; i < d->caches.n; i++)
		for (size_t k = 0; k < d->caches.v[i].n_shown; k++) {
			free(d->caches.v[i].shown[k].path);
			free(d->caches.v[i].shown[k].remove);
		}
	d->caches.n = 0;
}
