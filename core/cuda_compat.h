/* SPDX-License-Identifier: Apache-2.0 */
/* CUDA forward-compatibility libraries (the cuda-compat-X-Y package:
 * /usr/local/cuda-X.Y/compat/libcuda.so.<driver version>) as an image
 * carries them, judged against a target's driver.
 *
 * Facts (NVIDIA, "CUDA Compatibility", forward compatibility section):
 * the compat libcuda is the user-mode driver of a newer branch; loaded in
 * place of the host's (LD_LIBRARY_PATH naming its directory, or the NVIDIA
 * container toolkit's compat mount, which since toolkit 1.17 mounts it only
 * when it is newer than the host driver), it lets an older kernel driver
 * run that newer CUDA, on data-center GPUs (and a few others); on other
 * GPUs cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804).
 * Loaded over a kernel driver of a newer branch, the two mismatch:
 * CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803). Pure. */
#ifndef KIMG_CUDA_COMPAT_H
#define KIMG_CUDA_COMPAT_H

#include <stdbool.h>

enum kimg_compat_outcome {
	KIMG_COMPAT_FORWARD = 0,     /* newer than the driver: gives its CUDA version on data-center GPUs (else 804) */
	KIMG_COMPAT_NOT_NEEDED,      /* the same CUDA version as the driver: nothing gained */
	KIMG_COMPAT_OLDER,           /* older than the driver: the toolkit leaves it out; loaded anyway, 803 */
	KIMG_COMPAT_UNKNOWN,         /* no driver known, or a branch outside kimg's table */
	KIMG_COMPAT_OUTCOME_COUNT
};

struct kimg_compat_lib {
	char driver[32];             /* "580.65.06" */
	int branch;                  /* 580 */
	int cuda_version;            /* 13000: the CUDA version that branch reports; 0 unknown */
};

/* Is `path` ("/usr/local/cuda-13.0/compat/libcuda.so.580.65.06") a compat
 * libcuda? Fills *lib from the version in its name. */
bool kimg_compat_lib_identify(const char *path, struct kimg_compat_lib *lib);

/* The compat library against a driver of CUDA version driver_version
 * (12040; 0 unknown). */
enum kimg_compat_outcome kimg_compat_judge(const struct kimg_compat_lib *lib, int driver_version);
/* Stable JSON names: "forward_compatibility", "not_needed", "older_than_driver", "unknown". */
const char *kimg_compat_outcome_name(enum kimg_compat_outcome o);

#endif
