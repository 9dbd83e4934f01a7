/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of kimg_rules_judge_file (core/file_rules.c): a file's
 * modules judged together. Every row (R1, R2, F0-F3) and every library row
 * has a case on hand-made images; the nvcc-built fixtures (libdispatch.so,
 * libtwo.so, the -rdc programs) are judged as kimg-probe judges them. */
#include <errno.h>

#include "testutil.h"
#include "fatbin.h"
#include "file_rules.h"
#include "input.h"

#define A KIMG_VARIANT_A
#define F KIMG_VARIANT_F
#define PL KIMG_VARIANT_PLAIN

static struct kimg_image sass(unsigned sm, enum kimg_arch_variant v) { return test_image(KIMG_IMAGE_SASS, sm, v, 0); }
static struct kimg_image ptx(unsigned sm, enum kimg_arch_variant v) { return test_image(KIMG_IMAGE_PTX, sm, v, 900); }

#define MOD(arr, role) { arr, sizeof arr / sizeof arr[0], role }

/* F1: an sm_90 unit next to an sm_100a-only unit runs on 9.0; the a-only
 * module is dispatched, whatever the file is called. */
START_TEST(arch_specific_module_is_dispatched)
{
	struct kimg_image m90[] = { sass(90, PL), ptx(90, PL) }, m100a[] = { sass(100, A) };
	struct kimg_file_module mods[] = { MOD(m90, KIMG_ROLE_LOADED), MOD(m100a, KIMG_ROLE_LOADED) };
	struct kimg_module_judgement out[2];
	struct kimg_device d = device(90, 13000);
	ck_assert_int_eq(kimg_rules_judge_file("/x/libmine.so", mods, 2, &d, 0, out), 0);
	ck_assert_int_eq(out[0].fate, KIMG_FATE_RUNS);
	ck_assert_ptr_null(out[0].rule);
	ck_assert_int_eq(out[1].fate, KIMG_FATE_DISPATCHED);
	ck_assert_str_eq(out[1].rule, "F1");
	ck_assert_ptr_null(out[1].library);
	/* the module verdict itself is unchanged: S3, 209 */
	ck_assert_int_eq(out[1].verdict.outcome, KIMG_OUTCOME_CANNOT_RUN);
	ck_assert_int_eq(out[1].verdict.expected_error, 209);
	/* f code outside its family counts the same */
	struct kimg_image m120f[] = { sass(120, F), ptx(120, F) };
	struct kimg_file_module mods_f[] = { MOD(m90, KIMG_ROLE_LOADED), MOD(m120f, KIMG_ROLE_LOADED) };
	ck_assert_int_eq(kimg_rules_judge_file(NULL, mods_f, 2, &d, 0, out), 0);
	ck_assert_str_eq(out[1].rule, "F1");
}
END_TEST

/* F3: a split-arch library (an sm_80-only unit next to sm_90) fails on 9.0. */
START_TEST(split_arch_module_fails)
{
	struct kimg_image m80[] = { sass(80, PL) }, m90[] = { sass(90, PL), ptx(90, PL) };
	struct kimg_file_module mods[] = { MOD(m80, KIMG_ROLE_LOADED), MOD(m90, KIMG_ROLE_LOADED) };
	struct kimg_module_judgement out[2];
	struct kimg_device d = device(90, 13000);
	ck_assert_int_eq(kimg_rules_judge_file("libtwo.so", mods, 2, &d, 0, out), 1);
	ck_assert_int_eq(out[0].fate, KIMG_FATE_FAILS);
	ck_assert_str_eq(out[0].rule, "F3");
	ck_assert_int_eq(out[1].fate, KIMG_FATE_RUNS);
	/* a module of a and plain code mixed is not F1 */
	struct kimg_image mixed[] = { sass(100, A), sass(80, PL) };
	struct kimg_file_module mods2[] = { MOD(mixed, KIMG_ROLE_LOADED), MOD(m90, KIMG_ROLE_LOADED) };
	ck_assert_int_eq(kimg_rules_judge_file("libx.so", mods2, 2, &d, 0, out), 1);
	ck_assert_str_eq(out[0].rule, "F3");
}
END_TEST

/* F0: nothing in the file runs: every module that cannot run fails, a-only too. */
START_TEST(no_module_runs_fails)
{
	struct kimg_image m80[] = { sass(80, PL) }, m100a[] = { sass(100, A) };
	struct kimg_file_module mods[] = { MOD(m80, KIMG_ROLE_LOADED), MOD(m100a, KIMG_ROLE_LOADED) };
	struct kimg_module_judgement out[2];
	struct kimg_device d = device(90, 13000);
	ck_assert_int_eq(kimg_rules_judge_file("libcublasLt.so.13", mods, 2, &d, 0, out), 2);
	ck_assert_str_eq(out[0].rule, "F0");
	ck_assert_str_eq(out[1].rule, "F0");
	/* a skipped module (a stub) does not count as running */
	struct kimg_image stub[] = { sass(90, PL) };
	struct kimg_file_module mods2[] = { MOD(stub, KIMG_ROLE_SKIP), MOD(m80, KIMG_ROLE_LOADED) };
	ck_assert_int_eq(kimg_rules_judge_file(NULL, mods2, 2, &d, 0, out), 1);
	ck_assert_int_eq(out[0].fate, KIMG_FATE_NOT_JUDGED);
	ck_assert_str_eq(out[1].rule, "F0");
}
END_TEST

/* F2: every library row; a plain sm_100 module next to sm_90 code. */
START_TEST(library_rows_dispatch)
{
	static const struct {
		const char *file, *library;
	} rows[] = {
		{ "site-packages/nvidia/cublas/lib/libcublasLt.so.13", "cuBLASLt" },
		{ "libcublas.so.13", "cuBLAS" },
		{ "x.whl!/nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9", "cuDNN" },
		{ "libcudnn.so.9", "cuDNN" },
		{ "libcusparseLt.so.0", "cuSPARSELt" },
		{ "libcusparse.so.12", "cuSPARSE" },
		{ "libcufft.so.12", "cuFFT" },
		{ "libnccl.so.2", "NCCL" },
		{ "libnvshmem_host.so.3", "NVSHMEM" },
	};
	struct kimg_image m90[] = { sass(90, PL) }, m100[] = { sass(100, PL), sass(120, PL), ptx(120, PL) };
	struct kimg_file_module mods[] = { MOD(m90, KIMG_ROLE_LOADED), MOD(m100, KIMG_ROLE_LOADED) };
	struct kimg_module_judgement out[2];
	struct kimg_device d = device(90, 13000);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		ck_assert_str_eq(kimg_dispatch_library(rows[i].file), rows[i].library);
		ck_assert_int_eq(kimg_rules_judge_file(rows[i].file, mods, 2, &d, 0, out), 0);
		ck_assert_int_eq(out[1].fate, KIMG_FATE_DISPATCHED);
		ck_assert_str_eq(out[1].rule, "F2");
		ck_assert_str_eq(out[1].library, rows[i].library);
	}
	/* names that only look alike, and PyTorch's own libraries, are no row */
	ck_assert_ptr_null(kimg_dispatch_library("libcublasfoo.so"));
	ck_assert_ptr_null(kimg_dispatch_library("libtorch_cuda.so"));
	ck_assert_ptr_null(kimg_dispatch_library("libtorch_nvshmem.so"));
	ck_assert_ptr_null(kimg_dispatch_library("/usr/lib/libnccl")); /* no suffix at all */
	ck_assert_ptr_null(kimg_dispatch_library(NULL));
	ck_assert_int_eq(kimg_rules_judge_file("libtorch_cuda.so", mods, 2, &d, 0, out), 1);
	ck_assert_str_eq(out[1].rule, "F3");
}
END_TEST

/* --strict: F1 and F2 off. */
START_TEST(strict_excuses_nothing)
{
	struct kimg_image m90[] = { sass(90, PL) }, m100a[] = { sass(100, A) };
	struct kimg_file_module mods[] = { MOD(m90, KIMG_ROLE_LOADED), MOD(m100a, KIMG_ROLE_LOADED) };
	struct kimg_module_judgement out[2];
	struct kimg_device d = device(90, 13000);
	ck_assert_int_eq(kimg_rules_judge_file("libcublasLt.so.13", mods, 2, &d, KIMG_FILE_STRICT, out), 1);
	ck_assert_int_eq(out[1].fate, KIMG_FATE_FAILS);
	ck_assert_str_eq(out[1].rule, "F3");
}
END_TEST

/* R1 / R2: the linked module of an -rdc file. */
START_TEST(rdc_jit_link)
{
	struct kimg_image linked[] = { sass(80, PL) };
	struct kimg_image in80[] = { sass(80, PL), ptx(80, PL) }, in80b[] = { sass(80, PL), ptx(80, PL) };
	struct kimg_image sass_only[] = { sass(80, PL) }, in100[] = { sass(100, PL), ptx(100, PL) };
	struct kimg_module_judgement out[3];
	struct kimg_device d90 = device(90, 13000);

	struct kimg_file_module ok[] = { MOD(linked, KIMG_ROLE_LOADED), MOD(in80, KIMG_ROLE_LINK_INPUT),
					 MOD(in80b, KIMG_ROLE_LINK_INPUT) };
	ck_assert_int_eq(kimg_rules_judge_file("a.out", ok, 3, &d90, 0, out), 0);
	ck_assert_int_eq(out[0].fate, KIMG_FATE_RUNS);
	ck_assert_str_eq(out[0].rule, "R1");
	ck_assert_int_eq(out[0].verdict.outcome, KIMG_OUTCOME_JIT_LINK);
	ck_assert_int_eq(out[0].verdict.expected_error, 0);
	ck_assert_int_eq(out[1].fate, KIMG_FATE_NOT_JUDGED);
	ck_assert_str_eq(kimg_outcome_id(KIMG_OUTCOME_JIT_LINK), "jit_link");

	/* one input without PTX: no JIT link, error 500 */
	struct kimg_file_module one_bad[] = { MOD(linked, KIMG_ROLE_LOADED), MOD(in80, KIMG_ROLE_LINK_INPUT),
					      MOD(sass_only, KIMG_ROLE_LINK_INPUT) };
	ck_assert_int_eq(kimg_rules_judge_file("a.out", one_bad, 3, &d90, 0, out), 1);
	ck_assert_int_eq(out[0].fate, KIMG_FATE_FAILS);
	ck_assert_str_eq(out[0].rule, "R2");
	ck_assert_int_eq(out[0].verdict.expected_error, 500);

	/* PTX newer than the device cannot be JIT-linked either */
	struct kimg_file_module newer[] = { MOD(linked, KIMG_ROLE_LOADED), MOD(in100, KIMG_ROLE_LINK_INPUT) };
	ck_assert_int_eq(kimg_rules_judge_file("a.out", newer, 2, &d90, 0, out), 1);
	ck_assert_str_eq(out[0].rule, "R2");

	/* a library with -rdc inputs (NCCL): its module for other GPUs is
	 * dispatched, not R2, while its module for this GPU runs */
	struct kimg_image m90[] = { sass(90, PL) }, m100f[] = { sass(100, F) }, m100[] = { sass(100, PL) };
	struct kimg_file_module nccl[] = { MOD(m90, KIMG_ROLE_LOADED), MOD(m100f, KIMG_ROLE_LOADED),
					   MOD(m100, KIMG_ROLE_LOADED), MOD(sass_only, KIMG_ROLE_LINK_INPUT) };
	struct kimg_module_judgement out4[4];
	ck_assert_int_eq(kimg_rules_judge_file("libnccl.so.2", nccl, 4, &d90, 0, out4), 0);
	ck_assert_str_eq(out4[1].rule, "F1");
	ck_assert_str_eq(out4[2].rule, "F2");
	/* the same file under another name: the plain sm_100 module fails with R2 */
	ck_assert_int_eq(kimg_rules_judge_file("libmine.so", nccl, 4, &d90, 0, out4), 1);
	ck_assert_str_eq(out4[2].rule, "R2");
	ck_assert_int_eq(out4[2].verdict.expected_error, 500);
	/* and with --strict both fail, R2 */
	ck_assert_int_eq(kimg_rules_judge_file("libnccl.so.2", nccl, 4, &d90, KIMG_FILE_STRICT, out4), 2);
	ck_assert_str_eq(out4[1].rule, "R2");

	/* where the linked module runs, the inputs change nothing */
	struct kimg_device d86 = device(86, 13000);
	ck_assert_int_eq(kimg_rules_judge_file("a.out", one_bad, 3, &d86, 0, out), 0);
	ck_assert_int_eq(out[0].verdict.outcome, KIMG_OUTCOME_SASS);
	ck_assert_ptr_null(out[0].rule);
}
END_TEST

START_TEST(bad_arguments)
{
	struct kimg_module_judgement out[1];
	struct kimg_device d = device(90, 13000);
	ck_assert_int_eq(kimg_rules_judge_file(NULL, NULL, 0, &d, 0, out), 0);
	ck_assert_int_eq(kimg_rules_judge_file(NULL, NULL, 1, &d, 0, out), -EINVAL);
	ck_assert_int_eq(kimg_rules_judge_file(NULL, NULL, 0, NULL, 0, out), -EINVAL);
	ck_assert_int_eq(kimg_rules_judge_file(NULL, NULL, 0, &d, 0x80, out), -EINVAL);
	ck_assert_str_eq(kimg_fate_id(KIMG_FATE_DISPATCHED), "dispatched");
	ck_assert_str_eq(kimg_fate_id(KIMG_FATE_COUNT), "unknown");
}
END_TEST

/* ---- on the nvcc-built fixtures ---- */

#define MAX_MODS 16
#define MAX_IMGS 16
struct fixture_file {
	struct kimg_image imgs[MAX_MODS][MAX_IMGS];
	struct kimg_file_module mods[MAX_MODS];
	size_t n;
	bool linked;
};

static int on_module(void *ctx, const struct kimg_module_ref *ref)
{
	struct fixture_file *f = ctx;
	ck_assert_uint_lt(f->n, MAX_MODS);
	ck_assert_int_eq(ref->kind, KIMG_INPUT_FATBIN);
	struct kimg_fatbin fb;
	ck_assert_int_ge(kimg_fatbin_open(ref->bytes, 0, &fb, NULL), 0);
	uint64_t cursor = 0;
	size_t k = 0;
	while (k < MAX_IMGS && kimg_fatbin_next(&fb, &cursor, &f->imgs[f->n][k], NULL) == 1)
		k++;
	/* as kimg-probe: relocatable code of a linked file is a link input */
	enum kimg_module_role role = f->linked && ref->origin == KIMG_ORIGIN_RELFATBIN ? KIMG_ROLE_LINK_INPUT
										    : KIMG_ROLE_LOADED;
	f->mods[f->n] = (struct kimg_file_module){ f->imgs[f->n], k, role };
	f->n++;
	return 0;
}

static int judge_fixture(const char *name, unsigned sm, struct fixture_file *f, struct kimg_module_judgement *out)
{
	struct kimg_span in = fixture_load(name);
	uint16_t type = 0;
	memset(f, 0, sizeof *f);
	f->linked = kimg_span_u16(&in, 16, &type) && (type == 2 || type == 3);
	ck_assert_int_gt(kimg_input_for_each_module(in, on_module, f, NULL), 0);
	/* nvcc 13's device-link stub (sm_75 without kernels) is skipped as the probe skips it */
	for (size_t i = 0; i < f->n; i++)
		if (f->mods[i].n_imgs == 1 && f->mods[i].imgs[0].arch.sm == 75)
			f->mods[i].role = KIMG_ROLE_SKIP;
	struct kimg_device d = device(sm, 13000);
	int rc = kimg_rules_judge_file(name, f->mods, f->n, &d, 0, out);
	fixture_free(in);
	return rc;
}

static size_t count_fate(const struct kimg_module_judgement *out, size_t n, enum kimg_module_fate fate)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += out[i].fate == fate;
	return c;
}

START_TEST(fixtures_judged_as_on_the_gpu)
{
	static struct fixture_file f;
	struct kimg_module_judgement out[MAX_MODS];
	/* libdispatch.so on 9.0: sm_90 unit runs, sm_100a unit dispatched */
	ck_assert_int_eq(judge_fixture("libdispatch.so", 90, &f, out), 0);
	ck_assert_uint_eq(count_fate(out, f.n, KIMG_FATE_RUNS), 1);
	ck_assert_uint_eq(count_fate(out, f.n, KIMG_FATE_DISPATCHED), 1);
	/* on 10.0 the other way round: the sm_100a unit runs, compute_90 PTX runs too */
	ck_assert_int_eq(judge_fixture("libdispatch.so", 100, &f, out), 0);
	/* libtwo.so on 9.0: the sm_80-only unit fails */
	ck_assert_int_eq(judge_fixture("libtwo.so", 90, &f, out), 1);
	/* -rdc with compute_80 PTX in the inputs: runs after JIT link on 9.0 */
	ck_assert_int_eq(judge_fixture("rdc_ptx80_exe", 90, &f, out), 0);
	ck_assert_int_eq(out[0].verdict.outcome, KIMG_OUTCOME_JIT_LINK);
	ck_assert_uint_eq(count_fate(out, f.n, KIMG_FATE_NOT_JUDGED), 2);
	/* -rdc with SASS only, or compute_100 PTX: 500 on 9.0 */
	ck_assert_int_eq(judge_fixture("rdc_sm80_exe", 90, &f, out), 1);
	ck_assert_int_eq(out[0].verdict.expected_error, 500);
	ck_assert_int_eq(judge_fixture("rdc_ptx100_exe", 90, &f, out), 1);
	ck_assert_str_eq(out[0].rule, "R2");
	/* the relocatable objects of an archive stay loaded modules (nothing linked) */
	ck_assert_int_eq(judge_fixture("libtwo.a", 90, &f, out), 1);
	ck_assert_uint_eq(count_fate(out, f.n, KIMG_FATE_NOT_JUDGED), 0);
}
END_TEST

static Suite *file_rules_suite(void)
{
	Suite *s = suite_create("file_rules");
	TCase *tc = tcase_create("rows");
	tcase_add_test(tc, arch_specific_module_is_dispatched);
	tcase_add_test(tc, split_arch_module_fails);
	tcase_add_test(tc, no_module_runs_fails);
	tcase_add_test(tc, library_rows_dispatch);
	tcase_add_test(tc, strict_excuses_nothing);
	tcase_add_test(tc, rdc_jit_link);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, fixtures_judged_as_on_the_gpu);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(file_rules_suite());
}
