/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/rules.c and core/rules_tables.c. Every case names
 * the rule of docs/rules.md it pins; [V] marks results
 * measured on an H200 with CUDA 13.0 (that document). */
#include <string.h>

#include "testutil.h"
#include "rules.h"
#include "rules_tables.h"

#define A KIMG_VARIANT_A
#define F KIMG_VARIANT_F
#define PL KIMG_VARIANT_PLAIN
#define FITS KIMG_REASON_FITS
#define SASS_OK KIMG_OUTCOME_SASS
#define JIT_OK KIMG_OUTCOME_PTX_JIT
#define NO KIMG_OUTCOME_CANNOT_RUN

/* Images as a fatbin would describe them (flags 0x11: an entry from a
 * CUDA 13 build, docs/format.md §12), as constant initializers. */
#define ANY_IMG(k, sm, v, isa) { .kind = (k), .arch = { (sm), (v) }, .ptx_isa = (isa), .flags = 0x11 }
#define SASS_IMG(sm, v) ANY_IMG(KIMG_IMAGE_SASS, sm, v, 0)
#define PTX_IMG(sm, v, isa) ANY_IMG(KIMG_IMAGE_PTX, sm, v, isa)

enum { JIT_FORCE = 1, JIT_DISABLE = 2, INTEGRATED = 4 };

struct image_case {
	const char *what;
	struct kimg_image image;
	unsigned dev_sm;
	int driver;
	int sw;
	enum kimg_outcome outcome;
	enum kimg_reason reason;
	const char *rule;
};

#define CASE(what, im, dev, drv, sw, out, why, rule) { what, im, dev, drv, sw, out, KIMG_REASON_##why, rule }
static const struct image_case image_cases[] = {
	/* L1: LTO-IR and unknown entries are never loaded (docs/format.md §5) */
	CASE("lto_90 on 9.0", ANY_IMG(KIMG_IMAGE_LTOIR, 90, PL, 0), 90, 13000, 0, NO, NOT_LOADABLE, "L1"),
	CASE("unknown kind on 9.0", ANY_IMG(KIMG_IMAGE_UNKNOWN, 90, PL, 0), 90, 13000, 0, NO, NOT_LOADABLE, "L1"),
	/* S3: a code runs on exactly its CC (§2 S3) [V for another major] */
	CASE("sm_90a on 10.0", SASS_IMG(90, A), 100, 13000, 0, NO, ARCH_SPECIFIC, "S3"),
	CASE("sm_100a on 10.3 (same major)", SASS_IMG(100, A), 103, 13000, 0, NO, ARCH_SPECIFIC, "S3"),
	CASE("sm_120a on 12.1", SASS_IMG(120, A), 121, 13000, 0, NO, ARCH_SPECIFIC, "S3"),
	CASE("sm_90a on 9.0", SASS_IMG(90, A), 90, 13000, 0, SASS_OK, FITS, "S3"),
	CASE("sm_110a on 11.0", SASS_IMG(110, A), 110, 13000, 0, SASS_OK, FITS, "S3"),
	/* S3 + §2.2 Thor renumbering: sm_101a became sm_110a */
	CASE("sm_101a on 11.0", SASS_IMG(101, A), 110, 13000, 0, SASS_OK, FITS, "S3"),
	CASE("sm_101a on 10.1", SASS_IMG(101, A), 101, 12090, 0, SASS_OK, FITS, "S3"),
	/* S4: f code runs on its family, forward only (§2 S4, §2.2 table) */
	CASE("sm_100f on 10.0", SASS_IMG(100, F), 100, 13000, 0, SASS_OK, FITS, "S4"),
	CASE("sm_100f on 10.3", SASS_IMG(100, F), 103, 13000, 0, SASS_OK, FITS, "S4"),
	CASE("sm_100f on 11.0", SASS_IMG(100, F), 110, 13000, 0, NO, FAMILY, "S4"),
	CASE("sm_100f on 12.0", SASS_IMG(100, F), 120, 13000, 0, NO, FAMILY, "S4"),
	CASE("sm_103f on 10.3", SASS_IMG(103, F), 103, 13000, 0, SASS_OK, FITS, "S4"),
	CASE("sm_103f on 10.0 (not backward)", SASS_IMG(103, F), 100, 13000, 0, NO, FAMILY, "S4"),
	CASE("sm_110f on 11.0", SASS_IMG(110, F), 110, 13000, 0, SASS_OK, FITS, "S4"),
	CASE("sm_101f on 11.0 (= 110f)", SASS_IMG(101, F), 110, 13000, 0, SASS_OK, FITS, "S4"),
	CASE("sm_101f on 10.1", SASS_IMG(101, F), 101, 12090, 0, SASS_OK, FITS, "S4"),
	CASE("sm_120f on 12.0", SASS_IMG(120, F), 120, 13000, 0, SASS_OK, FITS, "S4"),
	CASE("sm_120f on 12.1", SASS_IMG(120, F), 121, 13000, 0, SASS_OK, FITS, "S4"),
	CASE("sm_121f on 12.1", SASS_IMG(121, F), 121, 13000, 0, SASS_OK, FITS, "S4"),
	CASE("sm_121f on 12.0 (not backward)", SASS_IMG(121, F), 120, 13000, 0, NO, FAMILY, "S4"),
	CASE("sm_90f (no such family) on 9.0", SASS_IMG(90, F), 90, 13000, 0, NO, FAMILY, "S4"),
	/* S1: same major, device minor >= cubin minor (§2 S1) [V sm_80/86/89 on 9.0 -> 209] */
	CASE("sm_80 on 9.0", SASS_IMG(80, PL), 90, 13000, 0, NO, DIFFERENT_MAJOR, "S1"),
	CASE("sm_86 on 9.0", SASS_IMG(86, PL), 90, 13000, 0, NO, DIFFERENT_MAJOR, "S1"),
	CASE("sm_89 on 9.0", SASS_IMG(89, PL), 90, 13000, 0, NO, DIFFERENT_MAJOR, "S1"),
	CASE("sm_90 on 8.9", SASS_IMG(90, PL), 89, 13000, 0, NO, DIFFERENT_MAJOR, "S1"),
	CASE("sm_100 on 11.0", SASS_IMG(100, PL), 110, 13000, 0, NO, DIFFERENT_MAJOR, "S1"),
	CASE("sm_86 on 8.0", SASS_IMG(86, PL), 80, 13000, 0, NO, MINOR_TOO_HIGH, "S1"),
	CASE("sm_103 on 10.0", SASS_IMG(103, PL), 100, 13000, 0, NO, MINOR_TOO_HIGH, "S1"),
	CASE("sm_121 on 12.0", SASS_IMG(121, PL), 120, 13000, 0, NO, MINOR_TOO_HIGH, "S1"),
	CASE("sm_80 on 8.6", SASS_IMG(80, PL), 86, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_80 on 8.9", SASS_IMG(80, PL), 89, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_100 on 10.3", SASS_IMG(100, PL), 103, 13000, 0, SASS_OK, FITS, "S1"),
	/* §2.1 Tegra table, row by row (S1 + S2) */
	CASE("sm_50 on 5.2", SASS_IMG(50, PL), 52, 12090, 0, SASS_OK, FITS, "S1"),
	CASE("sm_50 on 5.3", SASS_IMG(50, PL), 53, 12090, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_52 on 5.3", SASS_IMG(52, PL), 53, 12090, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_53 on 5.3", SASS_IMG(53, PL), 53, 12090, 0, SASS_OK, FITS, "S1"),
	CASE("sm_53 on 5.2", SASS_IMG(53, PL), 52, 12090, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_60 on 6.1", SASS_IMG(60, PL), 61, 12090, 0, SASS_OK, FITS, "S1"),
	CASE("sm_60 on 6.2", SASS_IMG(60, PL), 62, 12090, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_61 on 6.2", SASS_IMG(61, PL), 62, 12090, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_62 on 6.2", SASS_IMG(62, PL), 62, 12090, 0, SASS_OK, FITS, "S1"),
	CASE("sm_70 on 7.5", SASS_IMG(70, PL), 75, 12090, 0, SASS_OK, FITS, "S1"),
	CASE("sm_70 on 7.2", SASS_IMG(70, PL), 72, 12090, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_72 on 7.2", SASS_IMG(72, PL), 72, 12090, 0, SASS_OK, FITS, "S1"),
	CASE("sm_72 on 7.5", SASS_IMG(72, PL), 75, 12090, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_75 on 7.5", SASS_IMG(75, PL), 75, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_80 on 8.7 (Orin) [3P JAX-40492]", SASS_IMG(80, PL), 87, 13000, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_86 on 8.7 [3P VLLM-19328]", SASS_IMG(86, PL), 87, 13000, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_87 on 8.7", SASS_IMG(87, PL), 87, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_87 on 8.9", SASS_IMG(87, PL), 89, 13000, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_100 on 10.1 (old Thor)", SASS_IMG(100, PL), 101, 12090, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_101 on 10.1", SASS_IMG(101, PL), 101, 12090, 0, SASS_OK, FITS, "S1"),
	CASE("sm_101 on 11.0 (renumbered)", SASS_IMG(101, PL), 110, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_101 on 10.3", SASS_IMG(101, PL), 103, 13000, 0, NO, TEGRA_MISMATCH, "S2"),
	CASE("sm_89 on 8.9", SASS_IMG(89, PL), 89, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_90 on 9.0", SASS_IMG(90, PL), 90, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_103 on 10.3", SASS_IMG(103, PL), 103, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_110 on 11.0", SASS_IMG(110, PL), 110, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_120 on 12.0", SASS_IMG(120, PL), 120, 13000, 0, SASS_OK, FITS, "S1"),
	CASE("sm_121 on 12.1", SASS_IMG(121, PL), 121, 13000, 0, SASS_OK, FITS, "S1"),
	/* GB10 is integrated but not Tegra: sm_120 runs on 12.1 [§2.1 src TORCH-CUDA] */
	CASE("sm_120 on 12.1 GB10 (integrated)", SASS_IMG(120, PL), 121, 13000, INTEGRATED, SASS_OK, FITS, "S1"),
	/* P6: CUDA_FORCE_PTX_JIT ignores cubins that would run [V]; a cubin
	 * that would not run anyway keeps its own reason */
	CASE("sm_90 on 9.0, force JIT", SASS_IMG(90, PL), 90, 13000, JIT_FORCE, NO, SASS_IGNORED, "P6"),
	CASE("sm_80 on 9.0, force JIT", SASS_IMG(80, PL), 90, 13000, JIT_FORCE, NO, DIFFERENT_MAJOR, "S1"),
	CASE("compute_90 on 9.0, force JIT", PTX_IMG(90, PL, 900), 90, 13000, JIT_FORCE, JIT_OK, FITS, "P1"),
	/* P2: compute_XYa on X.Y only, compute_XYf on its family (§3 P2) */
	CASE("compute_90a on 10.0", PTX_IMG(90, A, 900), 100, 13000, 0, NO, ARCH_SPECIFIC, "P2"),
	CASE("compute_90a on 9.0", PTX_IMG(90, A, 900), 90, 13000, 0, JIT_OK, FITS, "P2"),
	CASE("compute_100f on 10.3", PTX_IMG(100, F, 900), 103, 13000, 0, JIT_OK, FITS, "P2"),
	CASE("compute_100f on 12.0", PTX_IMG(100, F, 900), 120, 13000, 0, NO, FAMILY, "P2"),
	CASE("compute_120f on 12.1", PTX_IMG(120, F, 900), 121, 13000, 0, JIT_OK, FITS, "P2"),
	/* P3: PTX newer than the device [V compute_100/120 on 9.0] */
	CASE("compute_100 on 9.0", PTX_IMG(100, PL, 900), 90, 13000, 0, NO, PTX_NEWER_THAN_DEVICE, "P3"),
	CASE("compute_120 on 9.0", PTX_IMG(120, PL, 900), 90, 13000, 0, NO, PTX_NEWER_THAN_DEVICE, "P3"),
	CASE("compute_90 on 8.7", PTX_IMG(90, PL, 900), 87, 13000, 0, NO, PTX_NEWER_THAN_DEVICE, "P3"),
	CASE("compute_100 on 9.0, JIT disabled (target first)", PTX_IMG(100, PL, 900), 90, 13000, JIT_DISABLE, NO,
	     PTX_NEWER_THAN_DEVICE, "P3"),
	/* P1: any CC >= target, any major, Tegra included */
	CASE("compute_80 on 8.7 (Orin) [3P JAX-40492]", PTX_IMG(80, PL, 900), 87, 13000, 0, JIT_OK, FITS, "P1"),
	CASE("compute_80 on 9.0 [V]", PTX_IMG(80, PL, 900), 90, 13000, 0, JIT_OK, FITS, "P1"),
	CASE("compute_90 on 12.0", PTX_IMG(90, PL, 900), 120, 13000, 0, JIT_OK, FITS, "P1"),
	CASE("compute_50 on 5.3", PTX_IMG(50, PL, 805), 53, 12090, 0, JIT_OK, FITS, "P1"),
	/* P6 / §1 step 3a: CUDA_DISABLE_PTX_JIT -> 223 [V], before the ISA (3b) */
	CASE("compute_80 on 9.0, JIT disabled", PTX_IMG(80, PL, 900), 90, 13000, JIT_DISABLE, NO, JIT_DISABLED, "P6"),
	CASE("ISA 9.0 on 12.8 driver, JIT disabled", PTX_IMG(80, PL, 900), 90, 12080, JIT_DISABLE, NO, JIT_DISABLED, "P6"),
	/* P4/P5 / §1 step 3b: ISA above the driver's -> 222 [V 9.1 and 9.9 on 13.0] */
	CASE("ISA 9.0 on 12.8 driver", PTX_IMG(80, PL, 900), 90, 12080, 0, NO, PTX_ISA_TOO_NEW, "P4"),
	CASE("ISA 9.0 on 13.0 driver", PTX_IMG(80, PL, 900), 90, 13000, 0, JIT_OK, FITS, "P1"),
	CASE("ISA 9.1 on 13.0 driver", PTX_IMG(80, PL, 901), 90, 13000, 0, NO, PTX_ISA_TOO_NEW, "P4"),
	CASE("ISA 9.9 on 13.0 driver", PTX_IMG(80, PL, 909), 90, 13000, 0, NO, PTX_ISA_TOO_NEW, "P4"),
	CASE("ISA 7.0 on 13.0 driver", PTX_IMG(80, PL, 700), 90, 13000, 0, JIT_OK, FITS, "P1"),
	CASE("ISA 8.7 (CUDA 12.8) on R550 (12.4) [P5]", PTX_IMG(80, PL, 807), 90, 12040, 0, NO, PTX_ISA_TOO_NEW, "P4"),
	CASE("ISA 9.1 on an a target, 13.0 driver", PTX_IMG(90, A, 901), 90, 13000, 0, NO, PTX_ISA_TOO_NEW, "P4"),
	CASE("unknown driver: no ISA limit", PTX_IMG(80, PL, 909), 90, 0, 0, JIT_OK, FITS, "P1"),
	CASE("driver newer than the table: no guess", PTX_IMG(80, PL, 903), 90, 13050, 0, JIT_OK, FITS, "P1"),
	CASE("ISA 9.2 on 13.2 driver", PTX_IMG(80, PL, 902), 90, 13020, 0, JIT_OK, FITS, "P1"),
};

static struct kimg_device case_device(const struct image_case *c)
{
	struct kimg_device d = device(c->dev_sm, c->driver);
	d.force_ptx_jit = c->sw & JIT_FORCE;
	d.disable_ptx_jit = c->sw & JIT_DISABLE;
	if (c->sw & INTEGRATED)
		d.tegra = true;
	return d;
}

START_TEST(image_cases_decide_as_documented)
{
	const struct image_case *c = &image_cases[_i];
	struct kimg_device d = case_device(c);
	struct kimg_image_verdict v;
	kimg_rules_check_image(&c->image, &d, &v);
	ck_assert_msg(v.outcome == c->outcome, "%s: outcome %s", c->what, kimg_outcome_id(v.outcome));
	ck_assert_msg(v.reason == c->reason, "%s: reason %s, want %s", c->what, kimg_reason_id(v.reason),
		      kimg_reason_id(c->reason));
	ck_assert_msg(strcmp(v.rule, c->rule) == 0, "%s: rule %s, want %s", c->what, v.rule, c->rule);
}
END_TEST

/* docs/design.md §6/§10: every row of the decision table is reachable. */
START_TEST(every_decision_row_is_covered)
{
	size_t rows = kimg_rule_row_count();
	bool hit[64] = { false };
	ck_assert_uint_le(rows, 64);
	for (size_t i = 0; i < sizeof image_cases / sizeof image_cases[0]; i++) {
		struct kimg_device d = case_device(&image_cases[i]);
		size_t r = kimg_rules_decide(&image_cases[i].image, &d);
		ck_assert_uint_lt(r, rows);
		hit[r] = true;
	}
	for (size_t r = 0; r < rows; r++)
		ck_assert_msg(hit[r], "decision row %zu (%s) not covered", r, kimg_rule_row_at(r)->key);
	ck_assert_ptr_null(kimg_rule_row_at(rows));
}
END_TEST

/* §2.1: the Tegra compute capabilities */
START_TEST(tegra_list)
{
	static const unsigned tegra[] = { 53, 62, 72, 87, 101, 110 };
	static const unsigned desktop[] = { 50, 52, 60, 61, 70, 75, 80, 86, 88, 89, 90, 100, 103, 120, 121 };
	for (size_t i = 0; i < sizeof tegra / sizeof tegra[0]; i++)
		ck_assert_msg(kimg_sm_is_tegra(tegra[i]), "%u", tegra[i]);
	for (size_t i = 0; i < sizeof desktop / sizeof desktop[0]; i++)
		ck_assert_msg(!kimg_sm_is_tegra(desktop[i]), "%u", desktop[i]);
}
END_TEST

/* §4: PTX ISA <-> CUDA <-> driver */
START_TEST(isa_table)
{
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(13000), 900);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(12080), 807);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(12090), 808);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(12070), 806); /* R565 */
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(12060), 805);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(12050), 805);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(11080), 708);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(9000), 600);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(13020), 902);
	/* issue 12 item 13: beyond the table the limit is unknown (docs/json-probe.md:
	 * null), not the newest row's; CUDA 7.0-8.0 drivers have theirs
	 * (PTX ISA 4.2, 4.3, 5.0), older ones none known. */
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(13030), 0);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(14000), 0);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(8000), 500);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(7050), 403);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(7000), 402);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(6050), 0);
	ck_assert_int_eq(kimg_ptx_isa_table_oldest_cuda(), 7000);
	ck_assert_int_eq(kimg_ptx_isa_table_newest_cuda(), 13020);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(0), 0);
	ck_assert_int_eq(kimg_ptx_isa_cuda_version(900), 13000);
	ck_assert_int_eq(kimg_ptx_isa_cuda_version(807), 12080);
	ck_assert_int_eq(kimg_ptx_isa_cuda_version(805), 12050); /* introduced by 12.5, also 12.6 */
	ck_assert_int_eq(kimg_ptx_isa_cuda_version(600), 9000);
	ck_assert_int_eq(kimg_ptx_isa_cuda_version(999), 0);
	ck_assert_str_eq(kimg_cuda_min_driver(13000), "580.65.06");
	ck_assert_str_eq(kimg_cuda_min_driver(12080), "570.26");
	ck_assert_str_eq(kimg_cuda_min_driver(12090), "575.51.03");
	ck_assert_str_eq(kimg_cuda_min_driver(12060), "560.28.03");
	ck_assert_str_eq(kimg_cuda_min_driver(11000), "450.51.05");
	ck_assert_str_eq(kimg_cuda_min_driver(13020), "595.45.04");
	ck_assert_ptr_null(kimg_cuda_min_driver(12070)); /* no public 12.7 toolkit */
	ck_assert_str_eq(kimg_cuda_min_driver(8000), "367.48"); /* CUDA 8.0 GA1 */
	ck_assert_ptr_null(kimg_cuda_min_driver(6050));
}
END_TEST

START_TEST(reason_and_outcome_names)
{
	for (int r = 0; r < KIMG_REASON_COUNT; r++) {
		ck_assert_ptr_nonnull(kimg_reason_id(r));
		ck_assert_ptr_nonnull(kimg_reason_text(r));
		for (int s = 0; s < r; s++)
			ck_assert_str_ne(kimg_reason_id(r), kimg_reason_id(s));
	}
	ck_assert_str_eq(kimg_reason_id(KIMG_REASON_DIFFERENT_MAJOR), "different_major");
	ck_assert_str_eq(kimg_reason_id(KIMG_REASON_PTX_ISA_TOO_NEW), "ptx_isa_too_new");
	ck_assert_str_eq(kimg_reason_text(KIMG_REASON_DIFFERENT_MAJOR), "cubin for another major version");
	ck_assert_str_eq(kimg_reason_id(KIMG_REASON_COUNT), "unknown");
	ck_assert_str_eq(kimg_outcome_id(KIMG_OUTCOME_SASS), "sass");
	ck_assert_str_eq(kimg_outcome_id(KIMG_OUTCOME_PTX_JIT), "ptx_jit");
	ck_assert_str_eq(kimg_outcome_id(KIMG_OUTCOME_CANNOT_RUN), "cannot_run");
	ck_assert_str_eq(kimg_outcome_id(KIMG_OUTCOME_COUNT), "unknown");
}
END_TEST

/* §7: toolkit targets (no sm_86a; 101 only in 12.8-12.9; CC < 7.5 end at 12.9) */
START_TEST(toolkit_targets)
{
	ck_assert_ptr_null(kimg_toolkit_target_find(86, KIMG_VARIANT_A));
	ck_assert_ptr_null(kimg_toolkit_target_find(89, KIMG_VARIANT_A));
	ck_assert_int_eq(kimg_toolkit_target_find(90, KIMG_VARIANT_A)->first_toolkit, 12000);
	ck_assert_int_eq(kimg_toolkit_target_find(100, KIMG_VARIANT_F)->first_toolkit, 12090);
	ck_assert_int_eq(kimg_toolkit_target_find(101, KIMG_VARIANT_PLAIN)->last_toolkit, 12090);
	ck_assert_int_eq(kimg_toolkit_target_find(61, KIMG_VARIANT_PLAIN)->last_toolkit, 12090);
	ck_assert_int_eq(kimg_toolkit_target_find(75, KIMG_VARIANT_PLAIN)->last_toolkit, 0);
	ck_assert_int_eq(kimg_toolkit_target_find(110, KIMG_VARIANT_PLAIN)->first_toolkit, 13000);
	ck_assert_int_eq(kimg_toolkit_target_find(89, KIMG_VARIANT_PLAIN)->first_toolkit, 11080);
}
END_TEST


/* Every row of the PTX ISA <-> CUDA <-> driver table, pinned: typed from
 * docs/rules.md §4 (ISA 6.0 / CUDA 9.0
 * onwards), not read from rules_tables.c. The three rows before it (CUDA
 * 7.0-8.0) are not in the reference: they are copied from rules_tables.c's
 * own sourced rows and pin them against change only. Each row is checked three ways: the driver of that
 * CUDA version accepts that ISA, the ISA was introduced by that CUDA
 * version, and the version's minimum Linux driver. */
static const struct {
	unsigned isa;
	int cuda;
	const char *driver;
} pinned_isa[] = {
	{ 402, 7000, "346.46" },     { 403, 7050, "352.31" },     { 500, 8000, "367.48" },
	{ 600, 9000, "384.81" },     { 601, 9010, "390.46" },     { 602, 9020, "396.26" },
	{ 603, 10000, "410.48" },    { 604, 10010, "418.39" },    { 605, 10020, "440.33" },
	{ 700, 11000, "450.51.05" }, { 701, 11010, "455.23" },    { 702, 11020, "460.27.03" },
	{ 703, 11030, "465.19.01" }, { 704, 11040, "470.42.01" }, { 705, 11050, "495.29.05" },
	{ 706, 11060, "510.39.01" }, { 707, 11070, "515.43.04" }, { 708, 11080, "520.61.05" },
	{ 800, 12000, "525.60.13" }, { 801, 12010, "530.30.02" }, { 802, 12020, "535.54.03" },
	{ 803, 12030, "545.23.06" }, { 804, 12040, "550.54.14" }, { 805, 12050, "555.42.02" },
	{ 805, 12060, "560.28.03" }, { 806, 12070, NULL },         { 807, 12080, "570.26" },
	{ 808, 12090, "575.51.03" }, { 900, 13000, "580.65.06" }, { 901, 13010, "590.44.01" },
	{ 902, 13020, "595.45.04" },
};

START_TEST(isa_table_pinned)
{
	for (size_t i = 0; i < sizeof pinned_isa / sizeof pinned_isa[0]; i++) {
		unsigned isa = pinned_isa[i].isa;
		int cuda = pinned_isa[i].cuda;
		ck_assert_msg(kimg_driver_max_ptx_isa(cuda) == isa, "CUDA %d: ISA %u, pinned %u", cuda,
			      kimg_driver_max_ptx_isa(cuda), isa);
		/* 12.6 shares 8.5 with 12.5, which introduced it */
		int introduced = cuda == 12060 ? 12050 : cuda;
		ck_assert_msg(kimg_ptx_isa_cuda_version((uint16_t)isa) == introduced, "ISA %u: CUDA %d, pinned %d", isa,
			      kimg_ptx_isa_cuda_version((uint16_t)isa), introduced);
		const char *drv = kimg_cuda_min_driver(cuda);
		if (pinned_isa[i].driver)
			ck_assert_msg(drv && strcmp(drv, pinned_isa[i].driver) == 0, "CUDA %d: driver %s, pinned %s", cuda,
				      drv ? drv : "NULL", pinned_isa[i].driver);
		else
			ck_assert_msg(drv == NULL, "CUDA %d: driver %s, pinned none", cuda, drv);
	}
	ck_assert_int_eq(kimg_ptx_isa_table_oldest_cuda(), 7000);
	ck_assert_int_eq(kimg_ptx_isa_table_newest_cuda(), 13020);
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(13030), 0); /* newer than the table: not guessed */
	ck_assert_uint_eq(kimg_driver_max_ptx_isa(6050), 0);
}
END_TEST

static Suite *rules_suite(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("image");
	tcase_add_loop_test(tc, image_cases_decide_as_documented, 0, (int)(sizeof image_cases / sizeof image_cases[0]));
	tcase_add_test(tc, every_decision_row_is_covered);
	tcase_add_test(tc, tegra_list);
	tcase_add_test(tc, isa_table);
	tcase_add_test(tc, isa_table_pinned);
	tcase_add_test(tc, reason_and_outcome_names);
	tcase_add_test(tc, toolkit_targets);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(rules_suite());
}
