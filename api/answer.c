/* SPDX-License-Identifier: Apache-2.0 */
/* An answer read out: the accessors of kimg.h, the one-line reason and
 * fix, and the JSON document (report/json.c writes it, in the spelling
 * of `kimg-probe check --json`, docs/json-probe.md). Nothing is decided here:
 * every field comes from the core's verdicts made in can_run.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "cuda_errors.h"
#include "json.h"
#include "kimg.h"
#include "report.h"
#include "rules.h"

#ifndef KIMG_RELEASE
#define KIMG_RELEASE "unknown"
#endif

static void cuda_version(int v, char *buf, size_t size)
{
	if (v > 0)
		snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
	else if (size)
		buf[0] = '\0';
}

static const char *or_null(const char *s)
{
	return s && s[0] ? s : NULL;
}

/* "module 2 (at 0x1a40 in .nv_fatbin)" */
static void module_place(const struct api_module *m, size_t index, char *buf, size_t size)
{
	if (m->origin == KIMG_ORIGIN_RAW)
		snprintf(buf, size, "module %zu (the whole file)", index + 1);
	else
		snprintf(buf, size, "module %zu (at 0x%llx%s%s%s%s)", index + 1, (unsigned long long)m->offset,
			 m->section[0] ? " in " : "", m->section, m->member[0] ? ", member " : "", m->member);
}

static void fix_line(const struct kimg_fix *f, char *buf, size_t size)
{
	char lo[16], hi[16];
	size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, __VA_ARGS__))
	buf[0] = '\0';
	if (f->nvcc[0])
		ADD("nvcc %s; ", f->nvcc);
	if (f->cmake[0])
		ADD("CMAKE_CUDA_ARCHITECTURES=\"%s\"; ", f->cmake);
	if (f->torch_arch_list[0])
		ADD("TORCH_CUDA_ARCH_LIST=\"%s\"; ", f->torch_arch_list);
	cuda_version(f->min_toolkit, lo, sizeof lo);
	cuda_version(f->max_toolkit, hi, sizeof hi);
	if (lo[0])
		ADD("CUDA %s%s%s%s%s; ", lo, hi[0] ? " to " : " or newer", hi, f->min_driver[0] ? ", driver >= " : "",
		    f->min_driver);
	if (f->wheel[0])
		ADD("PyTorch: %s; ", f->wheel);
	if (f->advice[0])
		ADD("%s", f->advice);
#undef ADD
	size_t len = strlen(buf);
	while (len >= 2 && buf[len - 2] == ';' && buf[len - 1] == ' ')
		buf[len -= 2] = '\0';
}

static void summarise(struct kimg_answer *a)
{
	size_t nt = a->n_targets;
	unsigned long sass = 0, jit = 0, link = 0, dispatched = 0, judged = 0;
	a->runs = true;
	for (size_t i = 0; i < a->n_mods; i++) {
		for (size_t t = 0; t < nt; t++) {
			const struct api_verdict *v = &a->verdicts[i * nt + t];
			const struct kimg_module_verdict *mv = &v->j.verdict;
			if (v->j.fate == KIMG_FATE_NOT_JUDGED)
				continue;
			judged++;
			if (v->j.fate == KIMG_FATE_DISPATCHED) {
				dispatched++;
			} else if (v->j.fate == KIMG_FATE_RUNS) {
				sass += mv->outcome == KIMG_OUTCOME_SASS;
				jit += mv->outcome == KIMG_OUTCOME_PTX_JIT;
				link += mv->outcome == KIMG_OUTCOME_JIT_LINK;
			} else if (a->runs) {
				char place[256];
				const char *ename = kimg_cuda_error_name(mv->expected_error);
				a->runs = false;
				a->error = mv->expected_error;
				module_place(&a->mods[i], i, place, sizeof place);
				snprintf(a->reason, sizeof a->reason, "%s cannot run on %s%s%s%s: %s [%s%s%s] -> error %d%s%s%s", place,
					 a->targets[t].sm, a->targets[t].dev.ordinal >= 0 ? " (" : "",
					 a->targets[t].dev.ordinal >= 0 ? a->targets[t].dev.name : "",
					 a->targets[t].dev.ordinal >= 0 ? ")" : "", kimg_reason_text(mv->reason),
					 mv->rule ? mv->rule : "?", v->j.rule ? ", " : "", v->j.rule ? v->j.rule : "",
					 mv->expected_error, ename ? " (" : "", ename ? ename : "", ename ? ")" : "");
				if (v->have_fix)
					fix_line(&v->fix, a->fix, sizeof a->fix);
			}
		}
	}
	/* A runtime that needs a newer driver fails first: at its start, before any module loads. */
	for (size_t t = 0; a->is_lib && t < nt; t++) {
		const struct kimg_runtime_verdict *v = &a->lib_verdicts[t];
		if (v->outcome != KIMG_RUNTIME_NEEDS_DRIVER)
			continue;
		char ver[32], drv[16], compat[32];
		if (a->lib.cuda_minor >= 0)
			snprintf(ver, sizeof ver, "%d.%d", a->lib.cuda_major, a->lib.cuda_minor);
		else
			snprintf(ver, sizeof ver, "%d.x", a->lib.cuda_major);
		cuda_version(a->targets[t].dev.driver_version, drv, sizeof drv);
		a->runs = false;
		a->error = v->expected_error;
		snprintf(a->reason, sizeof a->reason, "%s for CUDA %s needs a newer driver than the CUDA %s one of %s: %s -> error %d (%s)",
			 a->lib.kind->what, ver, drv, a->targets[t].sm, v->why ? v->why : "", v->expected_error,
			 kimg_cuda_runtime_error_name(v->expected_error));
		snprintf(a->fix, sizeof a->fix,
			 "upgrade the driver to >= %s%s%s%s; or on data-center GPUs install %s; or use a build for the driver's CUDA major",
			 v->min_driver ? v->min_driver : "?", v->branch ? " (the " : "", v->branch ? v->branch : "",
			 v->branch ? " branch or newer)" : "",
			 kimg_cuda_compat_package(a->lib.cuda_major, a->lib.cuda_minor, compat, sizeof compat));
		break;
	}
	if (!a->runs)
		return;
	char list[512] = "";
	for (size_t t = 0, n = 0; t < nt; t++)
		n += (size_t)snprintf(list + (n < sizeof list ? n : sizeof list), n < sizeof list ? sizeof list - n : 0,
				      "%s%s", t ? ", " : "", a->targets[t].sm);
	if (judged == 0)
		snprintf(a->reason, sizeof a->reason, "no device code to judge: nothing in it can fail for want of a kernel image");
	else
		snprintf(a->reason, sizeof a->reason,
			 "runs on %s: %lu module/target pair%s (%lu as SASS, %lu by PTX JIT, %lu after a JIT link, "
			 "%lu selected at run time for other GPUs)",
			 list, judged, judged == 1 ? "" : "s", sass, jit, link, dispatched);
}

static void json_fix(struct kimg_json *j, const struct kimg_fix *f)
{
	char v[16];
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "nvcc", or_null(f->nvcc));
	kimg_json_kv_string(j, "cmake", or_null(f->cmake));
	kimg_json_kv_string(j, "torch_cuda_arch_list", or_null(f->torch_arch_list));
	cuda_version(f->min_toolkit, v, sizeof v);
	kimg_json_kv_string(j, "min_toolkit", or_null(v));
	cuda_version(f->max_toolkit, v, sizeof v);
	kimg_json_kv_string(j, "max_toolkit", or_null(v));
	kimg_json_kv_string(j, "min_driver", or_null(f->min_driver));
	kimg_json_kv_string(j, "wheel", or_null(f->wheel));
	kimg_json_kv_string(j, "advice", or_null(f->advice));
	kimg_json_end_object(j);
}

static void json_image(struct kimg_json *j, const struct kimg_image *img)
{
	kimg_report_json_image_begin(j, img); /* kind, arch, ptx_isa */
	kimg_json_kv_string(j, "compressed", kimg_compression_name(img->compression));
	kimg_json_kv_uint(j, "size", img->size);
	kimg_json_kv_uint(j, "offset", img->offset);
	kimg_json_end_object(j);
}

static void json_module(struct kimg_json *j, const struct kimg_answer *a, size_t i)
{
	const struct api_module *m = &a->mods[i];
	kimg_json_begin_object(j);
	kimg_json_kv_uint(j, "offset", m->offset);
	kimg_json_kv_uint(j, "size", m->size);
	kimg_json_kv_string(j, "kind", kimg_input_kind_name(m->kind));
	kimg_json_kv_string(j, "origin", kimg_module_origin_name(m->origin));
	kimg_json_kv_string(j, "section", or_null(m->section));
	kimg_json_kv_string(j, "member", or_null(m->member));
	kimg_json_kv_string(j, "error", or_null(m->error));
	kimg_json_kv_bool(j, "link_stub", m->link_stub);
	kimg_json_kv_bool(j, "link_input", m->link_input);
	kimg_json_key(j, "images");
	kimg_json_begin_array(j);
	for (size_t k = 0; k < m->n_imgs; k++)
		json_image(j, &m->imgs[k]);
	kimg_json_end_array(j);
	kimg_json_key(j, "verdicts");
	kimg_json_begin_array(j);
	/* check lists no verdicts for what it does not judge either */
	bool judged = !m->link_input && !m->link_stub && m->n_imgs > 0;
	for (size_t t = 0; judged && t < a->n_targets; t++) {
		const struct api_verdict *v = &a->verdicts[i * a->n_targets + t];
		const struct kimg_module_verdict *mv = &v->j.verdict;
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "sm", a->targets[t].sm);
		kimg_json_kv_string(j, "outcome", kimg_outcome_id(mv->outcome));
		kimg_json_kv_string(j, "image", or_null(v->image));
		kimg_json_kv_string(j, "reason", kimg_reason_id(mv->reason));
		kimg_json_kv_string(j, "rule", mv->rule);
		kimg_json_key(j, "expected_error");
		if (mv->expected_error)
			kimg_json_int(j, mv->expected_error);
		else
			kimg_json_null(j);
		kimg_json_kv_string(j, "fate", kimg_fate_id(v->j.fate));
		kimg_json_kv_string(j, "file_rule", v->j.rule);
		kimg_json_kv_string(j, "library", v->j.library);
		kimg_json_key(j, "fix");
		if (v->have_fix && !m->link_stub)
			json_fix(j, &v->fix);
		else
			kimg_json_null(j);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_end_object(j);
}

static int make_json(struct kimg_answer *a)
{
	size_t len = 0;
	FILE *f = open_memstream(&a->json, &len);
	if (!f)
		return -ENOMEM;
	struct kimg_json j;
	kimg_json_init(&j, f);
	kimg_json_begin_object(&j);
	kimg_json_kv_int(&j, "api_version", KIMG_API_VERSION);
	kimg_json_kv_string(&j, "path", a->path);
	kimg_json_kv_bool(&j, "runs", a->runs);
	kimg_json_key(&j, "error");
	if (a->error)
		kimg_json_int(&j, a->error);
	else
		kimg_json_null(&j);
	kimg_json_kv_string(&j, "error_name", !a->error ? NULL
			    : a->error == 35 && a->is_lib ? kimg_cuda_runtime_error_name(a->error) : kimg_cuda_error_name(a->error));
	kimg_json_kv_string(&j, "reason", a->reason);
	kimg_json_kv_string(&j, "fix", or_null(a->fix));
	kimg_json_kv_string(&j, "problem", or_null(a->problem));
	kimg_json_key(&j, "cuda_library");
	if (a->is_lib) {
		char ver[32];
		if (a->lib.cuda_major < 0)
			ver[0] = '\0';
		else if (a->lib.cuda_minor < 0)
			snprintf(ver, sizeof ver, "%d.x", a->lib.cuda_major);
		else
			snprintf(ver, sizeof ver, "%d.%d", a->lib.cuda_major, a->lib.cuda_minor);
		kimg_json_begin_object(&j);
		kimg_json_kv_string(&j, "library", a->lib.kind->id);
		kimg_json_kv_string(&j, "what", a->lib.kind->what);
		kimg_json_kv_string(&j, "cuda_version", or_null(ver));
		kimg_json_kv_string(&j, "version_source", a->lib.source);
		kimg_json_key(&j, "verdicts");
		kimg_json_begin_array(&j);
		for (size_t t = 0; a->lib.cuda_major >= 0 && t < a->n_targets; t++) {
			const struct kimg_runtime_verdict *v = &a->lib_verdicts[t];
			static const char *const ids[] = { "ok", "minor_version_compat", "needs_newer_driver", "unknown" };
			char drv[16];
			cuda_version(a->targets[t].dev.driver_version, drv, sizeof drv);
			kimg_json_begin_object(&j);
			kimg_json_kv_string(&j, "sm", a->targets[t].sm);
			kimg_json_kv_string(&j, "driver_cuda_version", or_null(drv));
			kimg_json_kv_string(&j, "outcome", (unsigned)v->outcome < 4 ? ids[v->outcome] : "unknown");
			kimg_json_key(&j, "expected_error");
			if (v->expected_error)
				kimg_json_int(&j, v->expected_error);
			else
				kimg_json_null(&j);
			kimg_json_kv_string(&j, "min_driver", v->min_driver);
			kimg_json_kv_string(&j, "why", v->why);
			kimg_json_end_object(&j);
		}
		kimg_json_end_array(&j);
		kimg_json_end_object(&j);
	} else {
		kimg_json_null(&j);
	}
	kimg_json_key(&j, "targets");
	kimg_json_begin_array(&j);
	for (size_t t = 0; t < a->n_targets; t++) {
		const struct kimg_device *d = &a->targets[t].dev;
		char v[16];
		cuda_version(d->driver_version, v, sizeof v);
		kimg_json_begin_object(&j);
		kimg_json_kv_string(&j, "sm", a->targets[t].sm);
		kimg_json_kv_string(&j, "device", d->name);
		kimg_json_key(&j, "index");
		if (d->ordinal >= 0)
			kimg_json_int(&j, d->ordinal);
		else
			kimg_json_null(&j);
		kimg_json_kv_string(&j, "driver_cuda_version", or_null(v));
		kimg_json_kv_bool(&j, "tegra", d->tegra);
		kimg_json_end_object(&j);
	}
	kimg_json_end_array(&j);
	kimg_json_key(&j, "modules");
	kimg_json_begin_array(&j);
	for (size_t i = 0; i < a->n_mods; i++)
		json_module(&j, a, i);
	kimg_json_end_array(&j);
	kimg_json_end_object(&j);
	bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad) {
		free(a->json);
		a->json = NULL;
		return -ENOMEM;
	}
	return 0;
}

int api_answer_finish(struct kimg_answer *a)
{
	summarise(a);
	return make_json(a);
}

void api_answer_destroy(struct kimg_answer *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_mods; i++)
		free(a->mods[i].imgs);
	free(a->mods);
	free(a->verdicts);
	free(a->json);
	free(a->path);
	free(a);
}

/* ---- kimg.h ---- */

KIMG_API void kimg_answer_free(struct kimg_answer *a)
{
	api_answer_destroy(a);
}

KIMG_API int kimg_answer_runs(const struct kimg_answer *a)
{
	return a && a->runs;
}

KIMG_API int kimg_answer_error(const struct kimg_answer *a)
{
	return a ? a->error : 0;
}

KIMG_API const char *kimg_answer_reason(const struct kimg_answer *a)
{
	return a ? a->reason : "";
}

KIMG_API const char *kimg_answer_fix(const struct kimg_answer *a)
{
	return a ? a->fix : "";
}

KIMG_API const char *kimg_answer_path(const struct kimg_answer *a)
{
	return a && a->path ? a->path : "";
}

KIMG_API size_t kimg_answer_module_count(const struct kimg_answer *a)
{
	return a ? a->n_mods : 0;
}

KIMG_API size_t kimg_answer_target_count(const struct kimg_answer *a)
{
	return a ? a->n_targets : 0;
}

KIMG_API int kimg_answer_target(const struct kimg_answer *a, size_t t, struct kimg_target_info *out)
{
	if (!a || !out || t >= a->n_targets)
		return -EINVAL;
	const struct api_target *x = &a->targets[t];
	out->sm = x->sm;
	out->device = x->dev.name;
	out->ordinal = x->dev.ordinal;
	out->driver_version = x->dev.driver_version;
	out->tegra = x->dev.tegra;
	return 0;
}

KIMG_API int kimg_answer_verdict(const struct kimg_answer *a, size_t m, size_t t, struct kimg_verdict_info *out)
{
	if (!a || !out || m >= a->n_mods || t >= a->n_targets)
		return -EINVAL;
	const struct api_verdict *v = &a->verdicts[m * a->n_targets + t];
	const struct kimg_module_verdict *mv = &v->j.verdict;
	bool fix = v->have_fix && !a->mods[m].link_stub;
	bool judged = v->j.fate != KIMG_FATE_NOT_JUDGED;
	out->outcome = judged ? kimg_outcome_id(mv->outcome) : NULL;
	out->image = v->image[0] ? v->image : NULL;
	out->reason = judged ? kimg_reason_id(mv->reason) : NULL;
	out->reason_text = judged ? kimg_reason_text(mv->reason) : NULL;
	out->rule = judged ? mv->rule : NULL;
	out->expected_error = mv->expected_error;
	out->fate = kimg_fate_id(v->j.fate);
	out->file_rule = v->j.rule;
	out->library = v->j.library;
	out->fix_nvcc = fix ? v->fix.nvcc : "";
	out->fix_cmake = fix ? v->fix.cmake : "";
	out->fix_torch_arch_list = fix ? v->fix.torch_arch_list : "";
	out->fix_advice = fix ? v->fix.advice : "";
	return 0;
}

KIMG_API const char *kimg_answer_json(const struct kimg_answer *a)
{
	return a && a->json ? a->json : "null";
}

KIMG_API const char *kimg_api_strerror(int code)
{
	return kimg_strerror(code);
}

KIMG_API int kimg_api_version(void)
{
	return KIMG_API_VERSION;
}

KIMG_API const char *kimg_api_release(void)
{
	return KIMG_RELEASE;
}
