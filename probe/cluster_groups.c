/* --sm k8s:FILE|-|, slurm:FILE|-|, dcgm:FILE|- and all (cluster_groups.h): the
 * document read (a file, stdin, or the output of kubectl / scontrol run
 * here), parsed by the core (core/cluster.h), its nodes folded into groups
 * of one (compute capability, driver CUDA version) each, and one check
 * target per group. Time and memory are linear in the nodes: names are
 * deduplicated in a hash set, groups found by a short scan (at most
 * PROBE_CLUSTER_GROUPS_MAX). */
#include "cluster_groups.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "gpus.h"
#include "probe.h"

extern char **environ;

/* ---- a set of byte strings (node names, host + UUID) ---- */

struct name_set {
	uint64_t *hash;                /* 0: empty slot */
	uint32_t *off;                 /* into pool */
	size_t cap, n;
	char *pool;
	size_t pool_len, pool_cap;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h ? h : 1;
}

static void set_free(struct name_set *s)
{
	free(s->hash);
	free(s->off);
	free(s->pool);
	memset(s, 0, sizeof *s);
}

static int set_grow(struct name_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024;
	uint64_t *h = calloc(cap, sizeof *h);
	uint32_t *o = calloc(cap, sizeof *o);
	if (!h || !o) {
		free(h);
		free(o);
		return -1;
	}
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->hash[i])
			continue;
		size_t j = s->hash[i] & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = s->hash[i];
		o[j] = s->off[i];
	}
	free(s->hash);
	free(s->off);
	s->hash = h;
	s->off = o;
	s->cap = cap;
	return 0;
}

/* 1 when added, 0 when it was there, -1 out of memory. Strings are kept
 * length-prefixed (4 bytes) in the pool. */
static int set_add(struct name_set *s, const char *str, size_t len)
{
	if ((s->n + 1) * 2 > s->cap && set_grow(s) < 0)
		return -1;
	uint64_t h = hash_bytes(str, len);
	size_t j = h & (s->cap - 1);
	for (; s->hash[j]; j = (j + 1) & (s->cap - 1)) {
		if (s->hash[j] != h)
			continue;
		uint32_t klen;
		memcpy(&klen, s->pool + s->off[j], 4);
		if (klen == len && memcmp(s->pool + s->off[j] + 4, str, len) == 0)
			return 0;
	}
	if (s->pool_len + len + 4 > s->pool_cap) {
		size_t cap = (s->pool_cap ? s->pool_cap * 2 : 65536) + len + 4;
		char *p = cap <= UINT32_MAX ? realloc(s->pool, cap) : NULL;
		if (!p)
			return -1;
		s->pool = p;
		s->pool_cap = cap;
	}
	uint32_t l32 = (uint32_t)len;
	memcpy(s->pool + s->pool_len, &l32, 4);
	memcpy(s->pool + s->pool_len + 4, str, len);
	s->hash[j] = h;
	s->off[j] = (uint32_t)s->pool_len;
	s->pool_len += len + 4;
	s->n++;
	return 1;
}

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
	struct name_set seen;          /* node names; dcgm: host \0 UUID */
	struct name_set hosts;         /* dcgm: hosts; and group index \0 host */
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
	int added = n->name[0] ? set_add(&r->seen, n->name, strlen(n->name)) : 1;
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
	int added = set_add(&r->seen, key, klen);
	int host_new = added == 1 ? set_add(&r->hosts, n->name, strlen(n->name)) : 0;
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
		if (set_add(&r->hosts, key, klen) == 1)
			add_reason(c, g->unknown, n->name);
		return 0;
	}
	struct probe_group *e = group_for(r, g);
	if (!e)
		return r->failed;
	char index[24];
	snprintf(index, sizeof index, "%zu", (size_t)(e - c->groups));
	klen = pair_key(key, index, n->name);
	int first_in_group = set_add(&r->hosts, key, klen);
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

/* The output of argv (stdout; its stderr passes through), at most
 * KIMG_FILE_READ_MAX bytes. 0, or -1 with why. */
static int run_command(char *const argv[], char **out, size_t *len, char *why, size_t why_size)
{
	int fds[2];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	*out = NULL;
	*len = 0;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(why, why_size, "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		if (rc == ENOENT)
			snprintf(why, why_size, "%s is not on PATH", argv[0]);
		else
			snprintf(why, why_size, "cannot run %s: %s", argv[0], strerror(rc));
		return -1;
	}
	size_t cap = 0;
	char *buf = NULL;
	bool too_big = false, failed = false;
	for (;;) {
		if (*len == cap) {
			if (cap >= KIMG_FILE_READ_MAX) {
				too_big = true;
				break;
			}
			size_t nc = cap ? cap * 2 : 1 << 20;
			char *p = realloc(buf, nc);
			if (!p) {
				failed = true;
				break;
			}
			buf = p;
			cap = nc;
		}
		ssize_t k = read(fds[0], buf + *len, cap - *len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		*len += (size_t)k;
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (too_big || failed) {
		snprintf(why, why_size, "%s", too_big ? "its output is larger than 1 GiB" : "out of memory");
		free(buf);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFEXITED(status))
			snprintf(why, why_size, "it failed (exit status %d)", WEXITSTATUS(status));
		else
			snprintf(why, why_size, "it was killed by signal %d", WTERMSIG(status));
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *const kind_prefix[] = { "k8s", "slurm", "dcgm", "all" };

/* The group's target: its label "gpu-h1, gpu-h2: 16 × H100, driver CUDA
 * 12.4" cut to the device name's room, names first dropped. */
static void group_target(const struct probe_group *e, struct probe_target *t)
{
	char what[160] = "", drv[16], tail[200];
	size_t used = 0;
	for (unsigned i = 0; i < e->n_products && used < sizeof what; i++) {
		if (e->src->kind == PROBE_CLUSTER_ALL && used + strlen(e->products[i].name) > 70) {
			used += (size_t)snprintf(what + used, sizeof what - used, ", …");
			break;
		} else if (e->src->kind == PROBE_CLUSTER_ALL)
			used += (size_t)snprintf(what + used, sizeof what - used, "%s%s", i ? ", " : "", e->products[i].name);
		else if (e->products[i].gpus)
			used += (size_t)snprintf(what + used, sizeof what - used, "%s%lu × %s", i ? ", " : "", e->products[i].gpus,
						 e->products[i].name);
		else
			used += (size_t)snprintf(what + used, sizeof what - used, "%s%s", i ? ", " : "", e->products[i].name);
	}
	if (e->more_products && used < sizeof what && !strstr(what, "…"))
		snprintf(what + used, sizeof what - used, ", …");
	probe_format_cuda_version(e->driver_version, drv, sizeof drv);
	memset(t, 0, sizeof *t);
	t->dev.cc.sm = (uint16_t)e->sm;
	t->dev.cc.variant = KIMG_VARIANT_PLAIN;
	t->dev.tegra = e->tegra;
	t->dev.driver_version = e->driver_version;
	t->dev.ordinal = -1;
	t->named = true;
	t->group = e;
	if (e->src->kind == PROBE_CLUSTER_ALL) {
		snprintf(t->dev.name, sizeof t->dev.name, "%.95s", what);
		return;
	}
	if (drv[0])
		snprintf(tail, sizeof tail, ": %.150s, driver CUDA %s", what, drv);
	else
		snprintf(tail, sizeof tail, ": %.150s", what);
	/* as many names as fit, then "and N more" */
	char names[96] = "";
	size_t room = sizeof t->dev.name - 1 > strlen(tail) ? sizeof t->dev.name - 1 - strlen(tail) : 0;
	unsigned shown = 0;
	for (unsigned i = 0; i < e->n_names; i++) {
		char more[40] = "";
		unsigned long rest = e->nodes - i - 1;
		if (rest)
			snprintf(more, sizeof more, " and %lu more", rest);
		size_t need = strlen(names) + (i ? 2 : 0) + strlen(e->names[i]) + strlen(more);
		if (need > room)
			break;
		size_t l = strlen(names), len = strlen(e->names[i]);
		if (i) {
			memcpy(names + l, ", ", 2);
			l += 2;
		}
		memcpy(names + l, e->names[i], len); /* need <= room < sizeof names */
		names[l + len] = '\0';
		shown++;
	}
	if (shown < e->nodes) {
		size_t l = strlen(names);
		if (shown)
			snprintf(names + l, sizeof names - l, " and %lu more", e->nodes - shown);
		else
			snprintf(names, sizeof names, "%lu node%s", e->nodes, e->nodes == 1 ? "" : "s");
	}
	snprintf(t->dev.name, sizeof t->dev.name, "%s%s", names, tail);
}

/* --sm all: every GPU of the name table, one group per compute capability. */
static int read_all(struct probe_cluster *c)
{
	for (size_t i = 0; kimg_gpu_at(i); i++) {
		const struct kimg_gpu *g = kimg_gpu_at(i);
		struct probe_group *e = NULL;
		for (size_t k = 0; k < c->n_groups; k++)
			if (c->groups[k].sm == g->sm && c->groups[k].tegra == g->tegra)
				e = &c->groups[k];
		if (!e) {
			if (!c->groups && !(c->groups = calloc(PROBE_CLUSTER_GROUPS_MAX, sizeof *c->groups)))
				return -1;
			e = &c->groups[c->n_groups++];
			e->src = c;
			e->sm = g->sm;
			e->tegra = g->tegra;
		}
		e->gpus++;
		if (e->n_products < PROBE_GROUP_PRODUCTS)
			snprintf(e->products[e->n_products++].name, sizeof e->products[0].name, "%s", g->name);
		else
			e->more_products = true;
		if (e->n_names < PROBE_GROUP_NAMES)
			e->names[e->n_names++] = strdup(g->name);
		e->nodes++;
	}
	c->nodes = c->records = c->n_groups;
	return 0;
}

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
		if (read_all(c) < 0) {
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
			if (run_command(argv, &cmd_out, &cmd_len, cwhy, sizeof cwhy) < 0) {
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
		group_target(&c->groups[i], &t);
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
	set_free(&r.seen);
	set_free(&r.hosts);
	if (c)
		free_cluster(c);
	return status;
}
