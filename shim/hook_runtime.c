/* Wrappers for shared-cudart entry points (libcudart.so, -cudart shared,
 * as in PyTorch wheels): interposed by symbol, forwarding to the next
 * definition (cuda-loading.md section 1). With static cudart none of
 * these is reachable, and the driver hooks do the work instead.
 *
 * Registration gives the only link from a host stub (the address
 * cudaLaunchKernel receives) to its kernel name and fatbin wrapper, so it
 * is recorded; launches and attribute queries report image-class errors
 * against the stub. */
#include <dlfcn.h>
#include <errno.h>

#include "audit.h"
#include "cuda_errors.h"
#include "hooks.h"

static KIMG_COLD void fail(const char *call, cudaError_t r, const void *stub)
{
	int saved = errno;
	kimg_shim_ensure_init();
	if (kimg_hooks_active() && kimg_cuda_error_is_image_class(r)) {
		struct kimg_failure f = {
			.call = call, .error = r, .handle_kind = KIMG_HANDLE_HOST_STUB, .handle = stub,
		};
		kimg_report_failure(&f); /* sets kimg_in_diagnosis itself */
	}
	errno = saved;
}

#define REAL(id, type, none)                             \
	__typeof__(type) real = (__typeof__(type))kimg_hook_get(KIMG_HOOK_##id); \
	if (KIMG_UNLIKELY(!real))                        \
		return none

#define EXPORT_AS(ret, name, ...) KIMG_EXPORT ret name(__VA_ARGS__) __attribute__((alias("kimg_w_" #name)))

/* ---- registration (once per module / kernel, at start-up) ---- */

static void registered(void **handle, void *fat_cubin);

void **kimg_w___cudaRegisterFatBinary(void *fat_cubin)
{
	REAL(__cudaRegisterFatBinary, void **(*)(void *), NULL);
	void **handle = real(fat_cubin);
	registered(handle, fat_cubin);
	return handle;
}

static void registered(void **handle, void *fat_cubin)
{
	kimg_shim_ensure_init();
	if (handle && kimg_hooks_active()) {
		struct kimg_origin o = { .image = fat_cubin };
		kimg_registry_add(KIMG_HANDLE_FATBIN, handle, &o);
		/* after the real call: a runtime that loads at registration has
		 * loaded the driver by now, so the audit can ask it */
		if (KIMG_UNLIKELY(kimg_opts.audit))
			kimg_audit_registration(fat_cubin);
	}
}

/* libcudart versions its symbols (__cudaRegisterFatBinary@@libcudart.so.13)
 * and a versioned reference binds only to a definition of that version
 * (glibc's check_match): a plain export never sees code linked against the
 * real runtime ([V] on the H200: a PyTorch extension registered past
 * libkimg, so KIMG_AUDIT could not act at import). Registration is
 * therefore also exported as __cudaRegisterFatBinary@libcudart.so.11.0 /
 * .12 / .13, each forwarding to the same version behind libkimg (dlvsym),
 * so a process holding two runtimes (a cu12 wheel and an extension built
 * with CUDA 13) registers each fatbin with its own. The default export
 * (unversioned references, dlsym) is name@@KIMG_1.0 through its own alias:
 * a plain definition next to .symver aliases of the same name loses its
 * default version. Other runtime entry points stay unversioned: the driver
 * hooks see their failures. */
static const char *const cudart_versions[] = { "libcudart.so.11.0", "libcudart.so.12", "libcudart.so.13" };
static _Atomic(void *) register_real[3];

static void **register_versioned(unsigned i, void *fat_cubin)
{
	void *p = atomic_load_explicit(&register_real[i], memory_order_acquire);
	if (!p) {
		p = dlvsym(RTLD_NEXT, "__cudaRegisterFatBinary", cudart_versions[i]);
		if (!p)
			return NULL; /* cannot happen: the caller was linked against it */
		atomic_store_explicit(&register_real[i], p, memory_order_release);
	}
	void **handle = ((void **(*)(void *))p)(fat_cubin);
	registered(handle, fat_cubin);
	return handle;
}

#define REGISTER_AS(tag, i, version)                                                       \
	KIMG_EXPORT void **kimg_xr##tag(void *fat_cubin);                                    \
	void **kimg_xr##tag(void *fat_cubin) { return register_versioned(i, fat_cubin); }     \
	__asm__(".symver kimg_xr" #tag ", __cudaRegisterFatBinary@" version)
REGISTER_AS(11, 0, "libcudart.so.11.0");
REGISTER_AS(12, 1, "libcudart.so.12");
REGISTER_AS(13, 2, "libcudart.so.13");
KIMG_EXPORT void **kimg_xr0(void *fat_cubin) __attribute__((alias("kimg_w___cudaRegisterFatBinary")));
__asm__(".symver kimg_xr0, __cudaRegisterFatBinary@@KIMG_1.0");

void kimg_w___cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
				   int thread_limit, void *tid, void *bid, void *block_dim, void *grid_dim,
				   int *warp_size)
{
	REAL(__cudaRegisterFunction, void (*)(void **, const char *, char *, const char *, int, void *, void *, void *,
					      void *, int *), );
	real(handle, host_fun, device_fun, device_name, thread_limit, tid, bid, block_dim, grid_dim, warp_size);
	kimg_shim_ensure_init();
	if (host_fun && kimg_hooks_active()) {
		/* device_fun is the mangled device name the driver looks up
		 * (cuLibraryGetKernel); device_name is often the same string. */
		struct kimg_origin o = { .parent = handle, .name = device_fun ? device_fun : device_name };
		kimg_registry_add(KIMG_HANDLE_HOST_STUB, host_fun, &o);
	}
}
EXPORT_AS(void, __cudaRegisterFunction, void **handle, const char *host_fun, char *device_fun,
	  const char *device_name, int thread_limit, void *tid, void *bid, void *block_dim, void *grid_dim,
	  int *warp_size);

/* ---- launches and queries (hot: one branch on the result) ---- */

typedef cudaError_t (*rt_launch_fn)(const void *, struct kimg_dim3, struct kimg_dim3, void **, size_t, CUhandle);
typedef cudaError_t (*rt_launch_ex_fn)(const void *, const void *, void **);

#define DEFINE_RT_LAUNCH(name)                                                                              \
	cudaError_t kimg_w_##name(const void *func, struct kimg_dim3 grid, struct kimg_dim3 block, void **args,  \
				  size_t shmem, CUhandle stream)                                                 \
	{                                                                                                        \
		REAL(name, rt_launch_fn, KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER);                                   \
		cudaError_t r = real(func, grid, block, args, shmem, stream);                                    \
		if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))                                                       \
			fail(#name, r, func);                                                                    \
		return r;                                                                                        \
	}                                                                                                        \
	EXPORT_AS(cudaError_t, name, const void *func, struct kimg_dim3 grid, struct kimg_dim3 block, void **args, \
		  size_t shmem, CUhandle stream)

#define DEFINE_RT_LAUNCH_EX(name)                                                          \
	cudaError_t kimg_w_##name(const void *config, const void *func, void **args)       \
	{                                                                                      \
		REAL(name, rt_launch_ex_fn, KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER);              \
		cudaError_t r = real(config, func, args);                                      \
		if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))                                     \
			fail(#name, r, func);                                                  \
		return r;                                                                      \
	}                                                                                      \
	EXPORT_AS(cudaError_t, name, const void *config, const void *func, void **args)

DEFINE_RT_LAUNCH(cudaLaunchKernel);
DEFINE_RT_LAUNCH(cudaLaunchKernel_ptsz);
DEFINE_RT_LAUNCH(cudaLaunchCooperativeKernel);
DEFINE_RT_LAUNCH(cudaLaunchCooperativeKernel_ptsz);
DEFINE_RT_LAUNCH_EX(cudaLaunchKernelExC);
DEFINE_RT_LAUNCH_EX(cudaLaunchKernelExC_ptsz);

/* [V] cudaFuncGetAttributes returns 209 for a kernel with no usable image
 * (cuda-loading.md section 4, step 4). */
cudaError_t kimg_w_cudaFuncGetAttributes(void *attr, const void *func)
{
	REAL(cudaFuncGetAttributes, cudaError_t(*)(void *, const void *), KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER);
	cudaError_t r = real(attr, func);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))
		fail("cudaFuncGetAttributes", r, func);
	return r;
}
EXPORT_AS(cudaError_t, cudaFuncGetAttributes, void *attr, const void *func);

/* The XLA/JAX failure point (jax-ml/jax#40487). */
cudaError_t kimg_w_cudaGetFuncBySymbol(void **fn, const void *symbol)
{
	REAL(cudaGetFuncBySymbol, cudaError_t(*)(void **, const void *), KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER);
	cudaError_t r = real(fn, symbol);
	if (KIMG_UNLIKELY(r != KIMG_CUDA_SUCCESS))
		fail("cudaGetFuncBySymbol", r, symbol);
	return r;
}
EXPORT_AS(cudaError_t, cudaGetFuncBySymbol, void **fn, const void *symbol);

/* ---- driver entry points handed out by the runtime ----
 * The runtime answers from the driver's cuGetProcAddress, so the pointer
 * is wrapped by the same rule as there (if the runtime reached the driver
 * through our cuGetProcAddress wrapper, the pointer is already ours and
 * is returned as is). The _ptsz entry points mean "per-thread default
 * stream" when flags are 0. */

static cudaError_t entry_finish(cudaError_t r, const char *sym, void **pfn, int version, unsigned long long flags)
{
	if (r == KIMG_CUDA_SUCCESS && sym && pfn && *pfn) {
		kimg_shim_ensure_init();
		if (kimg_hooks_active())
			*pfn = kimg_hook_wrap_proc(sym, version, flags, *pfn);
	}
	return r;
}

/* cudaGetDriverEntryPoint has no version argument: the runtime returns the
 * newest variant it knows. Asking the table for "newest" picks
 * cuGetProcAddress_v2 for "cuGetProcAddress", and kimg_hook_wrap_proc
 * wraps only if the pointer really is that export, so an older runtime
 * that returns the 4-argument function gets it back unwrapped. */
#define ENTRY_POINT_VERSION 0x7fffffff
#define PTSZ_FLAGS(flags) ((flags) ? (flags) : KIMG_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)

typedef cudaError_t (*entry_fn)(const char *, void **, unsigned long long, int *);
typedef cudaError_t (*entry_ver_fn)(const char *, void **, unsigned, unsigned long long, int *);

cudaError_t kimg_w_cudaGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long flags, int *status)
{
	REAL(cudaGetDriverEntryPoint, entry_fn, KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER);
	return entry_finish(real(sym, pfn, flags, status), sym, pfn, ENTRY_POINT_VERSION, flags);
}
EXPORT_AS(cudaError_t, cudaGetDriverEntryPoint, const char *sym, void **pfn, unsigned long long flags, int *status);

cudaError_t kimg_w_cudaGetDriverEntryPoint_ptsz(const char *sym, void **pfn, unsigned long long flags, int *status)
{
	REAL(cudaGetDriverEntryPoint_ptsz, entry_fn, KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER);
	return entry_finish(real(sym, pfn, flags, status), sym, pfn, ENTRY_POINT_VERSION, PTSZ_FLAGS(flags));
}
EXPORT_AS(cudaError_t, cudaGetDriverEntryPoint_ptsz, const char *sym, void **pfn, unsigned long long flags,
	  int *status);

cudaError_t kimg_w_cudaGetDriverEntryPointByVersion(const char *sym, void **pfn, unsigned version,
						    unsigned long long flags, int *status)
{
	REAL(cudaGetDriverEntryPointByVersion, entry_ver_fn, KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER);
	return entry_finish(real(sym, pfn, version, flags, status), sym, pfn, (int)version, flags);
}
EXPORT_AS(cudaError_t, cudaGetDriverEntryPointByVersion, const char *sym, void **pfn, unsigned version,
	  unsigned long long flags, int *status);

cudaError_t kimg_w_cudaGetDriverEntryPointByVersion_ptsz(const char *sym, void **pfn, unsigned version,
							 unsigned long long flags, int *status)
{
	REAL(cudaGetDriverEntryPointByVersion_ptsz, entry_ver_fn, KIMG_CUDA_ERROR_INSUFFICIENT_DRIVER);
	return entry_finish(real(sym, pfn, version, flags, status), sym, pfn, (int)version, PTSZ_FLAGS(flags));
}
EXPORT_AS(cudaError_t, cudaGetDriverEntryPointByVersion_ptsz, const char *sym, void **pfn, unsigned version,
	  unsigned long long flags, int *status);
