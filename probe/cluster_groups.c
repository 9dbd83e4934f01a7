/* SPDX-License-Identifier: Apache-2.0 */
/* --sm k8s:FILE|-|, slurm:FILE|-|, dcgm:FILE|- and all (cluster_groups.h): the
 * document read (a file, stdin, or the output of kubectl / scontrol run
 * here), parsed by the core (core/cluster.h), its nodes folded into groups
 * of one (compute capability, driver CUDA version) each, and one check
 * target per group. Time and memory are linear in the nodes: names are
 * deduplicated in a hash set, groups found by a short scan (at most
 * PROBE_CLUSTER_GROUPS_MAX). */
#include "cluster_groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "file.h"
#include "name_set.h"
#include "probe.h"
#include "run_output.h"

/* ---- the sources read (they live until the process ends) ---- */

#define SOURCES_MAX 16
static struct probe_cluster *sources[SOURCES_MAX];
static size_t n_sources;
static const char *gres_map_path;
static bool stdin_taken;

void probe_set_gres_map(const char *path)
{
	gres_map_path = path && *path ? path : NULL;
}

const struct probe_cluster *probe_cluster_at(size_t index)
{
	return index < n_sources ? sources[index] : NULL;
}

bool probe_cluster_is_source(const char *tok)
{
	return strncmp(tok, "k8s:", 4) == 0 || strncmp(tok, "slurm:", 6) == 0 || strncmp(tok, "dcgm:", 5) == 0 ||
	       strcmp(tok, "all") == 0;
}

/* ---- folding nodes into groups ---- */

struct reader {
	struct probe_cluster *c;
	int default_driver;
	struct probe_name_set seen;          /* node names; dcgm: host \0 UUID */
	struct probe_name_set hosts;         /* dcgm: hosts; and group index \0 host */
	unsigned long serial;          /* of the node being folded */
	int failed;                    /* -1: out of memory or too many groups (why set) */
	char why[300];
};

static void add_reason(struct probe_cluster *c, const char *why, const char *node)
{
	for (unsigned i = 0; i < c->n_reasons; i++)
		if (strcmp(c->reasons[i].why, why) == 0) {
			c->reasons[i].nodes++;
			return;
		}
	if (c->n_reasons == PROBE_CLUSTER_REASONS) {
		c->other_reasons++;
		return;
	}
	struct probe_cluster_reason *r = &c->reasons[c->n_reasons++];
	snprintf(r->why, sizeof r->why, "%s", why);
	snprintf(r->first, sizeof r->first, "%s", node[0] ? node : "(unnamed)");
	r->nodes = 1;
}

static void no_facts(struct reader *r, const char *node, const char *why)
{
	struct probe_cluster *c = r->c;
	c->no_facts++;
	if (c->n_no_facts_names < 8)
		c->no_facts_names[c->n_no_facts_names++] = strdup(node[0] ? node : "(unnamed)");
	add_reason(c, why, node);
}

static struct probe_group *group_for(struct reader *r, const struct kimg_cluster_gpu *g)
{
	struct probe_cluster *c = r->c;
	int drv = g->driver_version ? g->driver_version : r->default_driver;
	for (size_t i = 0; i < c->n_groups; i++) {
		struct probe_group *e = &c->groups[i];
		if (e->sm == g->sm && e->tegra == g->tegra && e->driver_version == drv)
			return e;
	}
	if (c->n_groups == PROBE_CLUSTER_GROUPS_MAX) {
		snprintf(r->why, sizeof r->why, "more than %d distinct compute capability + driver groups",
			 PROBE_CLUSTER_GROUPS_MAX);
		r->failed = -1;
		return NULL;
	}
	if (!c->groups && !(c->groups = calloc(PROBE_CLUSTER_GROUPS_MAX, sizeof *c->groups))) {
		snprintf(r->why, sizeof r->why, "out of memory");
		r->failed = -1;
		return NULL;
	}
	struct probe_group *e = &c->groups[c->n_groups++];
	e->src = c;
	e->sm = g->sm;
	e->tegra = g->tegra;
	e->driver_version = drv;
	return e;
}

static void add_product(struct probe_group *e, const struct kimg_cluster_gpu *g, unsigned long gpus, bool by_uuid)
{
	char name[96];
	const char *base = g->model[0] ? g->model : g->product[0] ? g->product : "GPU";
	if (g->mig[0] && by_uuid) /* dcgm: one GPU, its MIG instances of any profile */
		snprintf(name, sizeof name, "%.60s (MIG)", base);
	else if (g->mig[0] && strcmp(g->mig, "mixed") != 0)
		snprintf(name, sizeof name, "%.60s MIG %.30s", base, g->mig);
	else
		snprintf(name, sizeof name, "%.90s", base);
	for (unsigned i = 0; i < e->n_products; i++)
		if (strcmp(e->products[i].name, name) == 0) {
			e->products[i].gpus += gpus;
			return;
		}
	if (e->n_products == PROBE_GROUP_PRODUCTS) {
		e->more_products = true;
		return;
	}
	snprintf(e->products[e->n_products].name, sizeof e->products[0].name, "%s", name);
	e->products[e->n_products++].gpus = gpus;
}

static void add_type(struct probe_group *e, const char *type)
{
	if (!type[0])
		return;
	for (unsigned i = 0; i < e->n_types; i++)
		if (strcmp(e->types[i], type) == 0)
			return;
	if (e->n_types == PROBE_GROUP_TYPES) {
		e->more_types = true;
		return;
	}
	snprintf(e->types[e->n_types++], sizeof e->types[0], "%s", type);
}

/* Count node into e once per node (a Slurm node with two types of one
 * group is one node of it). */
static void count_node(struct reader *r, struct probe_group *e, const char *node)
{
	if (e->last_node == r->serial)
		return;
	e->last_node = r->serial;
	e->nodes++;
	if (e->n_names < PROBE_GROUP_NAMES)
		e->names[e->n_names++] = strdup(node[0] ? node : "(unnamed)");
}

static void fold_gpu(struct reader *r, const char *node, const struct kimg_cluster_gpu *g)
{
	struct probe_group *e = group_for(r, g);
	if (!e)
		return;
	count_node(r, e, node);
	e->gpus += g->count;
	if (g->count == 0)
		e->uncounted++;
	add_product(e, g, g->count, false);
	if (r->c->kind == PROBE_CLUSTER_SLURM)
		add_type(e, g->product);
	if (g->mig[0] && !e->mig[0])
		snprintf(e->mig, sizeof e->mig, "%s", g->mig);
}

/* One node (k8s, slurm). */
static int fold_node(void *ctx, const struct kimg_cluster_node *n)
{
	struct reader *r = ctx;
	struct probe_cluster *c = r->c;
	c->records++;
	int added = n->name[0] ? probe_name_set_add(&r->seen, n->name, strlen(n->name)) : 1;
	if (added < 0) {
		snprintf(r->why, sizeof r->why, "out of memory");
		return r->failed = -1;
	}
	if (added == 0) {
		if (c->duplicates++ == 0)
			snprintf(c->first_duplicate, sizeof c->first_duplicate, "%s", n->name);
		return 0;
	}
	c->nodes++;
	r->serial++;
	unsigned known = 0;
	for (unsigned i = 0; i < n->n_gpus; i++)
		if (n->gpus[i].sm) {
			fold_gpu(r, n->name, &n->gpus[i]);
			known++;
		}
	/* each unknown kind said once; a node with none known is listed */
	bool listed = false;
	for (unsigned i = 0; i < n->n_gpus; i++) {
		if (n->gpus[i].sm)
			continue;
		if (known == 0 && !listed)
			no_facts(r, n->name, n->gpus[i].unknown);
		else
			add_reason(c, n->gpus[i].unknown, n->name);
		listed = true;
	}
	if (n->n_gpus == 0)
		no_facts(r, n->name, n->why[0] ? n->why : "no GPU facts");
	else if (n->why[0])
		add_reason(c, n->why, n->name);
	return r->failed;
}

/* "a \0 b" into key (size 512: both parts are at most 255 bytes). */
static size_t pair_key(char *key, const char *a, const char *b)
{
	size_t la = strnlen(a, 255), lb = strnlen(b, 255);
	memcpy(key, a, la);
	key[la] = '\0';
	memcpy(key + la + 1, b, lb);
	return la + 1 + lb;
}

/* One series (dcgm): a GPU is folded the first time its host + UUID is met. */
static int fold_series(void *ctx, const struct kimg_cluster_node *n)
{
	struct reader *r = ctx;
	struct probe_cluster *c = r->c;
	const struct kimg_cluster_gpu *g = &n->gpus[0];
	char key[512];
	c->records++;
	const char *id = g->uuid[0] ? g->uuid : g->product;
	size_t klen = pair_key(key, n->name, id);
	int added = probe_name_set_add(&r->seen, key, klen);
	int host_new = added == 1 ? probe_name_set_add(&r->hosts, n->name, strlen(n->name)) : 0;
	if (added < 0 || host_new < 0) {
		snprintf(r->why, sizeof r->why, "out of memory");
		return r->failed = -1;
	}
	if (added == 0)
		return 0;
	if (host_new)
		c->nodes++;
	if (!g->sm) {
		/* each host's unknown model said once: a reason, not a group */
		char tag[300];
		snprintf(tag, sizeof tag, "?%.200s", g->unknown);
		klen = pair_key(key, tag, n->name);
		if (probe_name_set_add(&r->hosts, key, klen) == 1)
			add_reason(c, g->unknown, n->name);
		return 0;
	}
	struct probe_group *e = group_for(r, g);
	if (!e)
		return r->failed;
	char index[24];
	snprintf(index, sizeof index, "%zu", (size_t)(e - c->groups));
	klen = pair_key(key, index, n->name);
	int first_in_group = probe_name_set_add(&r->hosts, key, klen);
	if (first_in_group < 0) {
		snprintf(r->why, sizeof r->why, "out of memory");
		return r->failed = -1;
	}
	if (first_in_group) {
		e->last_node = 0;
		r->serial++;
		count_node(r, e, n->name);
	}
	e->gpus++;
	add_product(e, g, 1, true);
	if (g->mig[0] && !e->mig[0])
		snprintf(e->mig, sizeof e->mig, "%s", g->mig);
	return 0;
}

/* ---- reading the document ---- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *const kind_prefix[] = { "k8s", "slurm", "dcgm", "all" };

static int parse_document(struct reader *r, struct kimg_span bytes, struct kimg_error *err)
{
	switch (r->c->kind) {
	case PROBE_CLUSTER_K8S: {
		void *arena = malloc(KIMG_K8S_NODE_ARENA);
		if (!arena)
			return kimg_error_set(err, -ENOMEM, 0, "out of memory");
		int rc = kimg_k8s_nodes_parse(bytes, arena, KIMG_K8S_NODE_ARENA, fold_node, r, err);
		free(arena);
		return rc;
	}
	case PROBE_CLUSTER_SLURM: {
		struct kimg_gres_map *map = NULL;
		if (gres_map_path) {
			struct kimg_file f;
			struct kimg_error e = { 0, 0, "" };
			map = calloc(1, sizeof *map);
			if (!map)
				return kimg_error_set(err, -ENOMEM, 0, "out of memory");
			if (kimg_file_open(gres_map_path, &f, &e) < 0) {
				free(map);
				snprintf(r->why, sizeof r->why, "$KIMG_GRES_MAP %s: %s", gres_map_path, e.what);
				return r->failed = -1;
			}
			int rc = kimg_gres_map_parse(f.bytes, map, &e);
			kimg_file_close(&f);
			if (rc < 0) {
				free(map);
				snprintf(r->why, sizeof r->why, "$KIMG_GRES_MAP %s: %s", gres_map_path, e.what);
				return r->failed = -1;
			}
		}
		int rc = kimg_slurm_nodes_parse(bytes, map, fold_node, r, err);
		free(map);
		return rc;
	}
	case PROBE_CLUSTER_DCGM:
		return kimg_dcgm_parse(bytes, fold_series, r, err);
	case PROBE_CLUSTER_ALL:
		break;
	}
	return 0;
}

static void free_cluster(struct probe_cluster *c)
{
	for (size_t i = 0; i < c->n_groups; i++)
		for (unsigned k = 0; k < c->groups[i].n_names; k++)
			free(c->groups[i].names[k]);
	for (unsigned k = 0; k < c->n_no_facts_names; k++)
		free(c->no_facts_names[k]);
	free(c->groups);
	free(c);
}

int probe_cluster_targets(const char *tok, int default_driver, int (*push)(void *ctx, const struct probe_target *t),
			  void *ctx)
{
	static char *const kubectl[] = { "kubectl", "get", "nodes", "-o", "json", NULL };
	static char *const scontrol[] = { "scontrol", "show", "node", "--oneliner", NULL };
	struct probe_cluster *c = calloc(1, sizeof *c);
	struct reader r;
	const char *colon = strchr(tok, ':');
	const char *arg = colon ? colon + 1 : "";
	char *cmd_out = NULL;
	size_t cmd_len = 0;
	struct kimg_file f = { 0 };
	bool mapped = false;
	int status = -1;
	memset(&r, 0, sizeof r);
	if (!c || n_sources == SOURCES_MAX) {
		fprintf(stderr, "kimg-probe: --sm %s: %s\n", tok, c ? "more than 16 cluster sources" : "out of memory");
		free(c);
		return -1;
	}
	c->kind = strncmp(tok, "k8s:", 4) == 0 ? PROBE_CLUSTER_K8S
		  : strncmp(tok, "slurm:", 6) == 0 ? PROBE_CLUSTER_SLURM
		  : strncmp(tok, "dcgm:", 5) == 0 ? PROBE_CLUSTER_DCGM : PROBE_CLUSTER_ALL;
	r.c = c;
	r.default_driver = default_driver;
	double t0 = now_s();
	struct kimg_error err = { 0, 0, "" };
	char why[400] = "";
	struct kimg_span bytes = { NULL, 0 };
	if (c->kind == PROBE_CLUSTER_ALL) {
		snprintf(c->input, sizeof c->input, "all (kimg's GPU-name table)");
		if (probe_cluster_read_all(c) < 0) {
			snprintf(why, sizeof why, "out of memory");
			goto out;
		}
	} else {
		if (!*arg && c->kind == PROBE_CLUSTER_DCGM) {
			snprintf(why, sizeof why, "needs a FILE or - (e.g. curl -s http://NODE:9400/metrics | kimg-probe check --sm dcgm:- ...)");
			goto out;
		}
		if (!*arg) {
			char *const *argv = c->kind == PROBE_CLUSTER_K8S ? kubectl : scontrol;
			snprintf(c->input, sizeof c->input, "%s: (%s)", kind_prefix[c->kind],
				 c->kind == PROBE_CLUSTER_K8S ? "kubectl get nodes -o json" : "scontrol show node --oneliner");
			char cwhy[200];
			if (probe_run_output(argv, &cmd_out, &cmd_len, cwhy, sizeof cwhy) < 0) {
				snprintf(why, sizeof why, "'%s' %s: %s", c->kind == PROBE_CLUSTER_K8S ? "kubectl get nodes -o json"
					 : "scontrol show node --oneliner", "could not be read", cwhy);
				if (strstr(cwhy, "not on PATH"))
					snprintf(why + strlen(why), sizeof why - strlen(why), " (install %s, or save its output to a file "
						 "and give %s:FILE)", argv[0], kind_prefix[c->kind]);
				goto out;
			}
			bytes = kimg_span_make(cmd_out, cmd_len);
		} else {
			const char *path = strcmp(arg, "-") == 0 ? "/dev/stdin" : arg;
			snprintf(c->input, sizeof c->input, "%s:%s", kind_prefix[c->kind], arg);
			if (strcmp(arg, "-") == 0 && stdin_taken) {
				snprintf(why, sizeof why, "standard input was already read by another --sm source");
				goto out;
			}
			stdin_taken |= strcmp(arg, "-") == 0;
			if (kimg_file_open(path, &f, &err) < 0) {
				snprintf(why, sizeof why, "%s: %s", arg, err.what);
				goto out;
			}
			mapped = true;
			bytes = f.bytes;
		}
		int rc = parse_document(&r, bytes, &err);
		if (r.failed < 0) {
			snprintf(why, sizeof why, "%s", r.why);
			goto out;
		}
		if (rc < 0) {
			if (c->kind == PROBE_CLUSTER_K8S && err.offset)
				snprintf(why, sizeof why, "%s (at byte %llu)", err.what, (unsigned long long)err.offset);
			else
				snprintf(why, sizeof why, "%s", err.what);
			goto out;
		}
		if (c->records == 0) {
			snprintf(why, sizeof why, "%s", c->kind == PROBE_CLUSTER_DCGM ? "no DCGM series with a GPU (modelName, UUID)"
				 : "no nodes");
			goto out;
		}
		if (c->n_groups == 0) {
			snprintf(why, sizeof why, "none of its %lu node%s has GPU facts kimg can read (%s%s)", c->nodes,
				 c->nodes == 1 ? "" : "s", c->n_reasons ? c->reasons[0].why : "?",
				 c->kind == PROBE_CLUSTER_K8S ? "; is GPU Feature Discovery deployed?" : "");
			goto out;
		}
	}
	c->read_s = now_s() - t0;
	sources[n_sources++] = c;
	status = 0;
	for (size_t i = 0; i < c->n_groups && status == 0; i++) {
		struct probe_target t;
		probe_group_target(&c->groups[i], &t);
		status = push(ctx, &t);
	}
	/* unknown GRES types: named, with how to map them */
	for (unsigned i = 0; c->kind == PROBE_CLUSTER_SLURM && i < c->n_reasons; i++)
		if (strncmp(c->reasons[i].why, "GRES type", 9) == 0 || strncmp(c->reasons[i].why, "GRES gpu without", 16) == 0)
			fprintf(stderr, "kimg-probe: --sm %s: note: %s (%lu node%s, first %s): map it in a site file named by "
				"$KIMG_GRES_MAP, one 'TYPE = GPU name or compute capability' per line (e.g. 'h100nvl = H100')\n",
				c->input, c->reasons[i].why, c->reasons[i].nodes, c->reasons[i].nodes == 1 ? "" : "s",
				c->reasons[i].first);
	if (getenv("KIMG_CLUSTER_TIMING"))
		fprintf(stderr, "kimg-probe: --sm %s: %lu records, %lu nodes, %zu groups read in %.3f s\n", c->input, c->records,
			c->nodes, c->n_groups, c->read_s);
	c = NULL;
out:
	if (status < 0 && why[0]) {
		struct probe_esc e;
		fprintf(stderr, "kimg-probe: --sm %s: %s\n", tok, probe_esc(&e, why));
	}
	if (mapped)
		kimg_file_close(&f);
	free(cmd_out);
	probe_name_set_free(&r.seen);
	probe_name_set_free(&r.hosts);
	if (c)
		free_cluster(c);
	return status;
}
