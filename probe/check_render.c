/* SPDX-License-Identifier: Apache-2.0 */
/* check's renderer (check_run.h): a judged file (struct check_file) as text
 * lines or its JSON object, the JSON header with the targets, and the
 * end of the output (by-package table, "Where it may run", summary). It
 * decides nothing: every verdict, fate and count comes judged. */
#include <stdlib.h>
#include <string.h>

#include "glibc_pins.h"
#include "check_run.h"
#include "cuda_errors.h"
#include "image.h"

void check_target_label(const struct probe_target *t, char *buf, size_t size)
{
	char cc[16];
	kimg_arch_format_cc(t->dev.cc, cc, sizeof cc);
	if (t->dev.ordinal >= 0)
		snprintf(buf, size, "%s (GPU %d %s)", cc, t->dev.ordinal, t->dev.name);
	else if (t->named)
		snprintf(buf, size, "%s (%s)", cc, t->dev.name);
	else
		snprintf(buf, size, "%s", cc);
}

static void json_fix(struct kimg_json *j, const struct kimg_fix *fix)
{
	char v[16];
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "nvcc", fix->nvcc[0] ? fix->nvcc : NULL);
	kimg_json_kv_string(j, "cmake", fix->cmake[0] ? fix->cmake : NULL);
	kimg_json_kv_string(j, "torch_cuda_arch_list", fix->torch_arch_list[0] ? fix->torch_arch_list : NULL);
	probe_format_cuda_version(fix->min_toolkit, v, sizeof v);
	kimg_json_kv_string(j, "min_toolkit", v[0] ? v : NULL);
	probe_format_cuda_version(fix->max_toolkit, v, sizeof v);
	kimg_json_kv_string(j, "max_toolkit", v[0] ? v : NULL);
	kimg_json_kv_string(j, "min_driver", fix->min_driver[0] ? fix->min_driver : NULL);
	kimg_json_kv_string(j, "wheel", fix->wheel[0] ? fix->wheel : NULL);
	kimg_json_kv_string(j, "advice", fix->advice[0] ? fix->advice : NULL);
	kimg_json_end_object(j);
}

static void text_fix(FILE *f, const struct kimg_fix *fix)
{
	char lo[16], hi[16];
	if (fix->nvcc[0])
		fprintf(f, "      fix: nvcc %s\n", fix->nvcc);
	if (fix->cmake[0] || fix->torch_arch_list[0])
		fprintf(f, "           CMAKE_CUDA_ARCHITECTURES=\"%s\"  TORCH_CUDA_ARCH_LIST=\"%s\"\n",
		       fix->cmake[0] ? fix->cmake : "-", fix->torch_arch_list[0] ? fix->torch_arch_list : "-");
	probe_format_cuda_version(fix->min_toolkit, lo, sizeof lo);
	probe_format_cuda_version(fix->max_toolkit, hi, sizeof hi);
	if (lo[0] || hi[0] || fix->min_driver[0]) {
		fprintf(f, "           toolkit: CUDA %s%s%s%s", lo[0] ? lo : "?", hi[0] ? " to " : " or newer",
		       hi[0] ? hi : "", fix->min_driver[0] ? "" : "\n");
		if (fix->min_driver[0])
			fprintf(f, ", driver >= %s\n", fix->min_driver);
	}
	if (fix->wheel[0])
		fprintf(f, "           PyTorch: %s\n", fix->wheel);
	if (fix->advice[0])
		fprintf(f, "           %s\n", fix->advice);
}

static void selected_name(const struct probe_module *m, const struct kimg_module_verdict *v, char *buf, size_t size)
{
	buf[0] = '\0';
	if (v->selected >= 0 && (size_t)v->selected < m->n_imgs)
		kimg_image_arch_name(&m->imgs[v->selected], buf, size);
}

void check_add_archs(const struct probe_module *m, char *list, size_t size)
{
	for (size_t i = 0; i < m->n_imgs; i++) {
		char a[32], padded[300], key[36];
		kimg_image_arch_name(&m->imgs[i], a, sizeof a);
		snprintf(padded, sizeof padded, " %s ", list);
		snprintf(key, sizeof key, " %s ", a);
		if (strstr(padded, key))
			continue;
		size_t used = strlen(list);
		if (used + strlen(a) + 2 < size)
			snprintf(list + used, size - used, "%s%s", used ? " " : "", a);
	}
}

static void json_module(struct kimg_json *j, const struct check_run *r, const struct probe_module *m,
			const struct check_row *rows, bool stub)
{
	probe_json_module_begin(j, m);
	kimg_json_kv_bool(j, "link_stub", stub);
	kimg_json_kv_bool(j, "link_input", m->link_input);
	kimg_json_key(j, "images");
	kimg_json_begin_array(j);
	for (size_t k = 0; k < m->n_imgs; k++)
		probe_json_image(j, &m->imgs[k], false);
	kimg_json_end_array(j);
	kimg_json_key(j, "verdicts");
	kimg_json_begin_array(j);
	for (int t = 0; rows && !m->link_input && t < r->n_targets; t++) {
		const struct probe_target *tg = &r->targets[t];
		const struct kimg_module_judgement *mj = &rows[t].j;
		const struct kimg_module_verdict *v = &mj->verdict;
		char cc[16], img[32];
		kimg_arch_format_cc(tg->dev.cc, cc, sizeof cc);
		selected_name(m, v, img, sizeof img);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "sm", cc);
		kimg_json_kv_string(j, "device", tg->named ? tg->dev.name : NULL);
		kimg_json_kv_string(j, "outcome", kimg_outcome_id(v->outcome));
		kimg_json_kv_string(j, "image", img[0] ? img : NULL);
		kimg_json_kv_string(j, "reason", kimg_reason_id(v->reason));
		kimg_json_kv_string(j, "rule", v->rule);
		kimg_json_key(j, "expected_error");
		if (v->expected_error)
			kimg_json_int(j, v->expected_error);
		else
			kimg_json_null(j);
		kimg_json_kv_string(j, "fate", kimg_fate_id(mj->fate));
		kimg_json_kv_string(j, "file_rule", mj->rule);
		kimg_json_kv_string(j, "library", mj->library);
		kimg_json_key(j, "fix");
		if (rows[t].fix && !stub)
			json_fix(j, rows[t].fix);
		else
			kimg_json_null(j);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_end_object(j);
}

/* Distinct image targets of a module, in order: "sm_80 sm_90 compute_90". */
static void module_archs(const struct probe_module *m, char *buf, size_t size)
{
	buf[0] = '\0';
	check_add_archs(m, buf, size);
}

static void text_failure(FILE *f, int width, const char *label, const struct check_row *row)
{
	const struct kimg_module_verdict *v = &row->j.verdict;
	const char *ename = kimg_cuda_error_name(v->expected_error);
	if (row->j.rule && strcmp(row->j.rule, "R2") == 0)
		fprintf(f, "    %-*s  CANNOT RUN: %s, and the device-link inputs hold no PTX this GPU can JIT-link [R2]",
		       width, label, kimg_reason_text(v->reason));
	else
		fprintf(f, "    %-*s  CANNOT RUN: %s [%s]", width, label, kimg_reason_text(v->reason),
		       v->rule ? v->rule : "?");
	if (v->expected_error)
		fprintf(f, " -> error %d%s%s%s", v->expected_error, ename ? " (" : "", ename ? ename : "", ename ? ")" : "");
	fputc('\n', f);
	if (row->fix)
		text_fix(f, row->fix);
}

static void text_module(FILE *f, const struct check_run *r, size_t index, const struct probe_module *m,
			const struct check_row *rows, bool stub)
{
	int width = r->label_width;
	char place[256], archs[400];
	probe_format_module_place(m, place, sizeof place);
	module_archs(m, archs, sizeof archs);
	struct probe_esc e;
	fprintf(f, "  module %zu %s: %s\n", index + 1, probe_esc(&e, place), m->n_imgs ? archs : "empty container, nothing to check");
	if (m->error)
		fprintf(f, "    error: %s\n", probe_esc(&e, m->error));
	if (stub) {
		fprintf(f, "    device-link stub (cubins without kernels): not checked\n");
		return;
	}
	if (m->link_input) {
		fprintf(f, "    relocatable input of the device link (-rdc): judged with the linked module\n");
		return;
	}
	for (int t = 0; rows && t < r->n_targets; t++) {
		const struct kimg_module_judgement *mj = &rows[t].j;
		const struct kimg_module_verdict *v = &mj->verdict;
		char label[160], img[32];
		check_target_label(&r->targets[t], label, sizeof label);
		selected_name(m, v, img, sizeof img);
		if (mj->fate == KIMG_FATE_DISPATCHED && mj->library)
			fprintf(f, "    %-*s  not for this GPU: %s selects its modules per GPU [%s]\n", width, label,
			       mj->library, mj->rule);
		else if (mj->fate == KIMG_FATE_DISPATCHED)
			fprintf(f, "    %-*s  not for this GPU: arch-specific code its library selects on other GPUs [%s]\n",
			       width, label, mj->rule);
		else if (v->outcome == KIMG_OUTCOME_SASS)
			fprintf(f, "    %-*s  runs: cubin %s\n", width, label, img);
		else if (v->outcome == KIMG_OUTCOME_PTX_JIT)
			fprintf(f, "    %-*s  runs: PTX %s, compiled by the driver's JIT\n", width, label, img);
		else if (v->outcome == KIMG_OUTCOME_JIT_LINK)
			fprintf(f, "    %-*s  runs after JIT link: the driver JIT-links the PTX of the device-link inputs [R1]\n",
			       width, label);
		else
			text_failure(f, width, label, &rows[t]);
	}
}

static void json_tallies(struct kimg_json *j, const struct check_run *r, const struct check_tally *ft)
{
	kimg_json_key(j, "per_target");
	kimg_json_begin_array(j);
	for (int t = 0; ft && t < r->n_targets; t++) {
		char cc[16];
		kimg_arch_format_cc(r->targets[t].dev.cc, cc, sizeof cc);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "sm", cc);
		kimg_json_kv_string(j, "device", r->targets[t].named ? r->targets[t].dev.name : NULL);
		kimg_json_kv_uint(j, "runs", ft[t].runs);
		kimg_json_kv_uint(j, "dispatched", ft[t].dispatched);
		kimg_json_kv_uint(j, "fails", ft[t].fails);
		kimg_json_key(j, "dispatched_targets");
		kimg_json_begin_array(j);
		char list[sizeof ft[t].dispatched_archs];
		snprintf(list, sizeof list, "%s", ft[t].dispatched_archs);
		for (char *save = NULL, *tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			kimg_json_string(j, tok);
		kimg_json_end_array(j);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
}

static void text_tallies(FILE *f, const struct check_run *r, const struct check_tally *ft)
{
	for (int t = 0; ft && t < r->n_targets; t++) {
		char label[160];
		check_target_label(&r->targets[t], label, sizeof label);
		fprintf(f, "  on %s: %lu run, %lu dispatched for other GPUs%s%s%s, %lu fail\n", label, ft[t].runs,
		       ft[t].dispatched, ft[t].dispatched ? " (" : "", ft[t].dispatched_archs,
		       ft[t].dispatched ? ")" : "", ft[t].fails);
	}
}

int check_label_width(const struct probe_target *t, int n)
{
	int width = 0;
	for (int i = 0; i < n; i++) {
		char label[160];
		check_target_label(&t[i], label, sizeof label);
		if ((int)strlen(label) > width)
			width = (int)strlen(label);
	}
	return width;
}

static void json_targets(struct kimg_json *j, const struct check_run *r)
{
	kimg_json_key(j, "targets");
	kimg_json_begin_array(j);
	for (int t = 0; t < r->n_targets; t++) {
		const struct kimg_device *d = &r->targets[t].dev;
		char cc[16], drv[16];
		kimg_arch_format_cc(d->cc, cc, sizeof cc);
		probe_format_cuda_version(d->driver_version, drv, sizeof drv);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "sm", cc);
		kimg_json_kv_string(j, "device", r->targets[t].named ? d->name : NULL);
		kimg_json_kv_bool(j, "tegra", d->tegra);
		kimg_json_kv_string(j, "driver_cuda_version", drv[0] ? drv : NULL);
		kimg_json_key(j, "index");
		if (d->ordinal >= 0)
			kimg_json_int(j, d->ordinal);
		else
			kimg_json_null(j);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
}

void check_render_json_header(struct kimg_json *j, const struct check_run *r)
{
	kimg_json_begin_document(j);
	json_targets(j, r);
	kimg_json_key(j, "files");
	kimg_json_begin_array(j);
}


void check_render_file(struct probe_out *out, const struct check_run *r, const struct check_file *cf,
		       bool explicit_path)
{
	const struct probe_file *pf = &cf->pf;
	size_t nt = (size_t)r->n_targets;
	if (out->json) {
		probe_json_file_begin(&out->j, pf);
	} else if (cf->shown > 0 || explicit_path || cf->is_lib) {
		struct probe_esc e;
		fprintf(out->f, "%s: %zu module%s%s\n", probe_esc(&e, pf->path), cf->shown, cf->shown == 1 ? "" : "s",
			cf->shown == 0 && !pf->error[0] ? " (no device code)" : "");
		probe_image_text_origin(out->f, pf->path);
		if (pf->error[0])
			fprintf(out->f, "  error: %s\n", probe_esc(&e, pf->error));
		if (cf->pkg) {
			char name[256];
			probe_format_package(cf->pkg, name, sizeof name);
			fprintf(out->f, "  package: %s\n", probe_esc(&e, name));
		}
	}
	size_t index = 0;
	for (size_t i = 0; i < pf->n_mods; i++) {
		const struct probe_module *m = &pf->mods[i];
		const struct check_row *mrows = cf->judged ? &cf->rows[i * nt] : NULL;
		bool stub = cf->stub && cf->stub[i];
		if (!r->all_modules && m->link_input)
			continue;
		bool has_rows = mrows && m->n_imgs > 0 && !stub;
		if (out->json)
			json_module(&out->j, r, m, has_rows ? mrows : NULL, stub);
		else
			text_module(out->f, r, index, m, has_rows ? mrows : NULL, stub);
		index++;
	}
	if (out->json) {
		kimg_json_end_array(&out->j);
		json_tallies(&out->j, r, cf->judged ? cf->tally : NULL);
		probe_json_package(&out->j, cf->pkg);
		if (cf->is_lib)
			probe_cuda_lib_json(NULL, &out->j, &cf->lib, r->targets, r->n_targets);
		kimg_json_end_object(&out->j);
	} else {
		if (cf->shown > 0 && cf->judged)
			text_tallies(out->f, r, cf->tally);
		if (cf->is_lib)
			probe_cuda_lib_text(NULL, out->f, &cf->lib, r->targets, r->n_targets);
	}
}

static void json_end(struct kimg_json *j, const struct check_run *r, const struct check_totals *t,
		     const struct probe_extras *x, const struct probe_place_row *place, unsigned long errors, int status)
{
	kimg_json_end_array(j);
	kimg_json_kv_bool(j, "ok", status == PROBE_EXIT_OK);
	kimg_json_key(j, "summary");
	kimg_json_begin_object(j);
	kimg_json_kv_uint(j, "files", t->files);
	kimg_json_kv_uint(j, "modules", t->modules);
	kimg_json_kv_uint(j, "link_stubs", t->stubs);
	kimg_json_kv_uint(j, "checks", t->checks);
	kimg_json_kv_uint(j, "sass", t->by_outcome[KIMG_OUTCOME_SASS]);
	kimg_json_kv_uint(j, "ptx_jit", t->by_outcome[KIMG_OUTCOME_PTX_JIT]);
	kimg_json_kv_uint(j, "jit_link", t->by_outcome[KIMG_OUTCOME_JIT_LINK]);
	kimg_json_kv_uint(j, "dispatched", t->dispatched);
	kimg_json_kv_uint(j, "cannot_run", t->cannot);
	kimg_json_kv_uint(j, "cuda_libraries", x->libs);
	kimg_json_kv_uint(j, "needs_newer_driver", x->libs_need_driver);
	kimg_json_kv_uint(j, "container_images", t->images);
	kimg_json_kv_uint(j, "image_requirements_refused", t->image_refusals);
	kimg_json_kv_uint(j, "errors", errors);
	kimg_json_end_object(j);
	probe_placement_json(j, r->targets, r->n_targets, place);
	kimg_json_end_object(j);
	fputc('\n', j->out);
}

static void text_end(FILE *f, const struct check_run *r, const struct check_totals *t, struct probe_extras *x,
		     const struct probe_place_row *place, unsigned long errors)
{
	probe_extras_sort_groups(x);
	probe_extras_text_packages(x);
	probe_placement_text(f, r->targets, r->n_targets, place);
	fprintf(f, "%lu file%s, %lu module%s on %d GPU%s: %lu run (%lu sass, %lu ptx_jit", t->files,
		t->files == 1 ? "" : "s", t->modules, t->modules == 1 ? "" : "s", r->n_targets,
		r->n_targets == 1 ? "" : "s", t->checks - t->cannot - t->dispatched, t->by_outcome[KIMG_OUTCOME_SASS],
		t->by_outcome[KIMG_OUTCOME_PTX_JIT]);
	if (t->by_outcome[KIMG_OUTCOME_JIT_LINK])
		fprintf(f, ", %lu jit_link", t->by_outcome[KIMG_OUTCOME_JIT_LINK]);
	fprintf(f, "), ");
	if (t->dispatched)
		fprintf(f, "%lu dispatched for other GPUs, ", t->dispatched);
	fprintf(f, "%lu cannot run", t->cannot);
	if (x->libs)
		fprintf(f, "; %lu CUDA librar%s, %lu need%s a newer driver", x->libs, x->libs == 1 ? "y" : "ies",
			x->libs_need_driver, x->libs_need_driver == 1 ? "s" : "");
	if (t->stubs)
		fprintf(f, "; %lu device-link stub%s not checked", t->stubs, t->stubs == 1 ? "" : "s");
	if (t->images)
		fprintf(f, "; %lu container image%s, %lu requirement verdict%s refused", t->images, t->images == 1 ? "" : "s",
			t->image_refusals, t->image_refusals == 1 ? "" : "s");
	fprintf(f, "; %lu error%s%s\n", errors, errors == 1 ? "" : "s",
		errors ? " (some inputs could not be read: exit 2)" : "");
}

void check_render_end(struct probe_out *out, const struct check_run *r, const struct check_totals *t,
		      struct probe_extras *x, const struct probe_place_row *place, int status)
{
	/* no target failed anywhere: the placement of an empty table */
	struct probe_place_row *none = place ? NULL : calloc((size_t)r->n_targets, sizeof *none);
	if (out->json)
		json_end(&out->j, r, t, x, place ? place : none, out->errors, status);
	else
		text_end(out->f, r, t, x, place ? place : none, out->errors);
	free(none);
}
