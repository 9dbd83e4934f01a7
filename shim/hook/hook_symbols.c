/* SPDX-License-Identifier: Apache-2.0 */
/* Wrappers for the driver's symbol and variable lookups: cuLibraryGetGlobal,
 * cuLibraryGetManaged, cuLibraryGetUnifiedFunction and cuModuleGetGlobal
 * (both ABIs). Under CUDA 13 a library whose code fits nothing loads
 * fine and fails its first lookup of any kind ([V] on the H200: a program
 * that fills a __constant__ table with cudaMemcpyToSymbol before its
 * first launch gets 209 from cuLibraryGetGlobal, and without these hooks
 * no report). Each wrapper is a forward: the real call, one branch on the
 * result, the result unchanged; a failure names the library or module,
 * which the registry knows from its load (docs/loading.md section 12). */
#include "hook.h"

#define REAL(id, type)                                                             \
	__typeof__(type) real = (__typeof__(type))kimg_hook_get(KIMG_HOOK_##id);   \
	if (KIMG_UNLIKELY(!real))                                                  \
		return KIMG_CUDA_ERROR_NOT_INITIALIZED

#define EXPORT_AS(name, ...) KIMG_EXPORT CUresult name(__VA_ARGS__) __attribute__((alias("kimg_w_" #name)))

#define FAIL(call, r, name, kind, handle)                                                               \
	do {                                                                                            \
		if (KIMG_UNLIKELY((r) != KIMG_CUDA_SUCCESS))                                            \
			kimg_hook_driver_fail(call, r, NULL, (name) ? (name) : "", kind, handle,        \
					      __builtin_return_address(0));                             \
	} while (0)

typedef CUresult (*library_global_fn)(unsigned long long *, size_t *, CUhandle, const char *);

CUresult kimg_w_cuLibraryGetGlobal(unsigned long long *dptr, size_t *bytes, CUhandle lib, const char *name)
{
	REAL(cuLibraryGetGlobal, library_global_fn);
	CUresult r = real(dptr, bytes, lib, name);
	FAIL("cuLibraryGetGlobal", r, name, KIMG_HANDLE_LIBRARY, lib);
	return r;
}
EXPORT_AS(cuLibraryGetGlobal, unsigned long long *dptr, size_t *bytes, CUhandle lib, const char *name);

CUresult kimg_w_cuLibraryGetManaged(unsigned long long *dptr, size_t *bytes, CUhandle lib, const char *name)
{
	REAL(cuLibraryGetManaged, library_global_fn);
	CUresult r = real(dptr, bytes, lib, name);
	FAIL("cuLibraryGetManaged", r, name, KIMG_HANDLE_LIBRARY, lib);
	return r;
}
EXPORT_AS(cuLibraryGetManaged, unsigned long long *dptr, size_t *bytes, CUhandle lib, const char *name);

CUresult kimg_w_cuLibraryGetUnifiedFunction(void **fptr, CUhandle lib, const char *symbol)
{
	REAL(cuLibraryGetUnifiedFunction, CUresult(*)(void **, CUhandle, const char *));
	CUresult r = real(fptr, lib, symbol);
	FAIL("cuLibraryGetUnifiedFunction", r, symbol, KIMG_HANDLE_LIBRARY, lib);
	return r;
}
EXPORT_AS(cuLibraryGetUnifiedFunction, void **fptr, CUhandle lib, const char *symbol);

/* A module fails at its load, so these see mostly 500 for a name the
 * module lacks: the diagnosis reports that only when no image fits. */
CUresult kimg_w_cuModuleGetGlobal(unsigned *dptr, unsigned *bytes, CUhandle mod, const char *name)
{
	REAL(cuModuleGetGlobal, CUresult(*)(unsigned *, unsigned *, CUhandle, const char *));
	CUresult r = real(dptr, bytes, mod, name);
	FAIL("cuModuleGetGlobal", r, name, KIMG_HANDLE_MODULE, mod);
	return r;
}
EXPORT_AS(cuModuleGetGlobal, unsigned *dptr, unsigned *bytes, CUhandle mod, const char *name);

CUresult kimg_w_cuModuleGetGlobal_v2(unsigned long long *dptr, size_t *bytes, CUhandle mod, const char *name)
{
	REAL(cuModuleGetGlobal_v2, library_global_fn);
	CUresult r = real(dptr, bytes, mod, name);
	FAIL("cuModuleGetGlobal_v2", r, name, KIMG_HANDLE_MODULE, mod);
	return r;
}
EXPORT_AS(cuModuleGetGlobal_v2, unsigned long long *dptr, size_t *bytes, CUhandle mod, const char *name);
