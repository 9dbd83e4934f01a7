#include "driver_query.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_errors.h"
#include "cuda_attrs.h"
#include "glibc_pins.h"
#include "rules.h"

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_int_fn)(int *);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_device_name_fn)(char *, int, int);
typedef int (*cu_device_attr_fn)(int *, int, int);

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

/* NVML knows the release even where procfs is hidden (containers). */
static void release_from_nvml(char *out, size_t size)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
	int (*ver)(char *, unsigned) = (int (*)(char *, unsigned))dlsym(h, "nvmlSystemGetDriverVersion");
	int (*shutdown)(void) = (int (*)(void))dlsym(h, "nvmlShutdown");
	if (init && ver && init() == 0) {
		char buf[96] = "";
		if (ver(buf, sizeof buf) == 0 && buf[0])
			snprintf(out, size, "%s", buf);
		if (shutdown)
			shutdown();
	}
	dlclose(h);
}

static void release_from_proc(char *out, size_t size)
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

int kimg_driver_query(struct kimg_driver_info *info, struct kimg_device *devs, size_t cap,
		      struct kimg_error *err)
{
	memset(info, 0, sizeof *info);
	/* Kept loaded on purpose: the driver is not built to be unloaded. */
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return kimg_error_set(err, -ENOENT, 0,
				      "cannot load libcuda.so.1: no NVIDIA driver installed or visible");
	cu_init_fn init = (cu_init_fn)dlsym(h, "cuInit");
	cu_int_fn version = (cu_int_fn)dlsym(h, "cuDriverGetVersion");
	cu_int_fn count = (cu_int_fn)dlsym(h, "cuDeviceGetCount");
	cu_device_get_fn get = (cu_device_get_fn)dlsym(h, "cuDeviceGet");
	cu_device_name_fn name = (cu_device_name_fn)dlsym(h, "cuDeviceGetName");
	cu_device_attr_fn attr = (cu_device_attr_fn)dlsym(h, "cuDeviceGetAttribute");
	if (!init || !version || !count || !get || !name || !attr)
		return kimg_error_set(err, -ENOSYS, 0, "libcuda.so.1 lacks a driver entry point (cuInit ...)");
	int rc;
	if ((rc = version(&info->cuda_version)) != 0)
		return cu_failed(err, -ENODEV, "cuDriverGetVersion", rc);
	info->max_ptx_isa = kimg_driver_max_ptx_isa(info->cuda_version);
	release_from_nvml(info->release, sizeof info->release);
	if (!info->release[0])
		release_from_proc(info->release, sizeof info->release);
	if ((rc = init(0)) != 0)
		return cu_failed(err, -ENODEV, "cuInit", rc);
	if ((rc = count(&info->device_count)) != 0)
		return cu_failed(err, -ENODEV, "cuDeviceGetCount", rc);
	if (info->device_count <= 0)
		return kimg_error_set(err, -ENODEV, 0, "the driver reports no CUDA GPU");
	size_t n = 0;
	for (int i = 0; i < info->device_count && n < cap; i++, n++) {
		struct kimg_device *d = &devs[n];
		int dev = 0, major = 0, minor = 0, integrated = 0;
		memset(d, 0, sizeof *d);
		if ((rc = get(&dev, i)) != 0)
			return cu_failed(err, -ENODEV, "cuDeviceGet", rc);
		if ((rc = attr(&major, KIMG_ATTR_CC_MAJOR, dev)) != 0 || (rc = attr(&minor, KIMG_ATTR_CC_MINOR, dev)) != 0)
			return cu_failed(err, -ENODEV, "cuDeviceGetAttribute", rc);
		if (attr(&integrated, KIMG_ATTR_INTEGRATED, dev) != 0)
			integrated = 0;
		if (name(d->name, (int)sizeof d->name, dev) != 0 || !d->name[0])
			snprintf(d->name, sizeof d->name, "GPU %d", i);
		d->name[sizeof d->name - 1] = '\0';
		d->cc.sm = (uint16_t)(major * 10 + minor);
		d->cc.variant = KIMG_VARIANT_PLAIN;
		d->tegra = integrated && kimg_sm_is_tegra(d->cc.sm);
		if (i < 16)
			info->integrated[i] = integrated != 0;
		d->driver_version = info->cuda_version;
		d->ordinal = i;
		d->force_ptx_jit = env_on("CUDA_FORCE_PTX_JIT") || env_on("CUDA_FORCE_JIT");
		d->disable_ptx_jit = env_on("CUDA_DISABLE_PTX_JIT") || env_on("CUDA_DISABLE_JIT");
	}
	return (int)n;
}
