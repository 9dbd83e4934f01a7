/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of kimg_rules_check_module (core/rules.c): the driver's
 * selection among a module's images (docs/rules.md §1) and the
 * module-level reason and error. Split from test_rules.c for size. */
#include <string.h>

#include "testutil.h"
#include "rules.h"

#define A KIMG_VARIANT_A
#define F KIMG_VARIANT_F
#define PL KIMG_VARIANT_PLAIN
#define FITS KIMG_REASON_FITS
#define SASS_OK KIMG_OUTCOME_SASS
#define JIT_OK KIMG_OUTCOME_PTX_JIT
#define NO KIMG_OUTCOME_CANNOT_RUN

/* Shorthands over test_image (testutil.h: flags 0x11, as a CUDA 13 fatbin
 * entry, docs/format.md §12). */
static struct kimg_image sass(unsigned sm, enum kimg_arch_variant v) { return test_image(KIMG_IMAGE_SASS, sm, v, 0); }
static struct kimg_image ptx(unsigned sm, enum kimg_arch_variant v, unsigned isa) { return test_image(KIMG_IMAGE_PTX, sm, v, isa); }

/* ---- module selection (§1) ---- */

/* The CUDA 13 build of docs/format.md §12, in file order. */
static void fixture_like(struct kimg_image out[9])
{
	out[0] = sass(80, PL);
	out[1] = sass(90, PL);
	out[2] = ptx(90, PL, 900);
	out[3] = sass(90, A);
	out[4] = ptx(90, A, 900);
	out[5] = sass(100, A);
	out[6] = sass(100, F);
	out[7] = ptx(100, F, 900);
	out[8] = sass(120, PL);
}

struct module_case {
	unsigned dev_sm;
	int driver;
	enum kimg_outcome outcome;
	enum kimg_reason reason;
	int selected;
	int expected_error;
	const char *rule;
};

static const struct module_case fixture_cases[] = {
	{ 80, 13000, SASS_OK, FITS, 0, 0, "S1" },                   /* sm_80 exact */
	{ 86, 13000, SASS_OK, FITS, 0, 0, "S1" },                   /* sm_80 on 8.6 (S1) */
	{ 87, 13000, NO, KIMG_REASON_TEGRA_MISMATCH, -1, 209, "S2" }, /* Orin: nothing but desktop cubins, PTX too new */
	{ 89, 13000, SASS_OK, FITS, 0, 0, "S1" },                   /* sm_80 on 8.9 */
	{ 90, 13000, SASS_OK, FITS, 3, 0, "S3" },                   /* sm_90a preferred over sm_90 on a tie */
	{ 100, 13000, SASS_OK, FITS, 5, 0, "S3" },                  /* sm_100a over sm_100f */
	{ 103, 13000, SASS_OK, FITS, 6, 0, "S4" },                  /* sm_100f covers 10.3; sm_100a does not */
	{ 110, 13000, JIT_OK, FITS, 2, 0, "P1" },                   /* Thor: only compute_90 PTX runs */
	{ 110, 12080, NO, KIMG_REASON_PTX_ISA_TOO_NEW, -1, 222, "P4" }, /* same on an old driver: 222 */
	{ 120, 13000, SASS_OK, FITS, 8, 0, "S1" },                  /* sm_120 */
	{ 121, 13000, SASS_OK, FITS, 8, 0, "S1" },                  /* sm_120 on GB10 12.1 */
	{ 75, 13000, NO, KIMG_REASON_PTX_NEWER_THAN_DEVICE, -1, 209, "P3" }, /* nothing below 8.0 */
};

START_TEST(fixture_like_module)
{
	const struct module_case *c = &fixture_cases[_i];
	struct kimg_image imgs[9];
	struct kimg_image_verdict per[9];
	struct kimg_module_verdict v;
	fixture_like(imgs);
	struct kimg_device d = device(c->dev_sm, c->driver);
	kimg_rules_check_module(imgs, 9, &d, per, &v);
	ck_assert_msg(v.outcome == c->outcome && v.reason == c->reason && v.selected == c->selected &&
			      v.expected_error == c->expected_error && strcmp(v.rule, c->rule) == 0,
		      "CC %u drv %d: %s %s sel %d err %d rule %s", c->dev_sm, c->driver, kimg_outcome_id(v.outcome),
		      kimg_reason_id(v.reason), v.selected, v.expected_error, v.rule);
	/* The selected image fits; every other usable one is SHADOWED (§1: one image is used). */
	for (int i = 0; i < 9; i++) {
		if (i == v.selected)
			ck_assert_int_eq(per[i].reason, FITS);
		else
			ck_assert_int_ne(per[i].reason, FITS);
	}
}
END_TEST

/* Per-image verdicts of the §12 list on 9.0 and 10.0, including SHADOWED. */
START_TEST(fixture_like_per_image)
{
	static const enum kimg_reason on90[9] = {
		KIMG_REASON_DIFFERENT_MAJOR, KIMG_REASON_SHADOWED, KIMG_REASON_SHADOWED, FITS, KIMG_REASON_SHADOWED,
		KIMG_REASON_ARCH_SPECIFIC, KIMG_REASON_FAMILY, KIMG_REASON_FAMILY,
		KIMG_REASON_DIFFERENT_MAJOR,
	};
	static const enum kimg_reason on100[9] = {
		KIMG_REASON_DIFFERENT_MAJOR, KIMG_REASON_DIFFERENT_MAJOR, KIMG_REASON_SHADOWED,
		KIMG_REASON_ARCH_SPECIFIC, KIMG_REASON_ARCH_SPECIFIC, FITS, KIMG_REASON_SHADOWED,
		KIMG_REASON_SHADOWED, KIMG_REASON_DIFFERENT_MAJOR,
	};
	struct kimg_image imgs[9];
	struct kimg_image_verdict per[9];
	struct kimg_module_verdict v;
	fixture_like(imgs);
	struct kimg_device d = device(90, 13000);
	kimg_rules_check_module(imgs, 9, &d, per, &v);
	for (int i = 0; i < 9; i++)
		ck_assert_msg(per[i].reason == on90[i], "9.0 image %d: %s", i, kimg_reason_id(per[i].reason));
	ck_assert_str_eq(per[1].rule, "D1"); /* shadowed by a cubin: §1 step 1 */
	ck_assert_str_eq(per[2].rule, "D1");
	ck_assert_int_eq(per[2].outcome, JIT_OK); /* SHADOWED keeps what it could have done */
	d = device(100, 13000);
	kimg_rules_check_module(imgs, 9, &d, per, &v);
	for (int i = 0; i < 9; i++)
		ck_assert_msg(per[i].reason == on100[i], "10.0 image %d: %s", i, kimg_reason_id(per[i].reason));
	ck_assert_str_eq(per[3].rule, "S3");
	ck_assert_str_eq(per[4].rule, "P2");
}
END_TEST

static struct kimg_module_verdict check(const struct kimg_image *imgs, size_t n, struct kimg_device d,
					struct kimg_image_verdict *per)
{
	struct kimg_module_verdict v;
	memset(&v, 0xa5, sizeof v); /* every field must be written */
	kimg_rules_check_module(imgs, n, &d, per, &v);
	return v;
}

/* Selection order documented in rules.c: cubin over PTX, nearest SM, a > f > plain, file order. */
START_TEST(selection_order)
{
	struct kimg_image_verdict per[3];
	struct kimg_image two_minor[] = { sass(80, PL), sass(86, PL) };
	ck_assert_int_eq(check(two_minor, 2, device(89, 13000), NULL).selected, 1); /* nearest: sm_86 on 8.9 */
	struct kimg_image rev[] = { sass(86, PL), sass(80, PL) };
	ck_assert_int_eq(check(rev, 2, device(89, 13000), NULL).selected, 0);
	struct kimg_image same[] = { sass(80, PL), sass(80, PL) };
	ck_assert_int_eq(check(same, 2, device(80, 13000), NULL).selected, 0); /* file order */
	struct kimg_image near_vs_f[] = { sass(100, F), sass(103, PL) };
	ck_assert_int_eq(check(near_vs_f, 2, device(103, 13000), NULL).selected, 1); /* nearer beats f */
	struct kimg_image f_vs_plain[] = { sass(100, PL), sass(100, F) };
	ck_assert_int_eq(check(f_vs_plain, 2, device(100, 13000), NULL).selected, 1); /* f over plain */
	struct kimg_image ptxs[] = { ptx(80, PL, 900), ptx(86, PL, 900), ptx(75, PL, 900) };
	struct kimg_module_verdict v = check(ptxs, 3, device(90, 13000), per);
	ck_assert_int_eq(v.selected, 1); /* highest usable PTX target */
	ck_assert_int_eq(v.outcome, JIT_OK);
	ck_assert_int_eq(per[0].reason, KIMG_REASON_SHADOWED);
	ck_assert_str_eq(per[0].rule, "D2"); /* shadowed by a PTX: §1 step 2 */
	/* §1 step 1 / P6: a compatible cubin wins over nearer PTX */
	struct kimg_image cubin_first[] = { ptx(90, PL, 900), sass(80, PL) };
	v = check(cubin_first, 2, device(89, 13000), per);
	ck_assert_int_eq(v.selected, 1);
	ck_assert_int_eq(v.outcome, SASS_OK);
	struct kimg_image cubin_vs_ptx[] = { ptx(90, PL, 900), sass(80, PL) };
	v = check(cubin_vs_ptx, 2, device(90, 13000), per);
	ck_assert_int_eq(v.selected, 0); /* sm_80 cannot run on 9.0: the PTX is used */
	ck_assert_int_eq(v.outcome, JIT_OK);
	/* Thor renumbering: an sm_101 cubin is judged as sm_110 */
	struct kimg_image thor[] = { sass(101, PL) };
	v = check(thor, 1, device(110, 13000), NULL);
	ck_assert_int_eq(v.selected, 0);
	ck_assert_str_eq(v.rule, "S1");
}
END_TEST

/* Module reason priority: 223 > 222 > 209 (§1 steps 3a, 3b, 4). */
START_TEST(module_reason_priority)
{
	struct kimg_image mixed[] = { sass(90, PL), ptx(80, PL, 900) };
	struct kimg_device d = device(86, 12080);
	struct kimg_module_verdict v = check(mixed, 2, d, NULL);
	ck_assert_int_eq(v.reason, KIMG_REASON_PTX_ISA_TOO_NEW);
	ck_assert_int_eq(v.expected_error, 222);
	ck_assert_str_eq(v.rule, "P4");
	d.disable_ptx_jit = true;
	v = check(mixed, 2, d, NULL);
	ck_assert_int_eq(v.reason, KIMG_REASON_JIT_DISABLED);
	ck_assert_int_eq(v.expected_error, 223);
	ck_assert_str_eq(v.rule, "P6");
	/* a usable cubin makes both switches irrelevant */
	struct kimg_image with_sass[] = { ptx(80, PL, 900), sass(80, PL) };
	v = check(with_sass, 2, d, NULL);
	ck_assert_int_eq(v.expected_error, 0);
	ck_assert_int_eq(v.selected, 1);
	/* S2 beats S1 for an Orin with sm_80 and sm_90 cubins */
	struct kimg_image orin[] = { sass(90, PL), sass(80, PL) };
	v = check(orin, 2, device(87, 13000), NULL);
	ck_assert_int_eq(v.reason, KIMG_REASON_TEGRA_MISMATCH);
	ck_assert_str_eq(v.rule, "S2");
	/* a module of only a code for another CC says so (S3) */
	struct kimg_image only_a[] = { sass(90, A) };
	v = check(only_a, 1, device(100, 13000), NULL);
	ck_assert_int_eq(v.reason, KIMG_REASON_ARCH_SPECIFIC);
	ck_assert_int_eq(v.expected_error, 209);
	ck_assert_str_eq(v.rule, "S3");
	/* plain code of another major explains better than a code */
	struct kimg_image a_and_plain[] = { sass(90, A), sass(80, PL) };
	v = check(a_and_plain, 2, device(100, 13000), NULL);
	ck_assert_int_eq(v.reason, KIMG_REASON_DIFFERENT_MAJOR);
	/* minor too high beats another major (nearly ran) */
	struct kimg_image minor[] = { sass(70, PL), sass(86, PL) };
	v = check(minor, 2, device(80, 13000), NULL);
	ck_assert_int_eq(v.reason, KIMG_REASON_MINOR_TOO_HIGH);
}
END_TEST

/* P6: force JIT with no PTX -> 209 naming the switch; with PTX, the PTX runs. */
START_TEST(force_jit)
{
	struct kimg_device d = device(90, 13000);
	d.force_ptx_jit = true;
	struct kimg_image only_sass[] = { sass(80, PL), sass(90, PL) };
	struct kimg_module_verdict v = check(only_sass, 2, d, NULL);
	ck_assert_int_eq(v.outcome, NO);
	ck_assert_int_eq(v.reason, KIMG_REASON_SASS_IGNORED);
	ck_assert_int_eq(v.expected_error, 209);
	ck_assert_str_eq(v.rule, "P6");
	struct kimg_image both[] = { sass(90, PL), ptx(90, PL, 900) };
	v = check(both, 2, d, NULL);
	ck_assert_int_eq(v.outcome, JIT_OK);
	ck_assert_int_eq(v.selected, 1);
}
END_TEST

/* Edge modules: empty (§1 step 4), LTO-IR only, raw PTX newer than the device (218, §5 [V]). */
START_TEST(edge_modules)
{
	struct kimg_module_verdict v = check(NULL, 0, device(90, 13000), NULL);
	ck_assert_int_eq(v.outcome, NO);
	ck_assert_int_eq(v.reason, KIMG_REASON_NO_IMAGE);
	ck_assert_int_eq(v.selected, -1);
	ck_assert_int_eq(v.expected_error, 209);
	ck_assert_str_eq(v.rule, "D4");
	struct kimg_image lto[] = { test_image(KIMG_IMAGE_LTOIR, 90, PL, 0) };
	v = check(lto, 1, device(90, 13000), NULL);
	ck_assert_int_eq(v.reason, KIMG_REASON_NOT_LOADABLE);
	ck_assert_int_eq(v.expected_error, 209);
	struct kimg_image raw = ptx(100, PL, 900);
	raw.flags = 0; /* a raw .ptx input, not a fatbin entry */
	v = check(&raw, 1, device(90, 13000), NULL);
	ck_assert_int_eq(v.reason, KIMG_REASON_PTX_NEWER_THAN_DEVICE);
	ck_assert_int_eq(v.expected_error, 218);
	struct kimg_image entry = ptx(100, PL, 900);
	v = check(&entry, 1, device(90, 13000), NULL);
	ck_assert_int_eq(v.expected_error, 209);
}
END_TEST

static Suite *module_suite(void)
{
	Suite *s = suite_create("rules_module");
	TCase *tc = tcase_create("module");
	tcase_add_loop_test(tc, fixture_like_module, 0, (int)(sizeof fixture_cases / sizeof fixture_cases[0]));
	tcase_add_test(tc, fixture_like_per_image);
	tcase_add_test(tc, selection_order);
	tcase_add_test(tc, module_reason_priority);
	tcase_add_test(tc, force_jit);
	tcase_add_test(tc, edge_modules);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(module_suite());
}

