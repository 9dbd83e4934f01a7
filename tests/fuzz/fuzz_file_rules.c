/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer entry for core/file_rules.c: files of up to 16 modules of up to
 * 8 images each, built from the input bytes, judged on a device the first
 * bytes pick; the invariants of file_rules.h are checked on every result. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "file_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MODS 16
#define IMGS 8

static const uint16_t sms[] = { 50, 53, 61, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121 };
static const char *const names[] = { NULL, "libcublasLt.so.13", "libmine.so", "x/torch/lib/libtorch_cuda.so",
				     "libnccl.so.2", "a.out" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	struct kimg_image imgs[MODS][IMGS];
	struct kimg_file_module mods[MODS];
	struct kimg_module_judgement out[MODS];
	struct kimg_device dev;
	memset(&dev, 0, sizeof dev);
	memset(imgs, 0, sizeof imgs);
	dev.cc.sm = sms[data[0] % (sizeof sms / sizeof sms[0])];
	dev.driver_version = 11000 + (data[1] % 40) * 100;
	dev.force_ptx_jit = data[1] & 0x80;
	dev.disable_ptx_jit = data[1] & 0x40;
	unsigned flags = data[2] & 1 ? KIMG_FILE_STRICT : 0;
	const char *file = names[data[2] % (sizeof names / sizeof names[0])];
	size_t n = 0;
	for (size_t p = 3; p + 1 < size && n < MODS; p += 2) {
		uint8_t a = data[p], b = data[p + 1];
		if (n == 0 || (a & 0xc0) == 0xc0) { /* a new module */
			mods[n] = (struct kimg_file_module){ imgs[n], 0, (enum kimg_module_role)(b % KIMG_ROLE_COUNT) };
			n++;
			continue;
		}
		struct kimg_file_module *m = &mods[n - 1];
		if (m->n_imgs == IMGS)
			continue;
		struct kimg_image *img = &imgs[n - 1][m->n_imgs++];
		img->kind = (enum kimg_image_kind)(a % KIMG_IMAGE_KIND_COUNT);
		img->arch.sm = sms[b % (sizeof sms / sizeof sms[0])];
		img->arch.variant = (uint8_t)((a >> 2) % KIMG_VARIANT_COUNT);
		img->ptx_isa = (uint16_t)(600 + (b >> 4) * 20);
		img->flags = 0x11;
	}
	int fails = kimg_rules_judge_file(file, mods, n, &dev, flags, out);
	if (fails < 0 || (size_t)fails > n)
		abort();
	int counted = 0;
	for (size_t i = 0; i < n; i++) {
		const struct kimg_module_judgement *j = &out[i];
		if ((mods[i].role != KIMG_ROLE_LOADED) != (j->fate == KIMG_FATE_NOT_JUDGED))
			abort();
		if (j->fate == KIMG_FATE_DISPATCHED && (flags & KIMG_FILE_STRICT))
			abort();
		if (j->fate == KIMG_FATE_RUNS && j->verdict.outcome == KIMG_OUTCOME_CANNOT_RUN)
			abort();
		if (j->fate == KIMG_FATE_FAILS && j->verdict.expected_error == 0)
			abort();
		if ((j->fate == KIMG_FATE_DISPATCHED) != (j->rule && (!strcmp(j->rule, "F1") || !strcmp(j->rule, "F2"))))
			abort();
		counted += j->fate == KIMG_FATE_FAILS;
	}
	if (counted != fails)
		abort();
	return 0;
}
