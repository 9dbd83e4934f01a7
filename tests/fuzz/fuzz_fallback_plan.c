/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer entry for core/fallback_plan.c: any input is walked as a
 * module (fatbin, cubin, PTX text, host ELF: the first module), planned
 * for a device taken from the last 3 bytes (SM, driver, switches) in both
 * modes, and, when the plan rewrites, built with the real zstd / lz4 (dlopen, as the product).
 * Invariants: a REWRITE plan names a PTX image; the built text is exactly
 * out_len bytes, NUL-terminated. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "fallback_plan.h"
#include "codecs.h"
#include "fatbin.h"
#include "input.h"
#include "ptx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_IMGS 32
#define FUZZ_BUILD_MAX (4u << 20)

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

struct walk {
	struct kimg_image imgs[MAX_IMGS];
	size_t n;
};

static int on_module(void *ctx, const struct kimg_module_ref *ref)
{
	struct walk *w = ctx;
	struct kimg_error err = { 0 };
	if (ref->kind == KIMG_INPUT_FATBIN) {
		struct kimg_fatbin fb;
		uint64_t cursor = 0;
		if (kimg_fatbin_open(ref->bytes, 0, &fb, &err) == 0)
			while (w->n < MAX_IMGS && kimg_fatbin_next(&fb, &cursor, &w->imgs[w->n], &err) == 1)
				w->n++;
	} else if (ref->kind == KIMG_INPUT_PTX) {
		struct kimg_ptx_info pi;
		if (kimg_ptx_parse(ref->bytes, &pi, &err) == 0) {
			memset(&w->imgs[0], 0, sizeof w->imgs[0]);
			w->imgs[0].kind = KIMG_IMAGE_PTX;
			w->imgs[0].arch = pi.target;
			w->imgs[0].ptx_isa = pi.isa;
			w->imgs[0].payload = ref->bytes;
			w->imgs[0].size = w->imgs[0].stored_size = ref->bytes.size;
			w->n = 1;
		}
	}
	return 1; /* the first module only, as a load */
}

static void build(const struct kimg_image *img, const struct kimg_fallback_plan *p)
{
	uint64_t scratch_cap;
	size_t out_cap, len = 0;
	if (kimg_fallback_sizes(img, &scratch_cap, &out_cap) < 0 || scratch_cap > FUZZ_BUILD_MAX ||
	    out_cap > FUZZ_BUILD_MAX)
		return;
	void *scratch = malloc(scratch_cap ? scratch_cap : 1);
	char *out = malloc(out_cap);
	if (scratch && out &&
	    kimg_fallback_build(img, p, codecs, scratch, scratch_cap, out, out_cap, &len, NULL, NULL) == 0 &&
	    (len >= out_cap || out[len] != '\0'))
		abort();
	free(scratch);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	uint8_t *copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct walk w;
	struct kimg_error err = { 0 };
	struct kimg_device dev;
	memset(&w, 0, sizeof w);
	memset(&dev, 0, sizeof dev);
	const uint8_t *tail = data + size - 3;
	dev.cc.sm = (uint16_t)(30 + tail[0] % 100);
	dev.driver_version = 11000 + (tail[1] % 30) * 100;
	dev.disable_ptx_jit = tail[2] & 1;
	dev.force_ptx_jit = (tail[2] >> 1) & 1;
	kimg_input_for_each_module(kimg_span_make(copy, size), on_module, &w, &err);
	for (int mode = 0; mode < KIMG_FALLBACK_MODE_COUNT; mode++) {
		struct kimg_fallback_plan p;
		if (kimg_fallback_plan(w.imgs, w.n, &dev, (enum kimg_fallback_mode)mode, &p) != 0)
			abort();
		if (p.outcome == KIMG_FALLBACK_OUTCOME_REWRITE) {
			if (p.image < 0 || (size_t)p.image >= w.n || w.imgs[p.image].kind != KIMG_IMAGE_PTX)
				abort();
			build(&w.imgs[p.image], &p);
		}
	}
	free(copy);
	return 0;
}
