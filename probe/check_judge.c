/* SPDX-License-Identifier: Apache-2.0 */
/* check's per-file judge (check_run.h), run on the walk's worker: the file's
 * modules collected, judged together on every target (kimg_rules_judge_file),
 * the link-stub test where a stub can change a verdict, and what the
 * renderer and the totals need (tallies, fixes, owner, CUDA library). It
 * writes no output but the problem lines. */
#include <stdlib.h>
#include <string.h>

#include "glibc_pins.h"
#include "check_run.h"
#include "image.h"
#include "gate.h"

bool check_run_targets(struct check_run *r)
{
	if (!r->gate || r->targets)
		return true;
	if (!probe_gate_wait(r->gate))
		return false;
	struct probe_target *t;
	int n = probe_targets_async_wait(r->pending, &t); /* settled: no wait */
	if (n < 0)
		return false;
	r->targets = t;
	r->n_targets = n;
	r->label_width = check_label_width(t, n);
	return true;
}

bool check_run_places(const struct check_run *r)
{
	for (int t = 0; t < r->n_targets; t++)
		if (r->targets[t].group)
			return true;
	return false;
}

static void free_fixes(struct check_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++) {
		free(rows[i].fix);
		rows[i].fix = NULL;
	}
}

void check_file_free(struct check_file *cf, size_t n_targets)
{
	free_fixes(cf->rows, cf->pf.n_mods * n_targets);
	free(cf->rows);
	free(cf->tally);
	free(cf->stub);
	free(cf->place);
	probe_file_free(&cf->pf);
	memset(cf, 0, sizeof *cf);
}

/* The file's modules judged together on each target (kimg_rules_judge_file):
 * rows[i * n_targets + t], stubs left out (KIMG_ROLE_SKIP). */
static bool judge_modules(const struct check_run *r, const struct probe_file *pf, const bool *stub,
			  struct check_row *rows)
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
	free_fixes(rows, pf->n_mods * (size_t)r->n_targets);
	/* a container image's file: its Env's JIT switches, not ours (core/jit_env.h) */
	struct kimg_jit_env jit;
	bool in_image = probe_image_jit_env(pf->path, &jit);
	for (int t = 0; t < r->n_targets; t++) {
		struct kimg_device image_dev;
		const struct kimg_device *dev = &r->targets[t].dev;
		if (in_image) {
			image_dev = *dev;
			kimg_jit_env_apply(&jit, &image_dev);
			dev = &image_dev;
		}
		kimg_rules_judge_file(pf->path, fm, pf->n_mods, dev, r->strict ? KIMG_FILE_STRICT : 0, out);
		for (size_t i = 0; i < pf->n_mods; i++) {
			struct check_row *row = &rows[i * (size_t)r->n_targets + (size_t)t];
			row->j = out[i];
			if (out[i].fate != KIMG_FATE_FAILS)
				continue;
			if (!(row->fix = malloc(sizeof *row->fix))) {
				ok = false;
			} else if (kimg_fix_for_file(dev, &out[i].verdict, pf->mods[i].imgs, pf->mods[i].n_imgs, pf->path,
						     row->fix) != 0) {
				free(row->fix);
				row->fix = NULL;
			}
		}
	}
	free(fm);
	free(out);
	return ok;
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
static size_t find_stubs(const struct check_run *r, const struct probe_file *pf, const struct check_row *rows,
			 bool *stub)
{
	size_t nt = (size_t)r->n_targets;
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
	unsigned threads = probe_jobs(r->jobs);
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

/* One verdict into the file's counts and its target's tally. */
static void tally(struct check_file *cf, const struct probe_module *m, const struct check_row *row,
		  struct check_tally *ft)
{
	const struct kimg_module_judgement *mj = &row->j;
	if (mj->fate == KIMG_FATE_NOT_JUDGED)
		return;
	cf->checks++;
	unsigned o = mj->verdict.outcome < KIMG_OUTCOME_COUNT ? mj->verdict.outcome : KIMG_OUTCOME_CANNOT_RUN;
	cf->by_outcome[o]++;
	if (mj->fate == KIMG_FATE_RUNS) {
		ft->runs++;
	} else if (mj->fate == KIMG_FATE_DISPATCHED) {
		ft->dispatched++;
		cf->dispatched++;
		check_add_archs(m, ft->dispatched_archs, sizeof ft->dispatched_archs);
	} else {
		ft->fails++;
	}
}

/* The failures: their count, the package advice for the first, and per
 * target (only where "Where it may run" is written) the first fix. */
static void sum_failures(const struct check_run *r, struct check_file *cf)
{
	size_t nt = (size_t)r->n_targets;
	struct probe_place_row *place = check_run_places(r) ? calloc(nt, sizeof *place) : NULL;
	for (size_t t = 0; place && cf->is_lib && t < nt; t++) {
		struct kimg_runtime_verdict lv;
		probe_cuda_lib_judge(&cf->lib, r->targets[t].dev.driver_version, &lv);
		if (lv.outcome != KIMG_RUNTIME_NEEDS_DRIVER)
			continue;
		place[t].fails++;
		snprintf(place[t].fix, sizeof place[t].fix, "a driver >= %s (for %s)", lv.min_driver ? lv.min_driver : "?",
			 cf->lib.kind->what);
	}
	for (size_t i = 0; cf->judged && i < cf->pf.n_mods; i++)
		for (size_t t = 0; t < nt; t++) {
			const struct check_row *row = &cf->rows[i * nt + t];
			if (row->j.fate != KIMG_FATE_FAILS)
				continue;
			if (place && place[t].fails++ == 0 && !place[t].fix[0])
				probe_place_fix(row->fix, place[t].fix, sizeof place[t].fix);
			cf->cannot++;
			if (!cf->advice[0])
				probe_package_advice(cf->pkg, &r->targets[t], row->fix, cf->advice, sizeof cf->advice);
		}
	cf->place = place;
}

/* A CUDA library this large whose version needs a scan of its .rodata for
 * the release banner (NVRTC's 13 MB, nvJitLink's 9 MB; see
 * kimg_cuda_lib_kind.banner_in_host_data) is identified on a helper while
 * this thread walks its modules. The math libraries (cuBLASLt) are not
 * scanned: identified here, no helper. */
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

/* The file's modules, and whether it is a CUDA library: side by side for
 * a large library. */
static void collect(const struct check_run *r, const char *path, struct kimg_span bytes, struct check_file *cf)
{
	struct lib_identity li = { .path = path, .bytes = bytes };
	const char *base = strrchr(path, '/');
	cf->pf = (struct probe_file){ .path = path, .walk_flags = r->walk_flags, .bytes = bytes };
	bool beside = bytes.size >= IDENTIFY_BESIDE_MIN && probe_jobs(r->jobs) > 1 &&
		      kimg_cuda_lib_identify(base ? base + 1 : path, kimg_span_make(NULL, 0), &li.lib) &&
		      li.lib.kind->banner_in_host_data && li.lib.cuda_minor < 0;
	if (beside) {
		probe_input_beside(collect_file, &cf->pf, identify_lib, &li);
	} else {
		probe_collect(&cf->pf);
		identify_lib(&li);
	}
	cf->lib = li.lib;
	cf->is_lib = li.is_lib;
}

bool check_judge_file(struct check_run *r, const char *path, struct kimg_span bytes, struct check_file *cf)
{
	memset(cf, 0, sizeof *cf);
	collect(r, path, bytes, cf);
	if (!check_run_targets(r)) {
		probe_file_free(&cf->pf);
		return false;
	}
	const struct probe_file *pf = &cf->pf;
	cf->problems = probe_report_problems(pf);
	size_t nt = (size_t)r->n_targets, nm = pf->n_mods ? pf->n_mods : 1;
	cf->rows = calloc(nm * nt, sizeof *cf->rows);
	cf->tally = calloc(nt, sizeof *cf->tally);
	cf->stub = calloc(nm, sizeof *cf->stub);
	cf->judged = cf->rows && cf->tally && cf->stub;
	/* Judged once as if no module were a stub, then again if the stub
	 * test of the failing ones found any. */
	if (cf->judged)
		cf->judged = judge_modules(r, pf, cf->stub, cf->rows);
	if (cf->judged && find_stubs(r, pf, cf->rows, cf->stub) > 0)
		cf->judged = judge_modules(r, pf, cf->stub, cf->rows);
	if (!cf->judged) {
		probe_report_error(path, "out of memory");
		cf->problems++;
	}
	for (size_t i = 0; i < pf->n_mods; i++) {
		const struct probe_module *m = &pf->mods[i];
		for (size_t t = 0; cf->judged && t < nt; t++)
			tally(cf, m, &cf->rows[i * nt + t], &cf->tally[t]);
		if (!r->all_modules && m->link_input)
			continue;
		cf->shown++;
		cf->shown_stubs += cf->stub && cf->stub[i];
	}
	cf->pkg = pf->n_mods > 0 || cf->is_lib ? check_owner_of(r->extras, path) : NULL;
	if (cf->is_lib && cf->pkg)
		kimg_cuda_lib_version_from_package(&cf->lib, cf->pkg->name, cf->pkg->version);
	if (cf->is_lib)
		cf->lib_needs_driver = probe_cuda_lib_needs_driver(&cf->lib, r->targets, r->n_targets);
	sum_failures(r, cf);
	return true;
}
