/* SPDX-License-Identifier: Apache-2.0 */
/* Reading tar-based packages in memory: conda's .tar.bz2 packages and the
 * .tar.zst parts inside .conda files (and plain, .gz, .xz tarballs named on
 * the command line), through libarchive and its decompression filters.
 *
 * libarchive is loaded at first use (dlopen "libarchive.so.13"), never
 * linked: a machine without it loses only tar support, with the error
 * "cannot read tar archives: libarchive.so.13 not found". Zip archives
 * (wheels) do not need it: sys/zip.h reads them with zlib. Not thread
 * safe beyond the one-time load (the probe is single threaded). */
#ifndef KIMG_SYS_TAR_H
#define KIMG_SYS_TAR_H

#include <stdbool.h>

#include "error.h"
#include "span.h"

/* Bytes of each member shown to `want` before deciding to read it all. */
#define KIMG_TAR_HEAD_SIZE 4096u
/* Largest member kimg will read into memory, unless set otherwise. */
#define KIMG_TAR_MEMBER_MAX_DEFAULT ((uint64_t)1 << 32)

/* Decide from a member's name and first bytes (up to KIMG_TAR_HEAD_SIZE,
 * fewer for small members) whether it is worth reading. */
typedef bool (*kimg_tar_want_fn)(void *ctx, const char *name, struct kimg_span head);

/* A wanted member: `bytes` is the whole member, valid during the call.
 * When the member could not be read, bytes is empty and member_err says
 * why; the walk goes on with the next member unless libarchive cannot (a
 * truncated archive), in which case it ends there. A non-zero return
 * stops the walk and is returned. */
typedef int (*kimg_tar_member_fn)(void *ctx, const char *name, struct kimg_span bytes,
				  const struct kimg_error *member_err);

/* Walk the regular-file members of the (possibly compressed) tar archive
 * in `tar`, in archive order. Returns the number of members passed to fn,
 * or a negative error: -KIMG_ENOCODEC when libarchive cannot be loaded,
 * -KIMG_EFORMAT when the archive is unreadable. */
int kimg_tar_for_each_member(struct kimg_span tar, kimg_tar_want_fn want, kimg_tar_member_fn fn, void *ctx,
			     struct kimg_error *err);

/* Use another library name or path instead of "libarchive.so.13"; call
 * before the first walk (the front end maps $KIMG_LIBARCHIVE here). */
void kimg_tar_set_library(const char *soname);

/* Largest member to read (0: the default); the front end passes
 * $KIMG_ZIP_MAX_MEMBER here too, one limit for every archive member. */
void kimg_tar_set_member_max(uint64_t max);

/* The library name in use, for messages. */
const char *kimg_tar_library(void);

#endif
