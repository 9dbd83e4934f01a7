/* Reading .whl / .zip members in place, without extracting to disk.
 *
 * libarchive is loaded at first use (dlopen "libarchive.so.13"), never
 * linked: a machine without it loses only archive support, with the error
 * "cannot read archives: libarchive.so.13 not found". Not thread safe
 * beyond the one-time load (the probe is single threaded). */
#ifndef KIMG_SYS_ZIP_H
#define KIMG_SYS_ZIP_H

#include <stdbool.h>

#include "error.h"
#include "span.h"

/* Bytes of each member shown to `want` before deciding to read it all. */
#define KIMG_ZIP_HEAD_SIZE 4096u
/* Largest member kimg will inflate into memory. */
#define KIMG_ZIP_MEMBER_MAX ((uint64_t)1 << 32)

/* Decide from a member's name and first bytes (up to KIMG_ZIP_HEAD_SIZE,
 * fewer for small members) whether it is worth inflating. */
typedef bool (*kimg_zip_want_fn)(void *ctx, const char *name, struct kimg_span head);

/* A wanted member: `bytes` is the whole inflated member, valid during the
 * call. When the member could not be read, bytes is empty and member_err
 * says why; the walk goes on with the next member unless libarchive
 * cannot (a truncated archive), in which case it ends there. A non-zero return
 * stops the walk and is returned. */
typedef int (*kimg_zip_member_fn)(void *ctx, const char *name, struct kimg_span bytes,
				  const struct kimg_error *member_err);

/* Walk the regular-file members of the zip archive in `zip`, in archive
 * order. Returns the number of members passed to fn, or a negative error:
 * -KIMG_ENOCODEC when libarchive cannot be loaded, -KIMG_EFORMAT when the
 * archive (or its directory) is unreadable. An error after some members
 * were delivered is returned too: err says where it stopped. */
int kimg_zip_for_each_member(struct kimg_span zip, kimg_zip_want_fn want, kimg_zip_member_fn fn,
			     void *ctx, struct kimg_error *err);

/* Use another library name or path instead of "libarchive.so.13"; call
 * before the first walk (the front end maps $KIMG_LIBARCHIVE here). */
void kimg_zip_set_library(const char *soname);

#endif
