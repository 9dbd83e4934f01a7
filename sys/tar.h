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
/* What one archive's members may hold in all: this many times the
 * archive's size plus the floor (the zip caps of sys/zip.h, per archive:
 * a compressed tar stream declares no per-member stored size). Memory per
 * job is then at most the smaller of this and the member limit; with -j N,
 * N times that. */
#define KIMG_TAR_RATIO_MAX_DEFAULT 200u
#define KIMG_TAR_RATIO_FLOOR ((uint64_t)16 << 20)

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
/* The ratio of KIMG_TAR_RATIO_MAX_DEFAULT (0: the default). */
void kimg_tar_set_ratio_max(unsigned ratio);

/* The library name in use, for messages. */
const char *kimg_tar_library(void);

/* ---- streaming a tar from a source of bytes (container image layers) ----
 *
 * The tar is read once, front to back, from chunks src hands out: nothing
 * is held but a fixed window (256 KiB, plus zlib's 32 KiB or zstd's frame
 * window) and what fn reads. Its format is told by content:
 *   - gzip (1f 8b), zstd (28 b5 2f fd), or a plain tar (a valid ustar/v7
 *     header checksum, or an empty tar): read by sys/tar_stream.c itself,
 *     with core/tar_header.c's headers (pax 'x' path/linkpath/size, GNU
 *     'L'/'K' long names; 'g' and other pax keys ignored) and zlib /
 *     libzstd loaded lazily (sys/codecs.h). libarchive is not needed.
 *   - anything else (bzip2, xz, lz4, lzip, lzma, compress): libarchive's
 *     filters (sys/tar.c), or -KIMG_ENOCODEC naming the format ("a bzip2
 *     layer: cannot read tar archives: libarchive.so.13 not found") when
 *     it cannot load; content none of these is -KIMG_EFORMAT.
 * The end is the first all-zero block, or the end of the stream at a block
 * boundary. Limits of the native reader: extended headers of at most
 * KIMG_TAR_EXT_MAX bytes, at most 16 of them before one entry, names under
 * KIMG_TAR_NAME_MAX. The entries' declared sizes are the caller's to
 * budget (probe/image_pass1.c); what is inflated is then at most their
 * sum, their padding and the headers. */
enum kimg_tar_entry_type {
	KIMG_TAR_ENTRY_FILE = 0,
	KIMG_TAR_ENTRY_DIR,
	KIMG_TAR_ENTRY_SYMLINK,
	KIMG_TAR_ENTRY_HARDLINK,
	KIMG_TAR_ENTRY_OTHER,
};
struct kimg_tar_entry {
	const char *name;            /* as stored; valid during the call */
	const char *link;            /* SYMLINK target, HARDLINK target member; else NULL */
	enum kimg_tar_entry_type type;
	int64_t size;                /* -1 when not set */
};
struct kimg_tar_stream;
/* Next chunk: *buf and its size, 0 at the end, or a negative error. The
 * chunk stays valid until the next call. */
typedef int64_t (*kimg_tar_source_fn)(void *ctx, const void **buf);
/* Each entry, every type, in order (ordinal 0, 1, ...). fn may read the
 * entry's data with kimg_tar_stream_read; what it leaves is skipped. A
 * non-zero return stops the walk and is returned. */
typedef int (*kimg_tar_entry_fn)(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e,
				 struct kimg_tar_stream *s);
/* Returns the number of entries, or a negative error with err set (the
 * source's own error code when it failed; -KIMG_EFORMAT for a damaged
 * tar or compressed stream, after the entries before the damage;
 * -KIMG_ELIMIT past a limit above; -KIMG_ENOCODEC when the library the
 * format needs cannot load). */
int kimg_tar_stream_walk(kimg_tar_source_fn src, void *src_ctx, kimg_tar_entry_fn fn, void *ctx,
			 struct kimg_error *err);
/* The same for a blob whose SHA-256 the caller checks against its digest
 * (image layers): gzip's CRC-32 is not computed. The digest covers every
 * compressed byte and inflate is deterministic, so a check of its output
 * adds nothing but a tenth of the inflate's time; a damaged blob is
 * caught by the digest (or by inflate) instead. */
int kimg_tar_stream_walk_digested(kimg_tar_source_fn src, void *src_ctx, kimg_tar_entry_fn fn, void *ctx,
				  struct kimg_error *err);
/* Up to len bytes of the current entry's data (fewer only at its end):
 * the count (0 at its end) or -1 with err set; the walk then ends with
 * the error after fn returns. */
int64_t kimg_tar_stream_read(struct kimg_tar_stream *s, void *buf, uint64_t len, struct kimg_error *err);

#endif
