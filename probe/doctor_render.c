/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe doctor: the page, as text or JSON (doctor.h has the model).
 * The GPUs and their readings, the CUDA runtimes with their verdicts, then
 * the packages with device code, failures first, each with its fix. */
#include <stdlib.h>
#include <string.h>

#include "cuda_errors.h"
#include "cluster_groups.h"
#include "doctor.h"
#include "readings.h"
#include "rules.h"

/* ---- rendering ---- */

static void cc_text(unsigned sm, char *buf, size_t size)
{
	if (sm)
		snprintf(buf, size, "%u.%u", sm / 10, sm % 10);
	else
		snprintf(buf, size, "?");
}

static void text_gpus(const struct kimg_gpu_inventory *inv)
{
	char cuda[16], isa[16];
	probe_format_cuda_version(inv->driver.cuda_version, cuda, sizeof cuda);
	kimg_report_format_isa(inv->driver.max_ptx_isa, isa, sizeof isa);
	if (inv->cuda_count < 0) {
		printf("GPUs: none usable: %s\n", inv->cuda_error);
		if (inv->driver.cuda_version)
			printf("  driver %s, CUDA %s\n", inv->driver.release[0] ? inv->driver.release : "(release unknown)",
			       cuda);
	} else {
		printf("driver %s, CUDA %s, PTX ISA up to %s\n", inv->driver.release[0] ? inv->driver.release : "(release unknown)",
		       cuda[0] ? cuda : "?", isa[0] ? isa : "?");
	}
	for (int i = 0; i < inv->n; i++) {
		const struct kimg_gpu_reading *g = &inv->gpus[i];
		char cc[24];
		if (g->ordinal < 0)
			continue;
		cc_text(g->cc_driver, cc, sizeof cc);
		printf("GPU %d: %s, compute capability %s%s\n", g->ordinal, g->name, cc, g->tegra ? ", Tegra" : "");
		probe_text_reading(g);
	}
	probe_text_not_visible(inv);
}

static bool file_fails(const struct doc_file *f)
{
	return f->cannot || f->lib_needs_driver;
}

static bool same_pkg(const struct kimg_pkg *a, const struct kimg_pkg *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a->name, b->name) == 0 && strcmp(a->version, b->version) == 0 && strcmp(a->source, b->source) == 0;
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;
	bool fa = a->cannot || a->libs_bad, fb = b->cannot || b->libs_bad;
	if (fa != fb)
		return fa ? -1 : 1;
	if (!a->pkg != !b->pkg)
		return a->pkg ? -1 : 1;
	return a->pkg ? strcmp(a->pkg->name, b->pkg->name) : 0;
}

struct group *probe_doctor_groups(struct doctor *d, size_t *n_out)
{
	struct group *g = calloc(d->n_files + 1, sizeof *g);
	size_t n = 0;
	if (!g)
		return NULL;
	for (size_t i = 0; i < d->n_files; i++) {
		struct doc_file *f = &d->files[i];
		if ((f->modules == 0 && !f->lib_needs_driver) || f->system)
			continue; /* a runtime without device code: listed with the runtimes only */
		size_t k = 0;
		while (k < n && !same_pkg(g[k].pkg, f->pkg))
			k++;
		if (k == n) {
			g[n].pkg = f->pkg;
			g[n].files = calloc(d->n_files, sizeof *g[n].files);
			if (!g[n].files)
				continue;
			n++;
		}
		g[k].files[g[k].n++] = i;
		g[k].modules += f->modules;
		g[k].cannot += f->cannot;
		g[k].dispatched += f->dispatched;
		g[k].libs_bad += f->lib_needs_driver;
	}
	qsort(g, n, sizeof *g, group_cmp);
	*n_out = n;
	return g;
}

static void target_name(const struct probe_target *t, char *buf, size_t size)
{
	char cc[16];
	kimg_arch_format_cc(t->dev.cc, cc, sizeof cc);
	if (t->dev.ordinal >= 0)
		snprintf(buf, size, "GPU %d (%s, %s)", t->dev.ordinal, t->dev.name, cc);
	else if (t->named)
		snprintf(buf, size, "%s (%s)", t->dev.name, cc);
	else
		snprintf(buf, size, "%s", cc);
}

void probe_doctor_target_name(const struct probe_target *t, char *buf, size_t size)
{
	target_name(t, buf, size);
}

static const char *short_path(const char *p)
{
	/* the part after site-packages/ or dist-packages/ reads best */
	const char *s = strstr(p, "-packages/");
	return s ? s + 10 : p;
}

static void text_group(struct doctor *d, const struct group *g)
{
	char name[256], advice[640] = "", nvcc[sizeof ((struct kimg_fix *)0)->nvcc] = "";
	/* names from package records and paths from the walk, escaped as check
	 * escapes them (probe_esc); static: 16 KB each, one page at a time */
	static struct probe_esc e1, e2;
	char raw[256];
	probe_format_package(g->pkg, raw, sizeof raw);
	snprintf(name, sizeof name, "%s", probe_esc(&e1, raw));
	bool fails = g->cannot || g->libs_bad;
	unsigned long files_failing = 0;
	for (size_t i = 0; i < g->n; i++)
		files_failing += file_fails(&d->files[g->files[i]]);
	if (!fails) {
		unsigned long sass = 0, ptx = 0;
		for (size_t i = 0; i < g->n; i++) {
			sass += d->files[g->files[i]].sass;
			ptx += d->files[g->files[i]].ptx_jit;
		}
		printf("  ok    %-40s %zu file%s, %lu module%s (%lu run as sass, %lu by ptx_jit", name, g->n,
		       g->n == 1 ? "" : "s", g->modules, g->modules == 1 ? "" : "s", sass, ptx);
		if (g->dispatched)
			printf(", %lu for other GPUs, selected at run time", g->dispatched);
		printf(")\n");
		return;
	}
	printf("  FAIL  %-40s %lu of %zu file%s cannot run\n", name, files_failing, g->n, g->n == 1 ? "" : "s");
	unsigned shown = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct doc_file *f = &d->files[g->files[i]];
		if (!file_fails(f))
			continue;
		if (shown++ >= MAX_FAILS_SHOWN)
			continue;
		if (f->cannot) {
			char tn[160];
			const struct doc_fail *x = &f->fail;
			const char *ename = kimg_cuda_error_name(x->expected_error);
			target_name(&d->targets[x->target], tn, sizeof tn);
			printf("        %s: %lu module/GPU pair%s cannot run; first: module %lu on %s: %s [%s%s%s] -> error %d%s%s%s\n",
			       probe_esc(&e2, short_path(f->path)), f->cannot, f->cannot == 1 ? "" : "s", x->module, tn,
			       kimg_reason_text(x->reason), x->rule ? x->rule : "?", x->file_rule ? ", " : "",
			       x->file_rule ? x->file_rule : "", x->expected_error, ename ? " (" : "",
			       ename ? ename : "", ename ? ")" : "");
			if (!advice[0])
				probe_package_advice(g->pkg, &d->targets[x->target], x->have_fix ? &x->fix : NULL, advice,
						     sizeof advice);
			if (!nvcc[0] && x->have_fix && x->fix.nvcc[0] &&
			    kimg_pkg_advice_for(g->pkg ? g->pkg->name : "")->family == KIMG_PKG_OTHER)
				snprintf(nvcc, sizeof nvcc, "%s", x->fix.nvcc);
		}
		if (f->lib_needs_driver) {
			char ver[16];
			probe_cuda_lib_version(&f->lib, ver, sizeof ver);
			printf("        %s: %s for CUDA %s needs a newer driver -> error 35 (cudaErrorInsufficientDriver)\n",
			       probe_esc(&e2, short_path(f->path)), f->lib.kind->what, ver);
		}
	}
	if (shown > MAX_FAILS_SHOWN)
		printf("        ... and %u more (kimg-probe check --sm native for all)\n", shown - MAX_FAILS_SHOWN);
	if (advice[0])
		printf("        fix: %s\n", probe_esc(&e2, advice));
	if (nvcc[0])
		printf("             nvcc %s\n", nvcc);
}

static int lib_driver(const struct doctor *d)
{
	for (int t = 0; t < d->n_targets; t++)
		if (d->targets[t].dev.driver_version)
			return d->targets[t].dev.driver_version;
	return 0;
}

static void text_runtimes(struct doctor *d)
{
	bool any = false;
	for (size_t i = 0; i < d->n_files; i++)
		any |= d->files[i].is_lib;
	printf("CUDA runtimes and libraries:%s\n", any ? "" : " none found");
	for (size_t i = 0; i < d->n_files; i++) {
		struct doc_file *f = &d->files[i];
		if (!f->is_lib)
			continue;
		char ver[16], pkg[256] = "";
		struct kimg_runtime_verdict v;
		probe_cuda_lib_version(&f->lib, ver, sizeof ver);
		probe_cuda_lib_judge(&f->lib, lib_driver(d), &v);
		if (f->pkg)
			probe_format_package(f->pkg, pkg, sizeof pkg);
		const char *verdict = v.outcome == KIMG_RUNTIME_OK ? "ok"
				      : v.outcome == KIMG_RUNTIME_MINOR_COMPAT ? "ok (minor-version compatibility)"
				      : v.outcome == KIMG_RUNTIME_NEEDS_DRIVER ? "NEEDS A NEWER DRIVER"
				      : lib_driver(d) ? "not judged (its CUDA version is not known)"
				      : "not judged (no driver)";
		static struct probe_esc e1, e2;
		printf("  %-16s CUDA %-5s %s  %s%s%s%s\n", f->lib.kind->id, ver, verdict, probe_esc(&e1, f->path),
		       pkg[0] ? " [" : "", probe_esc(&e2, pkg), pkg[0] ? "]" : "");
		if (v.outcome == KIMG_RUNTIME_NEEDS_DRIVER) {
			char fix[768];
			probe_cuda_lib_fix_text(&f->lib, &v, "    ", fix, sizeof fix);
			fputs(fix, stdout);
			if (f->system)
				printf("    (outside the checked environment: does not change the exit status)\n");
		}
	}
}

static void json_gpus(struct kimg_json *j, const struct kimg_gpu_inventory *inv)
{
	char cuda[16], isa[16];
	probe_format_cuda_version(inv->driver.cuda_version, cuda, sizeof cuda);
	kimg_report_format_isa(inv->driver.max_ptx_isa, isa, sizeof isa);
	kimg_json_key(j, "driver");
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "release", inv->driver.release[0] ? inv->driver.release : NULL);
	kimg_json_kv_string(j, "cuda_version", cuda[0] ? cuda : NULL);
	kimg_json_kv_string(j, "max_ptx_isa", isa[0] ? isa : NULL);
	kimg_json_kv_string(j, "error", inv->cuda_count < 0 ? inv->cuda_error : NULL);
	kimg_json_end_object(j);
	kimg_json_key(j, "gpus");
	kimg_json_begin_array(j);
	for (int i = 0; i < inv->n; i++) {
		const struct kimg_gpu_reading *g = &inv->gpus[i];
		if (g->ordinal < 0)
			continue;
		char cc[24];
		cc_text(g->cc_driver, cc, sizeof cc);
		kimg_json_begin_object(j);
		kimg_json_kv_int(j, "index", g->ordinal);
		kimg_json_kv_string(j, "name", g->name);
		kimg_json_kv_string(j, "cc", cc);
		kimg_json_kv_bool(j, "tegra", g->tegra);
		kimg_json_kv_string(j, "uuid", g->uuid[0] ? g->uuid : NULL);
		probe_json_cc_readings(j, g);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	probe_json_not_visible(j, inv);
}

static void json_fail(struct kimg_json *j, const struct doctor *d, const struct doc_file *f)
{
	const struct doc_fail *x = &f->fail;
	char cc[16], v[16];
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "path", f->path);
	kimg_json_kv_uint(j, "modules", f->modules);
	kimg_json_kv_uint(j, "cannot_run", f->cannot);
	kimg_json_kv_bool(j, "needs_newer_driver", f->lib_needs_driver);
	if (f->cannot) {
		kimg_arch_format_cc(d->targets[x->target].dev.cc, cc, sizeof cc);
		kimg_json_key(j, "first");
		kimg_json_begin_object(j);
		kimg_json_kv_uint(j, "module", x->module);
		kimg_json_kv_string(j, "sm", cc);
		kimg_json_kv_string(j, "reason", kimg_reason_id(x->reason));
		kimg_json_kv_string(j, "rule", x->rule);
		kimg_json_kv_string(j, "file_rule", x->file_rule);
		kimg_json_kv_int(j, "expected_error", x->expected_error);
		kimg_json_key(j, "fix");
		if (x->have_fix) {
			kimg_json_begin_object(j);
			kimg_json_kv_string(j, "nvcc", x->fix.nvcc[0] ? x->fix.nvcc : NULL);
			kimg_json_kv_string(j, "cmake", x->fix.cmake[0] ? x->fix.cmake : NULL);
			kimg_json_kv_string(j, "torch_cuda_arch_list", x->fix.torch_arch_list[0] ? x->fix.torch_arch_list : NULL);
			probe_format_cuda_version(x->fix.min_toolkit, v, sizeof v);
			kimg_json_kv_string(j, "min_toolkit", v[0] ? v : NULL);
			kimg_json_kv_string(j, "wheel", x->fix.wheel[0] ? x->fix.wheel : NULL);
			kimg_json_end_object(j);
		} else {
			kimg_json_null(j);
		}
		kimg_json_end_object(j);
	}
	kimg_json_end_object(j);
}

static void json_groups(struct kimg_json *j, struct doctor *d, const struct group *g, size_t n)
{
	kimg_json_key(j, "packages");
	kimg_json_begin_array(j);
	for (size_t k = 0; k < n; k++) {
		char advice[640] = "";
		kimg_json_begin_object(j);
		probe_json_package(j, g[k].pkg);
		const struct kimg_pkg_advice *a = kimg_pkg_advice_for(g[k].pkg ? g[k].pkg->name : "");
		kimg_json_kv_string(j, "family", a->label);
		kimg_json_kv_uint(j, "files", g[k].n);
		kimg_json_kv_uint(j, "modules", g[k].modules);
		kimg_json_kv_uint(j, "cannot_run", g[k].cannot);
		kimg_json_kv_uint(j, "dispatched", g[k].dispatched);
		kimg_json_kv_uint(j, "needs_newer_driver", g[k].libs_bad);
		kimg_json_kv_string(j, "verdict", g[k].cannot ? "cannot_run" : g[k].libs_bad ? "needs_newer_driver" : "ok");
		kimg_json_key(j, "failures");
		kimg_json_begin_array(j);
		for (size_t i = 0; i < g[k].n; i++) {
			const struct doc_file *f = &d->files[g[k].files[i]];
			if (!file_fails(f))
				continue;
			json_fail(j, d, f);
			if (f->cannot && !advice[0])
				probe_package_advice(g[k].pkg, &d->targets[f->fail.target], f->fail.have_fix ? &f->fail.fix : NULL,
						     advice, sizeof advice);
		}
		kimg_json_end_array(j);
		kimg_json_kv_string(j, "fix", advice[0] ? advice : NULL);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
}

static void json_runtimes(struct kimg_json *j, struct doctor *d)
{
	kimg_json_key(j, "cuda_libraries");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < d->n_files; i++) {
		struct doc_file *f = &d->files[i];
		if (!f->is_lib)
			continue;
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "path", f->path);
		kimg_json_kv_bool(j, "outside_checked", f->system);
		probe_json_package(j, f->pkg);
		probe_cuda_lib_json(&d->extras, j, &f->lib, d->targets, d->n_targets);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
}

void probe_doctor_json(struct doctor *d, const struct kimg_gpu_inventory *inv, const struct probe_python *py,
		       const struct group *groups, size_t n_groups, const struct doctor_totals *t)
{
	struct kimg_json *j = &d->out.j;
	kimg_json_init(j, stdout);
	kimg_json_begin_document(j);
	json_gpus(j, inv);
	kimg_json_key(j, "python");
	if (py) {
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "executable", py->executable);
		kimg_json_kv_string(j, "version", py->version[0] ? py->version : NULL);
		kimg_json_key(j, "paths");
		kimg_json_begin_array(j);
		for (int i = 0; i < py->n_paths; i++)
			kimg_json_string(j, py->paths[i]);
		kimg_json_end_array(j);
		kimg_json_kv_string(j, "cwd", py->cwd[0] ? py->cwd : NULL);
		kimg_json_key(j, "not_checked");
		kimg_json_begin_array(j);
		for (int i = 0; i < py->n_skipped; i++) {
			kimg_json_begin_object(j);
			kimg_json_kv_string(j, "path", py->skipped[i]);
			kimg_json_kv_string(j, "why", py->skipped_why[i]);
			kimg_json_end_object(j);
		}
		kimg_json_end_array(j);
		kimg_json_kv_bool(j, "answer_over_1mib", py->answer_over_limit);
		kimg_json_end_object(j);
	} else {
		kimg_json_null(j);
	}
	kimg_json_key(j, "targets");
	kimg_json_begin_array(j);
	for (int k = 0; k < d->n_targets; k++) {
		char cc[16], name[160];
		kimg_arch_format_cc(d->targets[k].dev.cc, cc, sizeof cc);
		target_name(&d->targets[k], name, sizeof name);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "sm", cc);
		kimg_json_kv_string(j, "label", name);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	json_runtimes(j, d);
	json_groups(j, d, groups, n_groups);
	probe_doctor_tools_json(j, d);
	kimg_json_kv_bool(j, "ok", t->status == PROBE_EXIT_OK);
	kimg_json_key(j, "summary");
	kimg_json_begin_object(j);
	kimg_json_kv_uint(j, "files", d->n_files);
	kimg_json_kv_uint(j, "packages", n_groups);
	kimg_json_kv_uint(j, "failing_packages", t->failing_pkgs);
	kimg_json_kv_uint(j, "cannot_run", t->cannot);
	kimg_json_kv_uint(j, "needs_newer_driver", t->libs_bad);
	kimg_json_kv_uint(j, "errors", d->out.errors);
	kimg_json_kv_uint(j, "gpus_checked", (uint64_t)d->n_targets);
	kimg_json_kv_uint(j, "triton_ptxas_too_old", d->tools.triton_bad);
	kimg_json_kv_uint(j, "build_tools_too_old", d->tools.build_bad);
	kimg_json_kv_uint(j, "stale_cache_files", d->caches.stale);
	kimg_json_key(j, "seconds");
	kimg_json_double(j, t->seconds);
	kimg_json_end_object(j);
	probe_placement_json(j, d->targets, d->n_targets, d->place);
	kimg_json_end_object(j);
	fputc('\n', stdout);
}

void probe_doctor_text(struct doctor *d, const struct kimg_gpu_inventory *inv, const struct probe_python *py,
		       const struct group *groups, size_t n_groups, const struct doctor_totals *t)
{
	printf("kimg doctor\n");
	text_gpus(inv);
	if (t->sm_list)
		printf("checking against --sm %s instead of this machine's GPUs\n", t->sm_list);
	else if (d->n_targets == 0)
		printf("NO GPU TO CHECK AGAINST: the device code below is listed, not judged "
		       "(kimg-probe doctor --sm LIST to judge it for other GPUs)\n");
	text_runtimes(d);
	static struct probe_esc e, e2;
	if (py) {
		/* every field is the interpreter's word: escaped */
		printf("Python: %s %s, %d director%s of sys.path\n", probe_esc(&e, py->executable),
		       probe_esc(&e2, py->version), py->n_paths, py->n_paths == 1 ? "y" : "ies");
		for (int i = 0; i < py->n_paths; i++)
			if (probe_python_is_cwd(py, py->paths[i]))
				printf("  sys.path entry %s is the current directory (an empty PYTHONPATH item puts it "
				       "there): checked\n",
				       probe_esc(&e, py->paths[i]));
		for (int i = 0; i < py->n_skipped; i++)
			printf("  sys.path entry %s%s not checked: %s\n", probe_esc(&e, py->skipped[i]),
			       probe_python_is_cwd(py, py->skipped[i]) ? " (the current directory)" : "",
			       py->skipped_why[i]);
		if (py->answer_over_limit)
			printf("  the interpreter's answer was over 1 MiB: the sys.path entries in its first MiB are "
			       "checked\n");
	}
	printf("Packages with device code (%zu), failures first:\n", n_groups);
	for (size_t k = 0; groups && k < n_groups; k++)
		text_group(d, &groups[k]);
	if (n_groups == 0)
		printf("  none found\n");
	probe_doctor_tools_text(d);
	if (d->tools.triton_bad || d->caches.stale)
		printf("toolchains and caches: %lu Triton ptxas cannot target a GPU here, %lu stale cached file%s "
		       "(in the exit status)\n", d->tools.triton_bad, d->caches.stale, d->caches.stale == 1 ? "" : "s");
	probe_placement_text(stdout, d->targets, d->n_targets, d->place);
	printf("%s: %zu package%s, %lu cannot run%s; %lu module/GPU pair%s cannot run, %lu CUDA librar%s a newer driver; "
	       "%lu error%s; %.2f s\n",
	       t->status == PROBE_EXIT_OK ? "OK" : t->status == PROBE_EXIT_FAIL ? "FAIL" : "INCOMPLETE", n_groups,
	       n_groups == 1 ? "" : "s", t->failing_pkgs, d->n_targets ? "" : " (not checked: no GPU)", t->cannot,
	       t->cannot == 1 ? "" : "s", t->libs_bad, t->libs_bad == 1 ? "y needs" : "ies need", d->out.errors,
	       d->out.errors == 1 ? "" : "s", t->seconds);
}
