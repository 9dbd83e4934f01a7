/* SPDX-License-Identifier: Apache-2.0 */
/* Resolving real symbols: glibc's dlsym and the real function behind each
 * hook row (the driver functions the diagnosis needs: driver_api.c).
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
#include "hook.h"

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
	/* Another copy of libkimg after this one exports the driver's names
	 * too: its wrapper, kept here as the real function, would be the
	 * handed-out pointer's "real" and this copy's own wrapping of the
	 * driver's answer would then be refused (kimg_hook_wrap: the slot
	 * holds another function), so this copy would see no driver call
	 * ([V] H200, shared cudart, two copies: no report). */
	else if (kimg_copies_address_is_kimg(found))
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
