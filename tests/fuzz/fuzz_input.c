/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer entry for core/input.c, input_elf.c, archive.c: classify,
 * walk every module, and walk the entries of each fatbin module. The low
 * bit of the last input byte turns on KIMG_INPUT_SCAN_DATA (the data-section
 * search of --deep): the byte stays part of the input, so the seeds parse
 * as they are and the fuzzer reaches both walks by flipping one bit.
 * Every input is walked twice: as is, and with its runs of zero bytes
 * declared as known zero ranges (the holes of a sparse file): both walks
 * must find the same modules with the same error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fatbin.h"
#include "input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_module(void *ctx, const struct kimg_module_ref *m)
{
	const struct kimg_span *in = ctx;
	/* the module must lie inside the input at its offset */
	if (m->bytes.data != in->data + m->offset || m->offset > in->size || m->bytes.size > in->size - m->offset)
		abort();
	if (m->section)
		(void)strlen(m->section);
	if (m->member)
		(void)strlen(m->member);
	if (m->kind == KIMG_INPUT_FATBIN) {
		struct kimg_fatbin fb;
		struct kimg_image img;
		uint64_t cursor = 0;
		if (kimg_fatbin_open(m->bytes, 0, &fb, NULL) < 0)
			abort(); /* the walk yields only containers that open */
		while (kimg_fatbin_next(&fb, &cursor, &img, NULL) == 1)
			;
	}
	return 0;
}

static int thin_member(void *ctx, const char *path, uint64_t size)
{
	(void)ctx;
	(void)size;
	if (strlen(path) > 255)
		abort(); /* names are bounded by AR_NAME_MAX */
	return 0;
}

struct counted {
	struct kimg_span in;
	unsigned n;
	uint64_t sum; /* of offsets and sizes: the same modules, not just as many */
};

static int on_module_counted(void *ctx, const struct kimg_module_ref *m)
{
	struct counted *c = ctx;
	on_module(&c->in, m);
	c->n++;
	c->sum += m->offset * 31 + m->bytes.size;
	return 0;
}

/* Runs of at least 16 zero bytes, the way SEEK_HOLE would report them. */
#define ZERO_RANGES_MAX 256
static size_t zero_runs(struct kimg_span in, struct kimg_zero_range *r)
{
	size_t n = 0;
	for (uint64_t i = 0; i < in.size && n < ZERO_RANGES_MAX;) {
		if (in.data[i] != 0) {
			i++;
			continue;
		}
		uint64_t j = i;
		while (j < in.size && in.data[j] == 0)
			j++;
		if (j - i >= 16) {
			r[n].start = i;
			r[n].end = j;
			n++;
		}
		i = j;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct kimg_span in;
	struct kimg_error err;
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	in = kimg_span_make(copy, size);
	unsigned flags = size && (data[size - 1] & 1) ? KIMG_INPUT_SCAN_DATA : 0;
	enum kimg_input_kind whole = kimg_input_classify(in), head_kind;
	(void)kimg_input_kind_name(whole);
	/* A head that decides decides as the whole file (the walk's prefilter). */
	size_t cut = size ? data[0] * size / 256 : 0;
	if (kimg_input_classify_head(kimg_span_make(copy, cut), cut == size, &head_kind) && head_kind != whole)
		abort();
	/* thin archives: member listing (the names must be NUL-terminated) */
	(void)kimg_thin_archive_for_each_member(in, thin_member, NULL, &err);
	struct counted plain = { in, 0, 0 }, holed = { in, 0, 0 };
	int rc = kimg_input_for_each_module_ex(in, flags, on_module_counted, &plain, &err);
	if (rc < 0 && err.code >= 0)
		abort(); /* a failure always carries its code */
	static struct kimg_zero_range runs[ZERO_RANGES_MAX];
	struct kimg_zero_ranges zeros = { runs, zero_runs(in, runs) };
	struct kimg_error err2;
	int rc2 = kimg_input_for_each_module_zeros(in, flags, &zeros, on_module_counted, &holed, &err2);
	if (rc2 != rc || holed.n != plain.n || holed.sum != plain.sum || err2.code != err.code)
		abort(); /* known zeros change nothing but what is read */
	free(copy);
	return 0;
}
