/* SPDX-License-Identifier: Apache-2.0 */
/* Plain payload of an image (core/payload.h). Compressed entries must
 * decode to exactly their declared size (docs/design.md §5): a short or long result
 * means the header lies, and nothing downstream should parse it. */
#include "payload.h"

#include <errno.h>
#include <limits.h>

static const uint8_t zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd }; /* docs/format.md §6 */

int kimg_payload_check_size(const struct kimg_image *img, struct kimg_error *err)
{
	if (img->compression == KIMG_COMPRESS_NONE)
		return 0;
	if (img->size > KIMG_PAYLOAD_MAX)
		return kimg_error_set(err, -KIMG_ELIMIT, img->offset, "payload: declared size %llu over the %llu cap",
				      (unsigned long long)img->size, (unsigned long long)KIMG_PAYLOAD_MAX);
	if (img->size / KIMG_PAYLOAD_MAX_RATIO > img->stored_size)
		return kimg_error_set(err, -KIMG_ELIMIT, img->offset,
				      "payload: %llu bytes declared from %llu stored, past the %u:1 ratio kimg decompresses",
				      (unsigned long long)img->size, (unsigned long long)img->stored_size,
				      KIMG_PAYLOAD_MAX_RATIO);
	return 0;
}

int kimg_payload_get(const struct kimg_image *img, const struct kimg_codecs *codecs,
		     void *dst, uint64_t dst_cap, struct kimg_span *out, struct kimg_error *err)
{
	const struct kimg_span *src = &img->payload;

	*out = kimg_span_make(NULL, 0);
	if (src->size != img->stored_size || (src->size && !src->data))
		return kimg_error_set(err, -KIMG_EFORMAT, img->offset, "payload: %llu bytes stored, %llu declared",
				      (unsigned long long)src->size, (unsigned long long)img->stored_size);
	switch (img->compression) {
	case KIMG_COMPRESS_NONE:
		/* The contract is "*out covers exactly img->size": hold a raw
		 * image to it too (found by fuzz_payload). */
		if (img->size != img->stored_size)
			return kimg_error_set(err, -KIMG_EFORMAT, img->offset, "payload: raw entry of %llu bytes declares %llu",
					      (unsigned long long)img->stored_size, (unsigned long long)img->size);
		*out = *src;
		return 0;
	case KIMG_COMPRESS_LEGACY:
		return kimg_error_set(err, -KIMG_ENOTSUP, img->offset, "payload: legacy fatbin compression (flag 0x1000)");
	case KIMG_COMPRESS_LZ4:
	case KIMG_COMPRESS_ZSTD:
		break;
	default:
		return kimg_error_set(err, -KIMG_EFORMAT, img->offset, "payload: compression %d", (int)img->compression);
	}
	if (img->size == 0)
		return kimg_error_set(err, -KIMG_ECODEC, img->offset, "payload: compressed entry declares size 0");
	int rc = kimg_payload_check_size(img, err);
	if (rc < 0)
		return rc;
	if (!dst || dst_cap < img->size)
		return kimg_error_set(err, -ENOBUFS, img->offset, "payload: buffer of %llu bytes for %llu",
				      (unsigned long long)dst_cap, (unsigned long long)img->size);

	if (img->compression == KIMG_COMPRESS_ZSTD) {
		size_t r;
		if (!codecs || !codecs->zstd_decompress || !codecs->zstd_is_error)
			return kimg_error_set(err, -KIMG_ENOCODEC, img->offset, "payload: zstd entry, libzstd not loaded");
		if (src->size < 4 || memcmp(src->data, zstd_magic, 4) != 0)
			return kimg_error_set(err, -KIMG_ECODEC, img->offset, "payload: zstd flag without a zstd frame");
		/* Capacity exactly the declared size: a longer output is an error. */
		r = codecs->zstd_decompress(dst, (size_t)img->size, src->data, (size_t)src->size);
		if (codecs->zstd_is_error(r) || r != img->size)
			return kimg_error_set(err, -KIMG_ECODEC, img->offset, "payload: zstd frame did not decode to %llu bytes",
					      (unsigned long long)img->size);
	} else {
		int r;
		if (!codecs || !codecs->lz4_decompress_safe)
			return kimg_error_set(err, -KIMG_ENOCODEC, img->offset, "payload: lz4 entry, liblz4 not loaded");
		/* LZ4_decompress_safe takes int sizes. */
		if (img->size > INT_MAX || src->size > INT_MAX)
			return kimg_error_set(err, -KIMG_ELIMIT, img->offset, "payload: lz4 block over INT_MAX");
		r = codecs->lz4_decompress_safe((const char *)src->data, dst, (int)src->size, (int)img->size);
		if (r < 0 || (uint64_t)r != img->size)
			return kimg_error_set(err, -KIMG_ECODEC, img->offset, "payload: lz4 block did not decode to %llu bytes",
					      (unsigned long long)img->size);
	}
	*out = kimg_span_make(dst, img->size);
	return 0;
}
