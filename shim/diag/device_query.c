/* SPDX-License-Identifier: Apache-2.0 */
/* The device a report or a load check is about (device_query.h): the one
 * query of sys/cuda_device.h, given the real driver functions of
 * shim/diag.h's up-call, or NVML's answer (sys/nvml.h) before the driver
 * is initialised. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cuda_device.h"
#include "device_query.h"
#include "diag_internal.h"
#include "nvml.h"
#include "shim_pins.h"

/* The driver's entry points as the hooks layer resolved them (never the
 * hooks): the table sys/cuda_device.h asks through. */
static bool real_driver(struct kimg_cu_api *cu)
{
	const struct kimg_driver_api *api = kimg_driver_real();
	memset(cu, 0, sizeof *cu);
	if (!api)
		return false;
	cu->cuDriverGetVersion = api->cuDriverGetVersion;
	cu->cuDeviceGetCount = api->cuDeviceGetCount;
	cu->cuDeviceGet = api->cuDeviceGet;
	cu->cuCtxGetDevice = api->cuCtxGetDevice;
	cu->cuDeviceGetName = api->cuDeviceGetName;
	cu->cuDeviceGetAttribute = api->cuDeviceGetAttribute;
	return true;
}

static void process_flags(struct kimg_device *d)
{
	d->force_ptx_jit = kimg_env.force_ptx_jit;
	d->disable_ptx_jit = kimg_env.disable_ptx_jit;
}

/* ---- for a failure: the current context's device, asked each time ---- */

bool kimg_device_query(struct kimg_device *d)
{
	struct kimg_cu_api cu;
	int dev = 0;
	memset(d, 0, sizeof *d);
	d->ordinal = -1;
	if (!real_driver(&cu) || kimg_cu_current_device(&cu, &dev) != 0 || kimg_cu_device_facts(&cu, dev, d, NULL) != 0)
		return false;
	process_flags(d);
	return true;
}

/* ---- for a load: cached per device, NVML before the driver is up ---- */

#define MAX_DEVICES 64

/* Facts per device, written once under the lock, read after an acquire
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
	struct kimg_cu_api cu;
	int dev = 0;
	/* fails before cuInit (a registration at import): NVML answers then */
	if (!driver_loaded() || !real_driver(&cu) || kimg_cu_current_device(&cu, &dev) != 0)
		return false;
	bool cached = dev >= 0 && dev < MAX_DEVICES;
	if (cached && atomic_load_explicit(&dev_known[dev], memory_order_acquire)) {
		*d = dev_cache[dev];
		return true;
	}
	if (kimg_cu_device_facts(&cu, dev, d, NULL) != 0)
		return false;
	process_flags(d);
	if (!cached)
		return true; /* asked each time, like a failure's device */
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
 * fork. Asked once; the answer is kept. */
bool kimg_load_device(struct kimg_device *d)
{
	if (driver_device(d))
		return true;
	int st = atomic_load_explicit(&nvml_state, memory_order_acquire);
	if (st == 0) {
		pthread_mutex_lock(&dev_lock);
		st = atomic_load_explicit(&nvml_state, memory_order_relaxed);
		if (st == 0) {
			if (kimg_nvml_first_visible_device(&nvml_cache)) {
				process_flags(&nvml_cache);
				st = 1;
			} else {
				st = 2;
			}
			atomic_store_explicit(&nvml_state, st, memory_order_release);
		}
		pthread_mutex_unlock(&dev_lock);
	}
	if (st != 1)
		return false;
	*d = nvml_cache;
	return true;
}
