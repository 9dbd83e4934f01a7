/* The fix generator: turns a failed verdict into build settings. */
#ifndef KIMG_FIX_H
#define KIMG_FIX_H

#include "device.h"
#include "rules.h"

struct kimg_fix {
	char nvcc[160];          /* "-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90" */
	char cmake[48];          /* CMAKE_CUDA_ARCHITECTURES value: "90" */
	char torch_arch_list[32];/* TORCH_CUDA_ARCH_LIST value: "9.0" or "9.0+PTX" */
	int min_toolkit;         /* first CUDA version that can build it: 11080 */
	int max_toolkit;         /* last CUDA version that can (0 = current) */
	char min_driver[24];     /* Linux driver needed to run that toolkit's output */
	char wheel[128];         /* PyTorch wheel advice, e.g. "cu126 wheels (CC 5.0-7.0)" */
	char advice[256];        /* one sentence naming the case (S3, Tegra, 222 ...) */
};

/* Fill *fix for the device and the module verdict. Returns 0, or
 * -KIMG_ENOTFOUND when the device's CC is outside the tables. */
int kimg_fix_for(const struct kimg_device *dev, const struct kimg_module_verdict *verdict,
		 const struct kimg_image *imgs, size_t n, struct kimg_fix *fix);

#endif
