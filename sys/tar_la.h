/* SPDX-License-Identifier: Apache-2.0 */
/* The libarchive side of kimg_tar_stream_walk (sys/tar.c), for
 * sys/tar_stream.c only: the layers it does not read natively (bzip2, xz,
 * lz4, ...) go through libarchive's filters, with the same entries. */
#ifndef KIMG_SYS_TAR_LA_H
#define KIMG_SYS_TAR_LA_H

#include "tar.h"

/* As kimg_tar_entry_fn, with libarchive's stream for kimg_tar_la_read. */
typedef int (*kimg_tar_la_entry_fn)(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e, void *la);
/* As kimg_tar_stream_walk; -KIMG_ENOCODEC when libarchive cannot be loaded. */
int kimg_tar_la_walk(kimg_tar_source_fn src, void *src_ctx, kimg_tar_la_entry_fn fn, void *ctx,
		     struct kimg_error *err);
int64_t kimg_tar_la_read(void *la, void *buf, uint64_t len, struct kimg_error *err);

#endif
