/* SPDX-License-Identifier: Apache-2.0 */
/* KIMG_FALLBACK (kimg_load_intercept, shim/diag.h): at a load, read the module's headers, ask
 * core/fallback_plan.c whether (and how) PTX can stand in for it, build
 * the stand-in, load it through the real function, make the driver JIT it
 * right away, and report what happened. KIMG_AUDIT's check rides on the
 * same reading when the fallback does not take the module.
 *
 * Why the JIT is forced at load: with lazy loading (the default since
 * CUDA 12.2, docs/loading.md §5) the driver compiles PTX at the first
 * kernel lookup, so a rejection would surface at some later call with the
 * rewritten module already handed out. Looking up the module's first
 * kernel here makes the JIT happen inside the measured window, and a
 * rejection can still be undone: unload the stand-in, load the original,
 * and the program gets exactly the error it would have had without kimg. */
#include <errno.h>
#include <fnmatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "device_query.h"
#include "codecs.h"
#include "cuda_errors.h"
#include "diag_internal.h"
#include "fallback_plan.h"
#include "ptx.h"
#include "report.h"
#include "stats.h"


static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* force-ptx:GLOB: the module's file (the loaded path, or the object an
 * in-memory image lies in) matches GLOB, whole path or base name. */
static bool glob_selects(const struct kimg_load_module *m)
{
	const char *glob = kimg_opts.fallback_glob;
	char file[512];
	const char *path = m->path;
	if (!glob[0])
		return true;
	if (!path) {
		uint64_t off;
		bool off_known;
		if (!m->image || !kimg_locate_file(m->image, file, sizeof file, &off, &off_known))
			return false;
		path = file;
	}
	const char *base = strrchr(path, '/');
	return fnmatch(glob, path, 0) == 0 || (base && fnmatch(glob, base + 1, 0) == 0);
}

/* ---- the stand-in: build, load, force the JIT ---- */

struct first_entry {
	char name[256];
	bool found;
};

static int on_entry(void *ctx, const char *name, size_t len)
{
	struct first_entry *f = ctx;
	if (len >= sizeof f->name)
		return 0; /* try the next one */
	memcpy(f->name, name, len);
	f->name[len] = '\0';
	f->found = true;
	return 1;
}

/* Look up the stand-in's first kernel with the real driver functions, so
 * a lazy-loading driver JIT-compiles it now. Returns the first image-class
 * error (the JIT's verdict), else 0: another error (no context yet for
 * cuKernelGetFunction) says nothing about the code. */
static CUresult force_jit(enum kimg_handle_kind kind, CUhandle handle, const char *text, size_t len)
{
	struct first_entry f = { "", false };
	struct kimg_error err = { 0 };
	kimg_ptx_for_each_entry(kimg_span_make(text, len), on_entry, &f, &err);
	if (!f.found)
		return 0;
	CUresult r;
	CUhandle fn = NULL, k = NULL;
	if (kind == KIMG_HANDLE_LIBRARY) {
		kimg_library_get_kernel_fn get_kernel = kimg_real_cuLibraryGetKernel();
		kimg_kernel_get_function_fn kernel_fn = kimg_real_cuKernelGetFunction();
		if (!get_kernel)
			return 0;
		r = get_kernel(&k, handle, f.name);
		if (r == KIMG_CUDA_SUCCESS && kernel_fn)
			r = kernel_fn(&fn, k);
	} else {
		kimg_get_function_fn get_fn = kimg_real_cuModuleGetFunction();
		if (!get_fn)
			return 0;
		r = get_fn(&fn, handle, f.name);
	}
	return kimg_cuda_error_is_image_class(r) && !kimg_cuda_error_needs_confirmation(r) ? r : 0;
}

static void unload(enum kimg_handle_kind kind, CUhandle handle)
{
	const struct kimg_driver_api *api = kimg_driver_real();
	if (!api)
		return;
	if (kind == KIMG_HANDLE_LIBRARY && api->cuLibraryUnload)
		api->cuLibraryUnload(handle);
	else if (kind == KIMG_HANDLE_MODULE && api->cuModuleUnload)
		api->cuModuleUnload(handle);
}

static void fill_rewritten(struct kimg_report_fallback *fb, const struct kimg_image *img,
			   const struct kimg_ptx_rewrite_info *info)
{
	kimg_image_arch_name(img, fb->image, sizeof fb->image);
	if (info->version_lowered) {
		kimg_report_format_isa(info->old_isa, fb->version_from, sizeof fb->version_from);
		kimg_report_format_isa(info->new_isa, fb->version_to, sizeof fb->version_to);
	}
	if (info->targets_lowered) {
		kimg_arch_format(info->old_target, false, fb->target_from, sizeof fb->target_from);
		kimg_arch_format(info->new_target, false, fb->target_to, sizeof fb->target_to);
	}
}

static void report(const struct kimg_load_module *m, const struct kimg_device *d, int error,
		   const struct kimg_report_fallback *fb, bool cannot_run)
{
	struct kimg_load_event e = {
		.call = m->call, .error = error, .image = m->image, .path = m->path, .device = d,
		.fallback = fb, .audit = kimg_opts.audit && cannot_run, .cannot_run = cannot_run,
	};
	kimg_report_load_event(&e);
}

/* Build and load the stand-in. True when it is loaded and the program
 * uses it; false when the original must be loaded (reported here). */
static bool apply(const struct kimg_load_req *req, const struct kimg_load_module *m, const struct kimg_device *d,
		  const struct kimg_fallback_plan *plan, kimg_load_fn load, void *ctx, CUhandle *handle,
		  struct kimg_report_fallback *fb)
{
	const struct kimg_image *img = &m->imgs[plan->image];
	int before = plan->before.expected_error;
	bool cannot_run = plan->before.outcome == KIMG_OUTCOME_CANNOT_RUN;
	struct kimg_ptx_rewrite_info info;
	struct kimg_error err = { 0 };
	uint64_t scratch_cap = 0;
	size_t out_cap = 0, len = 0;
	int rc = kimg_fallback_sizes(img, &scratch_cap, &out_cap);
	void *scratch = rc == 0 && scratch_cap ? malloc(scratch_cap) : NULL;
	char *text = rc == 0 ? malloc(out_cap) : NULL;
	if (rc == 0 && (!text || (scratch_cap && !scratch)))
		rc = kimg_error_set(&err, -ENOMEM, 0, "no memory for a %zu-byte stand-in", out_cap);
	if (rc == 0)
		rc = kimg_fallback_build(img, plan, kimg_codecs_get(), scratch, scratch_cap, text, out_cap, &len, &info,
					 &err);
	free(scratch);
	if (rc < 0) {
		free(text);
		snprintf(fb->result, sizeof fb->result, "could not build the PTX stand-in: %s",
			 err.what[0] ? err.what : kimg_strerror(rc));
		report(m, d, before, fb, cannot_run);
		return false;
	}
	fill_rewritten(fb, img, &info);

	double t0 = now_ms();
	CUresult r = load(ctx, text, handle);
	if (r == KIMG_CUDA_SUCCESS) {
		CUresult jit = force_jit(req->kind, *handle, text, len);
		if (jit != KIMG_CUDA_SUCCESS) {
			unload(req->kind, *handle);
			*handle = NULL;
			r = jit;
		}
	}
	fb->jit_ms = now_ms() - t0;
	if (r != KIMG_CUDA_SUCCESS) {
		/* the driver keeps nothing of a failed or unloaded module */
		free(text);
		const char *name = kimg_cuda_error_name(r);
		snprintf(fb->result, sizeof fb->result, "JIT rejected the rewritten PTX: %d %s; the original error is "
			 "passed through", r, name ? name : "");
		report(m, d, before, fb, cannot_run);
		return false;
	}
	/* later failures on this handle are diagnosed against what the
	 * driver really holds: the stand-in */
	struct kimg_origin o = { .image = text };
	kimg_registry_add(req->kind, *handle, &o);
	fb->applied = true;
	snprintf(fb->result, sizeof fb->result, "%s", kimg_fallback_outcome_text(KIMG_FALLBACK_OUTCOME_REWRITE));
	kimg_stat_add(KIMG_STAT_FALLBACK_APPLIED, 1);
	kimg_stat_add(KIMG_STAT_FALLBACK_JIT_NS, (unsigned long long)(fb->jit_ms * 1e6));
	report(m, d, before, fb, false);
	return true;
}

bool kimg_load_intercept(const struct kimg_load_req *req, kimg_load_fn load, void *ctx, CUhandle *handle,
			 CUresult *result)
{
	/* a local, not a static: loads run on any thread; 17 KiB of stack on
	 * a path that calls into the driver's JIT anyway */
	struct kimg_load_module m;
	struct kimg_device d;
	bool handled = false, decided = false;
	int saved = errno;
	/* the stand-in's own load may fail and be logged by the driver: kimg's
	 * call, never the safety net's (driver_log.c) */
	unsigned log_mark = kimg_driver_log_mark();
	memset(&m.file, 0, sizeof m.file);
	if (!handle || kimg_load_module_read(&m, req->call, req->image, req->path) < 0 || !kimg_load_device(&d))
		goto out; /* unreadable code or no device facts: the driver decides alone */

	if (kimg_opts.fallback != KIMG_FALLBACK_NONE) {
		enum kimg_fallback_mode mode =
			kimg_opts.fallback == KIMG_FALLBACK_FORCE_PTX ? KIMG_FALLBACK_MODE_FORCE : KIMG_FALLBACK_MODE_PTX;
		struct kimg_fallback_plan plan;
		if ((mode == KIMG_FALLBACK_MODE_PTX || glob_selects(&m)) &&
		    kimg_fallback_plan(m.imgs, m.n, &d, mode, &plan) == 0 && plan.outcome != KIMG_FALLBACK_OUTCOME_NOT_NEEDED) {
			struct kimg_report_fallback fb;
			memset(&fb, 0, sizeof fb);
			fb.present = true;
			fb.jit_ms = -1;
			fb.warning = KIMG_FALLBACK_CAVEAT_TEXT;
			snprintf(fb.action, sizeof fb.action, "%s", mode == KIMG_FALLBACK_MODE_FORCE ? "force-ptx" : "ptx");
			decided = true;
			if (plan.outcome == KIMG_FALLBACK_OUTCOME_REWRITE) {
				handled = apply(req, &m, &d, &plan, load, ctx, handle, &fb);
				if (handled)
					*result = KIMG_CUDA_SUCCESS;
			} else {
				/* not rescuable: said once, with the fix; a force-ptx
				 * module that has no PTX but runs says so too */
				bool cannot_run = plan.before.outcome == KIMG_OUTCOME_CANNOT_RUN;
				fb.warning = NULL;
				snprintf(fb.result, sizeof fb.result, "%s%s", kimg_fallback_outcome_text(plan.outcome),
					 cannot_run ? "" : "; the module is loaded as it is");
				report(&m, &d, plan.before.expected_error, &fb, cannot_run);
			}
		}
	}
	/* the fallback's report already judged the module; else audit it */
	if (!decided && kimg_opts.audit)
		kimg_audit_check(&m, &d);
out:
	kimg_load_module_close(&m);
	kimg_driver_log_settle(log_mark);
	errno = saved;
	return handled;
}
