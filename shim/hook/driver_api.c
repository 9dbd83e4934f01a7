/* SPDX-License-Identifier: Apache-2.0 */
/* Up-calls of shim/diag.h into the driver: the real (unwrapped) driver
 * functions the diagnosis needs, resolved once, and the real functions
 * behind three hooks that the fallback calls. Nothing here hands out a
 * wrapper, so the diagnosis cannot re-enter a hook through these. */
#include <dlfcn.h>
#include <sched.h>

#include "hook.h"

static struct kimg_driver_api driver_api;
static _Atomic int driver_api_state; /* 0 unresolved, 1 resolving, 2 ready */

/* Where to look a driver function up: through the real cuGetProcAddress
 * when the program gave us one (static cudart: the driver is dlopen'ed
 * RTLD_LOCAL, invisible to RTLD_NEXT), else the exported name after us. */
static void *driver_fn(const char *name)
{
	typedef CUresult (*gpa4_fn)(const char *, void **, int, unsigned long long);
	typedef CUresult (*gpa5_fn)(const char *, void **, int, unsigned long long, int *);
	void *p = NULL;
	gpa5_fn g5 = (gpa5_fn)atomic_load_explicit(&kimg_hook_real[KIMG_HOOK_cuGetProcAddress_v2],
						   memory_order_acquire);
	gpa4_fn g4 = (gpa4_fn)atomic_load_explicit(&kimg_hook_real[KIMG_HOOK_cuGetProcAddress],
						   memory_order_acquire);
	if (g5) {
		int status = 0;
		if (g5(name, &p, 2000, 0, &status) != 0)
			p = NULL;
	} else if (g4) {
		if (g4(name, &p, 2000, 0) != 0)
			p = NULL;
	}
	if (!p)
		p = kimg_real_dlsym(RTLD_NEXT, name);
	if (!p)
		p = kimg_find_in_loaded(name);
	return p;
}

const struct kimg_driver_api *kimg_driver_real(void)
{
	int state = atomic_load_explicit(&driver_api_state, memory_order_acquire);
	if (state == 2)
		return &driver_api;
	int expected = 0;
	if (atomic_compare_exchange_strong_explicit(&driver_api_state, &expected, 1, memory_order_acq_rel,
						    memory_order_acquire)) {
		/* The pointers come straight from the driver, never from our
		 * table, so the diagnosis cannot re-enter a hook through them. */
		driver_api.cuDriverGetVersion = (CUresult_t(*)(int *))driver_fn("cuDriverGetVersion");
		driver_api.cuCtxGetDevice = (CUresult_t(*)(int *))driver_fn("cuCtxGetDevice");
		driver_api.cuDeviceGet = (CUresult_t(*)(int *, int))driver_fn("cuDeviceGet");
		driver_api.cuDeviceGetCount = (CUresult_t(*)(int *))driver_fn("cuDeviceGetCount");
		driver_api.cuDeviceGetName = (CUresult_t(*)(char *, int, int))driver_fn("cuDeviceGetName");
		driver_api.cuDeviceGetAttribute = (CUresult_t(*)(int *, int, int))driver_fn("cuDeviceGetAttribute");
		driver_api.cuModuleUnload = (CUresult_t(*)(void *))driver_fn("cuModuleUnload");
		driver_api.cuLibraryUnload = (CUresult_t(*)(void *))driver_fn("cuLibraryUnload");
		driver_api.cuModuleLoadDataEx =
			(CUresult_t(*)(void **, const void *, unsigned, int *, void **))driver_fn("cuModuleLoadDataEx");
		atomic_store_explicit(&driver_api_state, 2, memory_order_release);
		return &driver_api;
	}
	while (atomic_load_explicit(&driver_api_state, memory_order_acquire) != 2)
		sched_yield(); /* another thread is resolving: a handful of lookups */
	return &driver_api;
}

kimg_get_function_fn kimg_real_cuModuleGetFunction(void)
{
	return (kimg_get_function_fn)kimg_hook_get(KIMG_HOOK_cuModuleGetFunction);
}

kimg_library_get_kernel_fn kimg_real_cuLibraryGetKernel(void)
{
	return (kimg_library_get_kernel_fn)kimg_hook_get(KIMG_HOOK_cuLibraryGetKernel);
}

kimg_kernel_get_function_fn kimg_real_cuKernelGetFunction(void)
{
	return (kimg_kernel_get_function_fn)kimg_hook_get(KIMG_HOOK_cuKernelGetFunction);
}
