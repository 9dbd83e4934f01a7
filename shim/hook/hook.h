/* SPDX-License-Identifier: Apache-2.0 */
/* Private interfaces of the hooks layer (shim/hook/: hook_dlsym.c,
 * hook_driver.c, hook_link.c, hook_runtime.c, hook_table.c, resolve.c,
 * driver_api.c, init.c, copies.c): the table of interposed entry points
 * and the real-symbol slots. The diagnosis (shim/diag/) never includes
 * this; what it may call is in shim/diag.h.
 *
 * Every hooked entry point, driver or runtime, has one row in
 * kimg_hook_table (hook_table.c, order = enum kimg_hook_id). A row is one
 * (name, variant): cuLaunchKernel and cuLaunchKernel_ptsz are two rows with
 * two wrappers and two real pointers, because the driver hands out
 * different functions for them (docs/loading.md section 3). */
#ifndef KIMG_SHIM_HOOKS_H
#define KIMG_SHIM_HOOKS_H

#include <stdatomic.h>

#include "diag.h"
#include "shim_pins.h"

/* CUDA types the hooks need; cuda.h is deliberately not included so the
 * shim builds without a toolkit and cannot pick up its name macros
 * (cuda.h renames cuLaunchKernel to cuLaunchKernel_ptsz under
 * per-thread-default-stream builds). */
typedef int cudaError_t;
#define KIMG_CUDA_ERROR_NOT_INITIALIZED 3     /* driver wrapper with no driver behind it */
#define KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER 35 /* runtime wrapper with no runtime behind it */
#define KIMG_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2
#define KIMG_GET_PROC_ADDRESS_V2_VERSION 12000 /* "cuGetProcAddress" >= this is the 5-arg _v2 */
#define KIMG_LINK_V2_VERSION 6050 /* cuLink{Create,AddData,AddFile}_v2 since CUDA 6.5 (same ABI) */
#define KIMG_MODULE_GET_GLOBAL_V2_VERSION 3020 /* cuModuleGetGlobal_v2: 64-bit pointer and size */
#define KIMG_LOGS_VERSION 12090   /* cuLogsRegisterCallback: CUDA 12.9 */

struct kimg_dim3 { unsigned x, y, z; };

enum kimg_hook_id {
	/* driver (hook_driver.c) */
	KIMG_HOOK_cuModuleLoad = 0,
	KIMG_HOOK_cuModuleLoadData,
	KIMG_HOOK_cuModuleLoadDataEx,
	KIMG_HOOK_cuModuleLoadFatBinary,
	KIMG_HOOK_cuLibraryLoadData,
	KIMG_HOOK_cuLibraryLoadFromFile,
	KIMG_HOOK_cuModuleGetFunction,
	KIMG_HOOK_cuLibraryGetKernel,
	KIMG_HOOK_cuLibraryGetModule,
	KIMG_HOOK_cuKernelGetFunction,
	KIMG_HOOK_cuLaunchKernel,
	KIMG_HOOK_cuLaunchKernel_ptsz,
	KIMG_HOOK_cuLaunchKernelEx,
	KIMG_HOOK_cuLaunchKernelEx_ptsz,
	KIMG_HOOK_cuLaunchCooperativeKernel,
	KIMG_HOOK_cuLaunchCooperativeKernel_ptsz,
	KIMG_HOOK_cuGetProcAddress,     /* 4 arguments, requested version < 12000 */
	KIMG_HOOK_cuGetProcAddress_v2,  /* 5 arguments, requested version >= 12000 */
	/* the JIT linker (hook_link.c); cuda.h maps the plain names to _v2 */
	KIMG_HOOK_cuLinkCreate,
	KIMG_HOOK_cuLinkCreate_v2,
	KIMG_HOOK_cuLinkAddData,
	KIMG_HOOK_cuLinkAddData_v2,
	KIMG_HOOK_cuLinkAddFile,
	KIMG_HOOK_cuLinkAddFile_v2,
	KIMG_HOOK_cuLinkComplete,
	KIMG_HOOK_cuLinkDestroy,
	KIMG_HOOK_cuInit,               /* hook_init.c: 803 / 804 (diag/driver_mismatch.c) */
	/* symbol and variable lookups (hook_symbols.c): CUDA 13 fails a
	 * library's first lookup of any kind, these included ([V] 209 from
	 * cuLibraryGetGlobal for a program that fills a __constant__ table
	 * before its first launch) */
	KIMG_HOOK_cuLibraryGetGlobal,
	KIMG_HOOK_cuLibraryGetManaged,
	KIMG_HOOK_cuLibraryGetUnifiedFunction,
	KIMG_HOOK_cuModuleGetGlobal,    /* CUDA 2.0 ABI: 32-bit pointer and size */
	KIMG_HOOK_cuModuleGetGlobal_v2, /* what cuda.h names cuModuleGetGlobal, from 3020 */
	/* shared cudart (hook_runtime.c) */
	KIMG_HOOK___cudaRegisterFatBinary,
	KIMG_HOOK___cudaRegisterFunction,
	KIMG_HOOK_cudaLaunchKernel,
	KIMG_HOOK_cudaLaunchKernel_ptsz,
	KIMG_HOOK_cudaLaunchKernelExC,
	KIMG_HOOK_cudaLaunchKernelExC_ptsz,
	KIMG_HOOK_cudaLaunchCooperativeKernel,
	KIMG_HOOK_cudaLaunchCooperativeKernel_ptsz,
	KIMG_HOOK_cudaFuncGetAttributes,
	KIMG_HOOK_cudaGetFuncBySymbol,
	KIMG_HOOK_cudaGetDriverEntryPoint,
	KIMG_HOOK_cudaGetDriverEntryPoint_ptsz,
	KIMG_HOOK_cudaGetDriverEntryPointByVersion,
	KIMG_HOOK_cudaGetDriverEntryPointByVersion_ptsz,
	/* the runtime's symbol APIs (hook_runtime.c): a variable's host
	 * shadow -> its registration, and the calls that reach
	 * cuLibraryGetGlobal with it */
	KIMG_HOOK___cudaRegisterVar,
	KIMG_HOOK___cudaRegisterManagedVar,
	KIMG_HOOK_cudaMemcpyToSymbol,
	KIMG_HOOK_cudaMemcpyToSymbol_ptds,
	KIMG_HOOK_cudaMemcpyFromSymbol,
	KIMG_HOOK_cudaMemcpyFromSymbol_ptds,
	KIMG_HOOK_cudaMemcpyToSymbolAsync,
	KIMG_HOOK_cudaMemcpyToSymbolAsync_ptsz,
	KIMG_HOOK_cudaMemcpyFromSymbolAsync,
	KIMG_HOOK_cudaMemcpyFromSymbolAsync_ptsz,
	KIMG_HOOK_cudaGetSymbolAddress,
	KIMG_HOOK_cudaGetSymbolSize,
	KIMG_HOOK_cudaRuntimeGetVersion,  /* the runtime's CUDA version against the driver (diag/driver_mismatch.c) */
	KIMG_HOOK_COUNT
};

struct kimg_hook {
	const char *symbol;  /* exported / dlsym name of this variant: "cuLaunchKernel_ptsz" */
	const char *base;    /* name as asked of cuGetProcAddress: "cuLaunchKernel"; NULL for runtime rows */
	unsigned char ptsz;  /* 1: the per-thread-default-stream variant (flag 2) */
	int min_version;     /* lowest requested cudaVersion this variant answers (cuGetProcAddress_v2: 12000) */
	void *wrapper;       /* our function with the same ABI */
};

KIMG_HIDDEN extern const struct kimg_hook kimg_hook_table[KIMG_HOOK_COUNT];

/* One real pointer per row, written once (compare-and-swap from NULL). */
KIMG_HIDDEN extern _Atomic(void *) kimg_hook_real[KIMG_HOOK_COUNT];

/* ---- the wrappers (hook_driver.c, hook_runtime.c), one per row ----
 * Hidden names; each is exported under the row's symbol by an alias. */
#define KIMG_LAUNCH_DIMS unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz
#define KIMG_LIB_OPTS int *jit_opts, void **jit_vals, unsigned n_jit, int *lib_opts, void **lib_vals, unsigned n_lib
KIMG_HIDDEN CUresult kimg_w_cuModuleLoad(CUhandle *mod, const char *fname);
KIMG_HIDDEN CUresult kimg_w_cuModuleLoadData(CUhandle *mod, const void *image);
KIMG_HIDDEN CUresult kimg_w_cuModuleLoadDataEx(CUhandle *mod, const void *image, unsigned n, int *opts, void **vals);
KIMG_HIDDEN CUresult kimg_w_cuModuleLoadFatBinary(CUhandle *mod, const void *fat_cubin);
KIMG_HIDDEN CUresult kimg_w_cuLibraryLoadData(CUhandle *lib, const void *code, KIMG_LIB_OPTS);
KIMG_HIDDEN CUresult kimg_w_cuLibraryLoadFromFile(CUhandle *lib, const char *file, KIMG_LIB_OPTS);
KIMG_HIDDEN CUresult kimg_w_cuModuleGetFunction(CUhandle *fn, CUhandle mod, const char *name);
KIMG_HIDDEN CUresult kimg_w_cuLibraryGetKernel(CUhandle *kernel, CUhandle lib, const char *name);
KIMG_HIDDEN CUresult kimg_w_cuLibraryGetModule(CUhandle *mod, CUhandle lib);
KIMG_HIDDEN CUresult kimg_w_cuKernelGetFunction(CUhandle *fn, CUhandle kernel);
KIMG_HIDDEN CUresult kimg_w_cuLaunchKernel(CUhandle f, KIMG_LAUNCH_DIMS, unsigned shmem, CUhandle stream,
					   void **params, void **extra);
KIMG_HIDDEN CUresult kimg_w_cuLaunchKernel_ptsz(CUhandle f, KIMG_LAUNCH_DIMS, unsigned shmem, CUhandle stream,
						void **params, void **extra);
KIMG_HIDDEN CUresult kimg_w_cuLaunchKernelEx(const void *config, CUhandle f, void **params, void **extra);
KIMG_HIDDEN CUresult kimg_w_cuLaunchKernelEx_ptsz(const void *config, CUhandle f, void **params, void **extra);
KIMG_HIDDEN CUresult kimg_w_cuLaunchCooperativeKernel(CUhandle f, KIMG_LAUNCH_DIMS, unsigned shmem, CUhandle stream,
						      void **params);
KIMG_HIDDEN CUresult kimg_w_cuLaunchCooperativeKernel_ptsz(CUhandle f, KIMG_LAUNCH_DIMS, unsigned shmem,
							   CUhandle stream, void **params);
KIMG_HIDDEN CUresult kimg_w_cuGetProcAddress(const char *sym, void **pfn, int version, unsigned long long flags);
KIMG_HIDDEN CUresult kimg_w_cuGetProcAddress_v2(const char *sym, void **pfn, int version, unsigned long long flags,
						int *status);
#define KIMG_LINK_ADD_DATA_ARGS CUhandle state, int type, void *data, size_t size, const char *name, \
	unsigned n, int *opts, void **vals
#define KIMG_LINK_ADD_FILE_ARGS CUhandle state, int type, const char *path, unsigned n, int *opts, void **vals
KIMG_HIDDEN CUresult kimg_w_cuLinkCreate(unsigned n, int *opts, void **vals, CUhandle *state);
KIMG_HIDDEN CUresult kimg_w_cuLinkCreate_v2(unsigned n, int *opts, void **vals, CUhandle *state);
KIMG_HIDDEN CUresult kimg_w_cuLinkAddData(KIMG_LINK_ADD_DATA_ARGS);
KIMG_HIDDEN CUresult kimg_w_cuLinkAddData_v2(KIMG_LINK_ADD_DATA_ARGS);
KIMG_HIDDEN CUresult kimg_w_cuLinkAddFile(KIMG_LINK_ADD_FILE_ARGS);
KIMG_HIDDEN CUresult kimg_w_cuLinkAddFile_v2(KIMG_LINK_ADD_FILE_ARGS);
KIMG_HIDDEN CUresult kimg_w_cuLinkComplete(CUhandle state, void **cubin, size_t *size);
KIMG_HIDDEN CUresult kimg_w_cuLinkDestroy(CUhandle state);
KIMG_HIDDEN CUresult kimg_w_cuInit(unsigned flags);
KIMG_HIDDEN CUresult kimg_w_cuLibraryGetGlobal(unsigned long long *dptr, size_t *bytes, CUhandle lib, const char *name);
KIMG_HIDDEN CUresult kimg_w_cuLibraryGetManaged(unsigned long long *dptr, size_t *bytes, CUhandle lib, const char *name);
KIMG_HIDDEN CUresult kimg_w_cuLibraryGetUnifiedFunction(void **fptr, CUhandle lib, const char *symbol);
KIMG_HIDDEN CUresult kimg_w_cuModuleGetGlobal(unsigned *dptr, unsigned *bytes, CUhandle mod, const char *name);
KIMG_HIDDEN CUresult kimg_w_cuModuleGetGlobal_v2(unsigned long long *dptr, size_t *bytes, CUhandle mod,
						 const char *name);
KIMG_HIDDEN cudaError_t kimg_w_cudaRuntimeGetVersion(int *version);
KIMG_HIDDEN void **kimg_w___cudaRegisterFatBinary(void *fat_cubin);
KIMG_HIDDEN void kimg_w___cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
					       const char *device_name, int thread_limit, void *tid, void *bid,
					       void *block_dim, void *grid_dim, int *warp_size);
KIMG_HIDDEN cudaError_t kimg_w_cudaLaunchKernel(const void *func, struct kimg_dim3 grid, struct kimg_dim3 block,
						void **args, size_t shmem, CUhandle stream);
KIMG_HIDDEN cudaError_t kimg_w_cudaLaunchKernel_ptsz(const void *func, struct kimg_dim3 grid,
						     struct kimg_dim3 block, void **args, size_t shmem,
						     CUhandle stream);
KIMG_HIDDEN cudaError_t kimg_w_cudaLaunchKernelExC(const void *config, const void *func, void **args);
KIMG_HIDDEN cudaError_t kimg_w_cudaLaunchKernelExC_ptsz(const void *config, const void *func, void **args);
KIMG_HIDDEN cudaError_t kimg_w_cudaLaunchCooperativeKernel(const void *func, struct kimg_dim3 grid,
							   struct kimg_dim3 block, void **args, size_t shmem,
							   CUhandle stream);
KIMG_HIDDEN cudaError_t kimg_w_cudaLaunchCooperativeKernel_ptsz(const void *func, struct kimg_dim3 grid,
								struct kimg_dim3 block, void **args, size_t shmem,
								CUhandle stream);
KIMG_HIDDEN cudaError_t kimg_w_cudaFuncGetAttributes(void *attr, const void *func);
KIMG_HIDDEN cudaError_t kimg_w_cudaGetFuncBySymbol(void **fn, const void *symbol);
KIMG_HIDDEN cudaError_t kimg_w_cudaGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long flags,
						       int *status);
KIMG_HIDDEN cudaError_t kimg_w_cudaGetDriverEntryPoint_ptsz(const char *sym, void **pfn, unsigned long long flags,
							    int *status);
KIMG_HIDDEN cudaError_t kimg_w_cudaGetDriverEntryPointByVersion(const char *sym, void **pfn, unsigned version,
								unsigned long long flags, int *status);
KIMG_HIDDEN cudaError_t kimg_w_cudaGetDriverEntryPointByVersion_ptsz(const char *sym, void **pfn, unsigned version,
								     unsigned long long flags, int *status);
#define KIMG_REGISTER_VAR_ARGS void **handle, char *host_var, char *device_address, const char *device_name, \
	int ext, size_t size, int constant, int global
KIMG_HIDDEN void kimg_w___cudaRegisterVar(KIMG_REGISTER_VAR_ARGS);
KIMG_HIDDEN void kimg_w___cudaRegisterManagedVar(void **handle, void **host_var_ptr, char *device_address,
						 const char *device_name, int ext, size_t size, int constant,
						 int global);
#define KIMG_TO_SYMBOL_ARGS const void *symbol, const void *src, size_t count, size_t offset, int kind
#define KIMG_FROM_SYMBOL_ARGS void *dst, const void *symbol, size_t count, size_t offset, int kind
KIMG_HIDDEN cudaError_t kimg_w_cudaMemcpyToSymbol(KIMG_TO_SYMBOL_ARGS);
KIMG_HIDDEN cudaError_t kimg_w_cudaMemcpyToSymbol_ptds(KIMG_TO_SYMBOL_ARGS);
KIMG_HIDDEN cudaError_t kimg_w_cudaMemcpyFromSymbol(KIMG_FROM_SYMBOL_ARGS);
KIMG_HIDDEN cudaError_t kimg_w_cudaMemcpyFromSymbol_ptds(KIMG_FROM_SYMBOL_ARGS);
KIMG_HIDDEN cudaError_t kimg_w_cudaMemcpyToSymbolAsync(KIMG_TO_SYMBOL_ARGS, CUhandle stream);
KIMG_HIDDEN cudaError_t kimg_w_cudaMemcpyToSymbolAsync_ptsz(KIMG_TO_SYMBOL_ARGS, CUhandle stream);
KIMG_HIDDEN cudaError_t kimg_w_cudaMemcpyFromSymbolAsync(KIMG_FROM_SYMBOL_ARGS, CUhandle stream);
KIMG_HIDDEN cudaError_t kimg_w_cudaMemcpyFromSymbolAsync_ptsz(KIMG_FROM_SYMBOL_ARGS, CUhandle stream);
KIMG_HIDDEN cudaError_t kimg_w_cudaGetSymbolAddress(void **dev_ptr, const void *symbol);
KIMG_HIDDEN cudaError_t kimg_w_cudaGetSymbolSize(size_t *size, const void *symbol);

/* The CU_JIT_ERROR_LOG_BUFFER / _SIZE_BYTES pair among JIT options
 * (hook_link.c): *log NULL and *size 0 when the program gave none. */
KIMG_HIDDEN void kimg_jit_log_option(unsigned n, const int *opts, void *const *vals, const char **log, size_t *size);

/* A failed driver call with an image-class result (hook_driver.c): hand
 * it to the diagnosis, errno kept. symbol: the variable or function a
 * symbol lookup named (hook_symbols.c), else NULL. */
KIMG_HIDDEN KIMG_COLD void kimg_hook_driver_fail(const char *call, CUresult r, const char *kernel, const char *symbol,
						 enum kimg_handle_kind kind, const void *handle, const void *caller);

/* ---- hook_logs.c: the driver's error log ----
 * Register kimg's callback with the driver once (cuLogsRegisterCallback,
 * resolved through the real cuGetProcAddress at 12090; a driver without it:
 * nothing happens). Called where kimg first meets the driver: cuInit and
 * the first answered cuGetProcAddress. Cheap after the first call. */
KIMG_HIDDEN void kimg_hook_logs_attach(void);
KIMG_HIDDEN void kimg_hook_logs_attach_at_registration(void);

/* ---- resolve.c (kimg_real_dlsym itself is an up-call: shim/diag.h) ---- */

typedef void *(*kimg_dlsym_fn)(void *, const char *);
KIMG_HIDDEN kimg_dlsym_fn kimg_real_dlsym_fn(void);

/* Definition of `name` in the first loaded object that defines it
 * itself (load order), libkimg excluded; NULL if none. Cold path only. */
KIMG_HIDDEN void *kimg_find_in_loaded(const char *name);

/* Real function of row id: its slot, else resolved once through
 * RTLD_NEXT from libkimg (the program linked libcuda / libcudart directly).
 * NULL when nothing behind libkimg defines it. */
KIMG_HIDDEN void *kimg_hook_resolve(enum kimg_hook_id id);

static inline void *kimg_hook_get(enum kimg_hook_id id)
{
	void *p = atomic_load_explicit(&kimg_hook_real[id], memory_order_acquire);
	return KIMG_LIKELY(p != NULL) ? p : kimg_hook_resolve(id);
}

/* Given the real pointer `real` obtained for row id (from dlsym or
 * cuGetProcAddress), return what the caller should get: our wrapper when
 * the row's slot holds exactly `real` (storing it if empty), else `real`
 * itself: a wrapper is never paired with a function it was not made for. */
KIMG_HIDDEN void *kimg_hook_wrap(enum kimg_hook_id id, void *real);

/* Row for an exact exported name ("cuGetProcAddress_v2"), or -1. */
KIMG_HIDDEN int kimg_hook_find_symbol(const char *name);

/* Row that cuGetProcAddress(base, version, flags) answers with, or -1:
 * the per-thread variant when flags has bit 2 and one exists, and among
 * the rest the highest min_version <= version. */
KIMG_HIDDEN int kimg_hook_find_proc(const char *base, int version, unsigned long long flags);

/* Wrap a pointer returned for a driver entry-point query (cuGetProcAddress,
 * cudaGetDriverEntryPoint*): the row chosen by (name, version, flags). */
KIMG_HIDDEN void *kimg_hook_wrap_proc(const char *base, int version, unsigned long long flags, void *real);

/* ---- init.c ---- */

/* Options are read by the constructor, but a preloaded library's
 * constructor can run after other libraries' constructors that already
 * call CUDA (static initialisers registering fatbins); cold paths call
 * this first. Idempotent, lock-free after the first call. */
KIMG_HIDDEN void kimg_shim_ensure_init(void);

/* Should a hook act (record, report, wrap)? False while diagnosis runs on
 * this thread or when kimg is disabled for this process. */
static inline bool kimg_hooks_active(void)
{
	return !kimg_in_diagnosis && !kimg_opts.disabled;
}

/* Should the load hooks call kimg_load_intercept? One predictable branch
 * when neither KIMG_FALLBACK nor KIMG_AUDIT is set. */
static inline bool kimg_load_checks_wanted(void)
{
	kimg_shim_ensure_init();
	return KIMG_UNLIKELY(kimg_opts.fallback != KIMG_FALLBACK_NONE || kimg_opts.audit) && kimg_hooks_active();
}

#endif
