/* SPDX-License-Identifier: Apache-2.0 */
/* Getting an image's payload in plain form (decompressing when needed).
 *
 * The decompressors are passed in, not linked: the core stays free of
 * process state, and the front ends load libzstd / liblz4 lazily
 * (sys/codecs.c), so a missing library costs only the compressed entries. */
#ifndef KIMG_PAYLOAD_H
#define KIMG_PAYLOAD_H

#include "error.h"
#include "image.h"

struct kimg_codecs {
	/* ZSTD_decompress and ZSTD_isError; NULL when libzstd is absent */
	size_t (*zstd_decompress)(void *dst, size_t dst_cap, const void *src, size_t src_size);
	unsigned (*zstd_is_error)(size_t code);
	/* LZ4_decompress_safe; NULL when liblz4 is absent */
	int (*lz4_decompress_safe)(const char *src, char *dst, int src_size, int dst_cap);
};

/* Largest payload kimg will decompress (a safety cap against declared
 * sizes in hostile input). */
#define KIMG_PAYLOAD_MAX ((uint64_t)1 << 31)
/* Largest declared size / stored size of a compressed entry. nvcc's own
 * entries stay far below it (cubins 6:1, PTX 12:1 in the test fixtures;
 * zero-filled constant banks more); past it a few KiB could claim GiBs. */
#define KIMG_PAYLOAD_MAX_RATIO 1024u

/* Plain payload of img. Uncompressed images: *out = img->payload, dst unused.
 * Compressed: decoded into dst (dst_cap >= img->size), *out covers exactly
 * img->size bytes; -KIMG_ECODEC if the decoder yields another size,
 * -KIMG_ENOCODEC if codecs lack the needed decoder, -KIMG_ELIMIT past
 * KIMG_PAYLOAD_MAX or KIMG_PAYLOAD_MAX_RATIO (checked before any byte is
 * decoded: callers size dst from img->size, so check it with
 * kimg_payload_check_size first). */
/* 0 when img's declared size may be decompressed (above), else
 * -KIMG_ELIMIT with err saying which bound. Uncompressed images: 0. */
int kimg_payload_check_size(const struct kimg_image *img, struct kimg_error *err);

int kimg_payload_get(const struct kimg_image *img, const struct kimg_codecs *codecs,
		     void *dst, uint64_t dst_cap, struct kimg_span *out, struct kimg_error *err);

#endif
