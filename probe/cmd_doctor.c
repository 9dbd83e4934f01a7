/* kimg-probe doctor: the whole diagnosis in one command. The GPUs (three
 * readings of each, what CUDA_VISIBLE_DEVICES and MIG leave visible), the
 * driver, every CUDA runtime found, and a check of the Python environment
 * against the GPUs of this machine, grouped by the package that installed
 * each file, failures first, each with its fix. Verdicts come from the
 * core exactly as `check` gets them; this file collects and renders. */
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#include "cuda_errors.h"
#include "doctor.h"
#include "extras.h"
#include "gpu_readings.h"
#include "readings.h"
#include "rules.h"

static const char doctor_help[] =
	"usage: kimg-probe doctor [--json] [--python PATH] [--sm LIST] [--driver X.Y] [DIR...]\n"
	"\n"
	"Everything kimg can tell about this machine, on one page:\n"
	"  - the GPUs: compute capability from the driver's attributes, from NVML and\n"
	"    from the GPU-name table (disagreements shown; the driver uses its own),\n"
	"    UUIDs, what CUDA_VISIBLE_DEVICES and MIG leave visible\n"
	"  - the driver (release, CUDA version, newest PTX ISA) and every CUDA runtime\n"
	"    and library found (the Python environment, /usr/local/cuda*, the\n"
	"    LD_LIBRARY_PATH directories), each judged against the driver\n"
	"  - 'check --sm native' over the Python environment of python3 on PATH (its\n"
	"    sys.path, asked once), or of --python PATH, or over the DIRs given:\n"
	"    failures first, grouped by the package that installed each file (pip,\n"
	"    conda, dpkg), each with the fix for that package\n"
	"\n"
	"  --json         one JSON document on stdout (docs/json.md)\n"
	"  --python PATH  the interpreter whose sys.path is checked (default python3)\n"
	"  --sm LIST      check against these GPUs instead of this machine's (as check)\n"
	"  --driver X.Y   driver CUDA version for the GPUs of --sm (as check)\n"
	"\n"
	"On a machine without a GPU or driver it says so, still lists the packages\n"
	"with device code and the CUDA runtimes, and exits 2 (nothing to check\n"
	"against) unless --sm is given.\n"
	"\n"
	"Exit status as check: 0 everything can run; 1 some module cannot run, or a\n"
	"CUDA runtime needs a newer driver; 2 usage error, unreadable input, or no GPU\n"
	"to check against.\n";

#define MAX_FAILS_SHOWN 4

struct doc_fail {              /* one module that cannot run on one target */
	unsigned long module;      /* index in the file, from 1 */
	int target;
	enum kimg_reason reason;
	const char *rule;
	int expected_error;
	struct kimg_fix fix;
	bool have_fix;
};

struct doc_file {
	char *path;
	const struct kimg_pkg *pkg;  /* stable until the owners index is freed */
	unsigned long modules, stubs, sass, ptx_jit, cannot;
	struct doc_fail fail;        /* the first failure */
	bool is_lib;
	bool system;                 /* a runtime of /usr/local/cuda or LD_LIBRARY_PATH: listed, not judged into the exit status */
	struct kimg_cuda_lib lib;
	bool lib_needs_driver;
};

struct doctor {
	struct probe_out out;        /* first: probe_input_unreadable's ctx */
	struct probe_extras extras;
	struct probe_target *targets;
	int n_targets;
	struct doc_file *files;
	size_t n_files, cap_files;
	unsigned long errors_before;
};

static struct doc_file *new_file(struct doctor *d)
{
	if (d->n_files == d->cap_files) {
		size_t nc = d->cap_files ? d->cap_files * 2 : 64;
		struct doc_file *v = realloc(d->files, nc * sizeof *v);
		if (!v)
			return NULL;
		d->files = v;
		d->cap_files = nc;
	}
	struct doc_file *f = &d->files[d->n_files++];
	memset(f, 0, sizeof *f);
	return f;
}

static void doctor_input(void *ctx, const char *path, struct kimg_span bytes, bool explicit_path)
{
	struct doctor *d = ctx;
	struct probe_file pf = { .path = path, .walk_flags = d->out.walk_flags, .bytes = bytes };
	struct kimg_cuda_lib lib;
	bool is_lib = probe_cuda_lib_identify(path, bytes, NULL, &lib);
	probe_collect(&pf);
	d->out.errors += probe_report_problems(&pf);
	if (pf.n_mods == 0 && !is_lib) {
		probe_file_free(&pf);
		return;
	}
	struct doc_file *f = new_file(d);
	if (!f || !(f->path = strdup(path))) {
		probe_file_free(&pf);
		return;
	}
	f->pkg = probe_extras_owner(&d->extras, path);
	f->is_lib = is_lib;
	if (is_lib) {
		if (f->pkg)
			kimg_cuda_lib_version_from_package(&lib, f->pkg->name, f->pkg->version);
		f->lib = lib;
	}
	f->modules = pf.n_mods;
	for (size_t i = 0; i < pf.n_mods; i++) {
		const struct probe_module *m = &pf.mods[i];
		if (m->n_imgs == 0)
			continue;
		bool any_fail = false;
		struct kimg_module_verdict v[64];
		int nt = d->n_targets < 64 ? d->n_targets : 64;
		for (int t = 0; t < nt; t++) {
			kimg_rules_check_module(m->imgs, m->n_imgs, &d->targets[t].dev, NULL, &v[t]);
			any_fail |= v[t].outcome == KIMG_OUTCOME_CANNOT_RUN;
		}
		if (any_fail && probe_module_is_link_stub(m)) {
			f->stubs++;
			continue;
		}
		for (int t = 0; t < nt; t++) {
			if (v[t].outcome == KIMG_OUTCOME_SASS) {
				f->sass++;
			} else if (v[t].outcome == KIMG_OUTCOME_PTX_JIT) {
				f->ptx_jit++;
			} else {
				if (!f->cannot) {
					struct doc_fail *x = &f->fail;
					x->module = i + 1;
					x->target = t;
					x->reason = v[t].reason;
					x->rule = v[t].rule;
					x->expected_error = v[t].expected_error;
					x->have_fix = kimg_fix_for(&d->targets[t].dev, &v[t], m->imgs, m->n_imgs, &x->fix) == 0;
				}
				f->cannot++;
			}
		}
	}
	(void)explicit_path;
	probe_file_free(&pf);
}

/* Names that never hold device code, left unopened: most files of a
 * Python environment are these. */
static bool skip_by_name(void *ctx, const char *path)
{
	static const char *const text_ext[] = { ".py", ".pyc", ".pyi", ".pyx", ".pxd", ".h", ".hpp", ".cuh", ".hxx",
						".inl", ".c", ".cc", ".cpp", ".cu", ".txt", ".md", ".rst", ".json",
						".yaml", ".yml", ".toml", ".cfg", ".ini", ".html", ".js", ".css", ".svg",
						".png", ".jpg", ".gif", ".typed", ".csv", ".pem", ".mo", ".po", ".xml" };
	(void)ctx;
	size_t len = strlen(path);
	for (size_t i = 0; i < sizeof text_ext / sizeof text_ext[0]; i++) {
		size_t el = strlen(text_ext[i]);
		if (len > el && strcmp(path + len - el, text_ext[i]) == 0)
			return true;
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strcmp(base, "RECORD") == 0 || strcmp(base, "METADATA") == 0 || strcmp(base, "LICENSE") == 0;
}

/* ---- the CUDA libraries outside the walked directories ---- */

static void add_lib_dir(struct doctor *d, const char *dir)
{
	DIR *dh = opendir(dir);
	if (!dh)
		return;
	struct dirent *de;
	while ((de = readdir(dh)) != NULL) {
		struct kimg_cuda_lib lib;
		if (!kimg_cuda_lib_identify(de->d_name, kimg_span_make(NULL, 0), &lib) || !lib.kind->runtime)
			continue;
		char path[4096];
		if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path)
			continue;
		bool seen = false;
		for (size_t i = 0; i < d->n_files && !seen; i++)
			seen = strcmp(d->files[i].path, path) == 0;
		struct stat st;
		if (seen || lstat(path, &st) != 0 || S_ISLNK(st.st_mode))
			continue; /* the dev symlinks name the same file */
		char *pv[1] = { path };
		struct probe_walker w = { d, doctor_input, probe_input_unreadable, NULL, NULL, NULL };
		size_t before = d->n_files;
		probe_walk(pv, 1, &w);
		for (size_t i = before; i < d->n_files; i++)
			d->files[i].system = true;
	}
	closedir(dh);
}

static void add_system_libs(struct doctor *d)
{
	add_lib_dir(d, "/usr/local/cuda/lib64");
	add_lib_dir(d, "/usr/local/cuda/compat");
	const char *llp = getenv("LD_LIBRARY_PATH");
	if (llp) {
		char *copy = strdup(llp), *save = NULL;
		for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p; p = strtok_r(NULL, ":", &save))
			if (*p)
				add_lib_dir(d, p);
		free(copy);
	}
}

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

struct group {
	const struct kimg_pkg *pkg;
	size_t *files;       /* indexes into doctor.files */
	size_t n;
	unsigned long modules, cannot, libs_bad;
};

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

static struct group *make_groups(struct doctor *d, size_t *n_out)
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

static const char *short_path(const char *p)
{
	/* the part after site-packages/ or dist-packages/ reads best */
	const char *s = strstr(p, "-packages/");
	return s ? s + 10 : p;
}

static void text_group(struct doctor *d, const struct group *g)
{
	char name[256], advice[640] = "", nvcc[200] = "";
	probe_format_package(g->pkg, name, sizeof name);
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
		printf("  ok    %-40s %zu file%s, %lu module%s (%lu run as sass, %lu by ptx_jit)\n", name, g->n,
		       g->n == 1 ? "" : "s", g->modules, g->modules == 1 ? "" : "s", sass, ptx);
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
			printf("        %s: %lu module/GPU pair%s cannot run; first: module %lu on %s: %s [%s] -> error %d%s%s%s\n",
			       short_path(f->path), f->cannot, f->cannot == 1 ? "" : "s", x->module, tn,
			       kimg_reason_text(x->reason), x->rule ? x->rule : "?", x->expected_error, ename ? " (" : "",
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
			       short_path(f->path), f->lib.kind->what, ver);
		}
	}
	if (shown > MAX_FAILS_SHOWN)
		printf("        ... and %u more (kimg-probe check --sm native for all)\n", shown - MAX_FAILS_SHOWN);
	if (advice[0])
		printf("        fix: %s\n", advice);
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
				      : "not judged (no driver)";
		printf("  %-16s CUDA %-5s %s  %s%s%s%s\n", f->lib.kind->id, ver, verdict, f->path, pkg[0] ? " [" : "", pkg,
		       pkg[0] ? "]" : "");
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

static int parse_driver(const char *text)
{
	unsigned major, minor;
	char tail;
	if (sscanf(text, "%u.%u%c", &major, &minor, &tail) != 2 || major == 0 || major > 99 || minor > 9)
		return -1;
	return (int)(major * 1000 + minor * 10);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int probe_cmd_doctor(int argc, char **argv)
{
	struct doctor d;
	struct probe_args args;
	struct probe_python py;
	struct kimg_gpu_inventory inv;
	const char *python = "python3", *sm_list = NULL;
	int driver = 0, status = PROBE_EXIT_ERROR;
	char pyerr[256] = "";
	bool have_py = false;
	double t0 = now_s();
	memset(&d, 0, sizeof d);
	memset(&py, 0, sizeof py);
	if (probe_args_init(&args, "doctor", argc, &d.out) < 0)
		return PROBE_EXIT_ERROR;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		enum probe_arg taken = probe_args_take(&args, argv[i]);
		if (taken == PROBE_ARG_TAKEN)
			continue;
		if (taken == PROBE_ARG_HELP) {
			fputs(doctor_help, stdout);
			probe_args_free(&args);
			return PROBE_EXIT_OK;
		}
		const char **dst = strcmp(a, "--python") == 0 ? &python : strcmp(a, "--sm") == 0 ? &sm_list : NULL;
		if (dst || strcmp(a, "--driver") == 0) {
			const char *val = i + 1 < argc ? argv[++i] : NULL;
			if (!val) {
				probe_usage_error(&args, false, "%s needs a value", a);
				goto out_args;
			}
			if (dst) {
				*dst = val;
			} else if ((driver = parse_driver(val)) < 0) {
				probe_usage_error(&args, false, "--driver needs a CUDA version X.Y (e.g. 12.4)");
				goto out_args;
			}
			continue;
		}
		probe_usage_error(&args, true, "unknown option '%s'", a);
		goto out_args;
	}
	probe_extras_init(&d.extras);
	kimg_gpu_inventory_read(&inv);
	/* the targets: this machine's GPUs with their driver, or --sm */
	if (sm_list) {
		char *lists[1] = { (char *)sm_list };
		if ((d.n_targets = probe_parse_targets(lists, 1, driver, &d.targets)) < 0)
			goto out;
	} else if (inv.cuda_count > 0) {
		d.targets = calloc((size_t)inv.cuda_count, sizeof *d.targets);
		struct kimg_device devs[KIMG_GPU_READINGS_MAX];
		struct kimg_driver_info info;
		int n = d.targets ? kimg_driver_query(&info, devs, KIMG_GPU_READINGS_MAX, NULL) : -1;
		for (int t = 0; t < n && t < inv.cuda_count; t++) {
			d.targets[t].dev = devs[t];
			d.targets[t].named = true;
			d.n_targets++;
		}
	}
	if (args.n_paths == 0) {
		if (probe_python_env(python, &py, pyerr, sizeof pyerr) == 0) {
			have_py = true;
		} else {
			fprintf(stderr, "kimg-probe doctor: %s: give the directories to check, or --python PATH\n", pyerr);
			goto out;
		}
	}
	struct probe_walker w = { &d, doctor_input, probe_input_unreadable, NULL, NULL, skip_by_name };
	bool json = d.out.json;
	d.out.json = false; /* unreadable inputs: stderr lines only, the page counts them */
	if (have_py)
		probe_walk(py.paths, py.n_paths, &w);
	else
		probe_walk(args.paths, args.n_paths, &w);
	add_system_libs(&d);
	unsigned long cannot = 0, libs_bad = 0;
	int drv_for_libs = lib_driver(&d);
	for (size_t i = 0; i < d.n_files; i++) {
		struct doc_file *f = &d.files[i];
		cannot += f->cannot;
		if (f->is_lib && f->lib.cuda_major >= 0 && !f->system) {
			struct kimg_runtime_verdict v;
			/* every distinct driver among the targets */
			for (int t = 0; t < d.n_targets && !f->lib_needs_driver; t++) {
				probe_cuda_lib_judge(&f->lib, d.targets[t].dev.driver_version, &v);
				f->lib_needs_driver = v.outcome == KIMG_RUNTIME_NEEDS_DRIVER;
			}
			(void)drv_for_libs;
			libs_bad += f->lib_needs_driver;
		}
	}
	size_t n_groups = 0;
	struct group *groups = make_groups(&d, &n_groups);
	unsigned long failing_pkgs = 0;
	for (size_t k = 0; groups && k < n_groups; k++)
		failing_pkgs += groups[k].cannot || groups[k].libs_bad;
	status = d.out.errors ? PROBE_EXIT_ERROR
		 : d.n_targets == 0 ? PROBE_EXIT_ERROR
		 : cannot || libs_bad ? PROBE_EXIT_FAIL : PROBE_EXIT_OK;
	double elapsed = now_s() - t0;
	if (json) {
		struct kimg_json *j = &d.out.j;
		kimg_json_init(j, stdout);
		kimg_json_begin_object(j);
		json_gpus(j, &inv);
		kimg_json_key(j, "python");
		if (have_py) {
			kimg_json_begin_object(j);
			kimg_json_kv_string(j, "executable", py.executable);
			kimg_json_kv_string(j, "version", py.version[0] ? py.version : NULL);
			kimg_json_key(j, "paths");
			kimg_json_begin_array(j);
			for (int i = 0; i < py.n_paths; i++)
				kimg_json_string(j, py.paths[i]);
			kimg_json_end_array(j);
			kimg_json_end_object(j);
		} else {
			kimg_json_null(j);
		}
		kimg_json_key(j, "targets");
		kimg_json_begin_array(j);
		for (int t = 0; t < d.n_targets; t++) {
			char cc[16], name[160];
			kimg_arch_format_cc(d.targets[t].dev.cc, cc, sizeof cc);
			target_name(&d.targets[t], name, sizeof name);
			kimg_json_begin_object(j);
			kimg_json_kv_string(j, "sm", cc);
			kimg_json_kv_string(j, "label", name);
			kimg_json_end_object(j);
		}
		kimg_json_end_array(j);
		json_runtimes(j, &d);
		json_groups(j, &d, groups, n_groups);
		kimg_json_kv_bool(j, "ok", status == PROBE_EXIT_OK);
		kimg_json_key(j, "summary");
		kimg_json_begin_object(j);
		kimg_json_kv_uint(j, "files", d.n_files);
		kimg_json_kv_uint(j, "packages", n_groups);
		kimg_json_kv_uint(j, "failing_packages", failing_pkgs);
		kimg_json_kv_uint(j, "cannot_run", cannot);
		kimg_json_kv_uint(j, "needs_newer_driver", libs_bad);
		kimg_json_kv_uint(j, "errors", d.out.errors);
		kimg_json_kv_uint(j, "gpus_checked", (uint64_t)d.n_targets);
		kimg_json_key(j, "seconds");
		kimg_json_double(j, elapsed);
		kimg_json_end_object(j);
		kimg_json_end_object(j);
		fputc('\n', stdout);
	} else {
		printf("kimg doctor\n");
		text_gpus(&inv);
		if (sm_list)
			printf("checking against --sm %s instead of this machine's GPUs\n", sm_list);
		else if (d.n_targets == 0)
			printf("NO GPU TO CHECK AGAINST: the device code below is listed, not judged "
			       "(kimg-probe doctor --sm LIST to judge it for other GPUs)\n");
		text_runtimes(&d);
		if (have_py)
			printf("Python: %s %s, %d director%s of sys.path\n", py.executable, py.version, py.n_paths,
			       py.n_paths == 1 ? "y" : "ies");
		printf("Packages with device code (%zu), failures first:\n", n_groups);
		for (size_t k = 0; groups && k < n_groups; k++)
			text_group(&d, &groups[k]);
		if (n_groups == 0)
			printf("  none found\n");
		printf("%s: %zu package%s, %lu cannot run%s; %lu module/GPU pair%s cannot run, %lu CUDA librar%s a newer driver; %lu error%s; %.2f s\n",
		       status == PROBE_EXIT_OK ? "OK" : status == PROBE_EXIT_FAIL ? "FAIL" : "INCOMPLETE", n_groups,
		       n_groups == 1 ? "" : "s", failing_pkgs, d.n_targets ? "" : " (not checked: no GPU)", cannot,
		       cannot == 1 ? "" : "s", libs_bad, libs_bad == 1 ? "y needs" : "ies need", d.out.errors,
		       d.out.errors == 1 ? "" : "s", elapsed);
	}
	fflush(stdout);
	for (size_t k = 0; groups && k < n_groups; k++)
		free(groups[k].files);
	free(groups);
out:
	for (size_t i = 0; i < d.n_files; i++)
		free(d.files[i].path);
	free(d.files);
	free(d.targets);
	probe_extras_free(&d.extras);
	probe_python_free(&py);
out_args:
	probe_args_free(&args);
	return status;
}
