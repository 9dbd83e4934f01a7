/* SPDX-License-Identifier: Apache-2.0 */
/* CUDA runtime against driver: which driver a CUDA version needs, and what
 * a program gets when its runtime is newer than the driver.
 *
 * Facts as data (cuda_versions.c, with sources): the minimum driver per
 * CUDA major under minor-version compatibility, and the rule that a
 * runtime of a newer major than the driver fails with
 * cudaErrorInsufficientDriver (35). Pure: no I/O. */
#ifndef KIMG_CUDA_VERSIONS_H
#define KIMG_CUDA_VERSIONS_H

#include <stdbool.h>

/* A CUDA version as users write it, "MAJOR.MINOR" (12.4, 13.0), as
 * cuDriverGetVersion() gives it (12040); -1 for NULL or anything else
 * (a bare major, two digits of minor, a third part, trailing text, 0.x,
 * a major above 99). The one parser of --driver, doctor's and device
 * documents' CUDA versions. */
int kimg_cuda_version_parse(const char *text);

/* Minor-version compatibility floor of a CUDA major (Linux x86-64 and
 * Windows drivers): every 12.x runtime runs on a driver >= 525.60.13. */
struct kimg_cuda_major_floor {
	int major;                 /* 11, 12, 13 */
	const char *linux_driver;  /* "580.65.06" */
	const char *windows_driver;/* "580.88" */
	const char *branch;        /* "R580": the driver branch to ask for */
};

/* Row for a CUDA major, NULL when the major has no minor-version
 * compatibility (CUDA 10 and older) or is unknown. */
const struct kimg_cuda_major_floor *kimg_cuda_major_floor(int major);
/* Table access for listing and tests: NULL past the end. */
const struct kimg_cuda_major_floor *kimg_cuda_major_floor_at(unsigned index);

enum kimg_runtime_outcome {
	KIMG_RUNTIME_OK = 0,          /* the driver's CUDA version is at least the runtime's */
	KIMG_RUNTIME_MINOR_COMPAT,    /* same major, older minor: runs under minor-version
	                                 compatibility; PTX built by the newer toolkit
	                                 fails with 222, newer APIs with 36 */
	KIMG_RUNTIME_NEEDS_DRIVER,    /* newer major (or pre-11 newer minor): error 35 */
	KIMG_RUNTIME_UNKNOWN,         /* driver or runtime version not known */
};

struct kimg_runtime_verdict {
	enum kimg_runtime_outcome outcome;
	int expected_error;          /* 35 for NEEDS_DRIVER, 0 otherwise */
	const char *min_driver;      /* Linux driver the runtime needs: the major's floor,
	                                or that release's own driver before CUDA 11; NULL unknown */
	const char *min_driver_windows;
	const char *branch;          /* "R580" or NULL */
	const char *why;             /* one sentence, no trailing period */
};

/* Judge a runtime of CUDA `runtime_major`.`runtime_minor` (minor -1: only
 * the major is known, as from a soname "libcudart.so.13") against a driver
 * whose cuDriverGetVersion() is driver_version (12020 for 12.2; 0 =
 * unknown). Never fails; UNKNOWN when a version is missing. */
void kimg_runtime_judge(int runtime_major, int runtime_minor, int driver_version,
			struct kimg_runtime_verdict *v);

/* The forward-compatibility package for a CUDA version: "cuda-compat-13-0"
 * (minor -1 gives "cuda-compat-13-0" too: the .0 of that major). Writes
 * into buf; returns buf. */
const char *kimg_cuda_compat_package(int major, int minor, char *buf, unsigned size);

#endif
