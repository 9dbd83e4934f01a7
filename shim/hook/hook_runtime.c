/* SPDX-License-Identifier: Apache-2.0 */
/* Wrappers for shared-cudart entry points (libcudart.so, -cudart shared,
 * as in PyTorch wheels): interposed by symbol, forwarding to the next
 * definition (docs/loading.md section 1). With static cudart none of
 * these is reachable, and the driver hooks do the work instead.
 *
 * Registration gives the only link from a host stub (the address
 * cudaLaunchKernel receives) to its kernel name and fatbin wrapper, so it
 * is recorded; launches and attribute queries report image-class errors
 * against the stub.
 *
 * Symbol versions. libcudart versions its symbols
 * (cudaLaunchKernel@@libcudart.so.13), and a versioned reference binds
 * only to a definition of that version (glibc's check_match): a plain
 * export never sees code linked against the real runtime ([V] on the
 * H200: a PyTorch extension registered and launched past libkimg). So
 * every runtime hook is exported several times, from one table below:
 *
 *   name@libcudart.so.11.0, name@libcudart.so.12, name@libcudart.so.13
 *       for references made against a real runtime of that major; each
 *       forwards to the same version behind libkimg (dlvsym), so a process
 *       holding two runtimes (a cu12 wheel next to an extension built with
 *       CUDA 13) calls each through its own;
 *   name@@KIMG_1.0
 *       the default, for unversioned references and dlsym (the hooks
 *       table's wrapper, kimg_hook_real slot). It is set with .symver
 *       too: a plain definition next to .symver aliases of the same name
 *       loses its default version.
 *
 * Which runtime has which function (version nodes are per major, so 11.x
 * minors all use libcudart.so.11.0): cudart 13.0 has all 14 hooked names
 * ([V] readelf of the toolkit's libcudart.so.13). From the headers and
 * release notes, not verified here: cudaGetFuncBySymbol and the
 * cooperative launches exist in every 11.x and 12.x, cudaGetDriverEntryPoint
 * since 11.3 (its _ptsz variant in 12.x), cudaLaunchKernelExC(_ptsz) since
 * 11.8, cudaGetDriverEntryPointByVersion(_ptsz) since 12.5. Exporting a
 * version a runtime lacks is harmless: nothing linked against that runtime
 * references it, and if something does (dlvsym by hand) dlvsym finds no
 * real function and the wrapper returns cudaErrorInsufficientDriver (35),
 * the "no runtime behind libkimg" answer of the unversioned wrappers.
 *
 * About 500 lines on purpose: every export is expanded from the one list
 * at the end of this file (RT_HOOK), and each expansion needs the
 * versioned resolver and the always_inline bodies of the launch and
 * symbol paths above it; split, those hot-path bodies would move into a
 * header that only this list includes. */
#include <dlfcn.h>
#include <errno.h>

#include "cuda_errors.h"
#include "hook.h"

/* ---- the real function per (hook, runtime version) ---- */

/* Version node per tag (the tag names the alias kimg_x<tag>_NAME); index
 * = position in cudart_versions and in each slot row. RT_HOOK below
 * expands one wrapper per line of this list. */
#define CUDART_NODE_11 "libcudart.so.11.0"
#define CUDART_NODE_12 "libcudart.so.12"
#define CUDART_NODE_13 "libcudart.so.13"
#define CUDART_VERSION_COUNT 3
static const char *const cudart_versions[CUDART_VERSION_COUNT] = { CUDART_NODE_11, CUDART_NODE_12, CUDART_NODE_13 };

/* Runtime rows are the tail of enum kimg_hook_id (hook.h), so one slot
 * array covers them without the driver rows. */
#define RT_FIRST KIMG_HOOK___cudaRegisterFatBinary
#define RT_COUNT (KIMG_HOOK_COUNT - RT_FIRST)
_Static_assert(KIMG_HOOK_cudaRuntimeGetVersion + 1 == KIMG_HOOK_COUNT,
	       "runtime hooks must be the last rows of enum kimg_hook_id");

/* Written once per slot (compare-and-swap from NULL), as kimg_hook_real. */
static _Atomic(void *) versioned_real[RT_COUNT][CUDART_VERSION_COUNT];

/* Cold: once per (function, version) and process. RTLD_NEXT from libkimg
 * is the global scope after us: the runtime the program was linked
 * with. A runtime that is only in a dlopen'ed object's local scope (an
 * extension module loaded RTLD_LOCAL, whose own references found our
 * global export first) is not there; it is found by its soname, which is
 * the version node's name, and asked for that version; failing that, for
 * the plain name: glibc lets a versioned reference bind to an object that
 * does not version its symbols at all (a stand-in runtime with the
 * soname), and without libkimg the program would have run. The handle is
 * kept (no dlclose): the runtime cannot be unloaded under a pointer cached
 * here. Its scope is the runtime and its dependencies, never libkimg. */
static KIMG_COLD void *versioned_resolve(enum kimg_hook_id id, unsigned v)
{
	int saved = errno;
	const char *name = kimg_hook_table[id].symbol, *node = cudart_versions[v];
	void *found = dlvsym(RTLD_NEXT, name, node);
	if (!found) {
		void *h = dlopen(node, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			found = dlvsym(h, name, node);
			if (!found)
				found = kimg_real_dlsym(h, name);
		}
	}
	errno = saved;
	if (!found)
		return NULL; /* this runtime lacks the function (see the top) */
	void *expected = NULL;
	if (!atomic_compare_exchange_strong_explicit(&versioned_real[id - RT_FIRST][v], &expected, found,
						     memory_order_acq_rel, memory_order_acquire))
		return expected;
	return found;
}

static inline void *versioned_get(enum kimg_hook_id id, unsigned v)
{
	void *p = atomic_load_explicit(&versioned_real[id - RT_FIRST][v], memory_order_acquire);
	return KIMG_LIKELY(p != NULL) ? p : versioned_resolve(id, v);
}

/* ---- the exports, one line per hook (see the end of this file) ----
 * RT_HOOK(ret, name, (params), ret_kw, call): `call` is the body's call
 * expression, evaluated with `real` bound to the real function of the
 * variant; ret_kw is `return`, or empty for void functions. It defines
 *   kimg_w_NAME         hidden, the hooks table's wrapper (hook.h)
 *   kimg_x0_NAME        name@@KIMG_1.0, an alias of kimg_w_NAME
 *   kimg_x<tag>_NAME    name@libcudart.so.<version>, one per version
 * All share the body; the real pointer is the only difference. */
#define RT_VERSIONED(ret, name, params, ret_kw, call, tag, v)                        \
	KIMG_EXPORT ret kimg_x##tag##_##name params;                                     \
	ret kimg_x##tag##_##name params                                                  \
	{                                                                                \
		void *const real = versioned_get(KIMG_HOOK_##name, v);                   \
		ret_kw call;                                                             \
	}                                                                                \
	__asm__(".symver kimg_x" #tag "_" #name ", " #name "@" CUDART_NODE_##tag);

#define RT_HOOK(ret, name, params, ret_kw, call)                                              \
	ret kimg_w_##name params                                                              \
	{                                                                                     \
		void *const real = kimg_hook_get(KIMG_HOOK_##name);                           \
		ret_kw call;                                                                  \
	}                                                                                     \
	KIMG_EXPORT ret kimg_x0_##name params __attribute__((alias("kimg_w_" #name)));      \
	__asm__(".symver kimg_x0_" #name ", " #name "@@KIMG_1.0");                          \
	RT_VERSIONED(ret, name, params, ret_kw, call, 11, 0)                                  \
	RT_VERSIONED(ret, name, params, ret_kw, call, 12, 1)                                  \
	RT_VERSIONED(ret, name, params, ret_kw, call, 13, 2)
_Static_assert(CUDART_VERSION_COUNT == 3, "RT_HOOK expands one RT_VERSIONED per version node");

/* ---- reporting (cold) ---- */

/* caller: whose call it was (dispatch_track.h); launch: never a probe */
static KIMG_COLD void fail(const char *call, cudaError_t r, const void *stub, const void *caller, bool launch)
{
	int saved = errno;
	kimg_shim_ensure_init();
	if (kimg_hooks_active() && kimg_cuda_error_is_image_class(r)) {
		struct kimg_failure f = {
			.call = call, .error = r, .handle_kind = KIMG_HANDLE_HOST_STUB, .handle = stub,
			.caller = caller, .launch = launch,
		};
		kimg_report_failure(&f); /* sets kimg_in_diagnosis itself */
	}
	errno = saved;
}

/* A symbol API failed: the name the registry holds for the host shadow
 * is the variable's (diagnose.c reports it as the symbol). */
static KIMG_COLD void fail_symbol(const char *call, cudaError_t r, const void *symbol, const void *caller)
{
	int saved = errno;
	kimg_shim_ensure_init();
	if (kimg_hooks_active() && kimg_cuda_error_is_image_class(r)) {
		struct kimg_failure f = {
			.call = call, .error = r, .handle_kind = KIMG_HANDLE_HOST_STUB, .handle = symbol,
			.symbol_lookup = true, .caller = caller,
		};
		kimg_report_failure(&f);
	}
	errno = saved;
}

/* ---- registration (once per module / kernel, at start-up) ---- */

static void **register_fatbin(void *real, void *fat_cubin)
{
	if (KIMG_UNLIKELY(!real))
		return NULL;
	void **handle = ((void **(*)(void *))real)(fat_cubin);
	kimg_shim_ensure_init();
	if (handle && kimg_hooks_active()) {
		struct kimg_origin o = { .image = fat_cubin };
		kimg_registry_add(KIMG_HANDLE_FATBIN, handle, &o);
		/* after the real call: a runtime that loads at registration has
		 * loaded the driver by now, so the audit can ask it */
		if (KIMG_UNLIKELY(kimg_opts.audit))
			kimg_audit_registration(fat_cubin);
		/* the runtime has the driver now, through a table kimg may never
		 * see (cudaGetDriverEntryPoint's): its log is joined here too */
		kimg_hook_logs_attach_at_registration();
	}
	return handle;
}

typedef void (*register_function_fn)(void **, const char *, char *, const char *, int, void *, void *, void *,
				     void *, int *);

static void register_function(void *real, void **handle, const char *host_fun, char *device_fun,
			      const char *device_name, int thread_limit, void *tid, void *bid, void *block_dim,
			      void *grid_dim, int *warp_size)
{
	if (KIMG_UNLIKELY(!real))
		return;
	((register_function_fn)real)(handle, host_fun, device_fun, device_name, thread_limit, tid, bid, block_dim,
				     grid_dim, warp_size);
	kimg_shim_ensure_init();
	if (host_fun && kimg_hooks_active()) {
		/* device_fun is the mangled device name the driver looks up
		 * (cuLibraryGetKernel); device_name is often the same string. */
		struct kimg_origin o = { .parent = handle, .name = device_fun ? device_fun : device_name };
		kimg_registry_add(KIMG_HANDLE_HOST_STUB, host_fun, &o);
	}
}

/* A variable's host shadow (what cudaMemcpyToSymbol receives) -> its
 * registration and device name, as a kernel's host stub. nvcc passes the
 * device name twice (deviceAddress and deviceName). */
static void register_var(void *real, void **handle, char *host_var, char *device_address, const char *device_name,
			 int ext, size_t size, int constant, int global)
{
	if (KIMG_UNLIKELY(!real))
		return;
	((void (*)(void **, char *, char *, const char *, int, size_t, int, int))real)(
		handle, host_var, device_address, device_name, ext, size, constant, global);
	kimg_shim_ensure_init();
	if (host_var && kimg_hooks_active()) {
		struct kimg_origin o = { .parent = handle, .name = device_address ? device_address : device_name };
		kimg_registry_add(KIMG_HANDLE_HOST_STUB, host_var, &o);
	}
}

static void register_managed_var(void *real, void **handle, void **host_var_ptr, char *device_address,
				 const char *device_name, int ext, size_t size, int constant, int global)
{
	if (KIMG_UNLIKELY(!real))
		return;
	((void (*)(void **, void **, char *, const char *, int, size_t, int, int))real)(
		handle, host_var_ptr, device_address, device_name, ext, size, constant, global);
	kimg_shim_ensure_init();
	if (host_var_ptr && kimg_hooks_active()) {
		struct kimg_origin o = { .parent = handle, .name = device_address ? device_address : device_name };
		kimg_registry_add(KIMG_HANDLE_HOST_STUB, host_var_ptr, &o);
	}
}

/* ---- launches and queries (hot: one branch on the result) ---- */

typedef cudaError_t (*rt_launch_fn)(const void *, struct kimg_dim3, struct kimg_dim3, void **, size_t, CUhandle);
typedef cudaError_t (*rt_launch_ex_fn)(const void *, const void *, void **);

static inline cudaError_t launch(const char *call, void *real, const void *func, struct kimg_dim3 grid,
				 struct kimg_dim3 block, void **args, size_t shmem, CUhandle stream)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((rt_launch_fn)real)(func, grid, block, args, shmem, stream);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))
		fail(call, r, func, NULL, true);
	return r;
}

static inline cudaError_t launch_ex(const char *call, void *real, const void *config, const void *func, void **args)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((rt_launch_ex_fn)real)(config, func, args);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))
		fail(call, r, func, NULL, true);
	return r;
}

/* [V] cudaFuncGetAttributes returns 209 for a kernel with no usable image
 * (docs/loading.md section 4, step 4). */
static inline cudaError_t func_attributes(void *real, void *attr, const void *func, const void *caller)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((cudaError_t(*)(void *, const void *))real)(attr, func);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))
		fail("cudaFuncGetAttributes", r, func, caller, false);
	return r;
}

/* The XLA/JAX failure point (jax-ml/jax#40487). */
static inline cudaError_t func_by_symbol(void *real, void **fn, const void *symbol, const void *caller)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((cudaError_t(*)(void **, const void *))real)(fn, symbol);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))
		fail("cudaGetFuncBySymbol", r, symbol, caller, false);
	return r;
}

/* The symbol APIs: their first call on a module reaches cuLibraryGetGlobal
 * (hook_symbols.c, which reports first when the runtime's driver calls
 * pass through kimg); the report here covers a runtime whose driver table
 * kimg never saw, and deduplicates against that one (same module). */
typedef cudaError_t (*to_symbol_fn)(const void *, const void *, size_t, size_t, int);
typedef cudaError_t (*from_symbol_fn)(void *, const void *, size_t, size_t, int);
typedef cudaError_t (*to_symbol_async_fn)(const void *, const void *, size_t, size_t, int, CUhandle);
typedef cudaError_t (*from_symbol_async_fn)(void *, const void *, size_t, size_t, int, CUhandle);

#define SYMBOL_RESULT(call, r, symbol)                                                   	do {                                                                             		if (KIMG_UNLIKELY((r) != KIMG_CUDA_SUCCESS))                             			fail_symbol(call, r, symbol, __builtin_return_address(0));       	} while (0)

static inline __attribute__((always_inline)) cudaError_t to_symbol(const char *call, void *real, KIMG_TO_SYMBOL_ARGS)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((to_symbol_fn)real)(symbol, src, count, offset, kind);
	SYMBOL_RESULT(call, r, symbol);
	return r;
}

static inline __attribute__((always_inline)) cudaError_t from_symbol(const char *call, void *real, KIMG_FROM_SYMBOL_ARGS)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((from_symbol_fn)real)(dst, symbol, count, offset, kind);
	SYMBOL_RESULT(call, r, symbol);
	return r;
}

static inline __attribute__((always_inline)) cudaError_t to_symbol_async(const char *call, void *real, KIMG_TO_SYMBOL_ARGS, CUhandle stream)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((to_symbol_async_fn)real)(symbol, src, count, offset, kind, stream);
	SYMBOL_RESULT(call, r, symbol);
	return r;
}

static inline __attribute__((always_inline)) cudaError_t from_symbol_async(const char *call, void *real, KIMG_FROM_SYMBOL_ARGS, CUhandle stream)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((from_symbol_async_fn)real)(dst, symbol, count, offset, kind, stream);
	SYMBOL_RESULT(call, r, symbol);
	return r;
}

static inline __attribute__((always_inline)) cudaError_t symbol_address(void *real, void **dev_ptr, const void *symbol)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((cudaError_t(*)(void **, const void *))real)(dev_ptr, symbol);
	SYMBOL_RESULT("cudaGetSymbolAddress", r, symbol);
	return r;
}

static inline __attribute__((always_inline)) cudaError_t symbol_size(void *real, size_t *size, const void *symbol)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((cudaError_t(*)(size_t *, const void *))real)(size, symbol);
	SYMBOL_RESULT("cudaGetSymbolSize", r, symbol);
	return r;
}

/* ---- driver entry points handed out by the runtime ----
 * The runtime answers from the driver's cuGetProcAddress, so the pointer
 * is wrapped by the same rule as there (if the runtime reached the driver
 * through our cuGetProcAddress wrapper, the pointer is already ours and
 * is returned as is). The _ptsz entry points mean "per-thread default
 * stream" when flags are 0.
 *
 * cudaGetDriverEntryPoint has no version argument: the runtime returns the
 * newest variant it knows. Asking the table for "newest" picks
 * cuGetProcAddress_v2 for "cuGetProcAddress", and kimg_hook_wrap_proc
 * wraps only if the pointer really is that export, so an older runtime
 * that returns the 4-argument function gets it back unwrapped. (cudart
 * 11.x's cudaGetDriverEntryPoint has no status argument: the one passed on
 * is ignored by it, and never read here.) */
#define ENTRY_POINT_VERSION 0x7fffffff
#define PTSZ_FLAGS(flags) ((flags) ? (flags) : KIMG_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)

typedef cudaError_t (*entry_fn)(const char *, void **, unsigned long long, int *);
typedef cudaError_t (*entry_ver_fn)(const char *, void **, unsigned, unsigned long long, int *);

static cudaError_t entry_finish(cudaError_t r, const char *sym, void **pfn, int version, unsigned long long flags)
{
	if (r == KIMG_CUDA_SUCCESS && sym && pfn && *pfn) {
		kimg_shim_ensure_init();
		if (kimg_hooks_active())
			*pfn = kimg_hook_wrap_proc(sym, version, flags, *pfn);
	}
	return r;
}

static cudaError_t entry(void *real, bool ptsz, const char *sym, void **pfn, unsigned long long flags, int *status)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	return entry_finish(((entry_fn)real)(sym, pfn, flags, status), sym, pfn, ENTRY_POINT_VERSION,
			    ptsz ? PTSZ_FLAGS(flags) : flags);
}

static cudaError_t entry_by_version(void *real, bool ptsz, const char *sym, void **pfn, unsigned version,
				    unsigned long long flags, int *status)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	return entry_finish(((entry_ver_fn)real)(sym, pfn, version, flags, status), sym, pfn, (int)version,
			    ptsz ? PTSZ_FLAGS(flags) : flags);
}

/* ---- the table: every runtime hook, its signature and its body ---- */

#define P_REGISTER_FATBIN (void *fat_cubin)
#define P_REGISTER_FUNCTION                                                                                 \
	(void **handle, const char *host_fun, char *device_fun, const char *device_name, int thread_limit, \
	 void *tid, void *bid, void *block_dim, void *grid_dim, int *warp_size)
#define C_REGISTER_FUNCTION \
	register_function(real, handle, host_fun, device_fun, device_name, thread_limit, tid, bid, block_dim, \
			  grid_dim, warp_size)
#define P_LAUNCH \
	(const void *func, struct kimg_dim3 grid, struct kimg_dim3 block, void **args, size_t shmem, CUhandle stream)
#define P_LAUNCH_EX (const void *config, const void *func, void **args)
#define P_ENTRY (const char *sym, void **pfn, unsigned long long flags, int *status)
#define P_ENTRY_VER (const char *sym, void **pfn, unsigned version, unsigned long long flags, int *status)

#define ROW_REGISTER_FATBIN(name) void **, name, P_REGISTER_FATBIN, return, register_fatbin(real, fat_cubin)
#define ROW_REGISTER_FUNCTION(name) void, name, P_REGISTER_FUNCTION, , C_REGISTER_FUNCTION
#define ROW_LAUNCH(name) \
	cudaError_t, name, P_LAUNCH, return, launch(#name, real, func, grid, block, args, shmem, stream)
#define ROW_LAUNCH_EX(name) cudaError_t, name, P_LAUNCH_EX, return, launch_ex(#name, real, config, func, args)
#define ROW_ATTRIBUTES(name) \
	cudaError_t, name, (void *attr, const void *func), return, \
	func_attributes(real, attr, func, __builtin_return_address(0))
#define ROW_BY_SYMBOL(name) \
	cudaError_t, name, (void **fn, const void *symbol), return, \
	func_by_symbol(real, fn, symbol, __builtin_return_address(0))
#define ROW_ENTRY(name, ptsz) cudaError_t, name, P_ENTRY, return, entry(real, ptsz, sym, pfn, flags, status)
#define ROW_ENTRY_VER(name, ptsz) \
	cudaError_t, name, P_ENTRY_VER, return, entry_by_version(real, ptsz, sym, pfn, version, flags, status)

/* The runtime's own CUDA version, as the program asks for it: newer than
 * the driver is reported once (kimg_driver_mismatch_note_request, shim/diag.h); the answer is unchanged. */
static cudaError_t runtime_version(void *real, int *version)
{
	if (KIMG_UNLIKELY(!real))
		return KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER;
	cudaError_t r = ((cudaError_t(*)(int *))real)(version);
	if (r == 0 && version && *version > 0) {
		kimg_shim_ensure_init();
		if (kimg_hooks_active())
			kimg_driver_mismatch_note_request(*version, "cudaRuntimeGetVersion");
	}
	return r;
}
#define ROW_RUNTIME_VERSION(name) cudaError_t, name, (int *version), return, runtime_version(real, version)

#define ROW_REGISTER_VAR(name) \
	void, name, (KIMG_REGISTER_VAR_ARGS), , \
	register_var(real, handle, host_var, device_address, device_name, ext, size, constant, global)
#define ROW_REGISTER_MANAGED_VAR(name)                                                                          \
	void, name,                                                                                             \
	(void **handle, void **host_var_ptr, char *device_address, const char *device_name, int ext, size_t size, \
	 int constant, int global), ,                                                                           \
	register_managed_var(real, handle, host_var_ptr, device_address, device_name, ext, size, constant, global)
#define ROW_TO_SYMBOL(name) \
	cudaError_t, name, (KIMG_TO_SYMBOL_ARGS), return, to_symbol(#name, real, symbol, src, count, offset, kind)
#define ROW_FROM_SYMBOL(name) \
	cudaError_t, name, (KIMG_FROM_SYMBOL_ARGS), return, from_symbol(#name, real, dst, symbol, count, offset, kind)
#define ROW_TO_SYMBOL_ASYNC(name)                                         \
	cudaError_t, name, (KIMG_TO_SYMBOL_ARGS, CUhandle stream), return, \
	to_symbol_async(#name, real, symbol, src, count, offset, kind, stream)
#define ROW_FROM_SYMBOL_ASYNC(name)                                         \
	cudaError_t, name, (KIMG_FROM_SYMBOL_ARGS, CUhandle stream), return, \
	from_symbol_async(#name, real, dst, symbol, count, offset, kind, stream)

/* Indirection so a ROW_* list is split into RT_HOOK's arguments. */
#define RT_HOOK_(...) RT_HOOK(__VA_ARGS__)

RT_HOOK_(ROW_REGISTER_FATBIN(__cudaRegisterFatBinary))
RT_HOOK_(ROW_REGISTER_FUNCTION(__cudaRegisterFunction))
RT_HOOK_(ROW_LAUNCH(cudaLaunchKernel))
RT_HOOK_(ROW_LAUNCH(cudaLaunchKernel_ptsz))
RT_HOOK_(ROW_LAUNCH(cudaLaunchCooperativeKernel))
RT_HOOK_(ROW_LAUNCH(cudaLaunchCooperativeKernel_ptsz))
RT_HOOK_(ROW_LAUNCH_EX(cudaLaunchKernelExC))
RT_HOOK_(ROW_LAUNCH_EX(cudaLaunchKernelExC_ptsz))
RT_HOOK_(ROW_ATTRIBUTES(cudaFuncGetAttributes))
RT_HOOK_(ROW_BY_SYMBOL(cudaGetFuncBySymbol))
RT_HOOK_(ROW_ENTRY(cudaGetDriverEntryPoint, false))
RT_HOOK_(ROW_ENTRY(cudaGetDriverEntryPoint_ptsz, true))
RT_HOOK_(ROW_ENTRY_VER(cudaGetDriverEntryPointByVersion, false))
RT_HOOK_(ROW_ENTRY_VER(cudaGetDriverEntryPointByVersion_ptsz, true))
RT_HOOK_(ROW_REGISTER_VAR(__cudaRegisterVar))
RT_HOOK_(ROW_REGISTER_MANAGED_VAR(__cudaRegisterManagedVar))
RT_HOOK_(ROW_TO_SYMBOL(cudaMemcpyToSymbol))
RT_HOOK_(ROW_TO_SYMBOL(cudaMemcpyToSymbol_ptds))
RT_HOOK_(ROW_FROM_SYMBOL(cudaMemcpyFromSymbol))
RT_HOOK_(ROW_FROM_SYMBOL(cudaMemcpyFromSymbol_ptds))
RT_HOOK_(ROW_TO_SYMBOL_ASYNC(cudaMemcpyToSymbolAsync))
RT_HOOK_(ROW_TO_SYMBOL_ASYNC(cudaMemcpyToSymbolAsync_ptsz))
RT_HOOK_(ROW_FROM_SYMBOL_ASYNC(cudaMemcpyFromSymbolAsync))
RT_HOOK_(ROW_FROM_SYMBOL_ASYNC(cudaMemcpyFromSymbolAsync_ptsz))
RT_HOOK_(cudaError_t, cudaGetSymbolAddress, (void **dev_ptr, const void *symbol), return,
	 symbol_address(real, dev_ptr, symbol))
RT_HOOK_(cudaError_t, cudaGetSymbolSize, (size_t *size, const void *symbol), return, symbol_size(real, size, symbol))
RT_HOOK_(ROW_RUNTIME_VERSION(cudaRuntimeGetVersion))
