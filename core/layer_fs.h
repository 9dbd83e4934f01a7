/* SPDX-License-Identifier: Apache-2.0 */
/* The final file system of a container image, computed from the headers
 * of its layers without their contents: which layer entry's bytes a path
 * holds once every layer is applied in order.
 *
 * Rules (opencontainers/image-spec layer.md, "Applying Changesets",
 * "Whiteouts"; overlayfs and containerd apply layers the same way):
 *  - a later entry for a path replaces the earlier one; a non-directory
 *    replacing a directory removes what the directory held;
 *  - "DIR/.wh.NAME" removes DIR/NAME and everything under it, from the
 *    layers below only ("Whiteout files MUST only apply to resources in
 *    lower/parent layers");
 *  - "DIR/.wh..wh..opq" (opaque) removes every child of DIR from the
 *    layers below;
 *  - a member under a symlinked directory lands where the link points,
 *    resolved within the image (".." stops at its root, as a chroot
 *    does), at most KIMG_LAYER_FS_HOPS links;
 *  - a hard link holds the bytes of its target's entry, which survive as
 *    long as one name of them does.
 * Member names that leave the image ("../x", "a/../../x") or are absolute
 * ("/etc/x") are refused with -KIMG_EFORMAT and left out.
 *
 * Memory: one node per distinct path, one int per layer entry; the caller
 * caps the entries (max_entries). This is the one core module that
 * allocates: an image's path set has no size known in advance, and the
 * probe must not need one copy per layer. Pure otherwise: no I/O. */
#ifndef KIMG_LAYER_FS_H
#define KIMG_LAYER_FS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define KIMG_LAYER_FS_HOPS 40u     /* symlinks followed in one name, as Linux's MAXSYMLINKS */
#define KIMG_LAYER_FS_PATH_MAX 4096u

enum kimg_fs_kind {
	KIMG_FS_FILE = 0,
	KIMG_FS_DIR,
	KIMG_FS_SYMLINK,
	KIMG_FS_HARDLINK,
	KIMG_FS_OTHER,             /* device, FIFO */
	KIMG_FS_KIND_COUNT
};

struct kimg_layer_fs;

/* NULL when out of memory. max_entries: entries of all layers together
 * kimg_layer_fs_add accepts (then -KIMG_ELIMIT). */
struct kimg_layer_fs *kimg_layer_fs_new(unsigned n_layers, uint64_t max_entries);
void kimg_layer_fs_free(struct kimg_layer_fs *fs);

/* Apply entry `ordinal` (0, 1, ... in stream order) of layer `layer`
 * (layers in increasing order, each once). link: a symlink's target, or a
 * hard link's target member name. Returns 0, or a negative error with err
 * set; the entry is then left out and the others still apply:
 * -KIMG_EFORMAT (a name that leaves the image, an absolute name, a
 * whiteout of nothing, a hard link to a missing file), -ELOOP (more than
 * KIMG_LAYER_FS_HOPS symlinks in its directory), -KIMG_ELIMIT (entries
 * over max_entries), -ENOMEM. */
int kimg_layer_fs_add(struct kimg_layer_fs *fs, unsigned layer, uint32_t ordinal, const char *name,
		      enum kimg_fs_kind kind, const char *link, struct kimg_error *err);

/* After the last layer: decide which entries the final file system holds. */
int kimg_layer_fs_finish(struct kimg_layer_fs *fs);

/* The path ("/usr/lib/x.so") of the final file system under which entry
 * (layer, ordinal)'s bytes are found, or NULL when no path holds them (a
 * regular file is judged by its own name when it survives, else by a
 * surviving hard link's). Valid until kimg_layer_fs_free. */
const char *kimg_layer_fs_judged_as(const struct kimg_layer_fs *fs, unsigned layer, uint32_t ordinal);
/* Entries of `layer` whose bytes the final file system holds. */
uint64_t kimg_layer_fs_layer_files(const struct kimg_layer_fs *fs, unsigned layer);

/* The final file system at `path` (absolute, normalised; symlinks in its
 * directories are followed): its kind and the layer that made it, or -1
 * when no such path is there. For tests and messages. */
int kimg_layer_fs_lookup(const struct kimg_layer_fs *fs, const char *path, unsigned *layer);

/* Lexically normalise a member name to "/a/b" ("./a//b/" -> "/a/b").
 * Returns the length, 0 for the root itself, or -KIMG_EFORMAT (".." that
 * leaves the root when forbid_up, else clamped; an absolute name when
 * forbid_abs) / -KIMG_ELIMIT (too long). */
int kimg_layer_fs_normalize(const char *name, bool forbid_abs, bool forbid_up, char *out, unsigned size);

#endif
