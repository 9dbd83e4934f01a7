/* SPDX-License-Identifier: Apache-2.0 */
/* The hooks layer's up-calls (shim/diag.h), for programs that link the
 * diagnosis layer (build/libkimgdiag.a) without libkimg.so's hooks: unit
 * tests and the stack probes of tests/shim/stack.sh. glibc's dlsym stands
 * for the real one; there is no driver behind these programs. */
#include <dlfcn.h>
#include <stddef.h>

#include "diag.h"

void *kimg_real_dlsym(void *handle, const char *name)
{
	return dlsym(handle, name);
}

const struct kimg_driver_api *kimg_driver_real(void)
{
	static const struct kimg_driver_api none;
	return &none;
}

kimg_get_function_fn kimg_real_cuModuleGetFunction(void)
{
	return NULL;
}

kimg_library_get_kernel_fn kimg_real_cuLibraryGetKernel(void)
{
	return NULL;
}

kimg_kernel_get_function_fn kimg_real_cuKernelGetFunction(void)
{
	return NULL;
}
