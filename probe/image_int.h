/* SPDX-License-Identifier: Apache-2.0 */
/* The image reader's own parts (image.c, image_source.c, image_plan.c,
 * image_pass1.c, image_pass2.c): the source and its blobs, the plans of
 * its images, and one image's run, which the passes share. Not for other
 * files: image.h is the interface. */
#ifndef KIMG_PROBE_IMAGE_INT_H
#define KIMG_PROBE_IMAGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "digest.h"
#include "elf_sparse.h"
#include "error.h"
#include "image.h"
#include "layer_fs.h"
#include "tar.h"

#define IMAGE_HEAD_SIZE 4096u           /* of each file, shown to want() */
#define IMAGE_CHUNK ((size_t)1 << 20)   /* the reads of a layer's blob */

/* ---- where the blobs are (image_source.c) ---- */

struct tar_member {
	char *name;                     /* normalised, no leading "./" or "/" */
	char *link;                     /* a symlink member's target (docker's "ID/layer.tar"), else NULL */
	uint64_t off, size;
};

struct source {
	const char *path;
	int fd;                         /* the tar, or the layout directory */
	bool is_dir;
	const char *format;
	struct tar_member *m;
	size_t n, cap;
};

struct blob {
	int fd;
	uint64_t off, size;
	bool own_fd;
};

int image_pread_all(int fd, void *buf, size_t len, uint64_t off);
/* Open path as an image container: a layout directory, or a tar indexed
 * by its members. err says why not; image_source_close either way. */
int image_source_open(const char *path, struct source *s, struct kimg_error *err);
void image_source_close(struct source *s);
bool image_source_has(const struct source *s, const char *name);
/* A tar member by name, symlink members followed within the archive. */
const struct tar_member *image_tar_find(const struct source *s, const char *name);
int image_blob_open(const struct source *s, const char *name, struct blob *b, struct kimg_error *err);
void image_blob_close(struct blob *b);
/* A small blob (manifest, index, config) whole, its SHA-256 checked
 * against want_hex when given. */
int image_blob_read_doc(const struct source *s, const char *name, const char *want_hex, unsigned char **out,
			uint64_t *len, struct kimg_error *err);

/* A blob's bytes in chunks for kimg_tar_stream_walk, its digest taken on
 * the same bytes when sha is set. */
struct layer_source {
	int fd;
	uint64_t off, size, pos;
	unsigned char *buf;
	struct kimg_digest *sha;
	void *map;                      /* the window handed out last, or NULL */
	size_t map_len;
};
int64_t image_layer_read(void *ctx, const void **buf);
/* After the walk: the last window given back. */
void image_layer_end(struct layer_source *ls);

/* ---- which images, which blobs (image_plan.c) ---- */

struct layer_plan {
	char digest[72];                /* expected "sha256:..." ("" until known: legacy docker layers) */
	char member[KIMG_LAYER_FS_PATH_MAX]; /* where the blob is */
	char media_type[128];
	char created_by[512];
	uint64_t size;
	bool read;                      /* pass one verified and applied it */
};

struct plan {
	char name[KIMG_LAYER_FS_PATH_MAX + 64];
	char platform[100];
	char ref[256];
	char config_member[KIMG_LAYER_FS_PATH_MAX];
	char config_digest[72];
	struct layer_plan *layers;
	unsigned n_layers;
	bool bad;                       /* an error made it unreadable (reported) */
	char problem[400];
};

struct planner {
	const struct source *src;
	const struct probe_image_walker *w;
	struct plan *plans;
	unsigned n, cap;
	int depth;
	struct kimg_error err;
	char os[32], arch[32], variant[32]; /* --platform */
	bool want_platform;
};

/* The images of the source. Returns 0 or a negative error (p->err). */
int image_plan_all(struct planner *p);
void image_plans_free(struct planner *p);

/* ---- one image's run (image.c), shared by its passes ---- */

struct sparse_entry {
	unsigned layer;
	uint32_t ordinal;
	struct kimg_sparse_plan plan;
};

struct run {
	const struct source *src;
	const struct probe_image_walker *w;
	struct plan *pl;
	struct probe_image_info info;
	struct probe_image_layer_info *linfo;
	char **env;
	unsigned n_env;
	char platform[100];
	struct kimg_layer_fs *fs;
	uint8_t **cand;                 /* per layer, per entry: may hold device code */
	uint32_t *n_cand;
	struct probe_image_record *recs;
	size_t n_recs, cap_recs;
	uint64_t rec_bytes;
	struct probe_image_owners *owners;
	uint64_t *maybe_compat;         /* (layer << 32 | ordinal) of files named libcuda.so.* */
	size_t n_maybe_compat, cap_maybe_compat;
	struct probe_image_compat *compat;
	unsigned n_compat;
	struct sparse_entry *sparse;    /* large ELF files: what pass two may drop */
	size_t n_sparse, cap_sparse;
	/* the member being handed on */
	char member_name[KIMG_LAYER_FS_PATH_MAX * 2 + 80];
	struct probe_image_member member;
	bool member_set;
	unsigned long errors;
};

/* A problem of the image, of layer `layer` (0-based) or of none (-1). */
void image_run_error(struct run *r, int layer, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Free the records from `first` on (a layer not applied). */
void image_drop_records(struct run *r, size_t first);
/* The rest of a member after the `have` bytes already in buf. */
int image_read_rest(struct kimg_tar_stream *s, unsigned char *buf, uint64_t have, uint64_t size,
		    struct kimg_error *err);
/* Pass one over layer i (image_pass1.c), pass two (image_pass2.c). */
void image_pass1_layer(struct run *r, unsigned i, unsigned char *chunk);
void image_pass2_layer(struct run *r, unsigned i, unsigned char *chunk);

#endif
