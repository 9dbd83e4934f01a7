/* SPDX-License-Identifier: Apache-2.0 */
/* NVML (libnvidia-ml.so.1), opened on first use through sys/lazylib.h and
 * kept: the driver release (sys/driver_query.c), every GPU of the machine
 * (sys/gpu_readings.c), and the device a process will use before CUDA is
 * initialised (libkimg.so's load checks, shim/diag/device_query.c). NVML
 * answers without cuInit, so asking it changes nothing in the process. */
#ifndef KIMG_SYS_NVML_H
#define KIMG_SYS_NVML_H

#include <stdbool.h>

#include "device.h"

/* The entry points kimg uses (nvml.h signatures, nvmlReturn_t as int);
 * each NULL where the library lacks it. */
struct kimg_nvml_api {
	int (*init)(void);                                  /* nvmlInit_v2 */
	int (*shutdown)(void);                              /* nvmlShutdown */
	int (*driver_version)(char *, unsigned);            /* nvmlSystemGetDriverVersion: "580.159.04" */
	int (*cuda_driver_version)(int *);                  /* nvmlSystemGetCudaDriverVersion_v2, else v1 */
	int (*count)(unsigned *);                           /* nvmlDeviceGetCount_v2 */
	int (*by_index)(unsigned, void **);                 /* nvmlDeviceGetHandleByIndex_v2 */
	int (*by_uuid)(const char *, void **);              /* nvmlDeviceGetHandleByUUID */
	int (*name)(void *, char *, unsigned);              /* nvmlDeviceGetName */
	int (*uuid)(void *, char *, unsigned);              /* nvmlDeviceGetUUID */
	int (*cc)(void *, int *, int *);                    /* nvmlDeviceGetCudaComputeCapability */
	int (*mig_mode)(void *, unsigned *, unsigned *);    /* nvmlDeviceGetMigMode */
	int (*mig_count)(void *, unsigned *);               /* nvmlDeviceGetMaxMigDeviceCount */
	int (*mig_handle)(void *, unsigned, void **);       /* nvmlDeviceGetMigDeviceHandleByIndex */
};

/* The table, loaded once (thread safe); NULL when libnvidia-ml.so.1
 * cannot be loaded. Never freed. */
const struct kimg_nvml_api *kimg_nvml(void);

/* The device CUDA will use first, asked of NVML: the first entry of
 * CUDA_VISIBLE_DEVICES (an index or a GPU- UUID), else index 0. NVML
 * orders by PCI bus, CUDA fastest first: on a machine with different GPUs
 * and no CUDA_VISIBLE_DEVICES the two may differ (libkimg.7 says so).
 * Fills cc, driver_version (the CUDA version NVML reports, 0 unknown),
 * name, ordinal 0, tegra false (NVML is not on Tegra). NVML stays
 * initialised. False when NVML cannot say, or no device is visible. */
bool kimg_nvml_first_visible_device(struct kimg_device *d);

/* Every GPU NVML sees, when CUDA would see the same GPUs and the order
 * cannot matter: CUDA_VISIBLE_DEVICES unset, no GPU in MIG mode, all of
 * one name and compute capability, none in the Tegra table (whose
 * integrated flag only the CUDA driver gives). Fills up to cap devices
 * (name, cc, ordinal; tegra false, driver_version 0: the caller asks
 * libcuda, whose version a cuda-compat package may raise above NVML's).
 * Returns the count, or -1 when NVML cannot say that much (then cuInit
 * must answer). NVML is shut down again. */
int kimg_nvml_uniform_gpus(struct kimg_device *devs, size_t cap);

#endif
