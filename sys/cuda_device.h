/* SPDX-License-Identifier: Apache-2.0 */
/* One device's facts from the CUDA driver (sys/cuda_device.c): the one
 * device query of kimg-probe (sys/driver_query.c, for every device) and of
 * libkimg.so's diagnosis (shim/diag/device_query.c, for the device a
 * failure or a load is about).
 *
 * The driver's entry points come in as a table: the probe fills it from
 * the libcuda.so.1 it opens (kimg_driver_api_load), the shim from the real
 * functions its hooks layer resolved (shim/diag.h's kimg_driver_real), so
 * that nothing here opens the driver or looks a symbol up itself. */
#ifndef KIMG_SYS_CUDA_DEVICE_H
#define KIMG_SYS_CUDA_DEVICE_H

#include <stdbool.h>

#include "device.h"

/* CUresult (int) functions with cuda.h's signatures; a NULL member is an
 * entry point the driver lacks or the caller did not resolve. */
struct kimg_cu_api {
	int (*cuInit)(unsigned);
	int (*cuDriverGetVersion)(int *);
	int (*cuDeviceGetCount)(int *);
	int (*cuDeviceGet)(int *, int);
	int (*cuCtxGetDevice)(int *);
	int (*cuDeviceGetName)(char *, int, int);
	int (*cuDeviceGetAttribute)(int *, int, int);
	int (*cuDeviceGetUuid)(unsigned char *, int); /* _v2 where the driver has it */
};

/* The device a process is using: the current context's, else ordinal 0
 * (what the runtime picks first), as a CUdevice. Fails, asking nothing
 * else, while the driver is not initialised or shows no device
 * (cuDeviceGetCount first: CUDA_ERROR_NOT_INITIALIZED before cuInit).
 * Returns 0, the CUresult of the call that failed (100 for no device), or
 * -1 when an entry point is missing. */
int kimg_cu_current_device(const struct kimg_cu_api *api, int *dev);

/* The facts of CUdevice dev: compute capability (variant PLAIN), tegra
 * (the integrated attribute confirmed by the Tegra CC table, docs/rules.md
 * 2.1: GB10, 12.1, is integrated but runs desktop cubins), name ("" when
 * the driver gives none), driver_version (0 unknown), ordinal = dev. The
 * force/disable JIT flags are left false: they are the process's, which
 * the caller knows. *integrated (may be NULL) gets the raw attribute.
 * *out is written only on success. Returns 0, the CUresult of the failed
 * cuDeviceGetAttribute for the compute capability, or -1 without it. */
int kimg_cu_device_facts(const struct kimg_cu_api *api, int dev, struct kimg_device *out, bool *integrated);

#endif
