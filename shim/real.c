/* Resolving real symbols: glibc's dlsym, the real function behind each
 * hook row, and the driver functions the diagnosis needs.
 *
 * Nothing here calls our own exported dlsym: the real one is reached with
 * dlvsym (which we do not hook), and libkimg is built with
 * -fno-semantic-interposition and a version script, so internal calls
 * never bind to an exported name (docs/loading.md section 7.1, "recursion").
 *
 * Pointers are resolved once and published with a compare-and-swap from
 * NULL; two threads racing on a first call resolve the same value, so the
 * loser's store is simply dropped (docs/design.md section 8). */
#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <string.h>

#include "copies.h"
#include "hooks.h"

/* One row per (name, variant), as the driver's cuGetProcAddress answers
 * ([V] on 580.159.04, see is_export_of below): flag 2 selects the _ptsz
 * export, and "cuGetProcAddress" asked with version >= 12000 is the
 * 5-argument cuGetProcAddress_v2. min_version only separates variants;
 * the driver itself refuses names older than their introduction (it
 * returns NULL, which is passed on untouched). Runtime rows have no base:
 * they are reached by symbol only. */
#define RT(name) [KIMG_HOOK_##name] = { #name, NULL, 0, 0, (void *)kimg_w_##name }
const struct kimg_hook kimg_hook_table[KIMG_HOOK_COUNT] = {
	[KIMG_HOOK_cuModuleLoad] = { "cuModuleLoad", "cuModuleLoad", 0, 0, (void *)kimg_w_cuModuleLoad },
	[KIMG_HOOK_cuModuleLoadData] = { "cuModuleLoadData", "cuModuleLoadData", 0, 0,
					 (void *)kimg_w_cuModuleLoadData },
	[KIMG_HOOK_cuModuleLoadDataEx] = { "cuModuleLoadDataEx", "cuModuleLoadDataEx", 0, 0,
					   (void *)kimg_w_cuModuleLoadDataEx },
	[KIMG_HOOK_cuModuleLoadFatBinary] = { "cuModuleLoadFatBinary", "cuModuleLoadFatBinary", 0, 0,
					      (void *)kimg_w_cuModuleLoadFatBinary },
	[KIMG_HOOK_cuLibraryLoadData] = { "cuLibraryLoadData", "cuLibraryLoadData", 0, 0,
					  (void *)kimg_w_cuLibraryLoadData },
	[KIMG_HOOK_cuLibraryLoadFromFile] = { "cuLibraryLoadFromFile", "cuLibraryLoadFromFile", 0, 0,
					      (void *)kimg_w_cuLibraryLoadFromFile },
	[KIMG_HOOK_cuModuleGetFunction] = { "cuModuleGetFunction", "cuModuleGetFunction", 0, 0,
					    (void *)kimg_w_cuModuleGetFunction },
	[KIMG_HOOK_cuLibraryGetKernel] = { "cuLibraryGetKernel", "cuLibraryGetKernel", 0, 0,
					   (void *)kimg_w_cuLibraryGetKernel },
	[KIMG_HOOK_cuLibraryGetModule] = { "cuLibraryGetModule", "cuLibraryGetModule", 0, 0,
					   (void *)kimg_w_cuLibraryGetModule },
	[KIMG_HOOK_cuKernelGetFunction] = { "cuKernelGetFunction", "cuKernelGetFunction", 0, 0,
					    (void *)kimg_w_cuKernelGetFunction },
	[KIMG_HOOK_cuLaunchKernel] = { "cuLaunchKernel", "cuLaunchKernel", 0, 0, (void *)kimg_w_cuLaunchKernel },
	[KIMG_HOOK_cuLaunchKernel_ptsz] = { "cuLaunchKernel_ptsz", "cuLaunchKernel", 1, 0,
					    (void *)kimg_w_cuLaunchKernel_ptsz },
	[KIMG_HOOK_cuLaunchKernelEx] = { "cuLaunchKernelEx", "cuLaunchKernelEx", 0, 0,
					 (void *)kimg_w_cuLaunchKernelEx },
	[KIMG_HOOK_cuLaunchKernelEx_ptsz] = { "cuLaunchKernelEx_ptsz", "cuLaunchKernelEx", 1, 0,
					      (void *)kimg_w_cuLaunchKernelEx_ptsz },
	[KIMG_HOOK_cuLaunchCooperativeKernel] = { "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", 0, 0,
						  (void *)kimg_w_cuLaunchCooperativeKernel },
	[KIMG_HOOK_cuLaunchCooperativeKernel_ptsz] = { "cuLaunchCooperativeKernel_ptsz",
						       "cuLaunchCooperativeKernel", 1, 0,
						       (void *)kimg_w_cuLaunchCooperativeKernel_ptsz },
	[KIMG_HOOK_cuGetProcAddress] = { "cuGetProcAddress", "cuGetProcAddress", 0, 0,
					 (void *)kimg_w_cuGetProcAddress },
	[KIMG_HOOK_cuGetProcAddress_v2] = { "cuGetProcAddress_v2", "cuGetProcAddress", 0,
					    KIMG_GET_PROC_ADDRESS_V2_VERSION, (void *)kimg_w_cuGetProcAddress_v2 },
	[KIMG_HOOK_cuLinkCreate] = { "cuLinkCreate", "cuLinkCreate", 0, 0, (void *)kimg_w_cuLinkCreate },
	[KIMG_HOOK_cuLinkCreate_v2] = { "cuLinkCreate_v2", "cuLinkCreate", 0, KIMG_LINK_V2_VERSION,
					(void *)kimg_w_cuLinkCreate_v2 },
	[KIMG_HOOK_cuLinkAddData] = { "cuLinkAddData", "cuLinkAddData", 0, 0, (void *)kimg_w_cuLinkAddData },
	[KIMG_HOOK_cuLinkAddData_v2] = { "cuLinkAddData_v2", "cuLinkAddData", 0, KIMG_LINK_V2_VERSION,
					 (void *)kimg_w_cuLinkAddData_v2 },
	[KIMG_HOOK_cuLinkAddFile] = { "cuLinkAddFile", "cuLinkAddFile", 0, 0, (void *)kimg_w_cuLinkAddFile },
	[KIMG_HOOK_cuLinkAddFile_v2] = { "cuLinkAddFile_v2", "cuLinkAddFile", 0, KIMG_LINK_V2_VERSION,
					 (void *)kimg_w_cuLinkAddFile_v2 },
	[KIMG_HOOK_cuLinkComplete] = { "cuLinkComplete", "cuLinkComplete", 0, 0, (void *)kimg_w_cuLinkComplete },
	[KIMG_HOOK_cuLinkDestroy] = { "cuLinkDestroy", "cuLinkDestroy", 0, 0, (void *)kimg_w_cuLinkDestroy },
	[KIMG_HOOK_cuInit] = { "cuInit", "cuInit", 0, 0, (void *)kimg_w_cuInit },
	RT(__cudaRegisterFatBinary),
	RT(__cudaRegisterFunction),
	RT(cudaLaunchKernel),
	RT(cudaLaunchKernel_ptsz),
	RT(cudaLaunchKernelExC),
	RT(cudaLaunchKernelExC_ptsz),
	RT(cudaLaunchCooperativeKernel),
	RT(cudaLaunchCooperativeKernel_ptsz),
	RT(cudaFuncGetAttributes),
	RT(cudaGetFuncBySymbol),
	RT(cudaGetDriverEntryPoint),
	RT(cudaGetDriverEntryPoint_ptsz),
	RT(cudaGetDriverEntryPointByVersion),
	RT(cudaGetDriverEntryPointByVersion_ptsz),
	RT(cudaRuntimeGetVersion),
};
#undef RT

_Atomic(void *) kimg_hook_real[KIMG_HOOK_COUNT];

static _Atomic(kimg_dlsym_fn) real_dlsym_p;

/* Not instrumented by sanitizers: ThreadSanitizer's own start-up looks up
 * the functions it intercepts with dlsym(RTLD_NEXT, ...) before its
 * runtime can record anything, and every dlsym goes through here. */
__attribute__((no_sanitize_thread, no_sanitize_address)) kimg_dlsym_fn kimg_real_dlsym_fn(void)
{
	kimg_dlsym_fn fn = atomic_load_explicit(&real_dlsym_p, memory_order_acquire);
	if (KIMG_LIKELY(fn != NULL))
		return fn;
	/* Newest first: glibc >= 2.34 defines dlsym@@GLIBC_2.34 in libc and
	 * keeps the base version as a compat alias; older glibc has only the
	 * base version, in libdl. Both behave the same. */
	static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17" };
	for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !fn; i++)
		fn = (kimg_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
	if (fn)
		atomic_store_explicit(&real_dlsym_p, fn, memory_order_release);
	return fn;
}

void *kimg_real_dlsym(void *handle, const char *name)
{
	kimg_dlsym_fn fn = kimg_real_dlsym_fn();
	return fn ? fn(handle, name) : NULL;
}

struct loaded_names {
	const char *names[128];
	int n;
};

static int collect_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct loaded_names *l = ctx;
	/* no copy of libkimg, this one or another (copies.c): another copy's
	 * wrapper taken for the driver's function calls back here for ever */
	if (kimg_copies_is_kimg(info))
		return 0;
	if (info->dlpi_name && info->dlpi_name[0] && l->n < (int)(sizeof l->names / sizeof l->names[0]))
		l->names[l->n++] = info->dlpi_name;
	return 0;
}

/* The definition of `name` in the first loaded object (in load order) that
 * defines it itself, libkimg excluded. This finds a driver that was
 * dlopen'ed RTLD_LOCAL (static cudart does that), which RTLD_NEXT cannot
 * see. Names are collected first and looked up after dl_iterate_phdr
 * returns, so no dl* call runs under the loader's iteration lock. */
void *kimg_find_in_loaded(const char *name)
{
	static const char self;
	struct loaded_names l = { .n = 0 };
	Dl_info me;
	if (!dladdr(&self, &me))
		me.dli_fbase = NULL;
	dl_iterate_phdr(collect_object, &l);
	for (int i = 0; i < l.n; i++) {
		void *h = dlopen(l.names[i], RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			continue;
		void *p = kimg_real_dlsym(h, name);
		Dl_info where;
		/* defined by this object itself, not by one of its dependencies,
		 * and not by libkimg (a dependency of nothing, but be sure) */
		bool own = p && dladdr(p, &where) && where.dli_fname && strcmp(where.dli_fname, l.names[i]) == 0 &&
			   where.dli_fbase != me.dli_fbase;
		dlclose(h);
		if (own)
			return p;
	}
	return NULL;
}

void *kimg_hook_resolve(enum kimg_hook_id id)
{
	void *p = atomic_load_explicit(&kimg_hook_real[id], memory_order_acquire);
	if (p)
		return p;
	/* Called from inside libkimg, RTLD_NEXT means "after libkimg": the
	 * libcuda / libcudart the program was linked with. A driver that was
	 * only dlopen'ed (RTLD_LOCAL) is not found here, but then the program
	 * reached us through dlsym or cuGetProcAddress, which filled the slot. */
	void *found = kimg_real_dlsym(RTLD_NEXT, kimg_hook_table[id].symbol);
	/* Not in the global scope: a dlopen'ed driver, and our wrapper reached
	 * through a pointer the driver handed out. A driver whose own table
	 * binds to exported names (no -Bsymbolic, like tests/fake_cuda) hands
	 * out libkimg's wrappers themselves, so the slot may still be empty. */
	if (!found || found == kimg_hook_table[id].wrapper)
		found = kimg_find_in_loaded(kimg_hook_table[id].symbol);
	if (!found)
		return NULL;
	void *expected = NULL;
	if (!atomic_compare_exchange_strong_explicit(&kimg_hook_real[id], &expected, found, memory_order_acq_rel,
						     memory_order_acquire))
		return expected; /* another thread (or path) got there first */
	return found;
}

void *kimg_hook_wrap(enum kimg_hook_id id, void *real)
{
	/* Our own wrapper coming back (the runtime asked our cuGetProcAddress,
	 * or a handle whose scope includes libkimg): storing it as "real"
	 * would make the wrapper call itself. */
	if (!real || real == kimg_hook_table[id].wrapper)
		return real;
	void *expected = NULL;
	if (atomic_compare_exchange_strong_explicit(&kimg_hook_real[id], &expected, real, memory_order_acq_rel,
						    memory_order_acquire) ||
	    expected == real)
		return kimg_hook_table[id].wrapper;
	/* The slot already holds another function for this name: keep both
	 * working by handing this one out unwrapped. */
	return real;
}

int kimg_hook_find_symbol(const char *name)
{
	for (int i = 0; i < KIMG_HOOK_COUNT; i++)
		if (strcmp(kimg_hook_table[i].symbol, name) == 0)
			return i;
	return -1;
}

int kimg_hook_find_proc(const char *base, int version, unsigned long long flags)
{
	int want_ptsz = (flags & KIMG_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
	int best = -1, best_ptsz = -1;
	for (int i = 0; i < KIMG_HOOK_COUNT; i++) {
		const struct kimg_hook *h = &kimg_hook_table[i];
		if (!h->base || strcmp(h->base, base) != 0 || h->min_version > version)
			continue;
		/* A name without a _ptsz twin answers flag 2 with its only variant. */
		if (h->ptsz) {
			if (want_ptsz && (best_ptsz < 0 || h->min_version > kimg_hook_table[best_ptsz].min_version))
				best_ptsz = i;
		} else if (best < 0 || h->min_version > kimg_hook_table[best].min_version) {
			best = i;
		}
	}
	return best_ptsz >= 0 ? best_ptsz : best;
}

/* Is `real` exactly the function the driver exports under row id's name?
 * [V] cuGetProcAddress on driver 580.159.04 returns, for every hooked
 * name, version and flag, the address of the exported symbol of the
 * chosen variant (cuLaunchKernel flag 2 -> cuLaunchKernel_ptsz,
 * "cuGetProcAddress" >= 12000 -> cuGetProcAddress_v2). So a pointer that
 * is not the export of the row we picked is a variant kimg does not know
 * (a future _v2 with another ABI), and must not get our wrapper. */
static bool is_export_of(enum kimg_hook_id id, void *real)
{
	Dl_info info;
	if (!dladdr(real, &info) || !info.dli_fname)
		return true; /* cannot tell (anonymous mapping): trust the table */
	void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return true;
	void *exported = kimg_real_dlsym(h, kimg_hook_table[id].symbol);
	dlclose(h);
	return exported == real;
}

void *kimg_hook_wrap_proc(const char *base, int version, unsigned long long flags, void *real)
{
	int id = kimg_hook_find_proc(base, version, flags);
	if (id < 0 || !real || real == kimg_hook_table[id].wrapper)
		return real;
	void *cur = atomic_load_explicit(&kimg_hook_real[id], memory_order_acquire);
	if (cur == real)
		return kimg_hook_table[id].wrapper;
	if (cur == NULL && !is_export_of((enum kimg_hook_id)id, real))
		return real;
	return kimg_hook_wrap((enum kimg_hook_id)id, real);
}

/* ---- driver functions for the diagnosis (shim.h) ---- */

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
		atomic_store_explicit(&driver_api_state, 2, memory_order_release);
		return &driver_api;
	}
	while (atomic_load_explicit(&driver_api_state, memory_order_acquire) != 2)
		sched_yield(); /* another thread is resolving: a handful of lookups */
	return &driver_api;
}
