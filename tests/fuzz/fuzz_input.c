/* libFuzzer entry for core/input.c, input_elf.c, archive.c: classify,
 * walk every module, and walk the entries of each fatbin module. The low
 * bit of the last input byte turns on KIMG_INPUT_SCAN_DATA (the data-section
 * search of --deep): the byte stays part of the input, so the seeds parse
 * as they are and the fuzzer reaches both walks by flipping one bit. */
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
	(void)kimg_input_kind_name(kimg_input_classify(in));
	if (kimg_input_for_each_module_ex(in, flags, on_module, &in, &err) < 0 && err.code >= 0)
		abort(); /* a failure always carries its code */
	free(copy);
	return 0;
}
