/* SPDX-License-Identifier: Apache-2.0 */
/* GPU product names -> compute capability (docs/rules.md section 6). */
#ifndef KIMG_GPUS_H
#define KIMG_GPUS_H

#include "arch.h"

struct kimg_gpu {
	const char *name;      /* canonical: "GeForce RTX 4060 Ti" */
	uint16_t sm;           /* 89 */
	bool tegra;
	const char *family;    /* "Ada" */
};

/* Case-insensitive match ignoring "NVIDIA", "GeForce", "Tesla", "Quadro"
 * prefixes and spacing/hyphens ("rtx4060ti", "RTX 4060 Ti" and
 * "NVIDIA GeForce RTX 4060 Ti" all match). Longest / exact match wins, so
 * "RTX 4060 Ti" is not "RTX 4060". NULL when unknown. */
const struct kimg_gpu *kimg_gpu_lookup(const char *name);

/* True for a compute capability some NVIDIA GPU or nvcc target has
 * (SM number: 86 for 8.6); "86.0" is none, so a typo is caught. */
bool kimg_cc_is_known(unsigned sm);

/* Table access for listing: returns NULL past the end. */
const struct kimg_gpu *kimg_gpu_at(size_t index);

#endif
