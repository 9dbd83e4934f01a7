/* SPDX-License-Identifier: Apache-2.0 */
/* Reading .whl / .zip members in place, without extracting to disk.
 *
 * The central directory is parsed by the core (core/zip_dir.h); stored
 * members are passed straight from the archive's bytes, deflated ones are
 * inflated with zlib, loaded at first use (dlopen "libz.so.1", which every
 * Linux system has), never linked and needing no -dev package. Without
 * zlib only deflated members are lost, each with the error "cannot inflate:
 * libz.so.1 not found".
 *
 * Every member is bounded before any memory is taken: by an absolute size
 * limit and by its inflation ratio (declared size over stored size), both
 * settable with kimg_zip_set_limits. A member that inflates past its
 * declared size is stopped there. Not thread safe beyond the one-time
 * load (the probe is single threaded). */
#ifndef KIMG_SYS_ZIP_H
#define KIMG_SYS_ZIP_H

#include <stdbool.h>

#include "error.h"
#include "span.h"

/* Bytes of each member shown to `want` before deciding to read it all. */
#define KIMG_ZIP_HEAD_SIZE 4096u
/* Default limits: members up to 4 GiB; above 16 MiB, at most 200 times
 * their stored size (shared objects deflate 2-5 times; a zip bomb's
 * deflate stream reaches about 1000). */
#define KIMG_ZIP_MEMBER_MAX ((uint64_t)1 << 32)
#define KIMG_ZIP_RATIO_MAX 200u
#define KIMG_ZIP_RATIO_FLOOR ((uint64_t)16 << 20)

/* Decide from a member's name and first bytes (up to KIMG_ZIP_HEAD_SIZE,
 * fewer for small members) whether it is worth inflating. */
typedef bool (*kimg_zip_want_fn)(void *ctx, const char *name, struct kimg_span head);

/* A wanted member: `bytes` is the whole inflated member, valid during the
 * call. When the member could not be read, bytes is empty and member_err
 * says why (-KIMG_ENOCODEC: no zlib; -KIMG_ELIMIT: a limit; -KIMG_ECODEC:
 * corrupt data or CRC; -KIMG_ENOTSUP: encrypted or another method); the
 * walk goes on with the next member. A non-zero return stops the walk and
 * is returned. */
typedef int (*kimg_zip_member_fn)(void *ctx, const char *name, struct kimg_span bytes,
				  const struct kimg_error *member_err);

/* Which members to read: want_name sees only the name (nothing is
 * inflated for a member it refuses; NULL takes every name), want_head the
 * name and the first bytes (NULL takes every member). */
struct kimg_zip_walk {
	bool (*want_name)(void *ctx, const char *name);
	kimg_zip_want_fn want_head;
	kimg_zip_member_fn fn;
	void *ctx;
};

/* Walk the regular-file members (not directories, not symlinks) of the
 * zip archive in `zip`, in central-directory order. Returns the number of
 * members passed to fn, or a negative error: -KIMG_EFORMAT when the
 * archive (or its directory) is unreadable, a callback's non-zero return.
 * An archive without members gives 0. */
int kimg_zip_walk(struct kimg_span zip, const struct kimg_zip_walk *walk, struct kimg_error *err);

/* kimg_zip_walk with want_head = want and no name filter. */
int kimg_zip_for_each_member(struct kimg_span zip, kimg_zip_want_fn want, kimg_zip_member_fn fn,
			     void *ctx, struct kimg_error *err);

/* Use another zlib name or path instead of "libz.so.1"; call before the
 * first walk (the front end maps $KIMG_ZLIB here, tests name a missing one). */
void kimg_zip_set_library(const char *soname);
/* Limits for every later member: max_member bytes at most (0: default),
 * max_ratio times the stored size above KIMG_ZIP_RATIO_FLOOR (0: default). */
void kimg_zip_set_limits(uint64_t max_member, unsigned max_ratio);

#endif
