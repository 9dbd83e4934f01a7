/* SPDX-License-Identifier: Apache-2.0 */
/* GPUs as clusters publish them: Kubernetes nodes with NVIDIA GPU Feature
 * Discovery labels (`kubectl get nodes -o json`), Slurm nodes with GPU
 * GRES (`scontrol show node --oneliner`) and dcgm-exporter's Prometheus
 * text. Each reader is pure (bytes in, one struct kimg_cluster_node per
 * node or series out through a callback, errors returned); grouping the
 * nodes into check targets is the front end's (probe/cluster.c).
 * docs/deploy.md "Clusters" says what each source can and cannot tell. */
#ifndef KIMG_CLUSTER_H
#define KIMG_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "span.h"

/* Kinds of GPU one node record holds at most: a Slurm node lists one GRES
 * entry per GPU type (a mixed node has several); a Kubernetes node's
 * labels describe one kind. More kinds than this: the node's record says
 * so in `why` and keeps the first ones. */
#define KIMG_CLUSTER_KINDS_MAX 8

struct kimg_cluster_gpu {
	unsigned sm;              /* 90; 0: not known, `unknown` says why */
	bool tegra;
	int driver_version;       /* the driver's CUDA version, 12040; 0 unknown */
	char release[32];         /* the driver's release "550.54.15", or "" */
	char product[96];         /* as the source writes it: "NVIDIA-H100-80GB-HBM3", "h100" */
	char model[48];           /* the GPU-name table's name ("H100"), or "" */
	char mig[32];             /* MIG profile ("1g.5gb"), "mixed" (Kubernetes mixed strategy), or "" */
	unsigned long count;      /* GPUs; with mig set, MIG devices (single strategy); 0 unknown */
	char uuid[80];            /* dcgm: the GPU's UUID; else "" */
	char unknown[160];        /* sm == 0: why the GPU is not known */
};

struct kimg_cluster_node {
	char name[256];           /* "" when the source gives none */
	unsigned n_gpus;          /* kinds in gpus[]; 0: no GPU facts (why says which) */
	struct kimg_cluster_gpu gpus[KIMG_CLUSTER_KINDS_MAX];
	char why[160];            /* n_gpus == 0: why; else a note, or "" */
};

typedef int (*kimg_cluster_node_fn)(void *ctx, const struct kimg_cluster_node *node);

/* ---- Kubernetes (cluster_k8s.c) ---- */

/* Per-node arena the JSON reader needs: a node of `kubectl get nodes -o
 * json` is a few KiB (its image list can make it some 100 KiB); larger
 * is KIMG_ELIMIT naming the node. */
#define KIMG_K8S_NODE_ARENA (8u << 20)

/* Read a List or NodeList (kubectl get nodes -o json, GET /api/v1/nodes)
 * or one Node. The outer document is walked here and each item parsed
 * alone into arena (KIMG_K8S_NODE_ARENA bytes suffice), so time and memory
 * are linear in the document and bounded by its largest node. fn(ctx,
 * node) for each node in order (a non-zero return stops and is returned).
 * Returns the number of nodes, or a negative code with err set:
 * -KIMG_EFORMAT (not JSON, not a node list, an item of another kind),
 * -KIMG_ETRUNC, -KIMG_ELIMIT (the JSON reader's). */
int kimg_k8s_nodes_parse(struct kimg_span in, void *arena, size_t arena_size, kimg_cluster_node_fn fn, void *ctx,
			 struct kimg_error *err);

/* ---- Slurm (cluster_slurm.c) ---- */

/* A site's GRES type names: `TYPE = GPU` lines (a GPU name of the
 * name table or a compute capability), `#` comments. */
#define KIMG_GRES_MAP_MAX 64
struct kimg_gres_map {
	unsigned n;
	struct {
		char type[64];        /* lower case */
		unsigned sm;
		bool tegra;
		char model[48];       /* the table's name, or the CC as written */
	} rows[KIMG_GRES_MAP_MAX];
};

/* Parse a map. Returns the number of rows or a negative code with err set
 * (err->offset: the line number): -KIMG_EFORMAT for a line that is not
 * `TYPE = GPU` or names no known GPU, -KIMG_ELIMIT past
 * KIMG_GRES_MAP_MAX rows. */
int kimg_gres_map_parse(struct kimg_span text, struct kimg_gres_map *map, struct kimg_error *err);

/* Read `scontrol show node` output, one line per node (--oneliner) or
 * the multi-line form: a record starts at each NodeName=. GPU kinds come
 * from Gres=gpu:TYPE:N entries (sockets "(S:...)" dropped; other GRES
 * such as shard or mps skipped), TYPE through map (may be NULL) and then
 * the GPU-name table (case, "nvidia_" and separators tolerated); an
 * untyped gpu:N, or a type neither knows, is a kind with sm 0 unless the
 * node has a feature sm_NN. Slurm publishes no driver: driver_version
 * stays 0. Returns the node count or a negative code with err set
 * (-KIMG_EFORMAT: a NUL byte, text before the first NodeName=). */
int kimg_slurm_nodes_parse(struct kimg_span in, const struct kimg_gres_map *map, kimg_cluster_node_fn fn, void *ctx,
			   struct kimg_error *err);

/* ---- dcgm-exporter (cluster_dcgm.c) ---- */

/* Read dcgm-exporter's Prometheus text exposition: every DCGM_* series
 * with a modelName or UUID label is one record (name = Hostname, one GPU:
 * modelName through the name table, UUID, GPU_I_PROFILE as mig, the
 * driver release DCGM_FI_DRIVER_VERSION and its CUDA version). A GPU
 * appears in many series, hosts interleaved: the caller folds them by
 * (Hostname, UUID). Comments and other metrics are skipped. Returns the
 * number of records or a negative code with err set (err->offset: the
 * line number): -KIMG_EFORMAT for a line that is not exposition text. */
int kimg_dcgm_parse(struct kimg_span in, kimg_cluster_node_fn fn, void *ctx, struct kimg_error *err);

/* ---- shared (cluster.c) ---- */

/* A product name as a source writes it ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
 * "NVIDIA H100 80GB HBM3", "Tesla-T4-SHARED") into g: product copied,
 * the MIG profile split off into mig, a time-slicing "-SHARED" suffix
 * dropped, and sm, tegra, model from the name table when it knows the
 * rest. Returns true when the table knows it. */
bool kimg_cluster_gpu_set_product(struct kimg_cluster_gpu *g, const char *product, size_t len);

/* The name table's answers for the last distinct names a reader met: a
 * cluster has a few products on many nodes, and a table lookup costs some
 * microseconds (it normalises every row), so 100,000 nodes would spend
 * most of their time there. Zero it before the first use. */
#define KIMG_NAME_CACHE_ROWS 16
struct kimg_name_cache {
	unsigned n, next;
	struct {
		char name[96];
		const struct kimg_gpu *gpu; /* NULL: not in the table */
	} rows[KIMG_NAME_CACHE_ROWS];
};
struct kimg_gpu;
/* kimg_gpu_lookup(name) through cache (NULL: no cache). */
const struct kimg_gpu *kimg_name_cache_lookup(struct kimg_name_cache *cache, const char *name);
/* kimg_cluster_gpu_set_product with the table looked up through cache. */
bool kimg_cluster_gpu_set_product_cached(struct kimg_cluster_gpu *g, const char *product, size_t len,
					 struct kimg_name_cache *cache);

/* The CUDA version a driver release reports ("535.104.05" -> 12020): the
 * newest CUDA whose GA driver is not newer (core/rules_tables.c); 0 when
 * malformed or older than the table. */
int kimg_driver_release_cuda_version(const char *release);

/* Copy a source's bytes into dst (size), cut to fit, NUL-terminated;
 * NUL and the other control bytes become '?', so names stay C strings and
 * a node named "\u001b[2J" cannot drive the terminal of the text report. */
void kimg_cluster_copy(char *dst, size_t size, const char *src, size_t len);

#endif
