/* SPDX-License-Identifier: Apache-2.0 */
/* CUDA runtime against driver (cuda_versions.h).
 *
 * Sources: NVIDIA, "CUDA Toolkit Release Notes", table "CUDA Toolkit and
 * Corresponding Driver Versions" (the GA driver of each toolkit, kept in
 * rules_tables.c as kimg_cuda_min_driver) and table "CUDA Toolkit and
 * Minimum Required Driver Version for CUDA Minor Version Compatibility"
 * (the floors below); NVIDIA, "CUDA Compatibility" guide, sections "Minor
 * Version Compatibility" (11.x and later: a runtime runs on any driver of
 * its major from the floor up, except PTX from the newer toolkit, 222, and
 * APIs newer than the driver, 36 cudaErrorCallRequiresNewerDriver) and
 * "Forward Compatibility" (the cuda-compat-X-Y package, data-center and
 * select RTX professional GPUs only; elsewhere cuInit gives 804; a compat
 * package that does not match the kernel module gives 803). */
#include "cuda_versions.h"

#include <stdio.h>

#include "rules.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* "CUDA Compatibility", Minor Version Compatibility, table 1 (13.x >= 580,
 * 12.x >= 525, 11.x >= 450) with the exact releases of the release notes'
 * minor-version table (11.x: 450.80.02 / 452.39, 12.x: 525.60.13 / 528.33). */
static const struct kimg_cuda_major_floor floors[] = {
	{ 11, "450.80.02", "452.39", "R450" },
	{ 12, "525.60.13", "528.33", "R525" },
	{ 13, "580", "580", "R580" },
};

int kimg_cuda_version_parse(const char *text)
{
	unsigned major, minor;
	char tail;
	if (!text || sscanf(text, "%u.%u%c", &major, &minor, &tail) != 2 || major == 0 || major > 99 || minor > 9)
		return -1;
	return (int)(major * 1000 + minor * 10);
}

const struct kimg_cuda_major_floor *kimg_cuda_major_floor(int major)
{
	for (size_t i = 0; i < ARRAY_SIZE(floors); i++)
		if (floors[i].major == major)
			return &floors[i];
	return NULL;
}

const struct kimg_cuda_major_floor *kimg_cuda_major_floor_at(unsigned index)
{
	return index < ARRAY_SIZE(floors) ? &floors[index] : NULL;
}

void kimg_runtime_judge(int runtime_major, int runtime_minor, int driver_version,
			struct kimg_runtime_verdict *v)
{
	const struct kimg_cuda_major_floor *f = kimg_cuda_major_floor(runtime_major);
	v->outcome = KIMG_RUNTIME_UNKNOWN;
	v->expected_error = 0;
	v->min_driver = f ? f->linux_driver : NULL;
	v->min_driver_windows = f ? f->windows_driver : NULL;
	v->branch = f ? f->branch : NULL;
	v->why = "the driver's or the runtime's CUDA version is not known";
	if (!f && runtime_major > 0 && runtime_minor >= 0)
		v->min_driver = kimg_cuda_min_driver(runtime_major * 1000 + runtime_minor * 10);
	if (runtime_major <= 0 || driver_version <= 0)
		return;
	int drv_major = driver_version / 1000, drv_minor = driver_version % 1000 / 10;
	if (drv_major > runtime_major ||
	    (drv_major == runtime_major && (runtime_minor < 0 || drv_minor >= runtime_minor))) {
		v->outcome = KIMG_RUNTIME_OK;
		v->why = runtime_minor < 0 && drv_major == runtime_major
				 ? "the driver is of the runtime's major version (minor-version compatibility covers every minor)"
				 : "the driver supports the runtime's CUDA version";
		return;
	}
	if (drv_major == runtime_major && f) {
		v->outcome = KIMG_RUNTIME_MINOR_COMPAT;
		v->why = "older minor of the same major: runs under minor-version compatibility, "
			 "but PTX built by the newer toolkit fails (222) and newer APIs return 36";
		return;
	}
	v->outcome = KIMG_RUNTIME_NEEDS_DRIVER;
	v->expected_error = 35;
	v->why = drv_major < runtime_major ? "the runtime is of a newer CUDA major than the driver supports"
					   : "before CUDA 11 a runtime needs a driver of at least its own version";
}

const char *kimg_cuda_compat_package(int major, int minor, char *buf, unsigned size)
{
	snprintf(buf, size, "cuda-compat-%d-%d", major, minor < 0 ? 0 : minor);
	return buf;
}
