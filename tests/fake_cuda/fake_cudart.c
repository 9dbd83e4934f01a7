/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for shared libcudart.so for the shim tests: the handful of
 * runtime entry points libkimg interposes by symbol, implemented the way
 * cudart 13 does on the driver ([V] docs/loading.md sections 2 and 4):
 * dlopen("libcuda.so.1") + dlsym("cuGetProcAddress_v2"), registration
 * loads the fatbin wrapper with cuLibraryLoadData, and the first use of a
 * kernel calls cuLibraryGetKernel + cuKernelGetFunction (+ cuLaunchKernel).
 * Driver and runtime share the codes that matter here (209, 218, 222, ...). */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef int (*gpa_fn)(const char *, void **, int, unsigned long long, int *);
typedef int (*lib_load_fn)(void **, const void *, void *, void *, unsigned, void *, void *, unsigned);
typedef int (*get_kernel_fn)(void **, void *, const char *);
typedef int (*kernel_fn_fn)(void **, void *);
typedef int (*get_global_fn)(unsigned long long *, size_t *, void *, const char *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			 void **, void **);

static struct {
	gpa_fn gpa;
	gpa_fn private_gpa; /* for cudaGetDriverEntryPoint: never wrapped */
	lib_load_fn lib_load;
	get_kernel_fn get_kernel;
	kernel_fn_fn kernel_fn;
	launch_fn launch;
	get_global_fn get_global;
	void (*log_noise)(void);
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void drv_init(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	drv.gpa = (gpa_fn)dlsym(h, "cuGetProcAddress_v2");
	drv.private_gpa = (gpa_fn)dlsym(h, "fake_cuda_private_gpa");
	drv.log_noise = (void (*)(void))dlsym(h, "fake_cuda_log_noise");
	/* FAKE_CUDART_PRIVATE=1: a runtime whose driver calls libkimg never
	 * sees, so only the runtime hooks can report (tests hook_runtime.c
	 * on its own). */
	const char *priv = getenv("FAKE_CUDART_PRIVATE");
	if (priv && *priv == '1')
		drv.gpa = drv.private_gpa;
	if (!drv.gpa)
		return;
	int st;
	drv.gpa("cuLibraryLoadData", (void **)&drv.lib_load, 13000, 0, &st);
	drv.gpa("cuLibraryGetKernel", (void **)&drv.get_kernel, 13000, 0, &st);
	drv.gpa("cuKernelGetFunction", (void **)&drv.kernel_fn, 13000, 0, &st);
	drv.gpa("cuLaunchKernel", (void **)&drv.launch, 13000, 0, &st);
	drv.gpa("cuLibraryGetGlobal", (void **)&drv.get_global, 13000, 0, &st);
}

#define MAX_MODULES 64
#define MAX_FUNCS 256
/* FAKE_CUDART_LAZY=1: as the real shared cudart 13 [V], registration only
 * records the fatbin; the driver is loaded, and the library with it, at the
 * module's first use (a driver kimg had not met at registration). */
struct module { void *lib; void *wrapper; pthread_once_t once; };
static struct module modules[MAX_MODULES];
static int n_modules;
static struct { const void *stub; struct module *mod; const char *name; } funcs[MAX_FUNCS];
static int n_funcs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

API void **__cudaRegisterFatBinary(void *wrapper);
static struct module *loading; /* the module module_load_once loads (under pthread_once) */

static void module_load_once(void)
{
	struct module *m = loading;
	unsigned opt = 1; /* CU_LIBRARY_BINARY_IS_PRESERVED */
	void *val = (void *)1;
	pthread_once(&drv_once, drv_init);
	if (drv.lib_load)
		drv.lib_load(&m->lib, m->wrapper, NULL, NULL, 0, &opt, &val, 1);
}

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static void module_load(struct module *m)
{
	pthread_mutex_lock(&load_lock);
	loading = m;
	pthread_once(&m->once, module_load_once);
	pthread_mutex_unlock(&load_lock);
}

void **__cudaRegisterFatBinary(void *wrapper)
{
	pthread_mutex_lock(&lock);
	struct module *m = n_modules < MAX_MODULES ? &modules[n_modules++] : NULL;
	pthread_mutex_unlock(&lock);
	if (!m)
		return NULL;
	m->wrapper = wrapper;
	m->once = (pthread_once_t)PTHREAD_ONCE_INIT;
	const char *lazy = getenv("FAKE_CUDART_LAZY");
	if (!(lazy && *lazy == '1'))
		module_load(m);
	return (void **)m;
}

API void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
				int thread_limit, void *tid, void *bid, void *bdim, void *gdim, int *wsize);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
			    int thread_limit, void *tid, void *bid, void *bdim, void *gdim, int *wsize)
{
	pthread_mutex_lock(&lock);
	if (n_funcs < MAX_FUNCS) {
		funcs[n_funcs].stub = host_fun;
		funcs[n_funcs].mod = (struct module *)handle;
		funcs[n_funcs].name = device_fun;
		n_funcs++;
	}
	pthread_mutex_unlock(&lock);
}

/* The driver function for a host stub: 0 or the driver's error. */
static int function_of(const void *stub, void **fn)
{
	struct module *m = NULL;
	const char *name = NULL;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < n_funcs; i++)
		if (funcs[i].stub == stub) {
			m = funcs[i].mod;
			name = funcs[i].name;
		}
	pthread_mutex_unlock(&lock);
	if (m)
		module_load(m);
	if (!m || !drv.get_kernel || !drv.kernel_fn)
		return 98; /* cudaErrorInvalidDeviceFunction */
	void *k = NULL;
	int rc = drv.get_kernel(&k, m->lib, name);
	return rc ? rc : drv.kernel_fn(fn, k);
}

/* ---- variables: __cudaRegisterVar and the symbol APIs ----
 * FAKE_CUDART_NOISE=1: after a failed lookup the runtime makes the driver
 * log one noise line (fake_cuda_log_noise) before it returns.
 * [V] cudart 13: the first symbol API call on a module reaches
 * cuLibraryGetGlobal, which fails with the module's error (209). */
#define MAX_VARS 256
static struct { const void *host; struct module *mod; const char *name; } vars[MAX_VARS];
static int n_vars;

API void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name, int ext,
			   size_t size, int constant, int global);
void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name, int ext,
		       size_t size, int constant, int global)
{
	pthread_mutex_lock(&lock);
	if (n_vars < MAX_VARS) {
		vars[n_vars].host = host_var;
		vars[n_vars].mod = (struct module *)handle;
		vars[n_vars].name = device_address ? device_address : device_name;
		n_vars++;
	}
	pthread_mutex_unlock(&lock);
}

/* 0 and the device address of a variable's host shadow, or the driver's error. */
static int global_of(const void *host, unsigned long long *dptr, size_t *bytes)
{
	struct module *m = NULL;
	const char *name = NULL;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < n_vars; i++)
		if (vars[i].host == host) {
			m = vars[i].mod;
			name = vars[i].name;
		}
	pthread_mutex_unlock(&lock);
	if (m)
		module_load(m);
	if (!m || !drv.get_global)
		return 13; /* cudaErrorInvalidSymbol */
	int rc = drv.get_global(dptr, bytes, m->lib, name);
	/* FAKE_CUDART_NOISE=1: the runtime asks the driver something that logs
	 * noise before it returns the error (as a context query without a context) */
	const char *noise = getenv("FAKE_CUDART_NOISE");
	if (rc && noise && *noise == '1' && drv.log_noise)
		drv.log_noise();
	return rc;
}

API int cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset, int kind);
int cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset, int kind)
{
	unsigned long long d;
	size_t bytes;
	return global_of(symbol, &d, &bytes);
}

API int cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, int kind);
int cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, int kind)
{
	unsigned long long d;
	size_t bytes;
	return global_of(symbol, &d, &bytes);
}

API int cudaGetSymbolAddress(void **dev_ptr, const void *symbol);
int cudaGetSymbolAddress(void **dev_ptr, const void *symbol)
{
	unsigned long long d = 0;
	size_t bytes;
	int rc = global_of(symbol, &d, &bytes);
	if (!rc && dev_ptr)
		*dev_ptr = (void *)(uintptr_t)d;
	return rc;
}

API int cudaGetSymbolSize(size_t *size, const void *symbol);
int cudaGetSymbolSize(size_t *size, const void *symbol)
{
	unsigned long long d;
	return global_of(symbol, &d, size);
}

struct dim3 { unsigned x, y, z; };

API int cudaLaunchKernel(const void *func, struct dim3 g, struct dim3 b, void **args, size_t shmem, void *stream);
int cudaLaunchKernel(const void *func, struct dim3 g, struct dim3 b, void **args, size_t shmem, void *stream)
{
	void *f = NULL;
	int rc = function_of(func, &f);
	return rc ? rc : drv.launch(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, stream, args, NULL);
}

API int cudaFuncGetAttributes(void *attr, const void *func);
int cudaFuncGetAttributes(void *attr, const void *func)
{
	void *f = NULL;
	return function_of(func, &f);
}

API int cudaGetFuncBySymbol(void **fn, const void *symbol);
int cudaGetFuncBySymbol(void **fn, const void *symbol)
{
	return function_of(symbol, fn);
}

/* CUDART_VERSION 13000: the runtime asks the driver for the 13.0 ABI,
 * through a table libkimg never saw, so the wrapping must happen at the
 * runtime entry point. */
/* FAKE_CUDART_VERSION: what cudaRuntimeGetVersion answers (default 13000). */
API int cudaRuntimeGetVersion(int *v);
int cudaRuntimeGetVersion(int *v)
{
	const char *e = getenv("FAKE_CUDART_VERSION");
	if (!v)
		return 1;
	*v = e && *e ? atoi(e) : 13000;
	return 0;
}

API int cudaGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long flags, int *status);
int cudaGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long flags, int *status)
{
	pthread_once(&drv_once, drv_init);
	if (!drv.private_gpa)
		return 35; /* cudaErrorInsufficientDriver */
	return drv.private_gpa(sym, pfn, 13000, flags, status) ? 500 : 0;
}

/* _ptsz: flags 0 mean per-thread default stream (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 2),
 * so the driver hands out the _ptsz variant. */
API int cudaGetDriverEntryPoint_ptsz(const char *sym, void **pfn, unsigned long long flags, int *status);
int cudaGetDriverEntryPoint_ptsz(const char *sym, void **pfn, unsigned long long flags, int *status)
{
	pthread_once(&drv_once, drv_init);
	if (!drv.private_gpa)
		return 35;
	return drv.private_gpa(sym, pfn, 13000, flags ? flags : 2, status) ? 500 : 0;
}

API int cudaGetDriverEntryPointByVersion(const char *sym, void **pfn, unsigned version, unsigned long long flags,
					 int *status);
int cudaGetDriverEntryPointByVersion(const char *sym, void **pfn, unsigned version, unsigned long long flags,
				     int *status)
{
	pthread_once(&drv_once, drv_init);
	if (!drv.private_gpa)
		return 35;
	return drv.private_gpa(sym, pfn, (int)version, flags, status) ? 500 : 0;
}
