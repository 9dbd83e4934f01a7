/* SPDX-License-Identifier: Apache-2.0 */
/* --sm k8s:, slurm:, dcgm: and all (cluster_groups.c): targets from what a
 * cluster publishes, one per distinct (compute capability, driver CUDA
 * version) with the nodes behind it, and where a job may run
 * (placement.c). docs/deploy.md "Clusters". */
#ifndef KIMG_PROBE_CLUSTER_GROUPS_H
#define KIMG_PROBE_CLUSTER_GROUPS_H

#include "cluster.h"
#include "probe.h"

enum probe_cluster_kind { PROBE_CLUSTER_K8S, PROBE_CLUSTER_SLURM, PROBE_CLUSTER_DCGM, PROBE_CLUSTER_ALL };

/* A group's node names kept (for its label, the JSON and host lists), and
 * its distinct products and GRES types. */
#define PROBE_GROUP_NAMES 64
#define PROBE_GROUP_PRODUCTS 6
#define PROBE_GROUP_TYPES 8
/* Distinct (CC, driver) groups one source may have: a real cluster has a
 * handful; a document with more is refused (KIMG_ELIMIT's message). */
#define PROBE_CLUSTER_GROUPS_MAX 256
/* Distinct reasons kept for nodes without GPU facts. */
#define PROBE_CLUSTER_REASONS 8

struct probe_cluster;

struct probe_group {
	const struct probe_cluster *src;
	unsigned sm;
	bool tegra;
	int driver_version;            /* 0: not known */
	unsigned long nodes, gpus;     /* gpus: GPUs, or MIG devices where mig is set */
	unsigned long uncounted;       /* nodes whose GPU count is not published */
	char *names[PROBE_GROUP_NAMES];
	unsigned n_names;
	struct {
		char name[96];
		unsigned long gpus;
	} products[PROBE_GROUP_PRODUCTS];
	unsigned n_products;
	bool more_products;
	char types[PROBE_GROUP_TYPES][64]; /* Slurm GRES types, as written */
	unsigned n_types;
	bool more_types;
	char mig[32];                  /* a MIG profile seen, "mixed", or "" */
	unsigned long last_node;       /* serial of the last node counted */
};

struct probe_cluster_reason {
	char why[200];
	unsigned long nodes;
	char first[128];               /* the first node it was said of */
};

struct probe_cluster {
	enum probe_cluster_kind kind;
	char input[300];               /* "k8s:nodes.json", "k8s: (kubectl get nodes -o json)" */
	unsigned long nodes;           /* distinct nodes (hosts) read */
	unsigned long records;         /* node records or series read */
	unsigned long duplicates;      /* records of a node already read */
	char first_duplicate[128];
	struct probe_group *groups;
	size_t n_groups;
	unsigned long no_facts;        /* nodes without GPU facts */
	char *no_facts_names[8];
	unsigned n_no_facts_names;
	struct probe_cluster_reason reasons[PROBE_CLUSTER_REASONS];
	unsigned n_reasons;
	unsigned long other_reasons;   /* nodes whose reason did not fit */
	double read_s;                 /* seconds to read and group (reported with KIMG_CLUSTER_TIMING) */
};

/* main: $KIMG_GRES_MAP, a site file of `TYPE = GPU` lines for Slurm GRES
 * types the name table does not know (read when a slurm: source is). */
void probe_set_gres_map(const char *path);

/* True when tok is a cluster source or `all` (k8s:..., slurm:...,
 * dcgm:..., all). */
bool probe_cluster_is_source(const char *tok);

/* Read the source tok names and add one target per group through
 * push(ctx, target). default_driver: the driver for groups whose source
 * publishes none (--driver; 0: none). Returns 0, or -1 after printing the
 * problem ("kimg-probe: --sm k8s:FILE: ..."). The sources stay readable
 * (probe_clusters) until the process ends. */
int probe_cluster_targets(const char *tok, int default_driver, int (*push)(void *ctx, const struct probe_target *t),
			  void *ctx);

/* A group's target (cluster_label.c): CC, Tegra, driver and the label
 * "gpu-h1, gpu-h2: 16 × H100, driver CUDA 12.4", node names dropped to fit
 * the device name's 95 bytes ("and N more"). */
void probe_group_target(const struct probe_group *e, struct probe_target *t);
/* The groups of --sm all into c: one per (CC, Tegra) of the name table,
 * its GPU names as products. 0, or -1 out of memory. */
int probe_cluster_read_all(struct probe_cluster *c);

/* The sources read so far, in order. */
const struct probe_cluster *probe_cluster_at(size_t index);

/* ---- where the job may run (placement.c) ---- */

/* A target's share of a check: module/GPU pairs or CUDA libraries that
 * cannot run on it, and the first fix met (in walk order). */
struct probe_place_row {
	unsigned long fails;
	char fix[1024];
};

/* A fix in one line: "nvcc -gencode ...", its advice, or its driver. */
struct kimg_fix;
void probe_place_fix(const struct kimg_fix *fix, char *buf, size_t size);

/* Add a (per file) into total, n targets: fails summed, the first fix kept. */
void probe_place_merge(struct probe_place_row *total, const struct probe_place_row *a, int n);

/* After the verdicts: per source, the groups that run it and those that
 * do not with their fix, the nodes without GPU facts, and the constraint
 * (a Kubernetes nodeAffinity, a Slurm --gres/--constraint line), or
 * "no group can run it" with the fix. Nothing when no target is a group. */
void probe_placement_text(FILE *f, const struct probe_target *t, int n, const struct probe_place_row *rows);
/* The same as the "placement" member (null when no target is a group). */
void probe_placement_json(struct kimg_json *j, const struct probe_target *t, int n, const struct probe_place_row *rows);

#endif
