/* SPDX-License-Identifier: Apache-2.0 */
/* Slurm nodes and their GPU GRES (cluster.h).
 *
 * `scontrol show node --oneliner` writes one node per line as Key=Value
 * words: NodeName=gpu-h1 ... AvailableFeatures=h100,ib ... Gres=gpu:h100:8(S:0-1)
 * ... Reason=free text [user@time]. Without --oneliner the same words are
 * spread over indented lines. A GRES entry is name[:type][:count] with an
 * optional "(S:sockets)" (gres.conf(5)); the type is whatever the site
 * wrote in gres.conf (h100, a100_80g, nvidia_h100_80gb_hbm3 from
 * AutoDetect=nvml), so it goes through a site map and the GPU-name table. */
#include "cluster.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "arch.h"
#include "gpus.h"
#include "rules_tables.h"

static bool is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* ---- the site map ---- */

static void trim(const char **s, const char **e)
{
	while (*s < *e && is_space((uint8_t)**s))
		(*s)++;
	while (*e > *s && is_space((uint8_t)(*e)[-1]))
		(*e)--;
}

/* A GPU name or a compute capability into sm, tegra, model. */
static bool gpu_of(const char *text, unsigned *sm, bool *tegra, char *model, size_t model_size)
{
	struct kimg_arch a;
	if (kimg_arch_parse(text, &a, NULL) == 0 && a.sm >= 10 && kimg_cc_is_known(a.sm)) {
		*sm = a.sm;
		*tegra = kimg_sm_is_tegra(a.sm);
		snprintf(model, model_size, "%.47s", text);
		return true;
	}
	const struct kimg_gpu *g = kimg_gpu_lookup(text);
	if (!g)
		return false;
	*sm = g->sm;
	*tegra = g->tegra;
	snprintf(model, model_size, "%s", g->name);
	return true;
}

int kimg_gres_map_parse(struct kimg_span text, struct kimg_gres_map *map, struct kimg_error *err)
{
	unsigned long line = 0;
	map->n = 0;
	for (uint64_t pos = 0; pos < text.size;) {
		const char *s = (const char *)text.data + pos;
		const char *nl = memchr(s, '\n', (size_t)(text.size - pos));
		const char *e = nl ? nl : (const char *)text.data + text.size;
		pos += (uint64_t)(e - s) + (nl ? 1 : 0);
		line++;
		const char *hash = memchr(s, '#', (size_t)(e - s));
		if (hash)
			e = hash;
		trim(&s, &e);
		if (s == e)
			continue;
		if (memchr(s, '\0', (size_t)(e - s)))
			return kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: a NUL byte", line);
		const char *eq = memchr(s, '=', (size_t)(e - s));
		if (!eq)
			return kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: not 'TYPE = GPU'", line);
		const char *ts = s, *te = eq, *gs = eq + 1, *ge = e;
		trim(&ts, &te);
		trim(&gs, &ge);
		char gpu[96];
		if (ts == te || gs == ge || (size_t)(te - ts) >= sizeof map->rows[0].type || (size_t)(ge - gs) >= sizeof gpu)
			return kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: not 'TYPE = GPU' (each at most 63 bytes)", line);
		if (map->n == KIMG_GRES_MAP_MAX)
			return kimg_error_set(err, -KIMG_ELIMIT, line, "line %lu: more than %d types", line, KIMG_GRES_MAP_MAX);
		memcpy(gpu, gs, (size_t)(ge - gs));
		gpu[ge - gs] = '\0';
		unsigned i = map->n;
		for (size_t k = 0; k < (size_t)(te - ts); k++)
			map->rows[i].type[k] = (char)tolower((unsigned char)ts[k]);
		map->rows[i].type[te - ts] = '\0';
		if (!gpu_of(gpu, &map->rows[i].sm, &map->rows[i].tegra, map->rows[i].model, sizeof map->rows[i].model))
			return kimg_error_set(err, -KIMG_EFORMAT, line,
					      "line %lu: '%.40s' is neither a GPU name kimg knows nor a compute capability", line, gpu);
		map->n++;
	}
	return (int)map->n;
}

/* ---- nodes ---- */

struct word {
	const char *s;
	size_t len;
};

static bool key_is(struct word w, const char *key)
{
	size_t n = strlen(key);
	return w.len > n && memcmp(w.s, key, n) == 0 && w.s[n] == '=';
}

/* A feature sm_NN (a site convention for the compute capability). */
static unsigned feature_sm(struct word features)
{
	if (!features.s)
		return 0;
	const char *p = features.s, *end = features.s + features.len;
	while (p < end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		const char *fe = c ? c : end;
		char f[16];
		struct kimg_arch a;
		if (fe - p > 3 && fe - p < (long)sizeof f && strncasecmp(p, "sm_", 3) == 0) {
			memcpy(f, p, (size_t)(fe - p));
			f[fe - p] = '\0';
			if (kimg_arch_parse(f, &a, NULL) == 0 && kimg_cc_is_known(a.sm))
				return a.sm;
		}
		p = c ? c + 1 : end;
	}
	return 0;
}

static void add_gpu(struct kimg_cluster_node *n, const char *type, size_t type_len, unsigned long count,
		    const struct kimg_gres_map *map, unsigned site_sm, struct kimg_name_cache *cache)
{
	if (n->n_gpus == KIMG_CLUSTER_KINDS_MAX) {
		snprintf(n->why, sizeof n->why, "more than %d GPU types in Gres: the first %d read", KIMG_CLUSTER_KINDS_MAX,
			 KIMG_CLUSTER_KINDS_MAX);
		return;
	}
	struct kimg_cluster_gpu *g = &n->gpus[n->n_gpus++];
	memset(g, 0, sizeof *g);
	g->count = count;
	kimg_cluster_copy(g->product, sizeof g->product, type, type_len);
	for (unsigned i = 0; map && type_len && i < map->n; i++)
		if (strlen(map->rows[i].type) == type_len && strncasecmp(map->rows[i].type, type, type_len) == 0) {
			g->sm = map->rows[i].sm;
			g->tegra = map->rows[i].tegra;
			snprintf(g->model, sizeof g->model, "%s", map->rows[i].model);
			return;
		}
	if (type_len) {
		const struct kimg_gpu *t = kimg_name_cache_lookup(cache, g->product);
		if (t) {
			g->sm = t->sm;
			g->tegra = t->tegra;
			snprintf(g->model, sizeof g->model, "%s", t->name);
			return;
		}
	}
	if (site_sm) {
		g->sm = site_sm;
		g->tegra = kimg_sm_is_tegra(site_sm);
		return;
	}
	char type_text[sizeof g->product];
	memcpy(type_text, g->product, sizeof type_text);
	if (type_len)
		snprintf(g->unknown, sizeof g->unknown, "GRES type '%.64s' is not in kimg's GPU-name table", type_text);
	else
		snprintf(g->unknown, sizeof g->unknown, "GRES gpu without a type (and no feature sm_NN)");
}

/* Gres=gpu:h100:8(S:0-1),gpu:a100:2,shard:h100:32 */
static void read_gres(struct kimg_cluster_node *n, struct word gres, const struct kimg_gres_map *map, unsigned site_sm,
		      struct kimg_name_cache *cache)
{
	const char *p = gres.s, *end = gres.s + gres.len;
	while (p < end) {
		/* a comma inside "(S:0,1)" splits off "1)", which names no GRES */
		const char *e = memchr(p, ',', (size_t)(end - p));
		e = e ? e : end;
		const char *paren = memchr(p, '(', (size_t)(e - p));
		const char *ee = paren ? paren : e;
		const char *c1 = memchr(p, ':', (size_t)(ee - p));
		if ((size_t)((c1 ? c1 : ee) - p) == 3 && strncasecmp(p, "gpu", 3) == 0) {
			const char *type = NULL, *num = NULL;
			size_t type_len = 0, num_len = 0;
			if (c1) {
				const char *c2 = memchr(c1 + 1, ':', (size_t)(ee - c1 - 1));
				if (c2) {
					type = c1 + 1;
					type_len = (size_t)(c2 - type);
					num = c2 + 1;
					num_len = (size_t)(ee - num);
				} else {
					num = c1 + 1;
					num_len = (size_t)(ee - num);
				}
			}
			unsigned long count = 0;
			bool digits = num_len > 0 && num_len <= 9;
			for (size_t i = 0; digits && i < num_len; i++) {
				digits = num[i] >= '0' && num[i] <= '9';
				count = count * 10 + (unsigned long)(num[i] - '0');
			}
			if (!digits && num_len && !type) { /* gpu:h100: a type, count 1 */
				type = num;
				type_len = num_len;
				count = 1;
			} else if (!digits) {
				count = 0;
			} else if (!num) {
				count = 1;
			}
			add_gpu(n, type ? type : "", type_len, count, map, site_sm, cache);
		}
		p = e < end ? e + 1 : end;
	}
	if (n->n_gpus == 0)
		snprintf(n->why, sizeof n->why, "no GPU in Gres=%.60s", gres.len ? gres.s : "");
}

static void start_node(struct kimg_cluster_node *n, struct word w)
{
	kimg_cluster_copy(n->name, sizeof n->name, w.s + 9, w.len - 9);
	n->n_gpus = 0;
	n->why[0] = '\0';
}

static void end_node(struct kimg_cluster_node *n, struct word gres, struct word features,
		     const struct kimg_gres_map *map, struct kimg_name_cache *cache)
{
	if (!gres.s || (gres.len == 6 && memcmp(gres.s, "(null)", 6) == 0))
		snprintf(n->why, sizeof n->why, "no GPU GRES");
	else {
		/* the Gres word ends at a space: cut at it */
		char cut[600];
		kimg_cluster_copy(cut, sizeof cut, gres.s, gres.len);
		read_gres(n, (struct word){ cut, strlen(cut) }, map, feature_sm(features), cache);
	}
}

int kimg_slurm_nodes_parse(struct kimg_span in, const struct kimg_gres_map *map, kimg_cluster_node_fn fn, void *ctx,
			   struct kimg_error *err)
{
	struct kimg_cluster_node n;
	struct kimg_name_cache cache;
	struct word gres = { NULL, 0 }, features = { NULL, 0 };
	bool in_node = false, in_reason = false;
	unsigned long count = 0;
	const char *text = (const char *)in.data;
	memset(&cache, 0, sizeof cache);
	if (in.size && memchr(text, '\0', (size_t)in.size))
		return kimg_error_set(err, -KIMG_EFORMAT, (uint64_t)((const char *)memchr(text, '\0', (size_t)in.size) - text),
				      "a NUL byte: not 'scontrol show node' output");
	for (uint64_t pos = 0; pos < in.size;) {
		if (is_space(in.data[pos])) {
			if (in.data[pos] == '\n')
				in_reason = false; /* Reason= runs to the end of its line */
			pos++;
			continue;
		}
		struct word w = { text + pos, 0 };
		while (pos < in.size && !is_space(in.data[pos])) {
			pos++;
			w.len++;
		}
		if (key_is(w, "NodeName") || (w.len == 9 && memcmp(w.s, "NodeName=", 9) == 0)) {
			if (in_node) {
				end_node(&n, gres, features, map, &cache);
				count++;
				int rc = fn(ctx, &n);
				if (rc != 0)
					return rc;
			}
			start_node(&n, w);
			gres = (struct word){ NULL, 0 };
			features = (struct word){ NULL, 0 };
			in_node = true;
			in_reason = false;
			continue;
		}
		if (!in_node) {
			char head[40];
			kimg_cluster_copy(head, sizeof head, w.s, w.len);
			return kimg_error_set(err, -KIMG_EFORMAT, (uint64_t)(w.s - text),
					      "'%s' before any NodeName=: not 'scontrol show node' output", head);
		}
		if (in_reason)
			continue;
		if (key_is(w, "Reason"))
			in_reason = true;
		else if (key_is(w, "Gres") && !gres.s)
			gres = (struct word){ w.s + 5, w.len - 5 };
		else if (key_is(w, "AvailableFeatures") && !features.s)
			features = (struct word){ w.s + 18, w.len - 18 };
	}
	if (in_node) {
		end_node(&n, gres, features, map, &cache);
		count++;
		int rc = fn(ctx, &n);
		if (rc != 0)
			return rc;
	}
	return (int)(count > 0x7fffffff ? 0x7fffffff : count);
}
