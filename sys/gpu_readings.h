/* SPDX-License-Identifier: Apache-2.0 */
/* Three readings of each GPU's compute capability, and what this process
 * can see.
 *
 * The driver's attributes (cuDeviceGetAttribute major/minor: what the
 * driver itself uses to pick an image), NVML
 * (nvmlDeviceGetCudaComputeCapability, libnvidia-ml.so.1 loaded at run
 * time) and kimg's GPU-name table (core/gpus.h, from the name the driver
 * reports). NVML lists every GPU of the machine; CUDA only those that
 * CUDA_VISIBLE_DEVICES and MIG leave visible: devices are matched by UUID
 * (cuDeviceGetUuid_v2 gives the MIG instance's UUID for a MIG device). */
#ifndef KIMG_SYS_GPU_READINGS_H
#define KIMG_SYS_GPU_READINGS_H

#include <stdbool.h>

#include "driver_query.h"

#define KIMG_GPU_READINGS_MAX 64

struct kimg_gpu_reading {
	int ordinal;              /* CUDA device index; -1: not visible to CUDA */
	int nvml_index;           /* NVML index of the physical GPU; -1: NVML does not list it */
	char name[96];            /* the driver's name, else NVML's */
	char uuid[80];            /* "GPU-..." or "MIG-..." as CUDA sees it (NVML's when not visible) */
	char parent_uuid[80];     /* MIG instance: its GPU's UUID; else "" */
	unsigned cc_driver;       /* SM number (90) from the driver's attributes; 0 unknown */
	unsigned cc_nvml;         /* from NVML; 0 unknown */
	unsigned cc_table;        /* from the name table; 0: name not in the table */
	bool tegra;
	int mig_mode;             /* NVML current MIG mode: 1 on, 0 off, -1 unknown */
};

struct kimg_gpu_inventory {
	struct kimg_driver_info driver;           /* cuda_version 0 when no driver */
	struct kimg_gpu_reading gpus[KIMG_GPU_READINGS_MAX];
	int n;                                    /* entries: CUDA-visible first, then NVML-only */
	int cuda_count;                           /* devices CUDA sees; -1 when the driver failed */
	char cuda_error[160];                     /* why not, or "" */
	int nvml_count;                           /* GPUs NVML lists; -1 when NVML is unavailable */
	char nvml_error[96];
	bool visible_set;                         /* CUDA_VISIBLE_DEVICES is set */
	char visible_devices[256];                /* its value */
};

/* Read everything; never fails as a whole: what could not be read is
 * said in cuda_error / nvml_error. */
void kimg_gpu_inventory_read(struct kimg_gpu_inventory *inv);

/* The readings disagree (among those that are known). */
bool kimg_gpu_reading_disagrees(const struct kimg_gpu_reading *g);

#endif
