/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe check: can each module run on each listed GPU? The verdicts
 * and fixes come from the core (kimg_rules_check_module, kimg_fix_for);
 * this file only renders them and decides the exit status. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "glibc_pins.h"
#include "cluster_groups.h"
#include "cuda_errors.h"
#include "cuda_versions.h"
#include "extras.h"
#include "file.h"
#include "file_rules.h"
#include "fix.h"
#include "image.h"
#include "probe.h"
#include "thread.h"
#include "rules.h"

static const char check_help[] =
	"usage: kimg-probe check --sm LIST [--driver X.Y] [--strict] [--all] [--json] [--deep] [--every-file] [--platform P] [-j N] PATH...\n"
	"\n"
	"For every module in each PATH (same inputs as 'scan') and every GPU in\n"
	"LIST, say which image the driver would use (a cubin, or PTX compiled by\n"
	"the driver's JIT) or why none fits, with the error the program would get\n"
	"(209, 222 ...) and the build settings that fix it (nvcc -gencode, CMake\n"
	"CUDA_ARCHITECTURES, TORCH_CUDA_ARCH_LIST, minimum toolkit and driver).\n"
	"\n"
	"  --sm LIST      comma-separated GPUs: a compute capability (9.0, 90,\n"
	"                 sm_90), a GPU name (\"RTX 4060 Ti\", H100, \"Jetson AGX\n"
	"                 Orin\"; quote names with spaces), 'native' for the GPUs\n"
	"                 of this machine with their real driver version (from NVML\n"
	"                 where that is the CUDA driver's answer, else cuInit;\n"
	"                 $KIMG_NATIVE=cuda always asks the driver), or @FILE:\n"
	"                 'kimg-probe device --json' documents of many hosts, one per\n"
	"                 line (each distinct GPU + driver is one target). No empty\n"
	"                 items; a CC no GPU has (860 = 86.0) is refused. Repeated\n"
	"                 --sm options are merged; a GPU given twice is checked once.\n"
	"                 Clusters (docs/deploy.md): k8s:FILE, k8s:- (stdin) or k8s:\n"
	"                 (runs 'kubectl get nodes -o json'): nodes with GPU Feature\n"
	"                 Discovery labels; slurm:FILE, slurm:- or slurm: (runs\n"
	"                 'scontrol show node --oneliner'): GPU GRES, types through\n"
	"                 the GPU-name table and $KIMG_GRES_MAP (a site file of\n"
	"                 'TYPE = GPU' lines); dcgm:FILE or dcgm:-: dcgm-exporter\n"
	"                 metrics. Each distinct (CC, driver CUDA) is one target named\n"
	"                 with its nodes; nodes without GPU facts are listed, never\n"
	"                 failed. 'all': every GPU of kimg's name table, one target\n"
	"                 per CC. After the verdicts 'Where it may run' lists the\n"
	"                 groups that run everything and those that do not (with the\n"
	"                 fix), and a Kubernetes nodeAffinity or Slurm --gres line\n"
	"  --driver X.Y   CUDA version of the driver assumed for the GPUs given by\n"
	"                 number or name (e.g. 12.4): PTX newer than that driver's\n"
	"                 JIT is then reported as error 222. Default: no driver\n"
	"                 limit (PTX ISA versions are not checked against a driver);\n"
	"                 a version outside kimg's table (CUDA 7.0 to its newest)\n"
	"                 gets a note and no PTX ISA check\n"
	"  --json         one JSON document on stdout (docs/json-probe.md)\n"
	"  --deep         also check device code stored as plain data in loaded\n"
	"                 data sections (.rodata, ...), loaded at run time with\n"
	"                 cuModuleLoadData (as 'scan --deep')\n"
	"  --strict       every module must run on every listed GPU: no module is\n"
	"                 excused as dispatched for other GPUs (see below); and a\n"
	"                 symbolic link inside a directory that leads nowhere is an\n"
	"                 error (without it: counted in one line, not an error)\n"
	"  --all          also list the -rdc device-link inputs (__nv_relfatbin of\n"
	"                 executables and shared objects; as 'scan --all'). They\n"
	"                 are always used in the verdict of the linked module\n"
	"  --every-file   in directories, also open files named as Python, C/C++\n"
	"                 source or docs (as 'scan --every-file')\n"
	"  --platform P   of a multi-platform image, check only P (linux/arm64)\n"
	"  -j N           check N files at a time (--jobs=N; default $KIMG_JOBS,\n"
	"                 else the cores, at most 8); the output is the -j 1 output\n"
	"\n"
	"A file's modules are judged together. A module that cannot run on a GPU\n"
	"while other modules of the same file can is 'dispatched for other GPUs'\n"
	"when all its code is arch- or family-specific (sm_100a, sm_120f ...) [F1]\n"
	"or the file is a library known to pick its modules per GPU (cuBLAS,\n"
	"cuBLASLt, cuDNN, cuSPARSE, cuSPARSELt, cuFFT, NCCL, NVSHMEM) [F2]; it is\n"
	"counted, never a failure. Otherwise it fails [F3]; when no module of the\n"
	"file can run, every module that cannot fails [F0]. In a file linked with\n"
	"-rdc=true, a linked module without code for the GPU runs after a JIT link\n"
	"when every device-link input carries PTX the GPU can JIT [R1]; otherwise\n"
	"the launch fails with error 500 [R2].\n"
	"\n"
	"Each file is named with the package that installed it (pip/uv dist-info\n"
	"RECORD, conda-meta, dpkg; $KIMG_DPKG_DIR is dpkg's directory, default\n"
	"/var/lib/dpkg), and the text ends with a table by package with its fix.\n"
	"CUDA runtimes and libraries among the inputs (libcudart.so.N, NVRTC,\n"
	"nvJitLink, cuBLAS ...) are judged against each target's driver: a runtime\n"
	"of a newer CUDA major than the driver gets error 35, with the minimum\n"
	"driver and the fixes.\n"
	"\n"
	"A container image (docker/podman save tarball, OCI layout directory or\n"
	"tar) is checked as the final file system of its layers, each platform on\n"
	"its own; its NVIDIA_REQUIRE_CUDA is judged against each target's driver as\n"
	"the NVIDIA container toolkit judges it (refused: exit 1; shown but not\n"
	"judged for a target without a driver); owners come from the image's own\n"
	"package records (docs/deploy.md).\n"
	"\n"
	"Modules that are device-link stubs (every image a cubin without kernels,\n"
	"as CUDA 13 executables carry; docs/format.md section 2) are reported as\n"
	"such and never make the check fail. A stub is detected only for modules\n"
	"that would otherwise fail, since it needs the cubins' symbol tables.\n"
	"\n"
	"Exit status: 0 when every module runs or is dispatched on every listed GPU;\n"
	"1 when some module fails, or a CUDA runtime needs a newer driver; 2 on a usage error or when any input could not be read\n"
	"(2 wins over 1: a partial check is not a pass). Problems with inputs are\n"
	"printed as 'kimg-probe: PATH: problem' on stderr.\n";

struct check_state {
	struct probe_out out;            /* first: probe_input_unreadable's ctx */
	struct probe_target *targets;
	int n_targets;
	int label_width;                 /* text: widest target label */
	bool strict;                     /* --strict: KIMG_FILE_STRICT */
	unsigned long files, modules, stubs, checks, cannot, dispatched;
	unsigned long by_outcome[KIMG_OUTCOME_COUNT];
	unsigned long images, image_refusals; /* container images; NVIDIA_REQUIRE_* the toolkit refuses */
	struct probe_extras extras;      /* owning packages, CUDA libraries (extras.h) */
	/* --sm native with workers: the GPUs asked while the walk begins
	 * (shared by the copies); targets, n_targets and label_width are set
	 * from it by targets_known. */
	struct probe_targets_async *pending;
	bool header_written;             /* main: the JSON up to "files": [ */
	/* A worker's copy (check_job_begin): its files' shares of the
	 * by-package table, added to it in walk order by check_job_end. */
	struct package_count *deferred;
	size_t n_deferred, cap_deferred;
	bool is_job;
	/* Per target: what cannot run on it and the first fix (cluster_groups.h),
	 * for "Where it may run". Main: the totals (NULL until one fails); a
	 * worker's copy: its file's, added by check_job_end in walk order. */
	struct probe_place_row *place;
};

/* One file's per-target rows into the state: the totals, or the worker
 * copy's own (merged in walk order by check_job_end). */
static void place_add(struct check_state *s, struct probe_place_row *rows)
{
	if (s->is_job) {
		s->place = rows;
		return;
	}
	if (!s->place)
		s->place = calloc((size_t)s->n_targets, sizeof *s->place);
	if (s->place)
		probe_place_merge(s->place, rows, s->n_targets);
	free(rows);
}

/* One probe_extras_count call, kept by a worker's copy. */
struct package_count {
	/* a copy: an image's owners (image_owners.c) are freed when its walk
	 * ends, which can be before the job's end hands this count on */
	struct kimg_pkg pkg;
	bool has_pkg;
	char *path;
	unsigned long modules, cannot, libs_need_driver;
	char advice[640];
};

/* The owners index reads package records lazily: one thread at a time. */
static pthread_mutex_t owners_lock = PTHREAD_MUTEX_INITIALIZER;

/* With worker threads, the owning-package index of the directories named
 * on the command line is read by a thread of its own while the GPUs are
 * asked and the tree is listed (the RECORDs of a Python environment name
 * some 70,000 files: a tenth of a second). Lookups wait for it on
 * owners_lock; what they find is the same. */
struct owners_prewarm {
	struct check_state *s;
	char *const *paths;
	int n_paths;
	struct probe_thread thread;
	bool started;
};

static void *prewarm_owners(void *arg)
{
	struct owners_prewarm *p = arg;
	pthread_mutex_lock(&owners_lock);
	for (int i = 0; i < p->n_paths; i++) {
		struct stat st;
		if (kimg_file_stat(p->paths[i], &st, true) == 0 && S_ISDIR(st.st_mode))
			probe_extras_prepare_owners(&p->s->extras, p->paths[i]);
	}
	pthread_mutex_unlock(&owners_lock);
	return NULL;
}

static const struct kimg_pkg *owner_of(struct check_state *s, const char *path)
{
	const struct kimg_pkg *image_pkg;
	if (probe_image_owner(path, &image_pkg))
		return image_pkg; /* a file of a container image: its own records only */
	if (pthread_mutex_trylock(&owners_lock) != 0) {
		probe_pool_wait_begin(); /* the index is being read: another worker runs meanwhile */
		pthread_mutex_lock(&owners_lock);
		probe_pool_wait_end();
	}
	const struct kimg_pkg *pkg = probe_extras_owner(&s->extras, path);
	pthread_mutex_unlock(&owners_lock);
	return pkg;
}

static void count_package(struct check_state *s, const struct kimg_pkg *pkg, const char *path, unsigned long modules,
			  unsigned long cannot, unsigned long libs_need_driver, const char *advice)
{
	if (!s->is_job) {
		probe_extras_count(&s->extras, pkg, path, modules, cannot, libs_need_driver, advice);
		return;
	}
	if (s->n_deferred == s->cap_deferred) {
		size_t cap = s->cap_deferred ? s->cap_deferred * 2 : 4;
		struct package_count *p = realloc(s->deferred, cap * sizeof *p);
		if (!p)
			return; /* out of memory: the file is left out of the table */
		s->deferred = p;
		s->cap_deferred = cap;
	}
	struct package_count *c = &s->deferred[s->n_deferred];
	if ((c->path = strdup(path)) == NULL)
		return;
	s->n_deferred++;
	c->has_pkg = pkg != NULL;
	if (pkg)
		c->pkg = *pkg;
	c->modules = modules;
	c->cannot = cannot;
	c->libs_need_driver = libs_need_driver;
	snprintf(c->advice, sizeof c->advice, "%s", advice ? advice : "");
}

static void target_label(const struct probe_target *t, char *buf, size_t size)
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

struct verdict_row {
	struct kimg_module_judgement j;  /* verdict, fate and file-level rule */
	struct kimg_fix *fix;            /* failing rows only (2 KB each: cuBLASLt has
	                                    2,782 modules that nearly all run); NULL: none */
};

static void free_fixes(struct verdict_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++) {
		free(rows[i].fix);
		rows[i].fix = NULL;
	}
}

/* Per file and target: how many modules run, are dispatched, fail. */
struct file_tally {
	unsigned long runs, dispatched, fails;
	char dispatched_archs[256];      /* distinct targets of the dispatched modules */
};

static void selected_name(const struct probe_module *m, const struct kimg_module_verdict *v, char *buf, size_t size)
{
	buf[0] = '\0';
	if (v->selected >= 0 && (size_t)v->selected < m->n_imgs)
		kimg_image_arch_name(&m->imgs[v->selected], buf, size);
}

/* Add each target of m not yet in the space-separated list. */
static void add_archs(const struct probe_module *m, char *list, size_t size)
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

static void json_module(struct check_state *s, const struct probe_module *m, const struct verdict_row *rows,
			bool stub)
{
	struct kimg_json *j = &s->out.j;
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
	for (int t = 0; rows && !m->link_input && t < s->n_targets; t++) {
		const struct probe_target *tg = &s->targets[t];
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
	add_archs(m, buf, size);
}

static void text_failure(struct check_state *s, const char *label, const struct verdict_row *row)
{
	const struct kimg_module_verdict *v = &row->j.verdict;
	const char *ename = kimg_cuda_error_name(v->expected_error);
	if (row->j.rule && strcmp(row->j.rule, "R2") == 0)
		fprintf(s->out.f, "    %-*s  CANNOT RUN: %s, and the device-link inputs hold no PTX this GPU can JIT-link [R2]",
		       s->label_width, label, kimg_reason_text(v->reason));
	else
		fprintf(s->out.f, "    %-*s  CANNOT RUN: %s [%s]", s->label_width, label, kimg_reason_text(v->reason),
		       v->rule ? v->rule : "?");
	if (v->expected_error)
		fprintf(s->out.f, " -> error %d%s%s%s", v->expected_error, ename ? " (" : "", ename ? ename : "", ename ? ")" : "");
	fputc('\n', s->out.f);
	if (row->fix)
		text_fix(s->out.f, row->fix);
}

static void text_module(struct check_state *s, size_t index, const struct probe_module *m,
			const struct verdict_row *rows, bool stub)
{
	char place[256], archs[400];
	probe_format_module_place(m, place, sizeof place);
	module_archs(m, archs, sizeof archs);
	struct probe_esc e;
	fprintf(s->out.f, "  module %zu %s: %s\n", index + 1, probe_esc(&e, place), m->n_imgs ? archs : "empty container, nothing to check");
	if (m->error[0])
		fprintf(s->out.f, "    error: %s\n", probe_esc(&e, m->error));
	if (stub) {
		fprintf(s->out.f, "    device-link stub (cubins without kernels): not checked\n");
		return;
	}
	if (m->link_input) {
		fprintf(s->out.f, "    relocatable input of the device link (-rdc): judged with the linked module\n");
		return;
	}
	for (int t = 0; rows && t < s->n_targets; t++) {
		const struct kimg_module_judgement *mj = &rows[t].j;
		const struct kimg_module_verdict *v = &mj->verdict;
		char label[160], img[32];
		target_label(&s->targets[t], label, sizeof label);
		selected_name(m, v, img, sizeof img);
		if (mj->fate == KIMG_FATE_DISPATCHED && mj->library)
			fprintf(s->out.f, "    %-*s  not for this GPU: %s selects its modules per GPU [%s]\n", s->label_width, label,
			       mj->library, mj->rule);
		else if (mj->fate == KIMG_FATE_DISPATCHED)
			fprintf(s->out.f, "    %-*s  not for this GPU: arch-specific code its library selects on other GPUs [%s]\n",
			       s->label_width, label, mj->rule);
		else if (v->outcome == KIMG_OUTCOME_SASS)
			fprintf(s->out.f, "    %-*s  runs: cubin %s\n", s->label_width, label, img);
		else if (v->outcome == KIMG_OUTCOME_PTX_JIT)
			fprintf(s->out.f, "    %-*s  runs: PTX %s, compiled by the driver's JIT\n", s->label_width, label, img);
		else if (v->outcome == KIMG_OUTCOME_JIT_LINK)
			fprintf(s->out.f, "    %-*s  runs after JIT link: the driver JIT-links the PTX of the device-link inputs [R1]\n",
			       s->label_width, label);
		else
			text_failure(s, label, &rows[t]);
	}
}

/* Module verdicts alone (kimg_rules_check_module): true if the module
 * cannot run on some target, the only case that needs the stub test. */
/* The file's modules judged together on each target (kimg_rules_judge_file):
 * rows[i * n_targets + t]. */
static bool judge_file(struct check_state *s, const struct probe_file *pf, const bool *stub, struct verdict_row *rows)
{
	struct kimg_file_module *fm = calloc(pf->n_mods ? pf->n_mods : 1, sizeof *fm);
	struct kimg_module_judgement *out = calloc(pf->n_mods ? pf->n_mods : 1, sizeof *out);
	if (!fm || !out) {
		free(fm);
		free(out);
		return false;
	}
	for (size_t i = 0; i < pf->n_mods; i++) {
		const struct probe_module *m = &pf->mods[i];
		fm[i].imgs = m->imgs;
		fm[i].n_imgs = m->n_imgs;
		fm[i].role = m->link_input ? KIMG_ROLE_LINK_INPUT
			     : (stub[i] || m->n_imgs == 0) ? KIMG_ROLE_SKIP : KIMG_ROLE_LOADED;
	}
	bool ok = true;
	free_fixes(rows, pf->n_mods * (size_t)s->n_targets);
	for (int t = 0; t < s->n_targets; t++) {
		const struct kimg_device *dev = &s->targets[t].dev;
		kimg_rules_judge_file(pf->path, fm, pf->n_mods, dev, s->strict ? KIMG_FILE_STRICT : 0, out);
		for (size_t i = 0; i < pf->n_mods; i++) {
			struct verdict_row *r = &rows[i * (size_t)s->n_targets + (size_t)t];
			r->j = out[i];
			if (out[i].fate != KIMG_FATE_FAILS)
				continue;
			if (!(r->fix = malloc(sizeof *r->fix))) {
				ok = false;
			} else if (kimg_fix_for_file(dev, &out[i].verdict, pf->mods[i].imgs, pf->mods[i].n_imgs, pf->path,
						     r->fix) != 0) {
				free(r->fix);
				r->fix = NULL;
			}
		}
	}
	free(fm);
	free(out);
	return ok;
}

static void tally(struct check_state *s, const struct probe_module *m, const struct verdict_row *row,
		  struct file_tally *ft)
{
	const struct kimg_module_judgement *mj = &row->j;
	if (mj->fate == KIMG_FATE_NOT_JUDGED)
		return;
	s->checks++;
	unsigned o = mj->verdict.outcome < KIMG_OUTCOME_COUNT ? mj->verdict.outcome : KIMG_OUTCOME_CANNOT_RUN;
	s->by_outcome[o]++;
	if (mj->fate == KIMG_FATE_RUNS) {
		ft->runs++;
	} else if (mj->fate == KIMG_FATE_DISPATCHED) {
		ft->dispatched++;
		s->dispatched++;
		add_archs(m, ft->dispatched_archs, sizeof ft->dispatched_archs);
	} else {
		ft->fails++;
		s->cannot++;
	}
}

static void json_tallies(struct check_state *s, const struct file_tally *ft)
{
	struct kimg_json *j = &s->out.j;
	kimg_json_key(j, "per_target");
	kimg_json_begin_array(j);
	for (int t = 0; ft && t < s->n_targets; t++) {
		char cc[16];
		kimg_arch_format_cc(s->targets[t].dev.cc, cc, sizeof cc);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "sm", cc);
		kimg_json_kv_string(j, "device", s->targets[t].named ? s->targets[t].dev.name : NULL);
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

static void text_tallies(const struct check_state *s, const struct file_tally *ft)
{
	for (int t = 0; ft && t < s->n_targets; t++) {
		char label[160];
		target_label(&s->targets[t], label, sizeof label);
		fprintf(s->out.f, "  on %s: %lu run, %lu dispatched for other GPUs%s%s%s, %lu fail\n", label, ft[t].runs,
		       ft[t].dispatched, ft[t].dispatched ? " (" : "", ft[t].dispatched_archs,
		       ft[t].dispatched ? ")" : "", ft[t].fails);
	}
}

/* Modules of a file whose link-stub test runs on several threads (the
 * test decodes cubins; below this count threads cost more than they save). */
#define STUB_TESTS_PARALLEL_MIN 16

struct stub_tests {
	const struct probe_file *pf;
	const size_t *which;             /* module indexes to test */
	bool *stub;
};

static void stub_test(void *ctx, size_t i)
{
	struct stub_tests *t = ctx;
	t->stub[t->which[i]] = probe_module_is_link_stub(&t->pf->mods[t->which[i]]);
}

/* A module that is not a failure whatever the stub test says (dispatched
 * for other GPUs) is still tested when that costs little, so that the
 * report names the stubs as before: stubs are a few KiB, while the real
 * modules of cuDNN or cuBLASLt decode to megabytes, and decoding those
 * was most of a warm check of a Python environment. */
#define STUB_TEST_CHEAP ((uint64_t)64 << 10)

/* stub[i] for the modules whose verdict a stub can change: those that
 * fail on some target as judged without the test (rows). A stub is left
 * out (KIMG_ROLE_SKIP), which turns its failure into "not judged" and
 * changes no other module's fate. Modules dispatched for other GPUs are
 * tested only below STUB_TEST_CHEAP. Returns how many stubs were found.
 * Large files spread the test over threads. */
static size_t find_stubs(const struct check_state *s, const struct probe_file *pf, const struct verdict_row *rows,
			 bool *stub)
{
	size_t nt = (size_t)s->n_targets;
	size_t *which = malloc((pf->n_mods ? pf->n_mods : 1) * sizeof *which), n = 0, found = 0;
	for (size_t i = 0; i < pf->n_mods; i++) {
		const struct probe_module *m = &pf->mods[i];
		bool test = false, dispatched = false;
		for (size_t t = 0; t < nt; t++) {
			test |= rows[i * nt + t].j.fate == KIMG_FATE_FAILS;
			dispatched |= rows[i * nt + t].j.fate == KIMG_FATE_DISPATCHED;
		}
		if (!test && dispatched)
			test = probe_module_stub_test_cost(m) <= STUB_TEST_CHEAP;
		if (!m->link_input && m->n_imgs > 0 && test) {
			if (which)
				which[n++] = i;
			else
				stub[i] = probe_module_is_link_stub(m);
		}
	}
	struct stub_tests t = { pf, which, stub };
	unsigned threads = probe_jobs(s->out.jobs);
	if (n >= STUB_TESTS_PARALLEL_MIN && threads > 1 && pf->n_members == 0)
		probe_input_parallel(n, threads, stub_test, &t);
	else
		for (size_t k = 0; k < n; k++)
			stub_test(&t, k);
	free(which);
	for (size_t i = 0; i < pf->n_mods; i++)
		found += stub[i];
	return found;
}

static int label_width_of(const struct probe_target *t, int n)
{
	int width = 0;
	for (int i = 0; i < n; i++) {
		char label[160];
		target_label(&t[i], label, sizeof label);
		if ((int)strlen(label) > width)
			width = (int)strlen(label);
	}
	return width;
}

/* The targets, once asked (s->pending): false when asking failed. */
static bool targets_known(struct check_state *s)
{
	if (!s->pending || s->targets)
		return true;
	struct probe_target *t;
	probe_pool_wait_begin(); /* another worker runs meanwhile */
	int n = probe_targets_async_wait(s->pending, &t);
	probe_pool_wait_end();
	if (n < 0)
		return false;
	s->targets = t;
	s->n_targets = n;
	s->label_width = label_width_of(t, n);
	return true;
}

/* A CUDA library this large is identified (its version: a scan of .rodata,
 * 12 ms for cuBLASLt's 46 MB on the H200) on a helper while this thread
 * walks its modules (20 ms): the largest library is the last file to end. */
#define IDENTIFY_BESIDE_MIN ((uint64_t)32 << 20)

struct lib_identity {
	const char *path;
	struct kimg_span bytes;
	struct kimg_cuda_lib lib;
	bool is_lib;
};

static void identify_lib(void *ctx)
{
	struct lib_identity *li = ctx;
	li->is_lib = probe_cuda_lib_identify(li->path, li->bytes, NULL, &li->lib);
}

static void collect_file(void *ctx)
{
	probe_collect(ctx);
}

static void check_input(void *ctx, const char *path, struct kimg_span bytes, bool explicit_path)
{
	struct check_state *s = ctx;
	struct probe_file pf = { .path = path, .walk_flags = s->out.walk_flags, .bytes = bytes };
	struct lib_identity li = { .path = path, .bytes = bytes };
	const char *base = strrchr(path, '/');
	bool beside = bytes.size >= IDENTIFY_BESIDE_MIN && probe_jobs(s->out.jobs) > 1 &&
		      kimg_cuda_lib_identify(base ? base + 1 : path, kimg_span_make(NULL, 0), &li.lib);
	if (beside) {
		probe_input_beside(collect_file, &pf, identify_lib, &li);
	} else {
		probe_collect(&pf);
		identify_lib(&li);
	}
	if (!targets_known(s)) { /* the run is called off: nothing to say */
		probe_file_free(&pf);
		return;
	}
	s->files++;
	s->out.errors += probe_report_problems(&pf);
	size_t nt = (size_t)s->n_targets, nm = pf.n_mods ? pf.n_mods : 1;
	struct verdict_row *rows = calloc(nm * nt, sizeof *rows);
	struct file_tally *ft = calloc(nt, sizeof *ft);
	bool *stub = calloc(nm, sizeof *stub);
	bool judged = rows && ft && stub;
	/* Judged once as if no module were a stub, then again if the stub
	 * test of the failing ones found any. */
	if (judged)
		judged = judge_file(s, &pf, stub, rows);
	if (judged && find_stubs(s, &pf, rows, stub) > 0)
		judged = judge_file(s, &pf, stub, rows);
	if (!judged) {
		probe_report_error(path, "out of memory");
		s->out.errors++;
	}
	size_t shown = 0;
	for (size_t i = 0; i < pf.n_mods; i++)
		shown += s->out.all_modules || !pf.mods[i].link_input;
	/* the package that installed the file, and whether it is a CUDA library (extras.h) */
	struct kimg_cuda_lib lib = li.lib;
	bool is_lib = li.is_lib;
	const struct kimg_pkg *pkg = pf.n_mods > 0 || is_lib ? owner_of(s, path) : NULL;
	unsigned long file_cannot = 0, file_libs = 0;
	char advice[640] = "";
	if (is_lib && pkg)
		kimg_cuda_lib_version_from_package(&lib, pkg->name, pkg->version);
	/* per-target rows only where "Where it may run" will be written */
	bool grouped = false;
	for (size_t t = 0; t < nt && !grouped; t++)
		grouped = s->targets[t].group != NULL;
	struct probe_place_row *place = grouped ? calloc(nt, sizeof *place) : NULL;
	for (size_t t = 0; place && is_lib && t < nt; t++) {
		struct kimg_runtime_verdict lv;
		probe_cuda_lib_judge(&lib, s->targets[t].dev.driver_version, &lv);
		if (lv.outcome != KIMG_RUNTIME_NEEDS_DRIVER)
			continue;
		place[t].fails++;
		snprintf(place[t].fix, sizeof place[t].fix, "a driver >= %s (for %s)", lv.min_driver ? lv.min_driver : "?",
			 lib.kind->what);
	}
	for (size_t i = 0; judged && i < pf.n_mods; i++)
		for (size_t t = 0; t < nt; t++) {
			const struct verdict_row *r = &rows[i * nt + t];
			if (r->j.fate != KIMG_FATE_FAILS)
				continue;
			if (place && place[t].fails++ == 0 && !place[t].fix[0])
				probe_place_fix(r->fix, place[t].fix, sizeof place[t].fix);
			file_cannot++;
			if (!advice[0])
				probe_package_advice(pkg, &s->targets[t], r->fix, advice, sizeof advice);
		}
	if (s->out.json) {
		probe_json_file_begin(&s->out.j, &pf);
	} else if (shown > 0 || explicit_path || is_lib) {
		struct probe_esc e;
		fprintf(s->out.f, "%s: %zu module%s%s\n", probe_esc(&e, path), shown, shown == 1 ? "" : "s",
		       shown == 0 && !pf.error[0] ? " (no device code)" : "");
		probe_image_text_origin(s->out.f, path);
		if (pf.error[0])
			fprintf(s->out.f, "  error: %s\n", probe_esc(&e, pf.error));
		if (pkg) {
			char name[256];
			probe_format_package(pkg, name, sizeof name);
			fprintf(s->out.f, "  package: %s\n", probe_esc(&e, name));
		}
	}
	size_t index = 0;
	for (size_t i = 0; i < pf.n_mods; i++) {
		const struct probe_module *m = &pf.mods[i];
		const struct verdict_row *mrows = judged ? &rows[i * nt] : NULL;
		for (size_t t = 0; mrows && t < nt; t++)
			tally(s, m, &mrows[t], &ft[t]);
		if (!s->out.all_modules && m->link_input)
			continue;
		s->modules++;
		if (stub[i])
			s->stubs++;
		bool has_rows = mrows && m->n_imgs > 0 && !stub[i];
		if (s->out.json)
			json_module(s, m, has_rows ? mrows : NULL, stub[i]);
		else
			text_module(s, index, m, has_rows ? mrows : NULL, stub[i]);
		index++;
	}
	if (s->out.json) {
		kimg_json_end_array(&s->out.j);
		json_tallies(s, judged ? ft : NULL);
		probe_json_package(&s->out.j, pkg);
		if (is_lib)
			file_libs = probe_cuda_lib_json(&s->extras, &s->out.j, &lib, s->targets, s->n_targets);
		kimg_json_end_object(&s->out.j);
	} else {
		if (shown > 0 && judged)
			text_tallies(s, ft);
		if (is_lib)
			file_libs = probe_cuda_lib_text(&s->extras, s->out.f, &lib, s->targets, s->n_targets);
	}
	if (pf.n_mods > 0 || is_lib)
		count_package(s, pkg, path, pf.n_mods, file_cannot, file_libs, advice);
	if (place)
		place_add(s, place);
	free_fixes(rows, pf.n_mods * nt);
	free(rows);
	free(ft);
	free(stub);
	probe_file_free(&pf);
}

/* probe_walker.on_image: the image's facts, its NVIDIA_REQUIRE_* judged
 * against every target (a refusal fails the check: the container would
 * not start). */
static void check_image(void *ctx, const struct probe_image_info *img)
{
	struct check_state *s = ctx;
	if (!targets_known(s))
		return;
	s->images++;
	if (s->out.json)
		s->image_refusals += probe_image_json_facts(&s->out.j, img, s->targets, s->n_targets);
	else
		s->image_refusals += probe_image_text_facts(s->out.f, img, s->targets, s->n_targets);
}

/* A worker's copy of the state for one input (probe_walker.job_begin):
 * the settings shared, the counters its own. */
static struct probe_out *check_job_begin(void *ctx)
{
	const struct check_state *s = ctx;
	struct check_state *c = malloc(sizeof *c);
	if (!c)
		return NULL;
	*c = *s;
	c->files = c->modules = c->stubs = c->checks = c->cannot = c->dispatched = 0;
	c->images = c->image_refusals = 0;
	memset(c->by_outcome, 0, sizeof c->by_outcome);
	/* the owners index shared (under owners_lock), the counts its own */
	c->extras.libs = c->extras.libs_need_driver = c->extras.libs_minor_compat = 0;
	c->extras.groups = NULL;
	c->extras.n_groups = c->extras.cap_groups = 0;
	c->deferred = NULL;
	c->n_deferred = c->cap_deferred = 0;
	c->is_job = true;
	c->place = NULL;
	return &c->out;
}

static void check_job_end(void *ctx, struct probe_out *job)
{
	struct check_state *s = ctx, *c = (struct check_state *)job;
	s->files += c->files;
	s->modules += c->modules;
	s->stubs += c->stubs;
	s->checks += c->checks;
	s->cannot += c->cannot;
	s->dispatched += c->dispatched;
	s->images += c->images;
	s->image_refusals += c->image_refusals;
	for (int i = 0; i < KIMG_OUTCOME_COUNT; i++)
		s->by_outcome[i] += c->by_outcome[i];
	s->extras.libs += c->extras.libs;
	s->extras.libs_need_driver += c->extras.libs_need_driver;
	s->extras.libs_minor_compat += c->extras.libs_minor_compat;
	for (size_t i = 0; i < c->n_deferred; i++) {
		const struct package_count *p = &c->deferred[i];
		probe_extras_count(&s->extras, p->has_pkg ? &p->pkg : NULL, p->path, p->modules, p->cannot, p->libs_need_driver, p->advice);
		free(p->path);
	}
	free(c->deferred);
	if (c->place) {
		if (!s->place)
			s->place = calloc((size_t)c->n_targets, sizeof *s->place);
		if (s->place)
			probe_place_merge(s->place, c->place, c->n_targets);
		free(c->place);
	}
	free(c);
}

static void json_targets(struct kimg_json *j, const struct check_state *s)
{
	kimg_json_key(j, "targets");
	kimg_json_begin_array(j);
	for (int t = 0; t < s->n_targets; t++) {
		const struct kimg_device *d = &s->targets[t].dev;
		char cc[16], drv[16];
		kimg_arch_format_cc(d->cc, cc, sizeof cc);
		probe_format_cuda_version(d->driver_version, drv, sizeof drv);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "sm", cc);
		kimg_json_kv_string(j, "device", s->targets[t].named ? d->name : NULL);
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

/* The JSON before the files: {"targets": [...], "files": [ */
static void json_header(struct kimg_json *j, const struct check_state *s)
{
	kimg_json_begin_document(j);
	json_targets(j, s);
	kimg_json_key(j, "files");
	kimg_json_begin_array(j);
}

/* probe_walker.output_ready (main thread): the GPUs known, the JSON
 * header written before the first file. */
static bool check_output_ready(void *ctx)
{
	struct check_state *s = ctx;
	if (!targets_known(s))
		return false;
	if (s->out.json && !s->header_written) {
		struct kimg_json h;
		kimg_json_init(&h, stdout);
		json_header(&h, s);
		s->header_written = true;
	}
	return true;
}

static void check_when_ready(void *ctx, void (*fn)(void *arg), void *arg)
{
	struct check_state *s = ctx;
	probe_targets_async_on_done(s->pending, fn, arg);
}

static bool check_called_off(void *ctx)
{
	const struct check_state *s = ctx;
	return s->pending && probe_targets_async_failed(s->pending);
}

/* Asking the GPUs for --sm native while the walk begins, where workers
 * take the files: the walk's writer is put where the JSON header leaves
 * it (its state does not depend on the targets written), and
 * check_output_ready writes the header itself once they are known.
 * false: ask them here, first. */
static bool start_asking(struct check_state *s, char *const *lists, int n_lists, int driver)
{
	if (probe_jobs(s->out.jobs) <= 1 || !probe_targets_async_needed(lists, n_lists))
		return false;
	char *buf = NULL;
	size_t len = 0;
	FILE *scratch = s->out.json ? open_memstream(&buf, &len) : NULL;
	if (s->out.json && !scratch)
		return false;
	if (!(s->pending = probe_targets_async_start(lists, n_lists, driver))) {
		if (scratch)
			fclose(scratch);
		free(buf);
		return false;
	}
	if (scratch) {
		kimg_json_init(&s->out.j, scratch);
		json_header(&s->out.j, s); /* n_targets is 0 here */
		fclose(scratch);
		free(buf);
		s->out.j.out = stdout;
	}
	return true;
}

int probe_cmd_check(int argc, char **argv)
{
	struct check_state s;
	struct probe_args args;
	/* Every --sm LIST, merged in order (room for argc: one per argument at most). */
	char **sm_lists = calloc(argc > 0 ? (size_t)argc : 1, sizeof *sm_lists);
	int n_sm_lists = 0;
	int driver = 0, status = PROBE_EXIT_ERROR;
	struct owners_prewarm prewarm = { 0 };
	memset(&s, 0, sizeof s);
	if (!sm_lists || probe_args_init(&args, "check", argc, &s.out) < 0) {
		free(sm_lists);
		return PROBE_EXIT_ERROR;
	}
	probe_extras_init(&s.extras);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		enum probe_arg taken = probe_args_take(&args, argv[i]);
		if (taken == PROBE_ARG_TAKEN) {
			continue;
		} else if (taken == PROBE_ARG_BAD) {
			goto out;
		} else if (taken == PROBE_ARG_HELP) {
			fputs(check_help, stdout);
			status = PROBE_EXIT_OK;
			goto out;
		} else if (strcmp(a, "--strict") == 0) {
			s.strict = true;
		} else if (strcmp(a, "--sm") == 0 || strncmp(a, "--sm=", 5) == 0) {
			char *sm_list = a[4] == '=' ? argv[i] + 5 : (i + 1 < argc ? argv[++i] : NULL);
			if (sm_list)
				sm_lists[n_sm_lists++] = sm_list;
			else {
				probe_usage_error(&args, false, "--sm needs a LIST");
				goto out;
			}
		} else if (strcmp(a, "--driver") == 0 || strncmp(a, "--driver=", 9) == 0) {
			const char *d = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
			if (!d || (driver = kimg_cuda_version_parse(d)) < 0) {
				probe_usage_error(&args, false, "--driver needs a CUDA version X.Y (e.g. 12.4)");
				goto out;
			}
			/* Outside kimg's PTX ISA table the limit is unknown: say so
			 * rather than check against a guess. */
			if (kimg_driver_max_ptx_isa(driver) == 0)
				fprintf(stderr, "kimg-probe check: note: --driver %s is %s than kimg's PTX ISA table "
					"(CUDA 7.0 to %d.%d): PTX ISA versions are not checked against it\n", d,
					driver < kimg_ptx_isa_table_oldest_cuda() ? "older" : "newer",
					kimg_ptx_isa_table_newest_cuda() / 1000, kimg_ptx_isa_table_newest_cuda() % 1000 / 10);
		} else {
			probe_usage_error(&args, true, "unknown option '%s'", a);
			goto out;
		}
	}
	if (probe_args_done(&args) != 0)
		goto out;
	if (n_sm_lists == 0) {
		probe_usage_error(&args, true, "--sm LIST is required");
		goto out;
	}
	if (args.n_paths == 0) {
		probe_usage_error(&args, true, "no PATH given");
		goto out;
	}
	prewarm = (struct owners_prewarm){ &s, args.paths, args.n_paths, { 0 }, false };
	if (probe_jobs(s.out.jobs) > 1)
		prewarm.started = probe_thread_create(&prewarm.thread, prewarm_owners, &prewarm, PROBE_THREAD_INLINE_NEVER);
	struct kimg_json *j = &s.out.j;
	struct probe_walker w = { &s, check_input, probe_input_unreadable, probe_input_unreadable_quiet, &s.out, NULL,
				  check_job_begin, check_job_end, NULL, NULL, NULL, check_image, false };
	w.strict_links = s.strict;
	if (start_asking(&s, sm_lists, n_sm_lists, driver)) {
		w.output_ready = check_output_ready;
		w.called_off = check_called_off;
		w.when_ready = check_when_ready;
	} else {
		if ((s.n_targets = probe_parse_targets(sm_lists, n_sm_lists, driver, &s.targets)) < 0)
			goto out;
		s.label_width = label_width_of(s.targets, s.n_targets);
		if (s.out.json) {
			kimg_json_init(j, stdout);
			json_header(j, &s);
		}
	}
	probe_walk(args.paths, args.n_paths, &w);
	if (s.pending) {
		/* The walk asked before its last lines (an empty one too): the
		 * same answer, and the targets handed over. */
		bool ready = check_output_ready(&s);
		struct probe_target *t;
		s.n_targets = probe_targets_async_end(s.pending, &t);
		s.pending = NULL;
		s.targets = t;
		if (!ready)
			goto out;
	}
	status = s.out.errors ? PROBE_EXIT_ERROR
		 : s.cannot || s.extras.libs_need_driver || s.image_refusals ? PROBE_EXIT_FAIL : PROBE_EXIT_OK;
	if (s.out.json) {
		kimg_json_end_array(j);
		kimg_json_kv_bool(j, "ok", status == PROBE_EXIT_OK);
		kimg_json_key(j, "summary");
		kimg_json_begin_object(j);
		kimg_json_kv_uint(j, "files", s.files);
		kimg_json_kv_uint(j, "modules", s.modules);
		kimg_json_kv_uint(j, "link_stubs", s.stubs);
		kimg_json_kv_uint(j, "checks", s.checks);
		kimg_json_kv_uint(j, "sass", s.by_outcome[KIMG_OUTCOME_SASS]);
		kimg_json_kv_uint(j, "ptx_jit", s.by_outcome[KIMG_OUTCOME_PTX_JIT]);
		kimg_json_kv_uint(j, "jit_link", s.by_outcome[KIMG_OUTCOME_JIT_LINK]);
		kimg_json_kv_uint(j, "dispatched", s.dispatched);
		kimg_json_kv_uint(j, "cannot_run", s.cannot);
		kimg_json_kv_uint(j, "cuda_libraries", s.extras.libs);
		kimg_json_kv_uint(j, "needs_newer_driver", s.extras.libs_need_driver);
		kimg_json_kv_uint(j, "container_images", s.images);
		kimg_json_kv_uint(j, "image_requirements_refused", s.image_refusals);
		kimg_json_kv_uint(j, "errors", s.out.errors);
		kimg_json_end_object(j);
		if (!s.place)
			s.place = calloc((size_t)s.n_targets, sizeof *s.place);
		probe_placement_json(j, s.targets, s.n_targets, s.place);
		kimg_json_end_object(j);
		fputc('\n', stdout);
	} else {
		probe_extras_sort_groups(&s.extras);
		probe_extras_text_packages(&s.extras);
		if (!s.place)
			s.place = calloc((size_t)s.n_targets, sizeof *s.place);
		probe_placement_text(stdout, s.targets, s.n_targets, s.place);
		printf("%lu file%s, %lu module%s on %d GPU%s: %lu run (%lu sass, %lu ptx_jit", s.files,
		       s.files == 1 ? "" : "s", s.modules, s.modules == 1 ? "" : "s", s.n_targets,
		       s.n_targets == 1 ? "" : "s", s.checks - s.cannot - s.dispatched, s.by_outcome[KIMG_OUTCOME_SASS],
		       s.by_outcome[KIMG_OUTCOME_PTX_JIT]);
		if (s.by_outcome[KIMG_OUTCOME_JIT_LINK])
			printf(", %lu jit_link", s.by_outcome[KIMG_OUTCOME_JIT_LINK]);
		printf("), ");
		if (s.dispatched)
			printf("%lu dispatched for other GPUs, ", s.dispatched);
		printf("%lu cannot run", s.cannot);
		if (s.extras.libs)
			printf("; %lu CUDA librar%s, %lu need%s a newer driver", s.extras.libs,
			       s.extras.libs == 1 ? "y" : "ies", s.extras.libs_need_driver,
			       s.extras.libs_need_driver == 1 ? "s" : "");
		if (s.stubs)
			printf("; %lu device-link stub%s not checked", s.stubs, s.stubs == 1 ? "" : "s");
		if (s.images)
			printf("; %lu container image%s, %lu requirement verdict%s refused", s.images, s.images == 1 ? "" : "s",
			       s.image_refusals, s.image_refusals == 1 ? "" : "s");
		printf("; %lu error%s%s\n", s.out.errors, s.out.errors == 1 ? "" : "s",
		       s.out.errors ? " (some inputs could not be read: exit 2)" : "");
	}
out:
	if (prewarm.started)
		probe_thread_join(&prewarm.thread);
	probe_args_free(&args);
	free(sm_lists);
	probe_extras_free(&s.extras);
	free(s.targets);
	free(s.place);
	return status;
}
