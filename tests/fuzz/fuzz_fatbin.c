/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer entry for core/fatbin.c and core/extent.c: open a container
 * at 0, walk every entry, and size the input as an in-memory image.
 * Each step works on an exact-size heap copy so ASan sees any over-read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	uint8_t *target = NULL;
	struct kimg_span in;
	struct kimg_fatbin fb;
	struct kimg_error err;
	const void *t;
	uint64_t n;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	in = kimg_span_make(copy, size);
	if (kimg_fatbin_open(in, 0, &fb, &err) == 0) {
		struct kimg_image img;
		uint64_t cursor = 0;
		int guard = 0;
		while (kimg_fatbin_next(&fb, &cursor, &img, &err) == 1 && ++guard < 100000) {
			char name[32];
			kimg_image_arch_name(&img, name, sizeof name);
			/* touch every span the parser hands out */
			if (img.payload.size)
				(void)*(volatile const uint8_t *)(img.payload.data + img.payload.size - 1);
			if (img.identifier.size)
				(void)*(volatile const uint8_t *)(img.identifier.data + img.identifier.size - 1);
			if (img.options.size)
				(void)*(volatile const uint8_t *)(img.options.data + img.options.size - 1);
		}
	}
	/* A wrapper holds an address: point it at a second buffer holding the
	 * rest of the input, sized `size` because the limit covers both. */
	if (size >= 24 && data[0] == 0xb1 && data[1] == 0x43 && data[2] == 0x62 && data[3] == 0x46) {
		target = calloc(1, size);
		if (!target) {
			free(copy);
			return 0;
		}
		memcpy(target, data + 24, size - 24);
		uint64_t addr = (uint64_t)(uintptr_t)target;
		memcpy(copy + 8, &addr, 8);
	}
	if (kimg_memory_image_extent(copy, size, &t, &n, &err) == 0 && n > size)
		abort(); /* the extent must stay within the limit */
	free(target);
	free(copy);
	return 0;
}
