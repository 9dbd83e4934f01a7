/* SPDX-License-Identifier: Apache-2.0 */
/* Container images as inputs of scan and check (image.c, and the parts
 * image_int.h lists): docker/podman save tarballs and OCI image layouts
 * (a directory or a tar), read as the final file system their layers
 * make, in two streaming passes over each layer (nothing extracted,
 * memory bounded by the image's path count, not its size).
 * docs/deploy.md describes it for users. */
#ifndef KIMG_PROBE_IMAGE_H
#define KIMG_PROBE_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda_compat.h"
#include "jit_env.h"
#include "json.h"
#include "owners.h"
#include "span.h"

/* Entries of all layers of one image kimg reads at most (one node each in
 * the path table, some 100 bytes: a 2 GB image of CUDA libraries has a
 * few thousand; a large Python image 200,000). */
#define PROBE_IMAGE_ENTRIES_MAX 2000000u
/* Bytes one layer may expand to (the sum of its entries' sizes), and how
 * many times its blob: a layer over both is a decompression bomb and is
 * stopped at the header that passes them, before its data is inflated. */
#define PROBE_IMAGE_LAYER_RATIO_MAX 1000u
#define PROBE_IMAGE_LAYER_FLOOR ((uint64_t)1 << 30)
/* Package records (dpkg lists, RECORDs, conda-meta) kept for owners. */
#define PROBE_IMAGE_RECORDS_MAX ((uint64_t)64 << 20)
/* Problems reported per layer one by one; the rest are counted. */
#define PROBE_IMAGE_LAYER_PROBLEMS_SHOWN 8u
/* Files from this size on are read sparsely in pass two (core/elf_sparse.h):
 * the pages a check reads, not the file. */
#define PROBE_IMAGE_SPARSE_MIN ((uint64_t)32 << 20)
/* main: $KIMG_IMAGE_SPARSE_MIN (bytes; tests read small files sparsely too). */
void probe_image_set_sparse_min(uint64_t bytes);

struct probe_image_layer_info {
	const char *digest;          /* "sha256:..." of the blob */
	const char *media_type;      /* "" when the format has none (docker save) */
	uint64_t size;               /* of the blob */
	const char *created_by;      /* the history step that made it, or "" */
	bool read;                   /* false: missing, damaged or refused (an error said why) */
};

/* A forward-compatibility libcuda the final file system holds. */
struct probe_image_compat {
	char path[512];              /* "/usr/local/cuda-13.0/compat/libcuda.so.580.65.06" */
	struct kimg_compat_lib lib;
};

/* One image (one platform of an index), told before its files. */
struct probe_image_info {
	const char *name;            /* what its files are named by: "img.tar", "img[linux/arm64]" */
	const char *input;           /* the path given */
	const char *format;          /* "docker-archive", "oci-layout", "oci-archive" */
	const char *platform;        /* "linux/amd64", "" when unknown */
	const char *ref;             /* the first RepoTags entry or ref.name annotation, or "" */
	const char *config_digest;
	const char *const *env;      /* the config's Env, "NAME=value" */
	unsigned n_env;
	const struct probe_image_layer_info *layers;
	unsigned n_layers;
	const struct probe_image_compat *compat; /* cuda-compat libraries, in layer order */
	unsigned n_compat;
	struct kimg_jit_env jit;     /* the driver's JIT switches its Env sets (core/jit_env.h) */
};

/* Where a file judged inside an image comes from (image.c sets it while
 * its walk hands the file on). */
struct probe_image_member {
	const struct probe_image_info *image;
	const char *path;            /* in the image: "/usr/lib/x.so" */
	unsigned layer;              /* 0-based */
};

/* The callbacks of an image walk: files as the walk of a directory would
 * hand them on (bytes valid during the call), problems, and each image. */
struct probe_image_walker {
	void *ctx;
	void (*on_file)(void *ctx, const char *path, struct kimg_span bytes);
	bool (*want)(void *ctx, const char *name, struct kimg_span head);
	void (*on_error)(void *ctx, const char *path, const char *problem);
	void (*on_image)(void *ctx, const struct probe_image_info *image);  /* may be NULL */
	const char *platform;        /* --platform, or NULL */
	bool whole_files;            /* hand on every byte of large files (--deep, --kernels) */
};

/* Is path an image kimg reads as one: a directory with "oci-layout" and
 * "index.json", or a tar holding "manifest.json" or "oci-layout"? */
bool probe_image_detect(const char *path);
/* Walk the image at path. Every problem goes to on_error naming the image
 * and the layer; the other layers are still read. Returns the number of
 * images walked (0 when --platform matched none: said through on_error). */
int probe_image_walk(const char *path, const struct probe_image_walker *w);

/* The image member being handed on by this thread's walk, when path is
 * its name; else NULL. */
const struct probe_image_member *probe_image_member_of(const char *path);
/* Its owning package, from the image's own records: *pkg (NULL when no
 * record names it). false when path is not an image member. */
bool probe_image_owner(const char *path, const struct kimg_pkg **pkg);

/* The JIT switches of the image whose member path is (this thread's walk),
 * which its files are judged with in place of kimg-probe's own
 * environment's: false when path is not an image member. */
bool probe_image_jit_env(const char *path, struct kimg_jit_env *jit);

/* Text line(s) after a member's file line: "  layer 2 sha256:1234abcd...: RUN ..." */
void probe_image_text_origin(FILE *f, const char *path);
/* "image": {...} inside a member's file object; nothing for other files. */
void probe_image_json_origin(struct kimg_json *j, const char *path);

/* ---- the image's own facts (image_facts.c) ---- */

/* The config's Env as facts: CUDA_VERSION, NVIDIA_REQUIRE_* (judged per
 * target by the caller through kimg_require_judge), LD_LIBRARY_PATH and
 * the CUDA_* settings the driver reads. */
const char *probe_image_env(const struct probe_image_info *img, const char *name);
/* The requirement the toolkit checks: the NVIDIA_REQUIRE_* values ANDed,
 * "" when none (or NVIDIA_DISABLE_REQUIRE), the legacy cuda>=X.Y from
 * CUDA_VERSION when NVIDIA_REQUIRE_CUDA is absent. Fills up to max
 * expressions with their variable names; returns the count. */
unsigned probe_image_requirements(const struct probe_image_info *img, const char **names, const char **exprs,
				  char legacy[32], unsigned max);
/* Should an Env entry be shown as a CUDA fact? */
bool probe_image_env_is_fact(const char *entry);

struct probe_target;
/* The image's block: text (scan passes no targets: requirements are
 * listed, not judged) or its object in "files". Returns how many
 * (requirement, target) pairs the toolkit would refuse. */
unsigned long probe_image_text_facts(FILE *out, const struct probe_image_info *img, const struct probe_target *t,
				     int n_targets);
unsigned long probe_image_json_facts(struct kimg_json *j, const struct probe_image_info *img,
				     const struct probe_target *t, int n_targets);
/* For "Where it may run" (cluster_groups.h): each target on which the
 * toolkit would refuse one of the image's requirements counts a failure
 * in rows (n_targets of them), its fix the requirement. */
struct probe_place_row;
void probe_image_place(const struct probe_image_info *img, const struct probe_target *t, int n_targets,
		       struct probe_place_row *rows);

/* ---- owners (image_owners.c) ---- */

enum record_kind { RECORD_NONE = 0, RECORD_DPKG_STATUS, RECORD_DPKG_LIST, RECORD_PY_RECORD, RECORD_PY_INSTALLER,
		   RECORD_CONDA_META };
struct probe_image_record {
	enum record_kind kind;
	char *path;                  /* final path in the image */
	unsigned char *bytes;
	uint64_t size;
};
enum record_kind probe_image_record_kind(const char *path);
struct probe_image_owners;
struct probe_image_owners *probe_image_owners_new(void);
void probe_image_owners_free(struct probe_image_owners *o);
void probe_image_owners_build(struct probe_image_owners *o, const struct probe_image_record *recs, size_t n);
const struct kimg_pkg *probe_image_owners_lookup(const struct probe_image_owners *o, const char *path);

#endif
