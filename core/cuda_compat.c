/* SPDX-License-Identifier: Apache-2.0 */
/* Compat libcuda in an image (cuda_compat.h): its version from its name,
 * its CUDA version from the driver-branch table (core/nvidia_require.c). */
#include "cuda_compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvidia_require.h"

bool kimg_compat_lib_identify(const char *path, struct kimg_compat_lib *lib)
{
	const char *base = strrchr(path, '/');
	if (!base || base - path < 7 || strncmp(base - 7, "/compat", 7) != 0)
		return false;
	base++;
	if (strncmp(base, "libcuda.so.", 11) != 0)
		return false;
	const char *v = base + 11;
	/* "580.65.06": a driver version (three parts, the first a branch) */
	if (strspn(v, "0123456789.") != strlen(v) || !strchr(v, '.') || strlen(v) >= sizeof lib->driver)
		return false;
	memset(lib, 0, sizeof *lib);
	snprintf(lib->driver, sizeof lib->driver, "%s", v);
	lib->branch = atoi(v);
	if (lib->branch < 100)
		return false; /* libcuda.so.1: the soname link, not a versioned driver */
	lib->cuda_version = kimg_require_branch_cuda(lib->branch);
	return true;
}

enum kimg_compat_outcome kimg_compat_judge(const struct kimg_compat_lib *lib, int driver_version)
{
	if (!driver_version || !lib->cuda_version)
		return KIMG_COMPAT_UNKNOWN;
	if (lib->cuda_version > driver_version)
		return KIMG_COMPAT_FORWARD;
	return lib->cuda_version == driver_version ? KIMG_COMPAT_NOT_NEEDED : KIMG_COMPAT_OLDER;
}

const char *kimg_compat_outcome_name(enum kimg_compat_outcome o)
{
	static const char *const names[KIMG_COMPAT_OUTCOME_COUNT] = {
		[KIMG_COMPAT_FORWARD] = "forward_compatibility",
		[KIMG_COMPAT_NOT_NEEDED] = "not_needed",
		[KIMG_COMPAT_OLDER] = "older_than_driver",
		[KIMG_COMPAT_UNKNOWN] = "unknown",
	};
	return o < KIMG_COMPAT_OUTCOME_COUNT ? names[o] : "unknown";
}
