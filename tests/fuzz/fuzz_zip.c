/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer entry for core/zip_dir.c (the central-directory parser) and
 * sys/zip.c (members stored or inflated through the real zlib, loaded as
 * the product loads it, with small limits so each run stays cheap). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zip.h"
#include "zip_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	kimg_zip_set_limits(1u << 20, 50);
	return 0;
}

static bool every_other_name(void *ctx, const char *name)
{
	(void)ctx;
	return strlen(name) % 2 == 0;
}

static bool head_has_byte(void *ctx, const char *name, struct kimg_span head)
{
	(void)ctx;
	(void)name;
	return head.size == 0 || head.data[0] != 0xff;
}

static int touch(void *ctx, const char *name, struct kimg_span bytes, const struct kimg_error *merr)
{
	unsigned *sum = ctx;
	/* read every delivered byte: ASan checks the span is real */
	for (uint64_t i = 0; i < bytes.size; i++)
		*sum += bytes.data[i];
	*sum += (unsigned)strlen(name) + (merr ? 1u : 0u);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kimg_span zip = kimg_span_make(data, size);
	struct kimg_zip_dir d;
	struct kimg_error err;
	unsigned sum = 0;
	if (kimg_zip_dir_open(zip, &d, &err) == 0) {
		uint64_t cursor = 0;
		struct kimg_zip_entry e;
		int n = 0;
		while (n++ < 100000 && kimg_zip_dir_next(&d, &cursor, &e, &err) == 1) {
			struct kimg_span body;
			if (kimg_zip_entry_data(&d, &e, &body, &err) == 0 && body.size)
				sum += body.data[0] + body.data[body.size - 1];
			sum += e.name.size ? e.name.data[0] : 0;
		}
	}
	struct kimg_zip_walk w = { (size & 1) ? every_other_name : NULL, head_has_byte, touch, &sum };
	kimg_zip_walk(zip, &w, &err);
	return sum == 0xdeadbeef; /* keeps sum alive */
}
