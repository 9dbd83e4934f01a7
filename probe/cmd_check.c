/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe check: can each module run on each listed GPU? This file
 * wires the run (check_run.h): options, the targets (asked while the walk
 * begins, behind the walk's gate), the walk's callbacks, each file
 * judged (check_judge.c) and rendered (check_render.c), the totals, and
 * the exit status. */
#include <stdlib.h>
#include <string.h>

#include "glibc_pins.h"
#include "check_run.h"
#include "gate.h"
#include "image.h"

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
	struct check_run run;            /* a worker's copy has its own (its targets) */
	struct check_totals totals;
	struct probe_extras extras;      /* owning packages, CUDA libraries (extras.h) */
	/* A worker's copy (check_job_begin): its files' shares of the
	 * by-package table, added to it in walk order by check_job_end. */
	struct package_count *deferred;
	size_t n_deferred, cap_deferred;
	bool is_job;
	/* Per target: what cannot run on it and the first fix (cluster_groups.h),
	 * for "Where it may run". Main: the totals (NULL until one fails); a
	 * worker's copy: its files', added by check_job_end in walk order. */
	struct probe_place_row *place;
};

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

static void add_place(struct probe_place_row **total, const struct probe_place_row *rows, int n)
{
	if (!*total)
		*total = calloc((size_t)n, sizeof **total);
	if (*total)
		probe_place_merge(*total, rows, n);
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
		if (!p) {
			s->extras.short_of_memory = true; /* the file left out of the table: said at the end */
			return;
		}
		s->deferred = p;
		s->cap_deferred = cap;
	}
	struct package_count *c = &s->deferred[s->n_deferred];
	if ((c->path = strdup(path)) == NULL) {
		s->extras.short_of_memory = true;
		return;
	}
	s->n_deferred++;
	c->has_pkg = pkg != NULL;
	if (pkg)
		c->pkg = *pkg;
	c->modules = modules;
	c->cannot = cannot;
	c->libs_need_driver = libs_need_driver;
	snprintf(c->advice, sizeof c->advice, "%s", advice ? advice : "");
}

/* One judged file into the totals, the by-package table and the
 * placement rows (a worker's copy keeps them for check_job_end). */
static void count_file(struct check_state *s, const struct check_file *cf)
{
	struct check_totals *t = &s->totals;
	t->files++;
	s->out.errors += cf->problems;
	t->modules += cf->shown;
	t->stubs += cf->shown_stubs;
	t->checks += cf->checks;
	t->cannot += cf->cannot;
	t->dispatched += cf->dispatched;
	for (int i = 0; i < KIMG_OUTCOME_COUNT; i++)
		t->by_outcome[i] += cf->by_outcome[i];
	if (cf->is_lib) {
		s->extras.libs++;
		s->extras.libs_need_driver += cf->lib_needs_driver;
	}
	if (cf->pf.n_mods > 0 || cf->is_lib)
		count_package(s, cf->pkg, cf->pf.path, cf->pf.n_mods, cf->cannot, cf->lib_needs_driver, cf->advice);
	if (cf->place)
		add_place(&s->place, cf->place, s->run.n_targets);
}

/* probe_walker.on_input: judged, rendered, counted. */
static void check_input(void *ctx, const char *path, struct kimg_span bytes, bool explicit_path)
{
	struct check_state *s = ctx;
	struct check_file cf;
	if (!check_judge_file(&s->run, path, bytes, &cf))
		return; /* the run is called off: nothing to say */
	check_render_file(&s->out, &s->run, &cf, explicit_path);
	count_file(s, &cf);
	check_file_free(&cf, (size_t)s->run.n_targets);
}

/* probe_walker.on_image: the image's facts, its NVIDIA_REQUIRE_* judged
 * against every target (a refusal fails the check: the container would
 * not start, so "Where it may run" counts it against that target). */
static void check_image(void *ctx, const struct probe_image_info *img)
{
	struct check_state *s = ctx;
	const struct check_run *r = &s->run;
	if (!check_run_targets(&s->run))
		return;
	s->totals.images++;
	struct probe_place_row *rows = check_run_places(r) ? calloc((size_t)r->n_targets, sizeof *rows) : NULL;
	if (rows) {
		probe_image_place(img, r->targets, r->n_targets, rows);
		add_place(&s->place, rows, r->n_targets);
		free(rows);
	}
	if (s->out.json)
		s->totals.image_refusals += probe_image_json_facts(&s->out.j, img, r->targets, r->n_targets);
	else
		s->totals.image_refusals += probe_image_text_facts(s->out.f, img, r->targets, r->n_targets);
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
	memset(&c->totals, 0, sizeof c->totals);
	/* the owners index shared (check_owner_of), the counts its own */
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
	struct check_totals *t = &s->totals;
	const struct check_totals *ct = &c->totals;
	t->files += ct->files;
	t->modules += ct->modules;
	t->stubs += ct->stubs;
	t->checks += ct->checks;
	t->cannot += ct->cannot;
	t->dispatched += ct->dispatched;
	t->images += ct->images;
	t->image_refusals += ct->image_refusals;
	for (int i = 0; i < KIMG_OUTCOME_COUNT; i++)
		t->by_outcome[i] += ct->by_outcome[i];
	s->extras.libs += c->extras.libs;
	s->extras.libs_need_driver += c->extras.libs_need_driver;
	s->extras.short_of_memory |= c->extras.short_of_memory;
	for (size_t i = 0; i < c->n_deferred; i++) {
		const struct package_count *p = &c->deferred[i];
		probe_extras_count(&s->extras, p->has_pkg ? &p->pkg : NULL, p->path, p->modules, p->cannot, p->libs_need_driver, p->advice);
		free(p->path);
	}
	free(c->deferred);
	if (c->place)
		add_place(&s->place, c->place, c->run.n_targets);
	free(c->place);
	free(c);
}

/* probe_gate's begin_output (main thread, once the GPUs are known): the
 * JSON header, which names them. */
static void begin_output(void *ctx)
{
	struct check_state *s = ctx;
	if (!check_run_targets(&s->run) || !s->out.json)
		return;
	kimg_json_init(&s->out.j, stdout);
	check_render_json_header(&s->out.j, &s->run);
}

/* probe_targets_async_on_done (under its lock, on the asking thread or
 * here): the gate settles as the asking ended. */
static void targets_asked(void *ctx)
{
	struct check_state *s = ctx;
	probe_gate_settle(s->run.gate, !probe_targets_async_failed(s->run.pending));
}

/* Asking the GPUs for --sm native while the walk begins, where workers
 * take the files: true with s->run.pending and the gate set, the header
 * left to begin_output. false: ask them here, first. */
static bool start_asking(struct check_state *s, struct probe_gate *gate, char *const *lists, int n_lists, int driver)
{
	if (probe_jobs(s->out.jobs) <= 1 || !probe_targets_async_needed(lists, n_lists))
		return false;
	if (!(s->run.pending = probe_targets_async_start(lists, n_lists, driver)))
		return false;
	probe_gate_init(gate, begin_output, s);
	s->run.gate = gate;
	probe_targets_async_on_done(s->run.pending, targets_asked, s);
	return true;
}

/* The targets handed over from the asking, once the walk is over: false
 * when asking failed (nothing was written). */
static bool end_asking(struct check_state *s)
{
	struct check_run *r = &s->run;
	bool ready = probe_gate_pass(r->gate); /* the walk passed it too: the same answer */
	struct probe_target *t;
	r->n_targets = probe_targets_async_end(r->pending, &t);
	r->pending = NULL;
	r->targets = t;
	probe_gate_destroy(r->gate);
	r->gate = NULL;
	return ready;
}

int probe_cmd_check(int argc, char **argv)
{
	struct check_state s;
	struct probe_args args;
	struct probe_gate gate;
	/* Every --sm LIST, merged in order (room for argc: one per argument at most). */
	char **sm_lists = calloc(argc > 0 ? (size_t)argc : 1, sizeof *sm_lists);
	int n_sm_lists = 0;
	int driver = 0, status = PROBE_EXIT_ERROR;
	struct check_prewarm *prewarm = NULL;
	memset(&s, 0, sizeof s);
	if (!sm_lists) {
		fprintf(stderr, "kimg-probe: check: out of memory\n");
		return PROBE_EXIT_ERROR;
	}
	if (probe_args_init(&args, "check", argc, &s.out) < 0) {
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
			s.run.strict = true;
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
			if ((driver = probe_args_driver(&args, d, true)) < 0)
				goto out;
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
	s.run.all_modules = s.out.all_modules;
	s.run.walk_flags = s.out.walk_flags;
	s.run.jobs = s.out.jobs;
	s.run.extras = &s.extras;
	if (probe_jobs(s.out.jobs) > 1)
		prewarm = check_owners_prewarm(&s.extras, args.paths, args.n_paths);
	if (!start_asking(&s, &gate, sm_lists, n_sm_lists, driver)) {
		if ((s.run.n_targets = probe_parse_targets(sm_lists, n_sm_lists, driver, &s.run.targets)) < 0)
			goto out;
		s.run.label_width = check_label_width(s.run.targets, s.run.n_targets);
		if (s.out.json) {
			kimg_json_init(&s.out.j, stdout);
			check_render_json_header(&s.out.j, &s.run);
		}
	}
	struct probe_walker w = { .ctx = &s, .out = &s.out, .on_input = check_input, .on_error = probe_input_unreadable,
				  .on_image = check_image, .job_begin = check_job_begin, .job_end = check_job_end,
				  .gate = s.run.gate, .unread_each = true, .strict_links = s.run.strict };
	probe_walk(args.paths, args.n_paths, &w);
	if (s.run.pending && !end_asking(&s))
		goto out;
	if (s.extras.short_of_memory)
		probe_input_unreadable(&s.out, "(packages)",
				       "out of memory: files went without their package, or without a row in the page by package",
				       false);
	status = s.out.errors ? PROBE_EXIT_ERROR
		 : s.totals.cannot || s.extras.libs_need_driver || s.totals.image_refusals ? PROBE_EXIT_FAIL : PROBE_EXIT_OK;
	check_render_end(&s.out, &s.run, &s.totals, &s.extras, s.place, status);
out:
	check_owners_prewarm_end(prewarm);
	probe_args_free(&args);
	free(sm_lists);
	probe_extras_free(&s.extras);
	free(s.run.targets);
	free(s.place);
	return status;
}
