/* SPDX-License-Identifier: Apache-2.0 */
/* Device facts from the NVIDIA driver loaded at run time.
 *
 * libcuda.so.1 is dlopen'ed, never linked, so kimg-probe runs (and scans)
 * on machines without a driver; only `device` and `check --sm native` need
 * one. The release string ("580.159.04") comes from NVML, else from
 * /proc/driver/nvidia/version. */
#ifndef KIMG_SYS_DRIVER_QUERY_H
#define KIMG_SYS_DRIVER_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_device.h"
#include "device.h"
#include "error.h"

struct kimg_driver_info {
	int cuda_version;      /* cuDriverGetVersion(): 13000 for CUDA 13.0 */
	uint16_t max_ptx_isa;  /* newest PTX ISA its JIT accepts (kimg_driver_max_ptx_isa), 0 unknown */
	char release[32];      /* "580.159.04", "" when neither NVML nor procfs says (gpu_readings.c) */
	int device_count;      /* GPUs the driver reports (may exceed the caller's array) */
	bool integrated[16];   /* CU_DEVICE_ATTRIBUTE_INTEGRATED of the first 16 devices */
};

/* Query the driver. Fills info (all but the release, left "": the driver
 * does not say it, and NVML, which does, is not started here, so a caller
 * that wants the devices does not wait for it) and up to `cap` devices
 * (ordinal, name, CC, tegra, driver_version; force/disable_ptx_jit from
 * this process's CUDA_FORCE_PTX_JIT / CUDA_DISABLE_PTX_JIT). Returns the
 * number of devices written, or a negative error with a one-line reason in
 * err:
 *   -ENOENT  libcuda.so.1 cannot be loaded (no NVIDIA driver)
 *   -ENODEV  cuInit failed (message names the CUresult) or no GPU present
 *   -ENOSYS  the library lacks a needed entry point
 * `tegra` is the integrated attribute confirmed by the Tegra CC table
 * (docs/rules.md 2.1): GB10 (12.1) is integrated but runs desktop cubins.
 * The release comes with NVML's readings (sys/gpu_readings.c). */
int kimg_driver_devices(struct kimg_driver_info *info, struct kimg_device *devs, size_t cap,
			struct kimg_error *err);

/* The driver's release from /proc/driver/nvidia/version into out, left
 * as it is when procfs does not say (hidden in containers: NVML's answer
 * is asked first, sys/gpu_readings.c). */
void kimg_driver_release_from_proc(char *out, size_t size);

/* The GPUs `check --sm native` judges for: kimg_driver_devices' answer,
 * without cuInit (a quarter of a second and more) where NVML gives the
 * same one (kimg_nvml_uniform_gpus) and libcuda its version; else, or
 * with ask_driver, kimg_driver_devices itself. Same return and errors. */
int kimg_native_devices(struct kimg_device *devs, size_t cap, bool ask_driver, struct kimg_error *err);

/* libcuda.so.1's entry points for kimg_cu_device_facts and the probe's
 * other driver questions (sys/gpu_readings.c: the UUIDs), loaded once and
 * kept. Returns 0 with *api set, or -ENOENT / -ENOSYS as kimg_driver_devices
 * (the same messages), *api NULL. */
int kimg_driver_api_load(const struct kimg_cu_api **api, struct kimg_error *err);

/* The release from /proc/driver/nvidia/version text: the first token shaped
 * like N.N or N.N.N ("580.159.04"). Returns 0, or -KIMG_ENOTFOUND. Pure. */
int kimg_driver_parse_proc_version(const char *text, char *out, size_t size);

#endif
