/* SPDX-License-Identifier: Apache-2.0 */
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

#include "cuda_versions.h"
#include "file.h"
#include "file_rules.h"
#include "cluster_groups.h"
#include "doctor.h"
#include "extras.h"
#include "gpu_readings.h"
#include "rules.h"
#include "thread.h"

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
	"    sys.path, asked once, or read from a virtual environment's files where\n"
	"    they say it all: $KIMG_DOCTOR_PYTHON), or of --python PATH, or over the\n"
	"    DIRs given: failures first, grouped by the package that installed each\n"
	"    file (pip, conda, dpkg), each with the fix for that package\n"
	"  - the toolchains: Triton's ptxas (bundled, or $TRITON_PTXAS_PATH) and the\n"
	"    nvcc and ptxas on PATH and in /usr/local/cuda* ($KIMG_TOOLKIT_DIRS:\n"
	"    colon-separated toolkit roots instead), each --version against the GPUs\n"
	"  - the JIT caches (CuPy $CUPY_CACHE_DIR, $TORCH_EXTENSIONS_DIR, Triton\n"
	"    $TRITON_CACHE_DIR, FlashInfer, the driver's $CUDA_CACHE_PATH), every\n"
	"    cached cubin, PTX and library judged; stale ones named with what to remove\n"
	"  - CUDA_FORCE_PTX_JIT, CUDA_DISABLE_PTX_JIT, CUDA_MODULE_LOADING,\n"
	"    TORCH_CUDA_ARCH_LIST and CUDA_CACHE_* when set, with what each changes\n"
	"\n"
	"  --json         one JSON document on stdout (docs/json-probe.md)\n"
	"  --python PATH  the interpreter whose sys.path is checked (default python3)\n"
	"  --sm LIST      check against these GPUs instead of this machine's (as check)\n"
	"  --driver X.Y   driver CUDA version for the GPUs of --sm (as check)\n"
	"  -j N, --jobs N, --deep, --all, --every-file, --platform OS/ARCH   as for check\n"
	"\n"
	"On a machine without a GPU or driver it says so, still lists the packages\n"
	"with device code and the CUDA runtimes, and exits 2 (nothing to check\n"
	"against) unless --sm is given.\n"
	"\n"
	"Exit status as check: 0 everything can run; 1 some module cannot run, a\n"
	"CUDA runtime needs a newer driver, the ptxas Triton uses cannot target a\n"
	"GPU, or a JIT cache holds stale code; 2 usage error, unreadable input, or no\n"
	"GPU to check against. An nvcc or ptxas too old for a GPU is named only.\n";


/* A failure on target t into d->place (its first fix kept). */
static void place_fail(struct doctor *d, int t, const struct kimg_device *dev, const struct kimg_module_verdict *v,
		       const struct probe_module *m, const char *path)
{
	if (!d->place && !(d->place = calloc((size_t)d->n_targets, sizeof *d->place)))
		return;
	if (d->place[t].fails++ == 0) {
		struct kimg_fix fix;
		bool have = kimg_fix_for_file(dev, v, m->imgs, m->n_imgs, path, &fix) == 0;
		probe_place_fix(have ? &fix : NULL, d->place[t].fix, sizeof d->place[t].fix);
	}
}

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

static double now_s(void);

/* The GPUs are known from here on: the asking thread joined, once. */
static void doctor_await_gpus(struct doctor *d)
{
	if (d->gpus_pending) {
		double t0 = now_s();
		probe_thread_join(d->gpus_pending);
		d->gpus_pending = NULL;
		d->gpus_waited_s = now_s() - t0;
	}
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
	/* The file's modules judged together, as check judges them
	 * (kimg_rules_judge_file: F0-F3 dispatch, R1/R2 for -rdc link inputs). */
	doctor_await_gpus(d);
	int nt = d->n_targets;
	struct kimg_file_module *fm = pf.n_mods ? calloc(pf.n_mods, sizeof *fm) : NULL;
	struct kimg_module_judgement *mj = pf.n_mods ? calloc(pf.n_mods, sizeof *mj) : NULL;
	if (pf.n_mods && (!fm || !mj)) {
		free(fm);
		free(mj);
		probe_file_free(&pf);
		return;
	}
	for (size_t i = 0; i < pf.n_mods && nt; i++) {
		const struct probe_module *m = &pf.mods[i];
		bool fails = false;
		fm[i].imgs = m->imgs;
		fm[i].n_imgs = m->n_imgs;
		if (m->link_input) {
			fm[i].role = KIMG_ROLE_LINK_INPUT;
			f->link_inputs++;
			continue;
		}
		for (int t = 0; t < nt && m->n_imgs && !fails; t++) {
			struct kimg_module_verdict v;
			kimg_rules_check_module(m->imgs, m->n_imgs, &d->targets[t].dev, NULL, &v);
			fails = v.outcome == KIMG_OUTCOME_CANNOT_RUN;
		}
		bool stub = fails && probe_module_is_link_stub(m);
		f->stubs += stub;
		fm[i].role = stub || m->n_imgs == 0 ? KIMG_ROLE_SKIP : KIMG_ROLE_LOADED;
	}
	for (int t = 0; t < nt && pf.n_mods; t++) {
		const struct kimg_device *dev = &d->targets[t].dev;
		kimg_rules_judge_file(path, fm, pf.n_mods, dev, 0, mj);
		for (size_t i = 0; i < pf.n_mods; i++) {
			const struct probe_module *m = &pf.mods[i];
			const struct kimg_module_judgement *j = &mj[i];
			if (j->fate == KIMG_FATE_NOT_JUDGED)
				continue;
			if (j->fate == KIMG_FATE_DISPATCHED) {
				f->dispatched++;
			} else if (j->fate == KIMG_FATE_RUNS) {
				if (j->verdict.outcome == KIMG_OUTCOME_SASS)
					f->sass++;
				else
					f->ptx_jit++; /* PTX JIT, or after a JIT link (R1) */
			} else {
				if (!f->cannot) {
					struct doc_fail *x = &f->fail;
					x->module = i + 1;
					x->target = t;
					x->reason = j->verdict.reason;
					x->rule = j->verdict.rule;
					x->file_rule = j->rule;
					x->expected_error = j->verdict.expected_error;
					x->have_fix = kimg_fix_for_file(dev, &j->verdict, m->imgs, m->n_imgs, path, &x->fix) == 0;
				}
				f->cannot++;
				place_fail(d, t, dev, &j->verdict, m, path);
			}
		}
	}
	free(fm);
	free(mj);
	(void)explicit_path;
	probe_file_free(&pf);
}

/* Names that never hold device code, left unopened: most files of a
 * Python environment are these (and data archives, which would otherwise
 * be opened as zips). */
static bool skip_by_name(void *ctx, const char *path)
{
	static const char *const text_ext[] = { ".py", ".pyc", ".pyi", ".pyx", ".pxd", ".h", ".hpp", ".cuh", ".hxx",
						".inl", ".c", ".cc", ".cpp", ".cu", ".txt", ".md", ".rst", ".json",
						".yaml", ".yml", ".toml", ".cfg", ".ini", ".html", ".js", ".css", ".svg",
						".png", ".jpg", ".gif", ".typed", ".csv", ".pem", ".mo", ".po", ".xml",
						/* data archives: numpy, pickles, checkpoints, web assets, compressed
						 * data, zipped eggs (pip no longer installs them) */
						".npz", ".npy", ".pkl", ".pt", ".pth", ".ckpt", ".safetensors", ".zip",
						".jar", ".gz", ".bz2", ".xz", ".egg" };
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
		if (seen || kimg_file_stat(path, &st, false) != 0 || S_ISLNK(st.st_mode))
			continue; /* the dev symlinks name the same file */
		char *pv[1] = { path };
		struct probe_walker w = { .ctx = d, .on_input = doctor_input, .on_error = probe_input_unreadable };
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


/* While this thread reads the Python environment and walks it, three
 * helpers run on threads of their own, because each mostly waits (the
 * driver's start is 0.3 s and more on a cold machine, NVML's start as
 * long, each toolchain's --version a process start):
 *   targets   the driver's devices, which the first file judged waits for
 *             (doctor_await_gpus); no NVML, so that wait is cuInit's only;
 *   readings  the page's readings of each GPU (the driver's and NVML's);
 *   tools     the toolchains found and asked their --version.
 * The last two are joined before their results are used. */
struct doctor_helpers {
	struct doctor *d;
	struct kimg_gpu_inventory *inv;
	char *const *dirs;             /* where Triton's ptxas is looked for */
	int n_dirs;
	double targets_s, readings_s, tools_s; /* how long each took (KIMG_DOCTOR_TIMING) */
	struct probe_thread targets, readings, tools;
	bool readings_started, tools_started;
};

static void *ask_targets(void *arg)
{
	struct doctor_helpers *h = arg;
	struct doctor *d = h->d;
	double t0 = now_s();
	struct kimg_device devs[KIMG_GPU_READINGS_MAX];
	struct kimg_driver_info info;
	int n = kimg_driver_devices(&info, devs, KIMG_GPU_READINGS_MAX, NULL);
	if (n > 0 && (d->targets = calloc((size_t)n, sizeof *d->targets)) != NULL)
		for (int t = 0; t < n; t++) {
			d->targets[t].dev = devs[t];
			d->targets[t].named = true;
			d->n_targets++;
		}
	h->targets_s = now_s() - t0;
	return NULL;
}

static void *ask_readings(void *arg)
{
	struct doctor_helpers *h = arg;
	double t0 = now_s();
	kimg_gpu_inventory_read(h->inv);
	h->readings_s = now_s() - t0;
	return NULL;
}

static void *ask_tools(void *arg)
{
	struct doctor_helpers *h = arg;
	double t0 = now_s();
	probe_doctor_tools_find(&h->d->tools, h->dirs, h->n_dirs);
	h->tools_s = now_s() - t0;
	return NULL;
}

static void join_readings(struct doctor_helpers *h)
{
	if (h->readings_started)
		probe_thread_join(&h->readings);
	h->readings_started = false;
}

static void join_tools(struct doctor_helpers *h)
{
	if (h->tools_started)
		probe_thread_join(&h->tools);
	h->tools_started = false;
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
			} else if ((driver = probe_args_driver(&args, val, false)) < 0) {
				goto out_args;
			}
			continue;
		}
		probe_usage_error(&args, true, "unknown option '%s'", a);
		goto out_args;
	}
	probe_extras_init(&d.extras);
	/* The helpers (struct doctor_helpers): the GPUs asked while Python is. */
	struct doctor_helpers h = { .d = &d, .inv = &inv };
	if (!sm_list) {
		probe_thread_create(&h.targets, ask_targets, &h, PROBE_THREAD_INLINE_AT_JOIN);
		d.gpus_pending = &h.targets;
	}
	probe_thread_create(&h.readings, ask_readings, &h, PROBE_THREAD_INLINE_AT_JOIN);
	h.readings_started = true;
	bool py_failed = false;
	if (args.n_paths == 0) {
		if (probe_python_env(python, &py, pyerr, sizeof pyerr) == 0)
			have_py = true;
		else
			py_failed = true;
	}
	if (py_failed) {
		fprintf(stderr, "kimg-probe doctor: %s: give the directories to check, or --python PATH\n", pyerr);
		goto out;
	}
	h.dirs = have_py ? py.paths : args.paths;
	h.n_dirs = have_py ? py.n_paths : args.n_paths;
	probe_thread_create(&h.tools, ask_tools, &h, PROBE_THREAD_INLINE_AT_JOIN);
	h.tools_started = true;
	if (sm_list) {
		char *lists[1] = { (char *)sm_list };
		if ((d.n_targets = probe_parse_targets(lists, 1, driver, &d.targets)) < 0)
			goto out;
	}
	/* out: its thread count lists the directories on several threads
	 * (the head of every file read there); the files are judged here. */
	struct probe_walker w = { .ctx = &d, .on_input = doctor_input, .on_error = probe_input_unreadable, .out = &d.out,
				  .skip_file = skip_by_name };
	bool json = d.out.json;
	d.out.json = false; /* unreadable inputs: stderr lines only, the page counts them */
	double at[6];
	at[0] = now_s();
	probe_walk(h.dirs, h.n_dirs, &w);
	doctor_await_gpus(&d);
	at[1] = now_s();
	add_system_libs(&d);
	at[2] = now_s();
	join_tools(&h);
	probe_doctor_tools_judge(&d);
	join_readings(&h);
	at[3] = now_s();
	probe_doctor_caches(&d);
	probe_doctor_switches(&d);
	at[4] = now_s();
	unsigned long cannot = 0, libs_bad = 0;
	for (size_t i = 0; i < d.n_files; i++) {
		struct doc_file *f = &d.files[i];
		cannot += f->cannot;
		if (f->is_lib && f->lib.cuda_major >= 0 && !f->system) {
			struct kimg_runtime_verdict v;
			/* every distinct driver among the targets */
			for (int t = 0; t < d.n_targets; t++) {
				probe_cuda_lib_judge(&f->lib, d.targets[t].dev.driver_version, &v);
				if (v.outcome != KIMG_RUNTIME_NEEDS_DRIVER)
					continue;
				f->lib_needs_driver = true;
				if (d.place || (d.place = calloc((size_t)d.n_targets, sizeof *d.place)))
					if (d.place[t].fails++ == 0)
						snprintf(d.place[t].fix, sizeof d.place[t].fix, "a driver >= %s (for %s)",
							 v.min_driver ? v.min_driver : "?", f->lib.kind->what);
			}
			libs_bad += f->lib_needs_driver;
		}
	}
	size_t n_groups = 0;
	struct group *groups = probe_doctor_groups(&d, &n_groups);
	unsigned long failing_pkgs = 0;
	for (size_t k = 0; groups && k < n_groups; k++)
		failing_pkgs += groups[k].cannot || groups[k].libs_bad;
	status = d.out.errors ? PROBE_EXIT_ERROR
		 : d.n_targets == 0 ? PROBE_EXIT_ERROR
		 : cannot || libs_bad || d.tools.triton_bad || d.caches.stale ? PROBE_EXIT_FAIL : PROBE_EXIT_OK;
	double elapsed = now_s() - t0;
	struct doctor_totals tot = { status, cannot, libs_bad, failing_pkgs, elapsed, sm_list };
	if (!d.place && d.n_targets > 0)
		d.place = calloc((size_t)d.n_targets, sizeof *d.place);
	if (json)
		probe_doctor_json(&d, &inv, have_py ? &py : NULL, groups, n_groups, &tot);
	else
		probe_doctor_text(&d, &inv, have_py ? &py : NULL, groups, n_groups, &tot);
	fflush(stdout);
	if (getenv("KIMG_DOCTOR_TIMING")) {
		at[5] = now_s();
		fprintf(stderr,
			"kimg-probe doctor: timing (s): python %.3f, walk %.3f (of which waiting for the GPUs %.3f), "
			"system libraries %.3f, toolchains and readings joined %.3f, caches %.3f, page %.3f, "
			"total %.3f; on their threads: driver's devices %.3f, GPU readings %.3f, toolchains %.3f\n",
			at[0] - t0, at[1] - at[0], d.gpus_waited_s, at[2] - at[1], at[3] - at[2], at[4] - at[3],
			at[5] - at[4], at[5] - t0, h.targets_s, h.readings_s, h.tools_s);
	}
	for (size_t k = 0; groups && k < n_groups; k++)
		free(groups[k].files);
	free(groups);
out:
	doctor_await_gpus(&d);
	join_tools(&h);
	join_readings(&h);
	for (size_t i = 0; i < d.n_files; i++)
		free(d.files[i].path);
	free(d.files);
	probe_doctor_caches_free(&d);
	free(d.targets);
	free(d.place);
	probe_extras_free(&d.extras);
	probe_python_free(&py);
out_args:
	probe_args_free(&args);
	return status;
}
