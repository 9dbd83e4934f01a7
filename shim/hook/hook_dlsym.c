/* SPDX-License-Identifier: Apache-2.0 */
/* Our dlsym: the door through which static cudart reaches the driver
 * (dlopen("libcuda.so.1") + dlsym(h, "cuGetProcAddress_v2"), docs/loading.md
 * section 2), so hooking the exported driver symbols alone misses most
 * programs.
 *
 * Exported twice, as dlsym@@GLIBC_2.34 (what programs linked on glibc >=
 * 2.34 reference) and dlsym@GLIBC_2.2.5 / @GLIBC_2.17 (older programs),
 * as nvshare does (docs/loading.md section 7.1). Defining a version node
 * named GLIBC_2.34 does not make libkimg need glibc 2.34: it is a version
 * we define, not one we require.
 *
 * What changes, and only for the hooked names (hook.h table):
 * - explicit handle (dlopen'ed libcuda): the real lookup in that handle,
 *   answered with our wrapper whose slot holds that exact function;
 * - RTLD_DEFAULT: glibc would find libkimg's own export first even when no
 *   driver is loaded, so we answer NULL unless a real definition exists
 *   behind us: a process without libcuda sees what it would without kimg.
 * Everything else, including every RTLD_NEXT lookup, goes to glibc's
 * dlsym as a tail call, see kimg_dlsym_pass below. */
#include <dlfcn.h>

#include "hook.h"

/* Returned by dlsym_hooked when the name is not ours to answer. */
static const char not_hooked;
#define NOT_HOOKED ((void *)&not_hooked)

/* glibc's dlsym finds the caller from its return address (RTLD_NEXT is
 * "after the object that called dlsym"). Calling it from here would make
 * libkimg the caller, and a second interposer preloaded after us doing
 * dlsym(RTLD_NEXT, "puts") would get its own puts back and recurse
 * forever. glibc has no public "dlsym as caller X", so the pass-through is
 * a sibling call: the jump leaves the original return address in place
 * and glibc sees the real caller. The attributes keep it a jump in every
 * build: optimisation on, and no sanitizer exit hook after the call. */
#define PASS_ATTRS __attribute__((optimize("O2", "omit-frame-pointer", "optimize-sibling-calls"), no_sanitize_thread, \
				  no_sanitize_address, no_stack_protector))

/* Cheap filter on the hot path of programs that call dlsym a lot:
 * "cu..." (driver and cuda... runtime names) or "__cu..." (registration). */
static inline PASS_ATTRS bool may_hook(const char *name)
{
	return name && ((name[0] == 'c' && name[1] == 'u') ||
			(name[0] == '_' && name[1] == '_' && name[2] == 'c' && name[3] == 'u'));
}

/* Instrumented normally: only names of ours get here, and the jump back
 * to glibc happens in dlsym_impl. */
static KIMG_COLD void *dlsym_hooked(void *handle, const char *name)
{
	int id = kimg_hook_find_symbol(name);
	if (id < 0)
		return NOT_HOOKED;
	kimg_shim_ensure_init();
	if (!kimg_hooks_active())
		return NOT_HOOKED;
	const struct kimg_hook *h = &kimg_hook_table[id];
	void *real = kimg_real_dlsym(handle, name);
	if (real == h->wrapper || (real == NULL && handle == RTLD_DEFAULT)) {
		/* The lookup found our own export (RTLD_DEFAULT, dlopen(NULL)):
		 * the answer is our wrapper only if something real stands
		 * behind it. */
		if (kimg_hook_resolve((enum kimg_hook_id)id))
			return h->wrapper;
		/* NULL as without kimg, and with glibc's error for the name
		 * pending, as a failed lookup leaves it: the resolving's last
		 * dl call may have succeeded and cleared it, and a caller that
		 * reads dlerror() after NULL (Python's ctypes) must not get
		 * NULL. A lookup after libkimg fails here as the resolving's
		 * did, and sets it. */
		(void)kimg_real_dlsym(RTLD_NEXT, name);
		return NULL;
	}
	/* NULL: dlerror() already holds glibc's message for this thread. */
	return kimg_hook_wrap((enum kimg_hook_id)id, real);
}

static inline PASS_ATTRS void *dlsym_impl(void *handle, const char *name)
{
	if (KIMG_UNLIKELY(may_hook(name)) && handle != RTLD_NEXT) {
		void *answer = dlsym_hooked(handle, name);
		if (answer != NOT_HOOKED)
			return answer;
	}
	kimg_dlsym_fn real = kimg_real_dlsym_fn();
	if (KIMG_UNLIKELY(!real))
		return NULL;
	return real(handle, name); /* tail call: see above */
}

KIMG_EXPORT PASS_ATTRS void *kimg_dlsym_new(void *handle, const char *name);
KIMG_EXPORT PASS_ATTRS void *kimg_dlsym_old(void *handle, const char *name);

void *kimg_dlsym_new(void *handle, const char *name)
{
	return dlsym_impl(handle, name);
}

void *kimg_dlsym_old(void *handle, const char *name)
{
	return dlsym_impl(handle, name);
}

__asm__(".symver kimg_dlsym_new, dlsym@@GLIBC_2.34");
#ifdef KIMG_GLIBC_BASE
__asm__(".symver kimg_dlsym_old, dlsym@" KIMG_GLIBC_BASE);
#endif
