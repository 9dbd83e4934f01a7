/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe doctor: the toolchains, JIT caches and CUDA switches, as
 * text and JSON (doctor.h has the model; doctor_tools.c and
 * doctor_caches.c fill it). */
#include <string.h>

#include "cuda_errors.h"
#include "doctor.h"
#include "rules.h"

static const char *const tool_kind[DOC_TOOL_KIND_COUNT] = {
	[DOC_TOOL_TRITON_PTXAS] = "triton_ptxas",
	[DOC_TOOL_PTXAS] = "ptxas",
	[DOC_TOOL_NVCC] = "nvcc",
};
static const char *const tool_label[DOC_TOOL_KIND_COUNT] = {
	[DOC_TOOL_TRITON_PTXAS] = "Triton ptxas",
	[DOC_TOOL_PTXAS] = "ptxas",
	[DOC_TOOL_NVCC] = "nvcc",
};

/* "12.1 (sm_121a), 11.0 (sm_110a)": the GPUs the tool cannot target, as it would be asked. */
static void cannot_list(const struct doctor *d, const struct doc_tool *t, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int k = 0; k < d->n_targets && k < 64; k++) {
		if (!(t->cannot & (1ul << k)))
			continue;
		char cc[16], name[32];
		struct kimg_arch a = d->targets[k].dev.cc;
		a.variant = t->kind == DOC_TOOL_TRITON_PTXAS && a.sm >= 90 ? KIMG_VARIANT_A : KIMG_VARIANT_PLAIN;
		kimg_arch_format_cc(d->targets[k].dev.cc, cc, sizeof cc);
		kimg_arch_format(a, false, name, sizeof name);
		used += (size_t)snprintf(buf + (used < size ? used : size), used < size ? size - used : 0, "%s%s (%s)",
					 used ? ", " : "", cc, name);
	}
}

static void text_tools(const struct doctor *d)
{
	static struct probe_esc e;
	printf("Toolchains (Triton's ptxas; nvcc and ptxas on PATH and in the toolkit directories):%s\n",
	       d->tools.n ? "" : " none found");
	for (size_t i = 0; i < d->tools.n; i++) {
		const struct doc_tool *t = &d->tools.v[i];
		char rel[16], list[512];
		probe_format_cuda_version(t->release, rel, sizeof rel);
		cannot_list(d, t, list, sizeof list);
		const char *verdict = !t->release ? "not judged" : !d->n_targets ? "not judged (no GPU)"
				      : t->cannot ? "CANNOT TARGET" : "ok";
		printf("  %-13s CUDA %-5s %s%s%s  %s [%s%s]\n", tool_label[t->kind], rel[0] ? rel : "?", verdict,
		       t->cannot ? " " : "", t->cannot ? list : "", probe_esc(&e, t->path), t->source,
		       t->kind == DOC_TOOL_TRITON_PTXAS && !t->used ? ", not used: TRITON_PTXAS_PATH is set" : "");
		if (!t->release)
			printf("    %s\n", t->error);
		if (t->cannot && t->kind == DOC_TOOL_TRITON_PTXAS && t->used) {
			/* the first GPU's target name, as ptxas would quote it */
			char first[32] = "";
			const char *open = strchr(list, '('), *close = open ? strchr(open, ')') : NULL;
			if (open && close && (size_t)(close - open) < sizeof first)
				snprintf(first, sizeof first, "%.*s", (int)(close - open - 1), open + 1);
			printf("    Triton kernels fail to compile there: ptxas fatal: Value '%s' is not defined for option "
			       "'gpu-name'\n", first);
		}
		else if (t->cannot && t->kind != DOC_TOOL_TRITON_PTXAS)
			printf("    building an extension for these GPUs with it would fail (not counted in the exit status)\n");
		if (t->fix[0])
			printf("    fix: %s\n", probe_esc(&e, t->fix));
	}
}

static void text_caches(const struct doctor *d)
{
	static struct probe_esc e1, e2;
	printf("JIT caches:\n");
	for (size_t i = 0; i < d->caches.n; i++) {
		const struct doc_cache *c = &d->caches.v[i];
		printf("  %-17s %s (%s%s)", c->name, probe_esc(&e1, c->dir), c->from_env ? "$" : "default; $",
		       c->env);
		if (!c->exists) {
			printf(": not present\n");
			continue;
		}
		printf(": %lu file%s with device code checked, %lu stale%s%s\n", c->files, c->files == 1 ? "" : "s",
		       c->stale, c->unreadable ? ", some entries not read" : "",
		       c->disabled ? "; CUDA_CACHE_DISABLE=1: the driver ignores it" : "");
		for (size_t k = 0; k < c->n_shown; k++) {
			const struct doc_stale *s = &c->shown[k];
			const char *ename = kimg_cuda_error_name(s->expected_error);
			printf("    STALE %s: %s cannot run on %s: %s [%s] -> error %d%s%s%s\n", probe_esc(&e1, s->path),
			       s->archs, s->sm, kimg_reason_text(s->reason), s->rule ? s->rule : "?", s->expected_error,
			       ename ? " (" : "", ename ? ename : "", ename ? ")" : "");
			printf("          remove: %s\n", probe_esc(&e2, s->remove));
		}
		if (c->stale > c->n_shown)
			printf("    ... and %lu more stale\n", c->stale - c->n_shown);
	}
}

static void text_switches(const struct doctor *d)
{
	static struct probe_esc e;
	if (d->switches.n == 0) {
		printf("CUDA environment: none of CUDA_FORCE_PTX_JIT, CUDA_DISABLE_PTX_JIT, CUDA_MODULE_LOADING, "
		       "TORCH_CUDA_ARCH_LIST, CUDA_CACHE_* set\n");
		return;
	}
	printf("CUDA environment:\n");
	for (size_t i = 0; i < d->switches.n; i++) {
		const struct doc_switch *s = &d->switches.v[i];
		printf("  %s=%s: %s\n", s->name, probe_esc(&e, s->value), s->effect);
		if (s->verdict[0])
			printf("    %s\n", s->verdict);
	}
}

void probe_doctor_tools_text(const struct doctor *d)
{
	text_tools(d);
	text_caches(d);
	text_switches(d);
}

void probe_doctor_tools_json(struct kimg_json *j, const struct doctor *d)
{
	kimg_json_key(j, "toolchains");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < d->tools.n; i++) {
		const struct doc_tool *t = &d->tools.v[i];
		char rel[16];
		probe_format_cuda_version(t->release, rel, sizeof rel);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "kind", tool_kind[t->kind]);
		kimg_json_kv_string(j, "path", t->path);
		kimg_json_kv_string(j, "source", t->source);
		kimg_json_kv_bool(j, "used", t->used);
		kimg_json_kv_string(j, "release", rel[0] ? rel : NULL);
		kimg_json_kv_string(j, "error", t->release ? NULL : t->error);
		kimg_json_key(j, "cannot_target");
		kimg_json_begin_array(j);
		for (int k = 0; k < d->n_targets && k < 64; k++)
			if (t->cannot & (1ul << k)) {
				char cc[16];
				kimg_arch_format_cc(d->targets[k].dev.cc, cc, sizeof cc);
				kimg_json_string(j, cc);
			}
		kimg_json_end_array(j);
		probe_format_cuda_version(t->needs_release, rel, sizeof rel);
		kimg_json_kv_string(j, "needs_release", t->cannot && rel[0] ? rel : NULL);
		kimg_json_kv_string(j, "fix", t->fix[0] ? t->fix : NULL);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_key(j, "jit_caches");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < d->caches.n; i++) {
		const struct doc_cache *c = &d->caches.v[i];
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "name", c->name);
		kimg_json_kv_string(j, "dir", c->dir);
		kimg_json_kv_string(j, "env", c->env);
		kimg_json_kv_bool(j, "from_env", c->from_env);
		kimg_json_kv_bool(j, "exists", c->exists);
		kimg_json_kv_bool(j, "disabled", c->disabled);
		kimg_json_kv_uint(j, "files_checked", c->files);
		kimg_json_kv_uint(j, "unreadable", c->unreadable);
		kimg_json_kv_uint(j, "stale_count", c->stale);
		kimg_json_key(j, "stale");
		kimg_json_begin_array(j);
		for (size_t k = 0; k < c->n_shown; k++) {
			const struct doc_stale *s = &c->shown[k];
			kimg_json_begin_object(j);
			kimg_json_kv_string(j, "path", s->path);
			kimg_json_kv_string(j, "remove", s->remove);
			kimg_json_kv_string(j, "targets", s->archs);
			kimg_json_kv_string(j, "sm", s->sm);
			kimg_json_kv_string(j, "reason", kimg_reason_id(s->reason));
			kimg_json_kv_string(j, "rule", s->rule);
			kimg_json_kv_int(j, "expected_error", s->expected_error);
			kimg_json_end_object(j);
		}
		kimg_json_end_array(j);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_key(j, "cuda_environment");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < d->switches.n; i++) {
		const struct doc_switch *s = &d->switches.v[i];
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "name", s->name);
		kimg_json_kv_string(j, "value", s->value);
		kimg_json_kv_string(j, "effect", s->effect);
		kimg_json_kv_string(j, "verdict", s->verdict[0] ? s->verdict : NULL);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
}
