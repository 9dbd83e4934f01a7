/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of probe/check_judge.c, check's per-file judge: what it
 * builds for the renderer and the totals (rows, stubs, tallies, counts,
 * placement rows) from a real file, and its wait for the GPUs behind the
 * gate. The oracle is how each fixture was built (tests/fixtures/
 * fixtures.mk: nvcc's -gencode lists) and the rules as docs/rules.md and
 * `check --help` state them (F0: a file of which nothing runs fails each
 * module; F1: arch-specific code next to code that runs is dispatched;
 * --strict excuses nothing; a CUDA 13 link stub is not judged), not the
 * judge's own output. */
#include "testutil.h"
#include "check_run.h"
#include "gate.h"

static struct probe_extras extras;

static void setup(void)
{
	setenv("KIMG_DPKG_DIR", "", 1); /* no dpkg owners: the fixtures belong to none */
	probe_extras_init(&extras);
}

static void teardown(void)
{
	probe_extras_free(&extras);
}

static struct probe_target targets[2];

static struct check_run run_on(unsigned sm0, unsigned sm1, int n)
{
	memset(targets, 0, sizeof targets);
	targets[0].dev = device(sm0, 0);
	targets[1].dev = device(sm1, 0);
	struct check_run r = { .targets = targets, .n_targets = n, .jobs = 1, .extras = &extras };
	r.label_width = check_label_width(targets, n);
	return r;
}

/* The index of the module of cf with an image of this arch ("sm_100a"),
 * or -1. */
static int module_with(const struct check_file *cf, const char *arch)
{
	for (size_t i = 0; i < cf->pf.n_mods; i++)
		for (size_t k = 0; k < cf->pf.mods[i].n_imgs; k++) {
			char a[32];
			kimg_image_arch_name(&cf->pf.mods[i].imgs[k], a, sizeof a);
			if (strcmp(a, arch) == 0)
				return (int)i;
		}
	return -1;
}

static const struct check_row *row(const struct check_file *cf, const struct check_run *r, int mod, int t)
{
	ck_assert_int_ge(mod, 0);
	return &cf->rows[(size_t)mod * (size_t)r->n_targets + (size_t)t];
}

/* libdispatch.so: a link stub (sm_75, CUDA 13), an sm_100a-only unit and
 * an sm_90 + compute_90 unit. On 9.0 the sm_90 cubin runs and the sm_100a
 * unit is dispatched for other GPUs (F1); on 8.0 nothing runs, so both
 * fail (F0); the stub is judged on neither. */
START_TEST(dispatch_library_on_two_gpus)
{
	struct kimg_span b = fixture_load("libdispatch.so");
	struct check_run r = run_on(80, 90, 2);
	struct check_file cf;
	ck_assert(check_judge_file(&r, "libdispatch.so", b, &cf));
	ck_assert(cf.judged);
	ck_assert_int_eq(cf.pf.n_mods, 3);
	int a100 = module_with(&cf, "sm_100a"), s90 = module_with(&cf, "sm_90"), s75 = module_with(&cf, "sm_75");
	ck_assert(s75 >= 0 && a100 >= 0 && s90 >= 0);
	ck_assert(cf.stub[s75] && !cf.stub[a100] && !cf.stub[s90]);
	ck_assert_int_eq(cf.shown, 3);
	ck_assert_int_eq(cf.shown_stubs, 1);
	/* 9.0 */
	ck_assert_int_eq(row(&cf, &r, s90, 1)->j.fate, KIMG_FATE_RUNS);
	ck_assert_int_eq(row(&cf, &r, s90, 1)->j.verdict.outcome, KIMG_OUTCOME_SASS);
	ck_assert_int_eq(row(&cf, &r, a100, 1)->j.fate, KIMG_FATE_DISPATCHED);
	ck_assert_str_eq(row(&cf, &r, a100, 1)->j.rule, "F1");
	ck_assert_int_eq(row(&cf, &r, s75, 1)->j.fate, KIMG_FATE_NOT_JUDGED);
	ck_assert_int_eq(cf.tally[1].runs, 1);
	ck_assert_int_eq(cf.tally[1].dispatched, 1);
	ck_assert_int_eq(cf.tally[1].fails, 0);
	ck_assert_str_eq(cf.tally[1].dispatched_archs, "sm_100a");
	/* 8.0: a failure carries its error and a fix */
	ck_assert_int_eq(row(&cf, &r, s90, 0)->j.fate, KIMG_FATE_FAILS);
	ck_assert_int_eq(row(&cf, &r, a100, 0)->j.fate, KIMG_FATE_FAILS);
	ck_assert_int_eq(row(&cf, &r, a100, 0)->j.verdict.expected_error, 209);
	ck_assert(row(&cf, &r, a100, 0)->fix != NULL);
	ck_assert(row(&cf, &r, s90, 1)->fix == NULL);
	ck_assert_int_eq(cf.tally[0].runs, 0);
	ck_assert_int_eq(cf.tally[0].fails, 2);
	/* the counts the totals add */
	ck_assert_int_eq(cf.cannot, 2);
	ck_assert_int_eq(cf.checks, 4);
	ck_assert_int_eq(cf.dispatched, 1);
	ck_assert_int_eq(cf.by_outcome[KIMG_OUTCOME_SASS], 1);
	ck_assert_int_eq(cf.problems, 0);
	ck_assert(!cf.is_lib);
	ck_assert(cf.place == NULL); /* no node groups among the targets */
	check_file_free(&cf, 2);
	fixture_free(b);
}
END_TEST

/* --strict: the sm_100a unit is not excused on 9.0. */
START_TEST(strict_excuses_nothing)
{
	struct kimg_span b = fixture_load("libdispatch.so");
	struct check_run r = run_on(90, 0, 1);
	r.strict = true;
	struct check_file cf;
	ck_assert(check_judge_file(&r, "libdispatch.so", b, &cf));
	int a100 = module_with(&cf, "sm_100a");
	ck_assert_int_eq(row(&cf, &r, a100, 0)->j.fate, KIMG_FATE_FAILS);
	ck_assert_int_eq(cf.tally[0].runs, 1);
	ck_assert_int_eq(cf.tally[0].fails, 1);
	ck_assert_int_eq(cf.dispatched, 0);
	ck_assert_int_eq(cf.cannot, 1);
	check_file_free(&cf, 1);
	fixture_free(b);
}
END_TEST

/* sm80_exe (-gencode arch=compute_80,code=sm_80, CUDA 13): its link stub
 * fails on 9.0 as judged before the stub test, which must find it and
 * judge again: one module cannot run, not two. */
START_TEST(stub_found_and_judged_again)
{
	struct kimg_span b = fixture_load("sm80_exe");
	struct check_run r = run_on(90, 0, 1);
	struct check_file cf;
	ck_assert(check_judge_file(&r, "sm80_exe", b, &cf));
	ck_assert_int_eq(cf.pf.n_mods, 2);
	ck_assert_int_eq(cf.shown_stubs, 1);
	ck_assert_int_eq(cf.cannot, 1);
	ck_assert_int_eq(cf.tally[0].fails, 1);
	ck_assert_int_eq(cf.checks, 1);
	for (size_t i = 0; i < 2; i++)
		ck_assert_int_eq(row(&cf, &r, (int)i, 0)->j.fate, cf.stub[i] ? KIMG_FATE_NOT_JUDGED : KIMG_FATE_FAILS);
	check_file_free(&cf, 1);
	fixture_free(b);
}
END_TEST

/* rdc_exe (-rdc=true, sm_80 + sm_90): its device-link inputs are judged
 * with the linked module, listed only with --all. */
START_TEST(link_inputs_listed_with_all)
{
	struct kimg_span b = fixture_load("rdc_exe");
	struct check_run r = run_on(90, 0, 1);
	struct check_file cf;
	ck_assert(check_judge_file(&r, "rdc_exe", b, &cf));
	ck_assert_int_gt(cf.pf.n_link_inputs, 0);
	ck_assert_int_eq(cf.shown, cf.pf.n_mods - cf.pf.n_link_inputs);
	ck_assert_int_eq(cf.cannot, 0);
	check_file_free(&cf, 1);
	r.all_modules = true;
	ck_assert(check_judge_file(&r, "rdc_exe", b, &cf));
	ck_assert_int_eq(cf.shown, cf.pf.n_mods);
	check_file_free(&cf, 1);
	fixture_free(b);
}
END_TEST

/* Node groups among the targets: per target, the failures and a fix. */
START_TEST(placement_rows_for_groups)
{
	static struct probe_group g80, g90;
	struct kimg_span b = fixture_load("libdispatch.so");
	struct check_run r = run_on(80, 90, 2);
	targets[0].group = &g80;
	targets[1].group = &g90;
	struct check_file cf;
	ck_assert(check_judge_file(&r, "libdispatch.so", b, &cf));
	ck_assert(cf.place != NULL);
	ck_assert_int_eq(cf.place[0].fails, 2);
	ck_assert(cf.place[0].fix[0] != '\0');
	ck_assert_int_eq(cf.place[1].fails, 0);
	check_file_free(&cf, 2);
	fixture_free(b);
}
END_TEST

/* Behind a gate called off (the GPUs could not be asked): nothing. */
START_TEST(called_off_judges_nothing)
{
	struct kimg_span b = fixture_load("sm80_exe");
	struct probe_gate g;
	probe_gate_init(&g, NULL, NULL);
	probe_gate_settle(&g, false);
	struct check_run r = { .gate = &g, .jobs = 1, .extras = &extras };
	struct check_file cf;
	ck_assert(!check_judge_file(&r, "sm80_exe", b, &cf));
	ck_assert_int_eq(cf.pf.n_mods, 0);
	ck_assert(cf.rows == NULL);
	ck_assert(r.targets == NULL);
	probe_gate_destroy(&g);
	fixture_free(b);
}
END_TEST

static void settle_when_asked(void *arg)
{
	struct check_run *r = arg;
	probe_gate_settle(r->gate, !probe_targets_async_failed(r->pending));
}

/* The GPUs asked on a thread of their own: the judge waits at the gate,
 * then takes them (a list of two, as --sm 8.0,9.0 parses). */
START_TEST(targets_taken_behind_the_gate)
{
	struct kimg_span b = fixture_load("sm80_exe");
	struct probe_gate g;
	char list[] = "8.0,9.0";
	char *lists[1] = { list };
	probe_gate_init(&g, NULL, NULL);
	struct check_run r = { .gate = &g, .jobs = 1, .extras = &extras };
	r.pending = probe_targets_async_start(lists, 1, 0);
	ck_assert(r.pending != NULL);
	probe_targets_async_on_done(r.pending, settle_when_asked, &r);
	struct check_file cf;
	ck_assert(check_judge_file(&r, "sm80_exe", b, &cf));
	ck_assert_int_eq(r.n_targets, 2);
	ck_assert_int_eq(r.targets[0].dev.cc.sm, 80);
	ck_assert_int_eq(cf.tally[0].runs, 1);
	ck_assert_int_eq(cf.tally[1].fails, 1);
	check_file_free(&cf, 2);
	struct probe_target *t;
	ck_assert_int_eq(probe_targets_async_end(r.pending, &t), 2);
	free(t);
	probe_gate_destroy(&g);
	fixture_free(b);
}
END_TEST

/* The --sm lists are read up to n_lists and no further: a list past them
 * (here one that is no GPU) is not the caller's. The oracle is the lists
 * as written: 8.0 and 9.0, in order, a repeat kept once. */
START_TEST(targets_from_the_lists_given)
{
	char *lists[] = { "8.0,9.0", "90", "not-a-gpu" };
	struct probe_target *t = NULL;
	ck_assert_int_eq(probe_parse_targets(lists, 2, 0, &t), 2);
	ck_assert_uint_eq(t[0].dev.cc.sm, 80);
	ck_assert_uint_eq(t[1].dev.cc.sm, 90);
	free(t);
	t = NULL;
	ck_assert_int_eq(probe_parse_targets(lists + 2, 1, 0, &t), -1);
	free(t);
}
END_TEST

static Suite *judge_suite(void)
{
	Suite *s = suite_create("check_judge");
	TCase *tc = tcase_create("judge");
	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, dispatch_library_on_two_gpus);
	tcase_add_test(tc, strict_excuses_nothing);
	tcase_add_test(tc, stub_found_and_judged_again);
	tcase_add_test(tc, link_inputs_listed_with_all);
	tcase_add_test(tc, placement_rows_for_groups);
	tcase_add_test(tc, called_off_judges_nothing);
	tcase_add_test(tc, targets_taken_behind_the_gate);
	tcase_add_test(tc, targets_from_the_lists_given);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(judge_suite());
}
