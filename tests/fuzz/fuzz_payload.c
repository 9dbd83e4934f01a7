/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer entry for core/payload.c with the real libzstd / liblz4,
 * reached as the product reaches them (sys/codecs.c, dlopen).
 * A container input has each entry decoded; anything else is one
 * synthetic image: byte 0 picks the encoding, bytes 1-3 the declared size. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs.h"
#include "fatbin.h"
#include "payload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keep each run small: declared sizes above this are not decoded. */
#define FUZZ_DECODE_MAX (4u << 20)

static const struct kimg_codecs *codecs;

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Without both decoders the target would fuzz only the "no codec" path and
 * still look green: refuse to run instead. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	codecs = kimg_codecs_get();
	if (!codecs->zstd_decompress || !codecs->lz4_decompress_safe) {
		fprintf(stderr, "fuzz: libzstd.so.1 or liblz4.so.1 not loadable (scripts/setup-debian.sh installs them)\n");
		exit(1);
	}
	return 0;
}

static void decode(const struct kimg_image *img)
{
	uint64_t cap = img->size <= FUZZ_DECODE_MAX ? img->size : 0;
	uint8_t *dst = malloc(cap ? cap : 1);
	struct kimg_span out;
	if (!dst)
		return;
	if (kimg_payload_get(img, codecs, dst, cap, &out, NULL) == 0 && out.size != img->size)
		abort();
	free(dst);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct kimg_span in;
	struct kimg_fatbin fb;
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	in = kimg_span_make(copy, size);
	if (kimg_fatbin_open(in, 0, &fb, NULL) == 0) {
		struct kimg_image img;
		uint64_t cursor = 0;
		while (kimg_fatbin_next(&fb, &cursor, &img, NULL) == 1)
			decode(&img);
	} else if (size >= 4) {
		struct kimg_image img;
		memset(&img, 0, sizeof img);
		img.compression = (enum kimg_compression)(copy[0] % KIMG_COMPRESS_COUNT);
		img.size = (uint64_t)copy[1] | (uint64_t)copy[2] << 8 | (uint64_t)copy[3] << 16;
		img.payload = kimg_span_sub(&in, 4, size - 4);
		img.stored_size = img.payload.size;
		decode(&img);
	}
	free(copy);
	return 0;
}
