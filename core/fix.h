/* SPDX-License-Identifier: Apache-2.0 */
/* The fix generator: turns a failed verdict into build settings. */
#ifndef KIMG_FIX_H
#define KIMG_FIX_H

#include "device.h"
#include "rules.h"

struct kimg_fix {
	/* Build settings: the module's current targets plus what the device
	 * needs (sm_80 module on 9.0: "sm_80 + sm_90 + compute_90"), in SM order. */
	char nvcc[1024];         /* "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 ..." */
	char cmake[256];         /* CMAKE_CUDA_ARCHITECTURES value: "80-real;90" */
	char torch_arch_list[256]; /* TORCH_CUDA_ARCH_LIST value: "8.0;9.0+PTX" */
	int min_toolkit;         /* first CUDA version that can build it: 11080 */
	int max_toolkit;         /* last CUDA version that can (0 = current) */
	char min_driver[24];     /* Linux driver needed to run that toolkit's output */
	char wheel[128];         /* PyTorch wheel advice, e.g. "cu126 wheels (CC 5.0-7.0)";
	                            empty for a file that is not PyTorch's (kimg_fix_for_file) */
	char advice[256];        /* one sentence naming the case (S3, Tegra, 222 ...) */
};

/* Fill *fix for the device and the module verdict. Returns 0, or
 * -KIMG_ENOTFOUND when the device's CC is outside the tables. The module's
 * file is not known here: the PyTorch wheel line is always given. */
int kimg_fix_for(const struct kimg_device *dev, const struct kimg_module_verdict *verdict,
		 const struct kimg_image *imgs, size_t n, struct kimg_fix *fix);

/* kimg_fix_for for a module of `file` (a path or name; NULL: unknown, as
 * kimg_fix_for): the wheel line only when kimg_file_is_pytorch(file); any
 * other module gets the rebuild settings and advice alone. */
int kimg_fix_for_file(const struct kimg_device *dev, const struct kimg_module_verdict *verdict,
		      const struct kimg_image *imgs, size_t n, const char *file, struct kimg_fix *fix);

/* PyTorch's own library: under torch/lib/, or named libtorch*, libc10*, libcaffe2*. */
bool kimg_file_is_pytorch(const char *file);

#endif
