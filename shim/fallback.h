/* KIMG_FALLBACK=ptx / force-ptx[:GLOB] in libkimg.so (shim/fallback.c):
 * at a load, hand the driver rewritten PTX instead of a module it cannot
 * use (or, force-ptx, instead of its SASS), and report it. The load hooks
 * (hook_driver.c) call kimg_load_intercept first when fallback or audit is
 * on; the decision itself is core/fallback_plan.c. Nothing here is
 * exported. */
#ifndef KIMG_SHIM_FALLBACK_H
#define KIMG_SHIM_FALLBACK_H

#include <stdbool.h>
#include <stddef.h>

#include "hooks.h"

/* The load being made. */
struct kimg_load_req {
	const char *call;            /* "cuModuleLoadData", "cuLibraryLoadFromFile", ... */
	enum kimg_handle_kind kind;  /* KIMG_HANDLE_MODULE or KIMG_HANDLE_LIBRARY */
	const void *image;           /* in-memory code, or NULL */
	const char *path;            /* file, or NULL */
};

/* The real load of in-memory code (PTX text for the stand-in) with the
 * caller's other arguments (ctx): cuModuleLoadData(Ex) / cuLibraryLoadData,
 * also for path loads, whose stand-in is in memory. */
typedef CUresult (*kimg_load_fn)(void *ctx, const void *image, CUhandle *handle);

/* Should the load hooks call kimg_load_intercept? One predictable branch
 * when neither KIMG_FALLBACK nor KIMG_AUDIT is set. */
static inline bool kimg_load_checks_wanted(void)
{
	kimg_shim_ensure_init();
	return KIMG_UNLIKELY(kimg_opts.fallback != KIMG_FALLBACK_NONE || kimg_opts.audit) && kimg_hooks_active();
}

/* Audit the module and apply the fallback. True when it loaded the
 * stand-in itself: *handle and *result hold the outcome (success), the
 * handle is in the registry, and the hook returns *result. False: the
 * hook loads the original as usual (nothing to do, not rescuable, or the
 * JIT rejected the stand-in, which has then been reported and unloaded:
 * the original load gives the program its original error).
 *
 * The stand-in text is never freed: the driver may read it for as long as
 * the module lives (CU_LIBRARY_BINARY_IS_PRESERVED, docs/loading.md §4),
 * and modules are few; one is freed only when its load failed. */
KIMG_COLD bool kimg_load_intercept(const struct kimg_load_req *req, kimg_load_fn load, void *ctx, CUhandle *handle,
				   CUresult *result);

/* "kimg: fallback: 2 modules run rewritten PTX (JIT 35.124 ms in all); ...\n"
 * when any fallback was applied; 0 otherwise. */
size_t kimg_fallback_summary_line(char *buf, size_t size);

#endif
