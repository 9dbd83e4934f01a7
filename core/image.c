/* SPDX-License-Identifier: Apache-2.0 */
/* Names for the image model (core/image.h). */
#include "image.h"

#include <string.h>

static const char *const kind_names[KIMG_IMAGE_KIND_COUNT] = {
	[KIMG_IMAGE_SASS] = "sass",
	[KIMG_IMAGE_PTX] = "ptx",
	[KIMG_IMAGE_LTOIR] = "ltoir",
	[KIMG_IMAGE_UNKNOWN] = "unknown",
};

/* Prefix of the target name as nvcc spells it for each kind. */
static const char *const kind_prefixes[KIMG_IMAGE_KIND_COUNT] = {
	[KIMG_IMAGE_SASS] = "sm_",
	[KIMG_IMAGE_PTX] = "compute_",
	[KIMG_IMAGE_LTOIR] = "lto_",
	[KIMG_IMAGE_UNKNOWN] = "unknown_",
};

static const char *const compression_names[KIMG_COMPRESS_COUNT] = {
	[KIMG_COMPRESS_NONE] = NULL,
	[KIMG_COMPRESS_LZ4] = "lz4",
	[KIMG_COMPRESS_ZSTD] = "zstd",
	[KIMG_COMPRESS_LEGACY] = "legacy",
};

static const char *const variant_suffixes[KIMG_VARIANT_COUNT] = {
	[KIMG_VARIANT_PLAIN] = "",
	[KIMG_VARIANT_A] = "a",
	[KIMG_VARIANT_F] = "f",
};

const char *kimg_image_kind_name(enum kimg_image_kind kind)
{
	return (unsigned)kind < KIMG_IMAGE_KIND_COUNT ? kind_names[kind] : "unknown";
}

const char *kimg_compression_name(enum kimg_compression c)
{
	return (unsigned)c < KIMG_COMPRESS_COUNT ? compression_names[c] : "unknown";
}

/* "%s%u%s" of prefix, sm and suffix, with snprintf's result and truncation,
 * made by hand: a scan names every image (5,737 in cuBLASLt), and snprintf
 * was an eighth of the scan's instructions. */
int kimg_image_arch_name(const struct kimg_image *img, char *buf, size_t size)
{
	unsigned k = (unsigned)img->kind < KIMG_IMAGE_KIND_COUNT ? (unsigned)img->kind : KIMG_IMAGE_UNKNOWN;
	const char *suffix = img->arch.variant < KIMG_VARIANT_COUNT ? variant_suffixes[img->arch.variant] : "?";
	char name[32], digits[8];
	size_t len = strlen(kind_prefixes[k]), nd = 0;
	unsigned sm = img->arch.sm;
	memcpy(name, kind_prefixes[k], len);
	do
		digits[nd++] = (char)('0' + sm % 10);
	while ((sm /= 10) != 0);
	while (nd)
		name[len++] = digits[--nd];
	for (; *suffix; suffix++)
		name[len++] = *suffix;
	if (size) {
		size_t n = len < size - 1 ? len : size - 1;
		memcpy(buf, name, n);
		buf[n] = '\0';
	}
	return (int)len;
}
