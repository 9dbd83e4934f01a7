/* The device a report or a load check is about (device_query.h): asked of the
 * real driver through shim/diag.h's up-calls, or of NVML before the driver
 * is initialised. The attribute numbers are sys/cuda_attrs.h's. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_attrs.h"
#include "device_query.h"
#include "diag_internal.h"
#include "shim_pins.h"
#include "gpus.h"
#include "rules.h"

/* ---- for a failure: the current context's device, asked each time ---- */

bool kimg_device_query(struct kimg_device *d)
{
	const struct kimg_driver_api *api = kimg_driver_real();
	int dev = 0, major = 0, minor = 0, integrated = 0;
	memset(d, 0, sizeof *d);
	d->ordinal = -1;
	if (!api || !api->cuDeviceGetAttribute)
		return false;
	if (!api->cuCtxGetDevice || api->cuCtxGetDevice(&dev) != 0) {
		/* no current context (a failed load before any): device 0 is what
		 * the runtime would have picked */
		if (!api->cuDeviceGet || api->cuDeviceGet(&dev, 0) != 0)
			return false;
	}
	if (api->cuDeviceGetAttribute(&major, KIMG_ATTR_CC_MAJOR, dev) != 0 ||
	    api->cuDeviceGetAttribute(&minor, KIMG_ATTR_CC_MINOR, dev) != 0)
		return false;
	if (api->cuDeviceGetAttribute(&integrated, KIMG_ATTR_INTEGRATED, dev) != 0)
		integrated = 0;
	d->ordinal = dev;
	d->cc.sm = (uint16_t)(major * 10 + minor);
	/* GB10 (12.1) is integrated but runs desktop cubins: the CC table decides */
	d->tegra = integrated && kimg_sm_is_tegra(d->cc.sm);
	if (api->cuDriverGetVersion && api->cuDriverGetVersion(&d->driver_version) != 0)
		d->driver_version = 0;
	if (!api->cuDeviceGetName || api->cuDeviceGetName(d->name, (int)sizeof d->name, dev) != 0)
		d->name[0] = '\0';
	d->name[sizeof d->name - 1] = '\0';
	d->force_ptx_jit = kimg_env.force_ptx_jit;
	d->disable_ptx_jit = kimg_env.disable_ptx_jit;
	return true;
}

/* ---- for a load: cached per device, NVML before the driver is up ---- */

#define MAX_DEVICES 64

/* Facts per ordinal, written once under the lock, read after an acquire
 * of `known`. */
static struct kimg_device dev_cache[MAX_DEVICES];
static _Atomic int dev_known[MAX_DEVICES];
static struct kimg_device nvml_cache;
static _Atomic int nvml_state; /* 0 not asked, 1 known, 2 unavailable */
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;

/* Asking kimg_driver_real() before libcuda is loaded would cache NULL
 * pointers for the process, so look first (RTLD_NOLOAD loads nothing). */
static bool driver_loaded(void)
{
	static _Atomic int loaded;
	if (atomic_load_explicit(&loaded, memory_order_acquire))
		return true;
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return false;
	dlclose(h);
	atomic_store_explicit(&loaded, 1, memory_order_release);
	return true;
}

static bool driver_device(struct kimg_device *d)
{
	if (!driver_loaded())
		return false;
	const struct kimg_driver_api *api = kimg_driver_real();
	int dev = 0, count = 0, major = 0, minor = 0, integrated = 0;
	if (!api || !api->cuDeviceGetAttribute || !api->cuDeviceGetCount)
		return false;
	/* CUDA_ERROR_NOT_INITIALIZED before cuInit: a registration at import */
	if (api->cuDeviceGetCount(&count) != 0 || count <= 0)
		return false;
	if (!api->cuCtxGetDevice || api->cuCtxGetDevice(&dev) != 0)
		dev = 0; /* no context yet: device 0 is what the runtime picks */
	if (dev < 0 || dev >= MAX_DEVICES)
		return false;
	if (atomic_load_explicit(&dev_known[dev], memory_order_acquire)) {
		*d = dev_cache[dev];
		return true;
	}
	memset(d, 0, sizeof *d);
	if (api->cuDeviceGetAttribute(&major, KIMG_ATTR_CC_MAJOR, dev) != 0 ||
	    api->cuDeviceGetAttribute(&minor, KIMG_ATTR_CC_MINOR, dev) != 0)
		return false;
	if (api->cuDeviceGetAttribute(&integrated, KIMG_ATTR_INTEGRATED, dev) != 0)
		integrated = 0;
	d->ordinal = dev;
	d->cc.sm = (uint16_t)(major * 10 + minor);
	d->tegra = integrated && kimg_sm_is_tegra(d->cc.sm);
	if (!api->cuDriverGetVersion || api->cuDriverGetVersion(&d->driver_version) != 0)
		d->driver_version = 0;
	if (!api->cuDeviceGetName || api->cuDeviceGetName(d->name, (int)sizeof d->name, dev) != 0)
		d->name[0] = '\0';
	d->name[sizeof d->name - 1] = '\0';
	d->force_ptx_jit = kimg_env.force_ptx_jit;
	d->disable_ptx_jit = kimg_env.disable_ptx_jit;
	pthread_mutex_lock(&dev_lock);
	if (!atomic_load_explicit(&dev_known[dev], memory_order_relaxed)) {
		dev_cache[dev] = *d;
		atomic_store_explicit(&dev_known[dev], 1, memory_order_release);
	}
	pthread_mutex_unlock(&dev_lock);
	return true;
}

/* NVML answers without initialising CUDA, so a module registered at
 * import (before the program's first CUDA call) is judged without
 * changing what the process does: no cuInit, which would break a later
 * fork. Device: the first entry of CUDA_VISIBLE_DEVICES (index or GPU-
 * UUID), else index 0. NVML orders by PCI bus, CUDA fastest first: on a
 * machine with different GPUs and no CUDA_VISIBLE_DEVICES the two may
 * differ (documented in libkimg.7). */
typedef int (*nvml_fn0)(void);
typedef int (*nvml_idx_fn)(unsigned, void **);
typedef int (*nvml_uuid_fn)(const char *, void **);
typedef int (*nvml_cc_fn)(void *, int *, int *);
typedef int (*nvml_ver_fn)(int *);
typedef int (*nvml_name_fn)(void *, char *, unsigned);

static bool nvml_query(struct kimg_device *d)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	nvml_fn0 init = (nvml_fn0)kimg_real_dlsym(h, "nvmlInit_v2");
	nvml_idx_fn by_index = (nvml_idx_fn)kimg_real_dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	nvml_uuid_fn by_uuid = (nvml_uuid_fn)kimg_real_dlsym(h, "nvmlDeviceGetHandleByUUID");
	nvml_cc_fn cc = (nvml_cc_fn)kimg_real_dlsym(h, "nvmlDeviceGetCudaComputeCapability");
	nvml_ver_fn ver = (nvml_ver_fn)kimg_real_dlsym(h, "nvmlSystemGetCudaDriverVersion_v2");
	nvml_name_fn name = (nvml_name_fn)kimg_real_dlsym(h, "nvmlDeviceGetName");
	if (!ver)
		ver = (nvml_ver_fn)kimg_real_dlsym(h, "nvmlSystemGetCudaDriverVersion");
	void *dev = NULL;
	int major = 0, minor = 0;
	/* a cold path, once per process: getenv is fine here */
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	if (!init || !by_index || !cc || init() != 0)
		return false; /* the library stays loaded: NVML is cheap to keep */
	if (vis && (vis[0] == '\0' || vis[0] == '-'))
		return false; /* no visible device: nothing can run */
	if (vis && strncmp(vis, "GPU-", 4) == 0 && by_uuid) {
		char uuid[96];
		size_t n = strcspn(vis, ",");
		snprintf(uuid, sizeof uuid, "%.*s", (int)(n < sizeof uuid ? n : sizeof uuid - 1), vis);
		if (by_uuid(uuid, &dev) != 0)
			return false;
	} else {
		unsigned idx = 0;
		if (vis && vis[0] >= '0' && vis[0] <= '9')
			idx = (unsigned)strtoul(vis, NULL, 10);
		if (by_index(idx, &dev) != 0)
			return false;
	}
	if (cc(dev, &major, &minor) != 0)
		return false;
	memset(d, 0, sizeof *d);
	d->ordinal = 0;
	d->cc.sm = (uint16_t)(major * 10 + minor);
	/* NVML is not on Tegra, so an answer means a discrete GPU */
	d->tegra = false;
	if (!ver || ver(&d->driver_version) != 0)
		d->driver_version = 0;
	if (!name || name(dev, d->name, (unsigned)sizeof d->name) != 0)
		d->name[0] = '\0';
	d->name[sizeof d->name - 1] = '\0';
	d->force_ptx_jit = kimg_env.force_ptx_jit;
	d->disable_ptx_jit = kimg_env.disable_ptx_jit;
	return true;
}

bool kimg_load_device(struct kimg_device *d)
{
	if (driver_device(d))
		return true;
	int st = atomic_load_explicit(&nvml_state, memory_order_acquire);
	if (st == 0) {
		pthread_mutex_lock(&dev_lock);
		st = atomic_load_explicit(&nvml_state, memory_order_relaxed);
		if (st == 0) {
			st = nvml_query(&nvml_cache) ? 1 : 2;
			atomic_store_explicit(&nvml_state, st, memory_order_release);
		}
		pthread_mutex_unlock(&dev_lock);
	}
	if (st != 1)
		return false;
	*d = nvml_cache;
	return true;
}
