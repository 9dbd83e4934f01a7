/* SPDX-License-Identifier: Apache-2.0 */
/* The questions of kimg.h: a buffer, a file, a loaded module. Modules and
 * images are found by the core's walk (kimg_input_for_each_module_ex,
 * kimg_module_images) as kimg-probe's collect.c finds them; the file's
 * modules are judged together on each target by kimg_rules_judge_file and
 * the fix made by kimg_fix_for_file, as `check` does (probe/cmd_check.c).
 * Only the answer is made here; rendering it is answer.c's. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glibc_pins.h"
#include "api_internal.h"
#include "codecs.h"
#include "cubin.h"
#include "elf64.h"
#include "file.h"
#include "kimg.h"
#include "module_images.h"
#include "payload.h"
#include "rules.h"

/* ---- the modules of one input ---- */

struct collect {
	struct kimg_answer *a;
	size_t cap;
	int rc;                          /* -ENOMEM once out of memory */
};

static int add_image(void *ctx, const struct kimg_image *img)
{
	struct api_module *m = ctx;
	struct kimg_image *p = realloc(m->imgs, (m->n_imgs + 1) * sizeof *p);
	if (!p)
		return 1;
	m->imgs = p;
	m->imgs[m->n_imgs] = *img;
	m->imgs[m->n_imgs].offset += m->offset;
	m->n_imgs++;
	return 0;
}

static int on_module(void *ctx, const struct kimg_module_ref *ref)
{
	struct collect *c = ctx;
	struct kimg_answer *a = c->a;
	if (a->n_mods == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct api_module *p = realloc(a->mods, cap * sizeof *p);
		if (!p)
			return c->rc = -ENOMEM;
		a->mods = p;
		c->cap = cap;
	}
	struct api_module *m = &a->mods[a->n_mods++];
	memset(m, 0, sizeof *m);
	m->kind = ref->kind;
	m->origin = ref->origin;
	m->offset = ref->offset;
	m->size = ref->bytes.size;
	snprintf(m->section, sizeof m->section, "%s", ref->section ? ref->section : "");
	snprintf(m->member, sizeof m->member, "%s", ref->member ? ref->member : "");
	struct kimg_error err = { 0, 0, "" };
	enum kimg_module_step step = KIMG_MODULE_CONTAINER;
	int rc = kimg_module_images(ref, add_image, m, &step, &err);
	if (rc > 0)
		return c->rc = -ENOMEM;
	if (rc < 0)
		snprintf(m->error, sizeof m->error, "%s", err.what[0] ? err.what : kimg_strerror(rc));
	return 0;
}

/* In a linked executable or shared object, __nv_relfatbin holds the
 * relocatable inputs of the device link (-rdc), never loaded on their
 * own (probe/collect.c, mark_link_inputs). */
static void mark_link_inputs(struct kimg_answer *a, struct kimg_span bytes)
{
	struct kimg_elf_ehdr eh;
	size_t rel = 0;
	if (!kimg_elf_ehdr_read(&bytes, &eh) || (eh.type != KIMG_ET_EXEC && eh.type != KIMG_ET_DYN))
		return;
	for (size_t i = 0; i < a->n_mods; i++)
		rel += a->mods[i].origin == KIMG_ORIGIN_RELFATBIN;
	if (rel == 0 || rel == a->n_mods)
		return;
	for (size_t i = 0; i < a->n_mods; i++)
		a->mods[i].link_input = a->mods[i].origin == KIMG_ORIGIN_RELFATBIN;
}

/* ---- device-link stubs (docs/format.md section 2) ---- */

static int count_kernel(void *ctx, const char *name, size_t len)
{
	(void)name;
	(void)len;
	++*(size_t *)ctx;
	return 0;
}

/* Every image a cubin without kernels: what CUDA 13 executables carry for
 * the device link, never a failure (probe/kernels.c, the same test). An
 * unreadable cubin is not evidence of a stub. */
static bool is_link_stub(const struct api_module *m)
{
	if (m->n_imgs == 0)
		return false;
	for (size_t i = 0; i < m->n_imgs; i++)
		if (m->imgs[i].kind != KIMG_IMAGE_SASS)
			return false;
	for (size_t i = 0; i < m->n_imgs; i++) {
		const struct kimg_image *img = &m->imgs[i];
		struct kimg_error err = { 0, 0, "" };
		struct kimg_span plain;
		void *buf = NULL;
		size_t kernels = 0;
		if (img->compression != KIMG_COMPRESS_NONE) {
			if (kimg_payload_check_size(img, &err) < 0 || img->size == 0 || !(buf = malloc(img->size)))
				return false;
		}
		int rc = kimg_payload_get(img, kimg_codecs_get(), buf, buf ? img->size : 0, &plain, &err);
		if (rc == 0)
			rc = kimg_cubin_for_each_kernel(plain, count_kernel, &kernels, &err);
		free(buf);
		if (rc != 0 || kernels > 0)
			return false;
	}
	return true;
}

/* ---- judging ---- */

static int judge(struct kimg_answer *a, unsigned flags)
{
	size_t nm = a->n_mods, nt = a->n_targets;
	struct kimg_file_module *fm = calloc(nm ? nm : 1, sizeof *fm);
	struct kimg_module_judgement *out = calloc(nm ? nm : 1, sizeof *out);
	a->verdicts = calloc(nm && nt ? nm * nt : 1, sizeof *a->verdicts);
	if (!fm || !out || !a->verdicts) {
		free(fm);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nm; i++) {
		struct api_module *m = &a->mods[i];
		bool fails = false;
		for (size_t t = 0; t < nt && m->n_imgs && !m->link_input && !fails; t++) {
			struct kimg_module_verdict v;
			kimg_rules_check_module(m->imgs, m->n_imgs, &a->targets[t].dev, NULL, &v);
			fails = v.outcome == KIMG_OUTCOME_CANNOT_RUN;
		}
		m->link_stub = fails && is_link_stub(m);
		fm[i].imgs = m->imgs;
		fm[i].n_imgs = m->n_imgs;
		fm[i].role = m->link_input ? KIMG_ROLE_LINK_INPUT
			     : (m->link_stub || m->n_imgs == 0) ? KIMG_ROLE_SKIP : KIMG_ROLE_LOADED;
	}
	unsigned file_flags = (flags & KIMG_ASK_STRICT) ? KIMG_FILE_STRICT : 0;
	for (size_t t = 0; t < nt; t++) {
		const struct kimg_device *dev = &a->targets[t].dev;
		kimg_rules_judge_file(a->path, fm, nm, dev, file_flags, out);
		for (size_t i = 0; i < nm; i++) {
			struct api_verdict *v = &a->verdicts[i * nt + t];
			const struct api_module *m = &a->mods[i];
			v->j = out[i];
			if (v->j.verdict.selected >= 0 && (size_t)v->j.verdict.selected < m->n_imgs)
				kimg_image_arch_name(&m->imgs[v->j.verdict.selected], v->image, sizeof v->image);
			if (out[i].fate == KIMG_FATE_FAILS)
				v->have_fix = kimg_fix_for_file(dev, &out[i].verdict, m->imgs, m->n_imgs, a->path, &v->fix) == 0;
		}
	}
	free(fm);
	free(out);
	return 0;
}

/* The images point into bytes the caller keeps only for the call. */
static void forget_bytes(struct kimg_answer *a)
{
	for (size_t i = 0; i < a->n_mods; i++)
		for (size_t k = 0; k < a->mods[i].n_imgs; k++) {
			a->mods[i].imgs[k].payload = kimg_span_make(NULL, 0);
			a->mods[i].imgs[k].identifier = kimg_span_make(NULL, 0);
			a->mods[i].imgs[k].options = kimg_span_make(NULL, 0);
		}
}

static int ask(struct kimg_span bytes, const struct kimg_zero_ranges *zeros, const char *name, const char *sm,
	       const char *driver, unsigned flags, struct kimg_answer **out, char *why, size_t ws)
{
	if (!out)
		return api_fail(why, ws, -EINVAL, "out is NULL");
	*out = NULL;
	if (flags & ~(unsigned)(KIMG_ASK_STRICT | KIMG_ASK_DEEP))
		return api_fail(why, ws, -EINVAL, "unknown flag bits 0x%x", flags);
	const char *shown = name ? name : "";
	enum kimg_input_kind kind = kimg_input_classify(bytes);
	if (bytes.size == 0)
		return api_fail(why, ws, -KIMG_EUNKNOWN, "%s: empty file", shown);
	if (kind == KIMG_INPUT_UNKNOWN)
		return api_fail(why, ws, -KIMG_EUNKNOWN, "%s: not an ELF file, static archive, fatbin, cubin or PTX", shown);
	if (kind == KIMG_INPUT_ZIP || kimg_input_is_thin_archive(bytes))
		return api_fail(why, ws, -KIMG_ENOTSUP, "%s: a %s: kimg-probe check reads it", shown,
				kind == KIMG_INPUT_ZIP ? "zip archive (wheel)" : "thin archive");
	struct kimg_answer *a = calloc(1, sizeof *a);
	if (!a || !(a->path = strdup(shown))) {
		free(a);
		return api_fail(why, ws, -ENOMEM, "out of memory");
	}
	int n = api_parse_targets(sm, driver, a->targets, API_TARGETS_MAX, why, ws);
	if (n < 0) {
		api_answer_destroy(a);
		return n;
	}
	a->n_targets = (size_t)n;
	struct collect c = { a, 0, 0 };
	struct kimg_error err = { 0, 0, "" };
	unsigned walk_flags = (flags & KIMG_ASK_DEEP) ? KIMG_INPUT_SCAN_DATA : 0;
	int rc = kimg_input_for_each_module_zeros(bytes, walk_flags, zeros, on_module, &c, &err);
	if (c.rc < 0 || (rc < 0 && a->n_mods == 0)) {
		int code = c.rc < 0 ? c.rc : rc;
		api_fail(why, ws, code, "%s: %s", shown, c.rc < 0 ? "out of memory" : err.what[0] ? err.what : kimg_strerror(code));
		api_answer_destroy(a);
		return code;
	}
	if (rc < 0 || err.code != 0)
		snprintf(a->problem, sizeof a->problem, "%s", err.what[0] ? err.what : kimg_strerror(rc < 0 ? rc : err.code));
	mark_link_inputs(a, bytes);
	/* A CUDA runtime newer than the driver: error 35 before any kernel
	 * (core/cuda_versions.h, as check's CUDA-library verdicts). */
	const char *base = strrchr(shown, '/');
	a->is_lib = kimg_cuda_lib_identify(base ? base + 1 : shown, bytes, &a->lib);
	for (size_t t = 0; a->is_lib && t < a->n_targets; t++)
		kimg_runtime_judge(a->lib.cuda_major, a->lib.cuda_minor, a->targets[t].dev.driver_version, &a->lib_verdicts[t]);
	if ((rc = judge(a, flags)) < 0 || (rc = api_answer_finish(a)) < 0) {
		api_answer_destroy(a);
		return api_fail(why, ws, rc, "out of memory");
	}
	forget_bytes(a);
	*out = a;
	if (why && ws)
		why[0] = '\0';
	return 0;
}

KIMG_API int kimg_can_run_bytes(const void *data, size_t size, const char *name, const char *sm, const char *driver,
				unsigned flags, struct kimg_answer **out, char *why, size_t ws)
{
	if (!data && size)
		return api_fail(why, ws, -EINVAL, "data is NULL");
	return ask(kimg_span_make(data, size), NULL, name, sm, driver, flags, out, why, ws);
}

KIMG_API int kimg_can_run_file(const char *path, const char *sm, const char *driver, unsigned flags,
			       struct kimg_answer **out, char *why, size_t ws)
{
	if (out)
		*out = NULL;
	if (!path)
		return api_fail(why, ws, -EINVAL, "path is NULL");
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	memset(&f, 0, sizeof f);
	int rc = kimg_file_open(path, &f, &err);
	if (rc < 0)
		return api_fail(why, ws, rc, "%s: %s", path, err.what[0] ? err.what : kimg_strerror(rc));
	kimg_file_advise_random(&f);
	rc = ask(f.bytes, &f.zeros, path, sm, driver, flags, out, why, ws);
	kimg_file_close(&f);
	return rc;
}

KIMG_API int kimg_can_run_loaded(const void *addr, const char *sm, const char *driver, unsigned flags,
				 struct kimg_answer **out, char *why, size_t ws)
{
	Dl_info info;
	if (out)
		*out = NULL;
	if (!addr || !dladdr(addr, &info) || !info.dli_fname)
		return api_fail(why, ws, -ENOENT, "no loaded module holds address %p", addr);
	/* The main program's name is "" (or argv[0]): its file is /proc/self/exe. */
	const char *path = info.dli_fname[0] && strchr(info.dli_fname, '/') ? info.dli_fname : "/proc/self/exe";
	return kimg_can_run_file(path, sm, driver, flags, out, why, ws);
}
