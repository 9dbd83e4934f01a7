/* SPDX-License-Identifier: Apache-2.0 */
/* Wrappers for the driver entry points that load device code or use it
 * (docs/loading.md section 4: where image errors surface), and the
 * cuGetProcAddress pair through which static cudart reaches all of them.
 *
 * Each wrapper: call the real function; on success of a load or lookup,
 * record where the handle came from (registry, lock and allocation free);
 * on an image-class error, hand the facts to the diagnosis; return the
 * driver's result unchanged. Launches record nothing: their success path
 * is the real call plus one predictable branch. */
#include <errno.h>

#include "cuda_errors.h"
#include "hook.h"

/* ---- cold paths ---- */

/* caller: the wrapper's return address (whose call it was, for
 * dispatch_track.h); launch: a launch, never a library's probe. */
static KIMG_COLD void fail_with(const char *call, CUresult r, const char *kernel, const char *symbol,
				enum kimg_handle_kind kind, const void *handle, const void *image, const char *path,
				const void *caller, bool launch)
{
	int saved = errno;
	kimg_shim_ensure_init();
	/* 500 and 98 are passed too: the diagnosis confirms them against the
	 * module's images (cuda_errors.h) before reporting. */
	if (kimg_hooks_active() && kimg_cuda_error_is_image_class(r)) {
		struct kimg_failure f = {
			.call = call, .error = r, .kernel = kernel, .symbol = symbol, .symbol_lookup = symbol != NULL,
			.handle_kind = kind, .handle = handle, .image = image, .path = path, .caller = caller,
			.launch = launch,
		};
		kimg_report_failure(&f); /* sets kimg_in_diagnosis itself */
	}
	errno = saved;
}

static KIMG_COLD void fail(const char *call, CUresult r, const char *kernel, enum kimg_handle_kind kind,
			   const void *handle, const void *image, const char *path, const void *caller, bool launch)
{
	fail_with(call, r, kernel, NULL, kind, handle, image, path, caller, launch);
}

void kimg_hook_driver_fail(const char *call, CUresult r, const char *kernel, const char *symbol,
			   enum kimg_handle_kind kind, const void *handle, const void *caller)
{
	fail_with(call, r, kernel, symbol, kind, handle, NULL, NULL, caller, false);
}

/* cuModuleLoadDataEx with JIT options: the driver's error log joins the report. */
static KIMG_COLD void fail_jit(const char *call, CUresult r, const void *image, unsigned n, int *opts, void **vals)
{
	int saved = errno;
	kimg_shim_ensure_init();
	if (kimg_hooks_active() && kimg_cuda_error_is_image_class(r)) {
		struct kimg_link_facts lf = { 0 };
		kimg_jit_log_option(n, opts, vals, &lf.log, &lf.log_size);
		struct kimg_failure f = {
			.call = call, .error = r, .handle_kind = KIMG_HANDLE_MODULE, .image = image, .link = &lf,
		};
		kimg_report_failure(&f);
	}
	errno = saved;
}

static void record(enum kimg_handle_kind kind, const void *handle, const void *image, const char *path,
		   const void *parent, const char *name)
{
	kimg_shim_ensure_init();
	if (!handle || !kimg_hooks_active())
		return;
	struct kimg_origin o = { .image = image, .path = path, .parent = parent, .name = name };
	kimg_registry_add(kind, handle, &o);
}

/* Both KIMG_CUDA_ERROR_NOT_INITIALIZED: a wrapper reached with no driver
 * behind it (the program was linked against a libcuda stub that is not
 * there at run time) answers what the real stub-less call would. */
#define REAL(id, type)                                     \
	__typeof__(type) real = (__typeof__(type))kimg_hook_get(KIMG_HOOK_##id); \
	if (KIMG_UNLIKELY(!real))                          \
		return KIMG_CUDA_ERROR_NOT_INITIALIZED

#define EXPORT_AS(name, ...) KIMG_EXPORT CUresult name(__VA_ARGS__) __attribute__((alias("kimg_w_" #name)))

/* ---- loads of a stand-in for KIMG_FALLBACK (kimg_load_intercept, shim/diag.h) ----
 * The stand-in is PTX text in memory, so path loads go through the
 * in-memory entry point with the caller's other arguments. */

typedef CUresult (*module_data_fn)(CUhandle *, const void *);
typedef CUresult (*module_data_ex_fn)(CUhandle *, const void *, unsigned, int *, void **);
typedef CUresult (*library_data_fn)(CUhandle *, const void *, int *, void **, unsigned, int *, void **, unsigned);

struct module_args {
	module_data_fn data;
	module_data_ex_fn ex; /* used when set */
	unsigned n;
	int *opts;
	void **vals;
};

static CUresult load_module_standin(void *ctx, const void *image, CUhandle *h)
{
	const struct module_args *a = ctx;
	return a->ex ? a->ex(h, image, a->n, a->opts, a->vals) : a->data(h, image);
}

struct library_args {
	library_data_fn data;
	int *jit_opts;
	void **jit_vals;
	unsigned n_jit;
	int *lib_opts;
	void **lib_vals;
	unsigned n_lib;
};

static CUresult load_library_standin(void *ctx, const void *image, CUhandle *h)
{
	const struct library_args *a = ctx;
	return a->data(h, image, a->jit_opts, a->jit_vals, a->n_jit, a->lib_opts, a->lib_vals, a->n_lib);
}

/* Fallback and audit for a module load; true when the stand-in was loaded
 * (*r holds the result to return). */
static KIMG_COLD bool module_intercept(const char *call, const void *image, const char *path, struct module_args *a,
				       CUhandle *mod, CUresult *r)
{
	if (!a->data && !a->ex)
		return false;
	struct kimg_load_req q = { call, KIMG_HANDLE_MODULE, image, path };
	return kimg_load_intercept(&q, load_module_standin, a, mod, r);
}

static KIMG_COLD bool library_intercept(const char *call, const void *code, const char *path,
					struct library_args *a, CUhandle *lib, CUresult *r)
{
	if (!a->data)
		return false;
	struct kimg_load_req q = { call, KIMG_HANDLE_LIBRARY, code, path };
	return kimg_load_intercept(&q, load_library_standin, a, lib, r);
}

/* ---- loads: record handle -> image / path ---- */

/* The common end of every load wrapper: remember where a loaded handle's
 * code came from, or hand a failed load to the diagnosis. */
static CUresult loaded(const char *call, CUresult r, enum kimg_handle_kind kind, CUhandle *h, const void *image,
		       const char *path, const void *caller)
{
	if (r == KIMG_CUDA_SUCCESS)
		record(kind, h ? *h : NULL, image, path, NULL, NULL);
	else
		fail(call, r, NULL, kind, NULL, image, path, caller, false);
	return r;
}

CUresult kimg_w_cuModuleLoad(CUhandle *mod, const char *fname)
{
	REAL(cuModuleLoad, CUresult(*)(CUhandle *, const char *));
	CUresult r;
	if (kimg_load_checks_wanted()) {
		struct module_args a = { (module_data_fn)kimg_hook_get(KIMG_HOOK_cuModuleLoadData), NULL, 0, NULL, NULL };
		if (module_intercept("cuModuleLoad", NULL, fname, &a, mod, &r))
			return r;
	}
	return loaded("cuModuleLoad", real(mod, fname), KIMG_HANDLE_MODULE, mod, NULL, fname,
		      __builtin_return_address(0));
}
EXPORT_AS(cuModuleLoad, CUhandle *mod, const char *fname);

CUresult kimg_w_cuModuleLoadData(CUhandle *mod, const void *image)
{
	REAL(cuModuleLoadData, CUresult(*)(CUhandle *, const void *));
	CUresult r;
	if (kimg_load_checks_wanted()) {
		struct module_args a = { real, NULL, 0, NULL, NULL };
		if (module_intercept("cuModuleLoadData", image, NULL, &a, mod, &r))
			return r;
	}
	return loaded("cuModuleLoadData", real(mod, image), KIMG_HANDLE_MODULE, mod, image, NULL,
		      __builtin_return_address(0));
}
EXPORT_AS(cuModuleLoadData, CUhandle *mod, const void *image);

CUresult kimg_w_cuModuleLoadDataEx(CUhandle *mod, const void *image, unsigned n, int *opts, void **vals)
{
	REAL(cuModuleLoadDataEx, CUresult(*)(CUhandle *, const void *, unsigned, int *, void **));
	CUresult r;
	if (kimg_load_checks_wanted()) {
		struct module_args a = { NULL, real, n, opts, vals };
		if (module_intercept("cuModuleLoadDataEx", image, NULL, &a, mod, &r))
			return r;
	}
	r = real(mod, image, n, opts, vals);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS) && n > 0) {
		fail_jit("cuModuleLoadDataEx", r, image, n, opts, vals);
		return r;
	}
	return loaded("cuModuleLoadDataEx", r, KIMG_HANDLE_MODULE, mod, image, NULL,
		      __builtin_return_address(0));
}
EXPORT_AS(cuModuleLoadDataEx, CUhandle *mod, const void *image, unsigned n, int *opts, void **vals);

CUresult kimg_w_cuModuleLoadFatBinary(CUhandle *mod, const void *fat_cubin)
{
	REAL(cuModuleLoadFatBinary, CUresult(*)(CUhandle *, const void *));
	CUresult r;
	if (kimg_load_checks_wanted()) {
		struct module_args a = { (module_data_fn)kimg_hook_get(KIMG_HOOK_cuModuleLoadData), NULL, 0, NULL, NULL };
		if (module_intercept("cuModuleLoadFatBinary", fat_cubin, NULL, &a, mod, &r))
			return r;
	}
	return loaded("cuModuleLoadFatBinary", real(mod, fat_cubin), KIMG_HANDLE_MODULE, mod, fat_cubin, NULL,
		      __builtin_return_address(0));
}
EXPORT_AS(cuModuleLoadFatBinary, CUhandle *mod, const void *fat_cubin);

/* CUDA 13 succeeds here even when nothing fits ([V], docs/loading.md
 * section 4): the registry entry is what lets the later cuLibraryGetKernel
 * failure name the image. */
CUresult kimg_w_cuLibraryLoadData(CUhandle *lib, const void *code, KIMG_LIB_OPTS)
{
	REAL(cuLibraryLoadData,
	     CUresult(*)(CUhandle *, const void *, int *, void **, unsigned, int *, void **, unsigned));
	CUresult r;
	if (kimg_load_checks_wanted()) {
		struct library_args a = { real, jit_opts, jit_vals, n_jit, lib_opts, lib_vals, n_lib };
		if (library_intercept("cuLibraryLoadData", code, NULL, &a, lib, &r))
			return r;
	}
	return loaded("cuLibraryLoadData", real(lib, code, jit_opts, jit_vals, n_jit, lib_opts, lib_vals, n_lib), KIMG_HANDLE_LIBRARY, lib, code, NULL,
		      __builtin_return_address(0));
}
EXPORT_AS(cuLibraryLoadData, CUhandle *lib, const void *code, KIMG_LIB_OPTS);

CUresult kimg_w_cuLibraryLoadFromFile(CUhandle *lib, const char *file, KIMG_LIB_OPTS)
{
	REAL(cuLibraryLoadFromFile,
	     CUresult(*)(CUhandle *, const char *, int *, void **, unsigned, int *, void **, unsigned));
	CUresult r;
	if (kimg_load_checks_wanted()) {
		struct library_args a = { (library_data_fn)kimg_hook_get(KIMG_HOOK_cuLibraryLoadData), jit_opts,
					  jit_vals, n_jit, lib_opts, lib_vals, n_lib };
		if (library_intercept("cuLibraryLoadFromFile", NULL, file, &a, lib, &r))
			return r;
	}
	return loaded("cuLibraryLoadFromFile", real(lib, file, jit_opts, jit_vals, n_jit, lib_opts, lib_vals, n_lib), KIMG_HANDLE_LIBRARY, lib, NULL, file,
		      __builtin_return_address(0));
}
EXPORT_AS(cuLibraryLoadFromFile, CUhandle *lib, const char *file, KIMG_LIB_OPTS);

/* ---- lookups: record function/kernel -> parent + name ---- */

CUresult kimg_w_cuModuleGetFunction(CUhandle *fn, CUhandle mod, const char *name)
{
	REAL(cuModuleGetFunction, CUresult(*)(CUhandle *, CUhandle, const char *));
	CUresult r = real(fn, mod, name);
	if (r == KIMG_CUDA_SUCCESS)
		record(KIMG_HANDLE_FUNCTION, fn ? *fn : NULL, NULL, NULL, mod, name);
	else
		fail("cuModuleGetFunction", r, name, KIMG_HANDLE_MODULE, mod, NULL, NULL, __builtin_return_address(0),
		     false);
	return r;
}
EXPORT_AS(cuModuleGetFunction, CUhandle *fn, CUhandle mod, const char *name);

CUresult kimg_w_cuLibraryGetKernel(CUhandle *kernel, CUhandle lib, const char *name)
{
	REAL(cuLibraryGetKernel, CUresult(*)(CUhandle *, CUhandle, const char *));
	CUresult r = real(kernel, lib, name);
	if (r == KIMG_CUDA_SUCCESS)
		record(KIMG_HANDLE_KERNEL, kernel ? *kernel : NULL, NULL, NULL, lib, name);
	else
		fail("cuLibraryGetKernel", r, name, KIMG_HANDLE_LIBRARY, lib, NULL, NULL, __builtin_return_address(0),
		     false);
	return r;
}
EXPORT_AS(cuLibraryGetKernel, CUhandle *kernel, CUhandle lib, const char *name);

/* The module of a library stands for the same code: it inherits the
 * library's origin, so a failure on the module still names the image. */
CUresult kimg_w_cuLibraryGetModule(CUhandle *mod, CUhandle lib)
{
	REAL(cuLibraryGetModule, CUresult(*)(CUhandle *, CUhandle));
	CUresult r = real(mod, lib);
	if (r == KIMG_CUDA_SUCCESS) {
		struct kimg_origin o;
		kimg_shim_ensure_init();
		if (kimg_hooks_active() && kimg_registry_find(KIMG_HANDLE_LIBRARY, lib, &o))
			record(KIMG_HANDLE_MODULE, mod ? *mod : NULL, o.image, o.path, lib, NULL);
	} else {
		fail("cuLibraryGetModule", r, NULL, KIMG_HANDLE_LIBRARY, lib, NULL, NULL, __builtin_return_address(0),
		     false);
	}
	return r;
}
EXPORT_AS(cuLibraryGetModule, CUhandle *mod, CUhandle lib);

CUresult kimg_w_cuKernelGetFunction(CUhandle *fn, CUhandle kernel)
{
	REAL(cuKernelGetFunction, CUresult(*)(CUhandle *, CUhandle));
	CUresult r = real(fn, kernel);
	if (r == KIMG_CUDA_SUCCESS) {
		/* [V] under CUDA 13 the CUfunction equals the CUkernel: an entry
		 * pointing at itself would hide the library, so skip it. */
		if (fn && *fn != kernel)
			record(KIMG_HANDLE_FUNCTION, *fn, NULL, NULL, kernel, NULL);
	} else {
		fail("cuKernelGetFunction", r, NULL, KIMG_HANDLE_KERNEL, kernel, NULL, NULL, __builtin_return_address(0),
		     false);
	}
	return r;
}
EXPORT_AS(cuKernelGetFunction, CUhandle *fn, CUhandle kernel);

/* ---- launches: hot path, nothing but the real call and one branch ---- */

#define LAUNCH_ARGS f, gx, gy, gz, bx, by, bz, shmem, stream
typedef CUresult (*launch_fn)(CUhandle, KIMG_LAUNCH_DIMS, unsigned, CUhandle, void **, void **);
typedef CUresult (*launch_ex_fn)(const void *, CUhandle, void **, void **);
typedef CUresult (*launch_coop_fn)(CUhandle, KIMG_LAUNCH_DIMS, unsigned, CUhandle, void **);

#define DEFINE_LAUNCH(name)                                                                             \
	CUresult kimg_w_##name(CUhandle f, KIMG_LAUNCH_DIMS, unsigned shmem, CUhandle stream, void **params,  \
			       void **extra)                                                                 \
	{                                                                                                    \
		REAL(name, launch_fn);                                                                       \
		CUresult r = real(LAUNCH_ARGS, params, extra);                                               \
		if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))                                                   \
			fail(#name, r, NULL, KIMG_HANDLE_FUNCTION, f, NULL, NULL, NULL, true);               \
		return r;                                                                                    \
	}                                                                                                    \
	EXPORT_AS(name, CUhandle f, KIMG_LAUNCH_DIMS, unsigned shmem, CUhandle stream, void **params, void **extra)

#define DEFINE_LAUNCH_EX(name)                                                                  \
	CUresult kimg_w_##name(const void *config, CUhandle f, void **params, void **extra)        \
	{                                                                                            \
		REAL(name, launch_ex_fn);                                                            \
		CUresult r = real(config, f, params, extra);                                         \
		if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))                                           \
			fail(#name, r, NULL, KIMG_HANDLE_FUNCTION, f, NULL, NULL, NULL, true);       \
		return r;                                                                            \
	}                                                                                            \
	EXPORT_AS(name, const void *config, CUhandle f, void **params, void **extra)

#define DEFINE_LAUNCH_COOP(name)                                                                        \
	CUresult kimg_w_##name(CUhandle f, KIMG_LAUNCH_DIMS, unsigned shmem, CUhandle stream, void **params) \
	{                                                                                                    \
		REAL(name, launch_coop_fn);                                                                  \
		CUresult r = real(LAUNCH_ARGS, params);                                                      \
		if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))                                                   \
			fail(#name, r, NULL, KIMG_HANDLE_FUNCTION, f, NULL, NULL, NULL, true);               \
		return r;                                                                                    \
	}                                                                                                    \
	EXPORT_AS(name, CUhandle f, KIMG_LAUNCH_DIMS, unsigned shmem, CUhandle stream, void **params)

DEFINE_LAUNCH(cuLaunchKernel);
DEFINE_LAUNCH(cuLaunchKernel_ptsz);
DEFINE_LAUNCH_EX(cuLaunchKernelEx);
DEFINE_LAUNCH_EX(cuLaunchKernelEx_ptsz);
DEFINE_LAUNCH_COOP(cuLaunchCooperativeKernel);
DEFINE_LAUNCH_COOP(cuLaunchCooperativeKernel_ptsz);

/* ---- cuGetProcAddress: hand out wrappers for the names above ----
 * The wrapper for "cuGetProcAddress" itself is picked by the requested
 * version, never by the name: >= 12000 means the 5-argument _v2, and a
 * 4-argument wrapper there broke cudart ([V], docs/loading.md section 3).
 * cuGetExportTable and every other name pass through untouched. */

static CUresult proc_finish(CUresult r, const char *sym, void **pfn, int version, unsigned long long flags)
{
	/* the runtime asks with its own CUDA version: newer than the driver is error 35 */
	kimg_shim_ensure_init();
	if (kimg_hooks_active())
		kimg_driver_mismatch_note_request(version, "cuGetProcAddress");
	/* the driver is loaded and answering: its error log can be joined now */
	if (r == KIMG_CUDA_SUCCESS)
		kimg_hook_logs_attach();
	if (r == KIMG_CUDA_SUCCESS && sym && pfn && *pfn) {
		kimg_shim_ensure_init();
		if (kimg_hooks_active())
			*pfn = kimg_hook_wrap_proc(sym, version, flags, *pfn);
	}
	return r;
}

CUresult kimg_w_cuGetProcAddress(const char *sym, void **pfn, int version, unsigned long long flags)
{
	REAL(cuGetProcAddress, CUresult(*)(const char *, void **, int, unsigned long long));
	return proc_finish(real(sym, pfn, version, flags), sym, pfn, version, flags);
}
EXPORT_AS(cuGetProcAddress, const char *sym, void **pfn, int version, unsigned long long flags);

CUresult kimg_w_cuGetProcAddress_v2(const char *sym, void **pfn, int version, unsigned long long flags, int *status)
{
	REAL(cuGetProcAddress_v2, CUresult(*)(const char *, void **, int, unsigned long long, int *));
	return proc_finish(real(sym, pfn, version, flags, status), sym, pfn, version, flags);
}
EXPORT_AS(cuGetProcAddress_v2, const char *sym, void **pfn, int version, unsigned long long flags, int *status);
