/* SPDX-License-Identifier: Apache-2.0 */
/* Packages and CUDA libraries for check and doctor (extras.h). */
#include "extras.h"

#include <stdlib.h>
#include <string.h>

#include "cuda_errors.h"

void probe_extras_init(struct probe_extras *x)
{
	memset(x, 0, sizeof *x);
	const char *dpkg = getenv("KIMG_DPKG_DIR");
	x->owners = kimg_owners_new(dpkg ? (dpkg[0] ? dpkg : NULL) : "/var/lib/dpkg");
	x->short_of_memory = x->owners == NULL;
}

void probe_extras_free(struct probe_extras *x)
{
	/* records that could not be read: their files went without an owner */
	const char *const *lines;
	size_t n = x->owners ? kimg_owners_problems(x->owners, &lines) : 0;
	for (size_t i = 0; i < n; i++) {
		struct probe_esc e;
		fprintf(stderr, "kimg-probe: %s\n", probe_esc(&e, lines[i]));
	}
	kimg_owners_free(x->owners);
	free(x->groups);
	memset(x, 0, sizeof *x);
}

const struct kimg_pkg *probe_extras_owner(struct probe_extras *x, const char *path)
{
	return x->owners ? kimg_owners_lookup(x->owners, path) : NULL;
}

void probe_extras_prepare_owners(struct probe_extras *x, const char *dir)
{
	if (x->owners)
		kimg_owners_prepare(x->owners, dir);
}

bool probe_cuda_lib_identify(const char *path, struct kimg_span bytes, const struct kimg_pkg *pkg,
			     struct kimg_cuda_lib *lib)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!kimg_cuda_lib_identify(base, bytes, lib))
		return false;
	if (pkg && lib->cuda_minor < 0)
		kimg_cuda_lib_version_from_package(lib, pkg->name, pkg->version);
	return true;
}

void probe_cuda_lib_version(const struct kimg_cuda_lib *lib, char *buf, size_t size)
{
	if (lib->cuda_major < 0)
		snprintf(buf, size, "?");
	else if (lib->cuda_minor < 0)
		snprintf(buf, size, "%d.x", lib->cuda_major);
	else
		snprintf(buf, size, "%d.%d", lib->cuda_major, lib->cuda_minor);
}

void probe_cuda_lib_judge(const struct kimg_cuda_lib *lib, int driver_version, struct kimg_runtime_verdict *v)
{
	kimg_runtime_judge(lib->cuda_major, lib->cuda_minor, driver_version, v);
}

static const char *outcome_id(enum kimg_runtime_outcome o)
{
	switch (o) {
	case KIMG_RUNTIME_OK: return "ok";
	case KIMG_RUNTIME_MINOR_COMPAT: return "minor_version_compat";
	case KIMG_RUNTIME_NEEDS_DRIVER: return "needs_newer_driver";
	default: return "unknown";
	}
}

void probe_cuda_lib_fix_text(const struct kimg_cuda_lib *lib, const struct kimg_runtime_verdict *v,
			     const char *indent, char *buf, size_t size)
{
	char compat[32];
	size_t n = 0;
	buf[0] = '\0';
	kimg_cuda_compat_package(lib->cuda_major, lib->cuda_minor, compat, sizeof compat);
	int w = snprintf(buf, size, "%sfix: upgrade the driver to >= %s (%s%s%sWindows >= %s)\n", indent,
			 v->min_driver ? v->min_driver : "?", v->branch ? "the " : "", v->branch ? v->branch : "",
			 v->branch ? " branch or newer; " : "", v->min_driver_windows ? v->min_driver_windows : "?");
	if (w < 0 || (size_t)w >= size)
		return;
	n = (size_t)w;
	w = snprintf(buf + n, size - n,
		     "%s     or, on data-center GPUs, keep the driver and install %s (forward compatibility;\n"
		     "%s     LD_LIBRARY_PATH=/usr/local/cuda-%d.%d/compat)\n",
		     indent, compat, indent, lib->cuda_major, lib->cuda_minor < 0 ? 0 : lib->cuda_minor);
	if (w < 0 || (size_t)w >= size - n)
		return;
	n += (size_t)w;
	snprintf(buf + n, size - n, "%s     or use a build of this software for the driver's CUDA major or older\n",
		 indent);
}

/* Distinct driver versions of the targets, each judged once. */
static bool seen_driver(const struct probe_target *t, int i)
{
	for (int k = 0; k < i; k++)
		if (t[k].dev.driver_version == t[i].dev.driver_version)
			return true;
	return false;
}

unsigned long probe_cuda_lib_needs_driver(const struct kimg_cuda_lib *lib, const struct probe_target *t, int n)
{
	unsigned long need = 0;
	for (int i = 0; lib->cuda_major >= 0 && i < n; i++) {
		struct kimg_runtime_verdict v;
		if (seen_driver(t, i))
			continue;
		probe_cuda_lib_judge(lib, t[i].dev.driver_version, &v);
		need += v.outcome == KIMG_RUNTIME_NEEDS_DRIVER;
	}
	return need;
}

unsigned long probe_cuda_lib_text(struct probe_extras *x, FILE *out, const struct kimg_cuda_lib *lib,
				  const struct probe_target *t, int n)
{
	char ver[16];
	unsigned long need = 0;
	if (x)
		x->libs++;
	probe_cuda_lib_version(lib, ver, sizeof ver);
	fprintf(out, "  %s, CUDA %s (%s%s)\n", lib->kind->what, ver, lib->source ? "version from the " : "version unknown",
	       lib->source ? lib->source : "");
	if (lib->cuda_major < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		if (seen_driver(t, i))
			continue;
		struct kimg_runtime_verdict v;
		char drv[16];
		probe_cuda_lib_judge(lib, t[i].dev.driver_version, &v);
		probe_format_cuda_version(t[i].dev.driver_version, drv, sizeof drv);
		if (v.outcome == KIMG_RUNTIME_UNKNOWN) {
			fprintf(out, "    no driver given (--driver X.Y or --sm native): CUDA %s needs a driver >= %s\n", ver,
			       v.min_driver ? v.min_driver : "?");
		} else if (v.outcome == KIMG_RUNTIME_OK) {
			fprintf(out, "    driver CUDA %s: runs\n", drv);
		} else if (v.outcome == KIMG_RUNTIME_MINOR_COMPAT) {
			if (x)
				x->libs_minor_compat++;
			fprintf(out, "    driver CUDA %s: runs under minor-version compatibility (PTX from this toolkit: error 222; newer APIs: 36)\n",
			       drv);
		} else {
			char fix[768];
			need++;
			fprintf(out, "    driver CUDA %s: NEEDS A NEWER DRIVER: %s -> error %d (%s)\n", drv, v.why,
			       v.expected_error, kimg_cuda_runtime_error_name(v.expected_error));
			probe_cuda_lib_fix_text(lib, &v, "      ", fix, sizeof fix);
			fputs(fix, out);
		}
	}
	if (x)
		x->libs_need_driver += need;
	return need;
}

unsigned long probe_cuda_lib_json(struct probe_extras *x, struct kimg_json *j, const struct kimg_cuda_lib *lib,
				  const struct probe_target *t, int n)
{
	char ver[16], compat[32];
	unsigned long need = 0;
	struct kimg_runtime_verdict v0;
	if (x)
		x->libs++;
	probe_cuda_lib_judge(lib, 0, &v0);
	kimg_json_key(j, "cuda_library");
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "library", lib->kind->id);
	kimg_json_kv_string(j, "what", lib->kind->what);
	kimg_json_kv_string(j, "soname", lib->soname[0] ? lib->soname : NULL);
	kimg_json_kv_string(j, "file_version", lib->file_version[0] ? lib->file_version : NULL);
	probe_cuda_lib_version(lib, ver, sizeof ver);
	kimg_json_kv_string(j, "cuda_version", lib->cuda_major >= 0 ? ver : NULL);
	kimg_json_kv_string(j, "version_source", lib->source);
	kimg_json_kv_string(j, "min_driver", v0.min_driver);
	kimg_json_kv_string(j, "min_driver_windows", v0.min_driver_windows);
	kimg_json_key(j, "verdicts");
	kimg_json_begin_array(j);
	for (int i = 0; lib->cuda_major >= 0 && i < n; i++) {
		if (seen_driver(t, i))
			continue;
		struct kimg_runtime_verdict v;
		char drv[16];
		probe_cuda_lib_judge(lib, t[i].dev.driver_version, &v);
		probe_format_cuda_version(t[i].dev.driver_version, drv, sizeof drv);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "driver_cuda_version", drv[0] ? drv : NULL);
		kimg_json_kv_string(j, "outcome", outcome_id(v.outcome));
		kimg_json_key(j, "expected_error");
		if (v.expected_error)
			kimg_json_int(j, v.expected_error);
		else
			kimg_json_null(j);
		kimg_json_kv_string(j, "error_name", v.expected_error ? kimg_cuda_runtime_error_name(v.expected_error) : NULL);
		kimg_json_kv_string(j, "why", v.why);
		kimg_json_key(j, "fix");
		if (v.outcome == KIMG_RUNTIME_NEEDS_DRIVER) {
			need++;
			kimg_json_begin_object(j);
			kimg_json_kv_string(j, "min_driver", v.min_driver);
			kimg_json_kv_string(j, "min_driver_windows", v.min_driver_windows);
			kimg_json_kv_string(j, "driver_branch", v.branch);
			kimg_json_kv_string(j, "cuda_compat_package",
					    kimg_cuda_compat_package(lib->cuda_major, lib->cuda_minor, compat, sizeof compat));
			kimg_json_kv_string(j, "advice",
					    "upgrade the driver; or on data-center GPUs install the cuda-compat package "
					    "of that CUDA version; or use a build for the driver's CUDA major");
			kimg_json_end_object(j);
		} else {
			kimg_json_null(j);
		}
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_end_object(j);
	if (x)
		x->libs_need_driver += need;
	return need;
}

void probe_json_package(struct kimg_json *j, const struct kimg_pkg *pkg)
{
	kimg_json_key(j, "package");
	if (!pkg) {
		kimg_json_null(j);
		return;
	}
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "name", pkg->name);
	kimg_json_kv_string(j, "version", pkg->version[0] ? pkg->version : NULL);
	kimg_json_kv_string(j, "installer", pkg->installer[0] ? pkg->installer : NULL);
	kimg_json_kv_string(j, "source", pkg->source);
	kimg_json_kv_string(j, "record", pkg->record[0] ? pkg->record : NULL);
	kimg_json_end_object(j);
}

void probe_format_package(const struct kimg_pkg *pkg, char *buf, size_t size)
{
	if (!pkg) {
		snprintf(buf, size, "(no package record)");
		return;
	}
	snprintf(buf, size, "%s%s%s (%s)", pkg->name, pkg->version[0] ? " " : "", pkg->version,
		 pkg->installer[0] ? pkg->installer : pkg->source);
}

void probe_package_advice(const struct kimg_pkg *pkg, const struct probe_target *t, const struct kimg_fix *fix,
			  char *buf, size_t size)
{
	const struct kimg_pkg_advice *a = kimg_pkg_advice_for(pkg ? pkg->name : "");
	char cc[16], sm[24];
	kimg_arch_format_cc(t->dev.cc, cc, sizeof cc);
	kimg_arch_format(t->dev.cc, false, sm, sizeof sm);
	size_t n = kimg_pkg_advice_format(a, pkg ? pkg->name : NULL, sm, cc,
					  fix && fix->torch_arch_list[0] ? fix->torch_arch_list : cc, buf, size);
	if (a->family == KIMG_PKG_PYTORCH && fix && fix->wheel[0] && n + 2 < size)
		snprintf(buf + n, size - n, "; wheel: %s", fix->wheel);
}

void probe_extras_count(struct probe_extras *x, const struct kimg_pkg *pkg, const char *path,
			unsigned long modules, unsigned long cannot, unsigned long libs_need_driver,
			const char *advice)
{
	struct probe_pkg_group *g = NULL;
	for (size_t i = 0; i < x->n_groups && !g; i++) {
		struct probe_pkg_group *c = &x->groups[i];
		if (pkg ? (c->source && strcmp(c->name, pkg->name) == 0 && strcmp(c->version, pkg->version) == 0)
			: !c->source)
			g = c;
	}
	if (!g) {
		if (x->n_groups == x->cap_groups) {
			size_t nc = x->cap_groups ? x->cap_groups * 2 : 16;
			struct probe_pkg_group *v = realloc(x->groups, nc * sizeof *v);
			if (!v) {
				x->short_of_memory = true;
				return;
			}
			x->groups = v;
			x->cap_groups = nc;
		}
		g = &x->groups[x->n_groups++];
		memset(g, 0, sizeof *g);
		if (pkg) {
			snprintf(g->name, sizeof g->name, "%s", pkg->name);
			snprintf(g->version, sizeof g->version, "%s", pkg->version);
			snprintf(g->installer, sizeof g->installer, "%s", pkg->installer);
			g->source = pkg->source;
		}
	}
	g->files++;
	g->modules += modules;
	g->cannot += cannot;
	g->libs_need_driver += libs_need_driver;
	if ((cannot || libs_need_driver) && !g->first_path[0])
		snprintf(g->first_path, sizeof g->first_path, "%s", path);
	if (advice && advice[0] && !g->advice[0])
		snprintf(g->advice, sizeof g->advice, "%s", advice);
}

static int group_cmp(const void *a, const void *b)
{
	const struct probe_pkg_group *x = a, *y = b;
	bool fx = x->cannot || x->libs_need_driver, fy = y->cannot || y->libs_need_driver;
	if (fx != fy)
		return fx ? -1 : 1;
	if (!x->source != !y->source)
		return x->source ? -1 : 1; /* files without a package last */
	return strcmp(x->name, y->name);
}

void probe_extras_sort_groups(struct probe_extras *x)
{
	if (x->n_groups > 1)
		qsort(x->groups, x->n_groups, sizeof *x->groups, group_cmp);
}

void probe_extras_text_packages(const struct probe_extras *x)
{
	bool any = false;
	for (size_t i = 0; i < x->n_groups; i++)
		any |= x->groups[i].source != NULL;
	if (!any)
		return;
	printf("by package:\n");
	printf("  %-32s %-14s %-10s %5s %7s  %s\n", "package", "version", "installer", "files", "modules", "verdict");
	for (size_t i = 0; i < x->n_groups; i++) {
		const struct probe_pkg_group *g = &x->groups[i];
		char verdict[96];
		if (g->cannot && g->libs_need_driver)
			snprintf(verdict, sizeof verdict, "CANNOT RUN (%lu), needs a newer driver", g->cannot);
		else if (g->cannot)
			snprintf(verdict, sizeof verdict, "CANNOT RUN (%lu module/GPU pair%s)", g->cannot,
				 g->cannot == 1 ? "" : "s");
		else if (g->libs_need_driver)
			snprintf(verdict, sizeof verdict, "NEEDS A NEWER DRIVER");
		else
			snprintf(verdict, sizeof verdict, "ok");
		static struct probe_esc e1, e2, e3; /* names from package records, as check escapes paths */
		printf("  %-32s %-14s %-10s %5lu %7lu  %s\n", g->source ? probe_esc(&e1, g->name) : "(no package record)",
		       g->version[0] ? probe_esc(&e2, g->version) : "-", g->installer[0] ? probe_esc(&e3, g->installer) : "-",
		       g->files, g->modules, verdict);
		if (g->advice[0])
			printf("    fix for %s: %s\n", g->source ? probe_esc(&e1, g->name) : "these files", probe_esc(&e2, g->advice));
	}
}
