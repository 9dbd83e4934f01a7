/* SPDX-License-Identifier: Apache-2.0 */
/* The hooks layer's up-calls (shim/diag.h) bound to the stand-in driver,
 * for unit tests that link the diagnosis layer (build/libkimgdiag.a) as a
 * library and need a driver behind it: the audit, the fallback and the
 * report path. The test program links tests/fake_cuda's libcuda.so.1
 * (make builds it: tests/fake_cuda/fake.mk), which judges every image with
 * its own reader against the device FAKE_CUDA_SM describes; so what these
 * tests see the driver accept or refuse is not kimg agreeing with itself.
 * glibc's dlsym stands for the real one. hook_standin.c is the variant
 * without a driver. */
#include <dlfcn.h>
#include <stddef.h>

#include "diag.h"
#include "driver_standin.h"

/* what tests/fake_cuda/fake_cuda.c exports (cuda.h is not used here either) */
CUresult cuDriverGetVersion(int *v);
CUresult cuCtxGetDevice(int *dev);
CUresult cuDeviceGet(int *dev, int ordinal);
CUresult cuDeviceGetCount(int *n);
CUresult cuDeviceGetName(char *name, int len, int dev);
CUresult cuDeviceGetAttribute(int *value, int attrib, int dev);
CUresult cuModuleUnload(void *mod);
CUresult cuLibraryUnload(void *lib);
CUresult cuModuleGetFunction(void **fn, void *mod, const char *name);
CUresult cuLibraryGetKernel(void **kernel, void *lib, const char *name);
CUresult cuKernelGetFunction(void **fn, void *kernel);
CUresult cuModuleLoadData(void **mod, const void *image);
CUresult cuLibraryLoadData(void **lib, const void *code, int *jo, void **jv, unsigned nj, int *lo, void **lv,
			   unsigned nl);

void *kimg_real_dlsym(void *handle, const char *name)
{
	return dlsym(handle, name);
}

const struct kimg_driver_api *kimg_driver_real(void)
{
	static const struct kimg_driver_api api = {
		.cuDriverGetVersion = cuDriverGetVersion,
		.cuCtxGetDevice = cuCtxGetDevice,
		.cuDeviceGet = cuDeviceGet,
		.cuDeviceGetCount = cuDeviceGetCount,
		.cuDeviceGetName = cuDeviceGetName,
		.cuDeviceGetAttribute = cuDeviceGetAttribute,
		.cuModuleUnload = cuModuleUnload,
		.cuLibraryUnload = cuLibraryUnload,
	};
	return &api;
}

kimg_get_function_fn kimg_real_cuModuleGetFunction(void)
{
	return (kimg_get_function_fn)cuModuleGetFunction;
}

kimg_library_get_kernel_fn kimg_real_cuLibraryGetKernel(void)
{
	return (kimg_library_get_kernel_fn)cuLibraryGetKernel;
}

kimg_kernel_get_function_fn kimg_real_cuKernelGetFunction(void)
{
	return (kimg_kernel_get_function_fn)cuKernelGetFunction;
}

/* ---- for the tests: the real load, as a load hook hands it to the fallback ---- */

unsigned standin_loads;

CUresult standin_module_load(void *ctx, const void *image, CUhandle *handle)
{
	(void)ctx;
	standin_loads++;
	return cuModuleLoadData(handle, image);
}

/* a library load succeeds whatever the code: the driver's verdict comes at
 * the kernel lookup (CUDA 13.0, as tests/fake_cuda/fake_cuda.c models it) */
CUresult standin_library_load(void *ctx, const void *image, CUhandle *handle)
{
	(void)ctx;
	standin_loads++;
	return cuLibraryLoadData(handle, image, NULL, NULL, 0, NULL, NULL, 0);
}

CUresult standin_library_get_kernel(CUhandle *kernel, CUhandle lib, const char *name)
{
	return cuLibraryGetKernel(kernel, lib, name);
}

CUresult standin_module_get_function(CUhandle *fn, CUhandle mod, const char *name)
{
	return cuModuleGetFunction(fn, mod, name);
}
