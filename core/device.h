/* SPDX-License-Identifier: Apache-2.0 */
/* What the rules need to know about a GPU and its driver. Filled by the
 * front ends (from the driver, or from a user's --sm list); the core never
 * queries anything itself. */
#ifndef KIMG_DEVICE_H
#define KIMG_DEVICE_H

#include "arch.h"

struct kimg_device {
	struct kimg_arch cc;      /* compute capability as an SM number, variant PLAIN */
	bool tegra;               /* integrated (Jetson): cubins never cross iGPU/dGPU */
	int driver_version;       /* cuDriverGetVersion(): 1000 * major + 10 * minor; 0 = unknown */
	bool force_ptx_jit;       /* CUDA_FORCE_PTX_JIT=1 (or CUDA_FORCE_JIT) */
	bool disable_ptx_jit;     /* CUDA_DISABLE_PTX_JIT=1 (or CUDA_DISABLE_JIT) */
	int ordinal;              /* device index, -1 when hypothetical */
	char name[96];            /* "NVIDIA H200", or the user's token */
};

#endif
