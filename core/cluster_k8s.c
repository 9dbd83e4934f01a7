/* SPDX-License-Identifier: Apache-2.0 */
/* Kubernetes nodes and their GPU Feature Discovery labels (cluster.h).
 *
 * Labels (the README of NVIDIA/k8s-device-plugin's GPU Feature Discovery),
 * all strings on the Node's metadata.labels: nvidia.com/gpu.compute.major
 * and .minor (the compute capability), nvidia.com/cuda.runtime.major and
 * .minor (the driver's CUDA version), nvidia.com/cuda.driver.major, .minor
 * and .rev (the driver release; its CUDA version from the driver table
 * when the cuda.runtime labels are missing), nvidia.com/gpu.product (with "-MIG-<profile>"
 * under the MIG single strategy), nvidia.com/gpu.count (MIG devices under
 * single), nvidia.com/mig.strategy. A mixed-GPU node is described by one
 * set of labels: the split cannot be told (docs/deploy.md). */
#include "cluster.h"

#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "gpus.h"
#include "json_read.h"
#include "rules_tables.h"

static const struct kimg_jval *label(const struct kimg_jval *labels, const char *key)
{
	return kimg_jval_get(labels, key);
}

/* A label's decimal value (at most 6 digits), or -1: missing, -2: not a
 * number (odd text, NUL bytes, a JSON number instead of a string). */
static long label_number(const struct kimg_jval *v)
{
	if (!v)
		return -1;
	if (v->type != KIMG_JSTRING || v->len == 0 || v->len > 6)
		return -2;
	long n = 0;
	for (uint32_t i = 0; i < v->len; i++) {
		if (v->str[i] < '0' || v->str[i] > '9')
			return -2;
		n = n * 10 + (v->str[i] - '0');
	}
	return n;
}

/* "label nvidia.com/gpu.compute.major is "x", not a number" */
static void odd_label(struct kimg_cluster_node *n, const char *key, const struct kimg_jval *v)
{
	char text[48];
	if (v->type == KIMG_JSTRING)
		kimg_cluster_copy(text, sizeof text, v->str, v->len);
	else
		snprintf(text, sizeof text, "a JSON %s", v->type == KIMG_JNUMBER ? "number" : "non-string");
	snprintf(n->why, sizeof n->why, "label %s is \"%s\", not a number", key, text);
}

static bool has_gpu_labels(const struct kimg_jval *labels)
{
	for (const struct kimg_jval *m = labels ? labels->child : NULL; m; m = m->next)
		if (m->key_len > 15 && (memcmp(m->key, "nvidia.com/gpu.", 15) == 0 ||
					memcmp(m->key, "nvidia.com/cuda", 15) == 0))
			return true;
	return false;
}

/* The node's GPU kind from its labels, or why there is none. */
static void read_labels(const struct kimg_jval *labels, struct kimg_cluster_node *n, struct kimg_name_cache *cache)
{
	static const char *const number_keys[] = {
		"nvidia.com/gpu.compute.major", "nvidia.com/gpu.compute.minor", "nvidia.com/cuda.runtime.major",
		"nvidia.com/cuda.runtime.minor", "nvidia.com/gpu.count",
	};
	long v[5];
	struct kimg_cluster_gpu *g = &n->gpus[0];
	if (!labels || labels->type != KIMG_JOBJECT || !has_gpu_labels(labels)) {
		snprintf(n->why, sizeof n->why, "no GPU labels");
		return;
	}
	for (size_t i = 0; i < 5; i++) {
		const struct kimg_jval *l = label(labels, number_keys[i]);
		v[i] = label_number(l);
		if (v[i] == -2) {
			odd_label(n, number_keys[i], l);
			return;
		}
	}
	memset(g, 0, sizeof *g);
	const struct kimg_jval *product = label(labels, "nvidia.com/gpu.product");
	bool known_product = false;
	if (product && product->type == KIMG_JSTRING)
		known_product = kimg_cluster_gpu_set_product_cached(g, product->str, product->len, cache);
	if (v[0] >= 0 && v[1] >= 0) {
		unsigned sm = v[0] <= 99 && v[1] <= 9 ? (unsigned)(v[0] * 10 + v[1]) : 0;
		if (!kimg_cc_is_known(sm)) {
			snprintf(n->why, sizeof n->why, "labels nvidia.com/gpu.compute.major/minor say %ld.%ld, which no NVIDIA GPU has",
				 v[0], v[1]);
			return;
		}
		g->sm = sm; /* the driver's answer wins over the product's name */
		g->tegra = kimg_sm_is_tegra(sm);
	} else if (!known_product) {
		snprintf(n->why, sizeof n->why, "GPU labels without nvidia.com/gpu.compute.major/minor%s%.48s%s",
			 g->product[0] ? ", and product \"" : "", g->product, g->product[0] ? "\" is not in kimg's GPU-name table" : "");
		return;
	}
	if (v[2] >= 0 && v[3] >= 0) {
		if (v[2] == 0 || v[2] > 99 || v[3] > 9) {
			snprintf(n->why, sizeof n->why, "labels nvidia.com/cuda.runtime.major/minor say %ld.%ld, no CUDA version", v[2], v[3]);
			return;
		}
		g->driver_version = (int)(v[2] * 1000 + v[3] * 10);
	}
	g->count = v[4] > 0 ? (unsigned long)v[4] : 0;
	const struct kimg_jval *dmaj = label(labels, "nvidia.com/cuda.driver.major");
	const struct kimg_jval *dmin = label(labels, "nvidia.com/cuda.driver.minor");
	const struct kimg_jval *drev = label(labels, "nvidia.com/cuda.driver.rev");
	if (kimg_jval_string(dmaj) && kimg_jval_string(dmin)) {
		char a[12], b[12], c[12];
		kimg_cluster_copy(a, sizeof a, dmaj->str, dmaj->len);
		kimg_cluster_copy(b, sizeof b, dmin->str, dmin->len);
		kimg_cluster_copy(c, sizeof c, kimg_jval_string(drev) ? drev->str : "", kimg_jval_string(drev) ? drev->len : 0);
		snprintf(g->release, sizeof g->release, "%.9s.%.9s%s%.9s", a, b, c[0] ? "." : "", c);
		/* no cuda.runtime.* labels: the CUDA version this release
		 * reports, from the driver table (as for DCGM's release) */
		if (!g->driver_version)
			g->driver_version = kimg_driver_release_cuda_version(g->release);
	}
	const char *strategy = kimg_jval_string(label(labels, "nvidia.com/mig.strategy"));
	if (!g->mig[0] && strategy && strcmp(strategy, "mixed") == 0) {
		/* mixed: nvidia.com/mig-<profile>.count per profile, gpu.count the full GPUs */
		for (const struct kimg_jval *m = labels->child; m; m = m->next)
			if (m->key_len > 15 && memcmp(m->key, "nvidia.com/mig-", 15) == 0) {
				snprintf(g->mig, sizeof g->mig, "mixed");
				break;
			}
	}
	n->n_gpus = 1;
}

/* One item of the list (or the lone Node). */
static int read_node(const struct kimg_jval *item, unsigned long index, struct kimg_cluster_node *n,
		     struct kimg_name_cache *cache, struct kimg_error *err)
{
	n->name[0] = '\0';
	n->why[0] = '\0';
	n->n_gpus = 0;
	if (!item || item->type != KIMG_JOBJECT)
		return kimg_error_set(err, -KIMG_EFORMAT, item ? item->offset : 0, "item %lu is not a JSON object", index);
	const struct kimg_jval *kind = kimg_jval_get(item, "kind");
	if (kind && (!kimg_jval_string(kind) || strcmp(kind->str, "Node") != 0)) {
		char k[40];
		kimg_cluster_copy(k, sizeof k, kimg_jval_string(kind) ? kind->str : "?", kimg_jval_string(kind) ? kind->len : 1);
		return kimg_error_set(err, -KIMG_EFORMAT, kind->offset, "item %lu is a %s, not a Node", index, k);
	}
	const struct kimg_jval *meta = kimg_jval_get(item, "metadata");
	const struct kimg_jval *name = kimg_jval_get(meta, "name");
	if (kimg_jval_string(name))
		kimg_cluster_copy(n->name, sizeof n->name, name->str, name->len);
	read_labels(kimg_jval_get(meta, "labels"), n, cache);
	return 0;
}

static void skip_ws(struct kimg_span in, uint64_t *pos)
{
	while (*pos < in.size && (in.data[*pos] == ' ' || in.data[*pos] == '\t' || in.data[*pos] == '\n' ||
				  in.data[*pos] == '\r'))
		(*pos)++;
}

static int expect(struct kimg_span in, uint64_t *pos, char c, const char *what, struct kimg_error *err)
{
	skip_ws(in, pos);
	if (*pos >= in.size)
		return kimg_error_set(err, -KIMG_ETRUNC, *pos, "JSON ends where %s was expected", what);
	if (in.data[*pos] != (uint8_t)c)
		return kimg_error_set(err, -KIMG_EFORMAT, *pos, "not a Kubernetes node list: %s expected", what);
	(*pos)++;
	return 0;
}

/* The items array: each element parsed alone, so the arena holds one node. */
static int read_items(struct kimg_span in, uint64_t *pos, struct kimg_jdoc *doc, kimg_cluster_node_fn fn, void *ctx,
		      struct kimg_cluster_node *n, struct kimg_name_cache *cache, unsigned long *count, struct kimg_error *err)
{
	int rc = expect(in, pos, '[', "'[' after \"items\"", err);
	if (rc < 0)
		return rc;
	skip_ws(in, pos);
	if (*pos < in.size && in.data[*pos] == ']') {
		(*pos)++;
		return 0;
	}
	for (;;) {
		uint64_t start = *pos;
		if ((rc = kimg_jdoc_parse_at(doc, in, *pos, pos, err)) < 0) {
			if (rc == -KIMG_ELIMIT && err)
				snprintf(err->what, sizeof err->what, "node %lu (at byte %llu) is larger than kimg's %u MiB per node",
					 *count + 1, (unsigned long long)start, KIMG_K8S_NODE_ARENA >> 20);
			return rc;
		}
		if ((rc = read_node(doc->root, *count + 1, n, cache, err)) < 0)
			return rc;
		(*count)++;
		if ((rc = fn(ctx, n)) != 0)
			return rc;
		if (*pos < in.size && in.data[*pos] == ',') {
			(*pos)++;
			continue;
		}
		return expect(in, pos, ']', "',' or ']' in \"items\"", err);
	}
}

int kimg_k8s_nodes_parse(struct kimg_span in, void *arena, size_t arena_size, kimg_cluster_node_fn fn, void *ctx,
			 struct kimg_error *err)
{
	struct kimg_jdoc doc;
	struct kimg_cluster_node n;
	struct kimg_name_cache cache;
	char kind[32] = "";
	memset(&cache, 0, sizeof cache);
	bool items = false;
	unsigned long count = 0;
	uint64_t pos = 0;
	kimg_jdoc_init(&doc, arena, arena_size);
	int rc = expect(in, &pos, '{', "a JSON object", err);
	if (rc < 0)
		return rc;
	skip_ws(in, &pos);
	if (pos < in.size && in.data[pos] == '}')
		return kimg_error_set(err, -KIMG_EFORMAT, pos, "not a Kubernetes node list: an empty object");
	for (;;) {
		skip_ws(in, &pos);
		if (pos >= in.size || in.data[pos] != '"')
			return expect(in, &pos, '"', "a member name", err); /* fails: not a '"' */
		if ((rc = kimg_jdoc_parse_at(&doc, in, pos, &pos, err)) < 0)
			return rc;
		bool is_items = doc.root->len == 5 && memcmp(doc.root->str, "items", 5) == 0;
		bool is_kind = doc.root->len == 4 && memcmp(doc.root->str, "kind", 4) == 0;
		if ((rc = expect(in, &pos, ':', "':'", err)) < 0)
			return rc;
		if (is_items) {
			if (items)
				return kimg_error_set(err, -KIMG_EFORMAT, pos, "\"items\" given twice");
			items = true;
			if ((rc = read_items(in, &pos, &doc, fn, ctx, &n, &cache, &count, err)) != 0)
				return rc;
		} else {
			if ((rc = kimg_jdoc_parse_at(&doc, in, pos, &pos, err)) < 0)
				return rc;
			if (is_kind && doc.root->type == KIMG_JSTRING)
				kimg_cluster_copy(kind, sizeof kind, doc.root->str, doc.root->len);
		}
		skip_ws(in, &pos);
		if (pos < in.size && in.data[pos] == ',') {
			pos++;
			continue;
		}
		if ((rc = expect(in, &pos, '}', "',' or '}'", err)) < 0)
			return rc;
		break;
	}
	skip_ws(in, &pos);
	if (pos != in.size)
		return kimg_error_set(err, -KIMG_EFORMAT, pos, "bytes after the JSON document");
	if (!items && strcmp(kind, "Node") == 0) {
		/* one Node (kubectl get node NAME -o json): the whole of it */
		if ((rc = kimg_jdoc_parse(&doc, in, err)) < 0)
			return rc;
		if ((rc = read_node(doc.root, 1, &n, &cache, err)) < 0)
			return rc;
		return (rc = fn(ctx, &n)) != 0 ? rc : 1;
	}
	if (!items)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not a Kubernetes node list: no \"items\"%s%s%s",
				      kind[0] ? " (kind " : "", kind, kind[0] ? ")" : "");
	if (kind[0] && strcmp(kind, "List") != 0 && strcmp(kind, "NodeList") != 0)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not a Kubernetes node list: kind %s, not List or NodeList", kind);
	return (int)(count > 0x7fffffff ? 0x7fffffff : count);
}
