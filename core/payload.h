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

/* Plain payload of img. Uncompressed images: *out = img->payload, dst unused.
 * Compressed: decoded into dst (dst_cap >= img->size), *out covers exactly
 * img->size bytes; -KIMG_ECODEC if the decoder yields another size,
 * -KIMG_ENOCODEC if codecs lack the needed decoder. */
int kimg_payload_get(const struct kimg_image *img, const struct kimg_codecs *codecs,
		     void *dst, uint64_t dst_cap, struct kimg_span *out, struct kimg_error *err);

#endif
