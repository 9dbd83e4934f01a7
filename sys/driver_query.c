/* SPDX-License-Identifier: Apache-2.0 */
#include "driver_query.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_errors.h"
#include "lazylib.h"
#include "nvml.h"
#include "rules.h"

/* libcuda.so.1, opened once and kept: the driver is not built to be
 * unloaded. Required: what every query needs; the others may be missing
 * from an old driver. */
static struct kimg_cu_api cu;
static const struct kimg_lazy_fn cu_fns[] = {
	KIMG_LAZY_FN("cuInit", cu.cuInit),
	KIMG_LAZY_FN("cuDriverGetVersion", cu.cuDriverGetVersion),
	KIMG_LAZY_FN("cuDeviceGetCount", cu.cuDeviceGetCount),
	KIMG_LAZY_FN("cuDeviceGet", cu.cuDeviceGet),
	KIMG_LAZY_FN("cuDeviceGetName", cu.cuDeviceGetName),
	KIMG_LAZY_FN("cuDeviceGetAttribute", cu.cuDeviceGetAttribute),
	KIMG_LAZY_FN_OPTIONAL("cuCtxGetDevice", cu.cuCtxGetDevice),
	KIMG_LAZY_FN_OPTIONAL("cuDeviceGetUuid_v2", cu.cuDeviceGetUuid),
	KIMG_LAZY_FN_OPTIONAL("cuDeviceGetUuid", cu.cuDeviceGetUuid),
};
static struct kimg_lazylib libcuda = {
	.sonames = { "libcuda.so.1" }, .flags = RTLD_NOW, .fns = cu_fns,
	.n_fns = sizeof cu_fns / sizeof cu_fns[0], .once = PTHREAD_ONCE_INIT,
};

int kimg_driver_api_load(const struct kimg_cu_api **api, struct kimg_error *err)
{
	*api = NULL;
	if (!kimg_lazylib_load(&libcuda)) {
		if (libcuda.state == -1)
			return kimg_error_set(err, -ENOENT, 0,
					      "cannot load libcuda.so.1: no NVIDIA driver installed or visible");
		return kimg_error_set(err, -ENOSYS, 0, "libcuda.so.1 lacks a driver entry point (cuInit ...)");
	}
	*api = &cu;
	return 0;
}

int kimg_driver_parse_proc_version(const char *text, char *out, size_t size)
{
	const char *p = text;
	while (p && *p) {
		while (*p && isspace((unsigned char)*p))
			p++;
		const char *start = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		size_t len = (size_t)(p - start), dots = 0;
		bool shaped = len > 0 && isdigit((unsigned char)start[0]) && isdigit((unsigned char)start[len - 1]);
		for (size_t i = 0; shaped && i < len; i++) {
			if (start[i] == '.')
				dots++;
			else if (!isdigit((unsigned char)start[i]))
				shaped = false;
		}
		if (shaped && (dots == 1 || dots == 2) && len < size) {
			memcpy(out, start, len);
			out[len] = '\0';
			return 0;
		}
	}
	return -KIMG_ENOTFOUND;
}

void kimg_driver_release_from_proc(char *out, size_t size)
{
	FILE *f = fopen("/proc/driver/nvidia/version", "re");
	if (!f)
		return;
	char line[512];
	if (fgets(line, sizeof line, f)) {
		/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  <date>" */
		const char *mod = strstr(line, "Module");
		(void)kimg_driver_parse_proc_version(mod ? mod + 6 : line, out, size);
	}
	fclose(f);
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);
	return v && v[0] && strcmp(v, "0") != 0;
}

/* What this process's environment tells the driver about PTX JIT. */
static void set_jit_env(struct kimg_device *d)
{
	d->force_ptx_jit = env_on("CUDA_FORCE_PTX_JIT") || env_on("CUDA_FORCE_JIT");
	d->disable_ptx_jit = env_on("CUDA_DISABLE_PTX_JIT") || env_on("CUDA_DISABLE_JIT");
}

static int cu_failed(struct kimg_error *err, int code, const char *call, int rc)
{
	const char *name = kimg_cuda_error_name(rc);
	const char *hint = rc == 100 ? ": no CUDA-capable GPU is visible" :
			   rc == 34 ? ": the CUDA stub library was loaded instead of the driver" :
			   rc == 999 || rc == 3 ? ": the driver could not initialise" : "";
	if (name)
		return kimg_error_set(err, code, 0, "%s failed: %s (%d)%s", call, name, rc, hint);
	return kimg_error_set(err, code, 0, "%s failed: error %d%s", call, rc, hint);
}

int kimg_driver_devices(struct kimg_driver_info *info, struct kimg_device *devs, size_t cap,
			struct kimg_error *err)
{
	memset(info, 0, sizeof *info);
	const struct kimg_cu_api *api;
	int rc = kimg_driver_api_load(&api, err);
	if (rc < 0)
		return rc;
	if ((rc = api->cuDriverGetVersion(&info->cuda_version)) != 0)
		return cu_failed(err, -ENODEV, "cuDriverGetVersion", rc);
	info->max_ptx_isa = kimg_driver_max_ptx_isa(info->cuda_version);
	if ((rc = api->cuInit(0)) != 0)
		return cu_failed(err, -ENODEV, "cuInit", rc);
	if ((rc = api->cuDeviceGetCount(&info->device_count)) != 0)
		return cu_failed(err, -ENODEV, "cuDeviceGetCount", rc);
	if (info->device_count <= 0)
		return kimg_error_set(err, -ENODEV, 0, "the driver reports no CUDA GPU");
	size_t n = 0;
	for (int i = 0; i < info->device_count && n < cap; i++, n++) {
		struct kimg_device *d = &devs[n];
		int dev = 0;
		bool integrated = false;
		memset(d, 0, sizeof *d);
		if ((rc = api->cuDeviceGet(&dev, i)) != 0)
			return cu_failed(err, -ENODEV, "cuDeviceGet", rc);
		if ((rc = kimg_cu_device_facts(api, dev, d, &integrated)) != 0)
			return cu_failed(err, -ENODEV, "cuDeviceGetAttribute", rc);
		if (!d->name[0])
			snprintf(d->name, sizeof d->name, "GPU %d", i);
		if (i < 16)
			info->integrated[i] = integrated;
		d->driver_version = info->cuda_version;
		d->ordinal = i;
		set_jit_env(d);
	}
	return (int)n;
}

int kimg_native_devices(struct kimg_device *devs, size_t cap, bool ask_driver, struct kimg_error *err)
{
	const struct kimg_cu_api *api;
	int version = 0, n;
	struct kimg_error ignored;
	if (!ask_driver && kimg_driver_api_load(&api, &ignored) == 0 && api->cuDriverGetVersion(&version) == 0 &&
	    (n = kimg_nvml_uniform_gpus(devs, cap)) > 0) {
		for (int i = 0; i < n; i++) {
			devs[i].driver_version = version;
			set_jit_env(&devs[i]);
		}
		return n;
	}
	struct kimg_driver_info info;
	return kimg_driver_devices(&info, devs, cap, err);
}
