/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/fix.c: docs/rules.md §8 "Fix table" and
 * "Verdict wording by case", as exact strings. */
#include <string.h>

#include "testutil.h"
#include "error.h"
#include "fix.h"
#include "rules.h"

static struct kimg_image sass(unsigned sm, enum kimg_arch_variant v) { return test_image(KIMG_IMAGE_SASS, sm, v, 0); }
static struct kimg_image ptx(unsigned sm, unsigned isa) { return test_image(KIMG_IMAGE_PTX, sm, KIMG_VARIANT_PLAIN, isa); }

/* Runs the rules, then the fix generator, as the front ends do. */
static struct kimg_fix fix_for(struct kimg_device d, const struct kimg_image *imgs, size_t n, int *expected_error)
{
	struct kimg_module_verdict v;
	struct kimg_fix f;
	kimg_rules_check_module(imgs, n, &d, NULL, &v);
	ck_assert_int_eq(kimg_fix_for(&d, &v, imgs, n, &f), 0);
	if (expected_error)
		*expected_error = v.expected_error;
	return f;
}

/* One module against one device: the rules' expected error and the fix,
 * as exact strings (NULL, or -1 for a toolkit: not asserted by that case). */
struct image_spec { /* test_image's arguments */
	enum kimg_image_kind kind;
	unsigned sm;
	enum kimg_arch_variant v;
	unsigned isa;
};
struct fix_case {
	const char *name; /* the case: its rule and §8 row */
	struct image_spec imgs[4];
	size_t n;
	unsigned sm, driver;
	bool disable_jit, force_jit;
	int err;
	const char *nvcc, *cmake, *torch, *min_driver, *wheel, *advice;
	int min_toolkit, max_toolkit;
};
#define SASS(sm) { KIMG_IMAGE_SASS, (sm), KIMG_VARIANT_PLAIN, 0 }
#define SASS_A(sm) { KIMG_IMAGE_SASS, (sm), KIMG_VARIANT_A, 0 }
#define PTX(sm, isa) { KIMG_IMAGE_PTX, (sm), KIMG_VARIANT_PLAIN, (isa) }

static const struct fix_case fix_cases[] = {
	/* §8 row 8.0/8.6/8.7 + "No SASS for the device and no usable PTX": SASS
	 * plus PTX of the device's own arch; CMake "86" means both; the fix adds
	 * 8.6 to what the module has: sm_90 stays (issue 10) */
	{ "ampere_with_hopper_only_module", { SASS(90) }, 1, 86, 13000, false, false, 209,
	  "-gencode arch=compute_86,code=sm_86 -gencode arch=compute_86,code=compute_86 -gencode arch=compute_90,code=sm_90",
	  "86;90-real", "8.6+PTX;9.0", "455.23", "any current CUDA wheel (cu126, cu128, cu130)",
	  "No sm_86 SASS and no PTX this GPU can JIT: rebuild with sm_86 SASS, plus compute_86 PTX for newer GPUs.",
	  11010, 0 },
	/* S2 / §8 "Tegra device with only desktop cubins"; wheels: JetPack builds */
	{ "orin_with_desktop_cubins", { SASS(80), SASS(86) }, 2, 87, 12060, false, false, 209,
	  "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 "
	  "-gencode arch=compute_87,code=sm_87 -gencode arch=compute_87,code=compute_87",
	  "80-real;86-real;87", "8.0;8.6;8.7+PTX", "470.42.01",
	  "NVIDIA JetPack builds (no official PyTorch wheel carries sm_87)",
	  "CC 8.7 is a Tegra (Jetson) GPU and desktop cubins never run on it (S2): "
	  "build sm_87 SASS, or ship PTX for compute_87 or older.",
	  11040, -1 },
	/* S3: sm_90a on 9.0 fits; nothing to fix */
	{ "hopper_with_sm90a_fits", { SASS_A(90) }, 1, 90, 13000, false, false, 0, NULL, "90;90a-real", "9.0+PTX;9.0a",
	  NULL, NULL, "Nothing to fix: the module has sm_90a code for CC 9.0.", -1, -1 },
	/* S3 / §8 "Only sm_XYa for another CC (e.g. sm_90a kernels on 10.0)" */
	{ "blackwell_with_sm90a_only", { SASS_A(90) }, 1, 100, 13000, false, false, 209,
	  "-gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100,code=sm_100 "
	  "-gencode arch=compute_100,code=compute_100",
	  "90a-real;100", "9.0a;10.0+PTX", "570.26", "cu128 or newer wheels (CC 10.x/12.x)",
	  "The module has arch-specific sm_90a code, which runs on CC 9.0 alone (S3): "
	  "build sm_100, sm_100a or sm_100f SASS, or ship plain PTX.",
	  12080, -1 },
	/* §8 "CC < 7.5 with a CUDA 13 build: rebuild with CUDA <= 12.9 (R580)";
	 * §8 row 5.0-7.2: "XY-real", last toolkit 12.9; wheels cu126 */
	{ "pascal_with_cuda13_build", { SASS(75), SASS(80), SASS(90), PTX(90, 900) }, 4, 61, 13000, false, false, 209,
	  "-gencode arch=compute_61,code=sm_61 -gencode arch=compute_75,code=sm_75 "
	  "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 "
	  "-gencode arch=compute_90,code=compute_90",
	  "61-real;75-real;80-real;90", "6.1;7.5;8.0;9.0+PTX", "575.51.03", "cu126 wheels (CC 5.0-7.0)",
	  "CUDA 13 cannot build for CC 6.1 (its oldest target is sm_75): rebuild with "
	  "CUDA 12.9 or older for sm_61 and run on an R580 driver, the last branch for this GPU.",
	  8000, 12090 },
	/* P4/P5 / §8 "Usable PTX but 222": driver older than the compiling
	 * toolkit. The fix is SASS (new PTX would fail the same way); min_driver
	 * is the driver of the toolkit that wrote the PTX (§4: ISA 9.0 -> 13.0 ->
	 * 580.65.06) */
	{ "ptx_isa_newer_than_driver", { SASS(80), PTX(90, 900) }, 2, 90, 12080, false, false, 222,
	  "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90",
	  "80-real;90", "8.0;9.0+PTX", "580.65.06", NULL,
	  "The PTX is ISA 9.0 (CUDA 13.0) but the driver (CUDA 12.8) takes ISA 8.7 at most "
	  "(222): update the driver to 580.65.06+, use the forward-compatibility package "
	  "(data center GPUs only), or rebuild with sm_90 SASS.",
	  -1, -1 },
	/* P4 with an ISA no release in §4 stamps (9.9, as in the GPU test): no
	 * driver version can be named, so the advice says what the driver needs */
	{ "ptx_isa_unknown_to_tables", { PTX(80, 909) }, 1, 90, 13000, false, false, 222,
	  "-gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=sm_90", NULL, NULL, "", NULL,
	  "The PTX is ISA 9.9, newer than any CUDA release kimg knows, and the driver "
	  "(CUDA 13.0) takes ISA 9.0 at most (222): install a driver that supports PTX ISA 9.9, "
	  "or rebuild with sm_90 SASS.",
	  -1, -1 },
	/* P6 / §1 step 3a: 223 -> unset the switch or ship SASS */
	{ "jit_disabled", { PTX(80, 900) }, 1, 90, 13000, true, false, 223,
	  "-gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=sm_90", "80-virtual;90-real", NULL, NULL,
	  NULL,
	  "CUDA_DISABLE_PTX_JIT is set and the module has only PTX for CC 9.0 (223): "
	  "unset CUDA_DISABLE_PTX_JIT, or ship sm_90 SASS.",
	  -1, -1 },
	/* P6: CUDA_FORCE_PTX_JIT with no PTX -> ship PTX ("-virtual") */
	{ "force_jit_without_ptx", { SASS(90) }, 1, 90, 13000, false, true, 209,
	  "-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90", "90", "9.0+PTX", NULL, NULL,
	  "CUDA_FORCE_PTX_JIT is set, so cubins are ignored, and the module has no PTX "
	  "for CC 9.0: unset CUDA_FORCE_PTX_JIT, or ship compute_90 PTX.",
	  -1, -1 },
	/* runs from PTX: say so (JIT cost, §3 end) and name the SASS to add */
	{ "fits_by_jit", { PTX(80, 900) }, 1, 90, 13000, false, false, 0, NULL, NULL, NULL, NULL, NULL,
	  "Runs only after the driver JIT-compiles compute_80 PTX; ship sm_90 SASS to skip the JIT cost.", -1, -1 },
};

#define EXPECT_STR(c, got, want)                                                                              \
	ck_assert_msg(!(want) || strcmp((got), (want) ? (want) : "") == 0, "%s: %s is '%s', want '%s'", (c)->name, \
		      #got, (got), (want) ? (want) : "")
#define EXPECT_INT(c, got, want) \
	ck_assert_msg((want) < 0 || (got) == (want), "%s: %s is %d, want %d", (c)->name, #got, (int)(got), (int)(want))

START_TEST(fix_case)
{
	const struct fix_case *c = &fix_cases[_i];
	struct kimg_device d = device(c->sm, c->driver);
	d.disable_ptx_jit = c->disable_jit;
	d.force_ptx_jit = c->force_jit;
	struct kimg_image imgs[4];
	for (size_t k = 0; k < c->n; k++)
		imgs[k] = test_image(c->imgs[k].kind, c->imgs[k].sm, c->imgs[k].v, c->imgs[k].isa);
	int err;
	struct kimg_fix f = fix_for(d, imgs, c->n, &err);
	ck_assert_msg(err == c->err, "%s: expected error %d, want %d", c->name, err, c->err);
	EXPECT_STR(c, f.nvcc, c->nvcc);
	EXPECT_STR(c, f.cmake, c->cmake);
	EXPECT_STR(c, f.torch_arch_list, c->torch);
	EXPECT_STR(c, f.min_driver, c->min_driver);
	EXPECT_STR(c, f.wheel, c->wheel);
	EXPECT_STR(c, f.advice, c->advice);
	EXPECT_INT(c, f.min_toolkit, c->min_toolkit);
	EXPECT_INT(c, f.max_toolkit, c->max_toolkit);
}
END_TEST

/* §8 wheels and rows for Thor, GB10, Turing; 7.5 is "75-real". */
START_TEST(other_rows)
{
	struct kimg_image imgs[] = { sass(80, KIMG_VARIANT_PLAIN), sass(86, KIMG_VARIANT_PLAIN) };
	struct kimg_fix f = fix_for(device(110, 13000), imgs, 2, NULL);
	ck_assert_str_eq(f.cmake, "80-real;86-real;110");
	ck_assert_str_eq(f.torch_arch_list, "8.0;8.6;11.0+PTX");
	ck_assert_int_eq(f.min_toolkit, 13000);
	ck_assert_str_eq(f.min_driver, "580.65.06");
	ck_assert_str_eq(f.wheel, "cu130 wheels (aarch64)");
	f = fix_for(device(121, 13000), imgs, 2, NULL);
	ck_assert_str_eq(f.cmake, "80-real;86-real;121");
	ck_assert_int_eq(f.min_toolkit, 12090);
	ck_assert_str_eq(f.wheel, "cu128 or newer wheels (CC 10.x/12.x)");
	struct kimg_image hopper[] = { sass(90, KIMG_VARIANT_PLAIN) };
	f = fix_for(device(75, 13000), hopper, 1, NULL);
	ck_assert_str_eq(f.nvcc, "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90");
	ck_assert_str_eq(f.cmake, "75-real;90-real");
	ck_assert_str_eq(f.torch_arch_list, "7.5;9.0");
	ck_assert_int_eq(f.max_toolkit, 0);
	ck_assert_str_eq(f.advice, "No sm_75 SASS and no PTX this GPU can JIT: rebuild with sm_75 SASS, plus "
				   "compute_75 PTX for newer GPUs.");
	f = fix_for(device(90, 13000), NULL, 0, NULL);
	ck_assert_str_eq(f.advice, "The module holds no device code: rebuild with sm_90 SASS and compute_90 PTX.");
}
END_TEST

/* A CC outside the tables (8.8 has no product, §2.2; 3.5 is gone) is not guessed. */
START_TEST(unknown_cc)
{
	struct kimg_module_verdict v = { KIMG_OUTCOME_CANNOT_RUN, KIMG_REASON_NO_IMAGE, -1, 209, "D4" };
	struct kimg_fix f;
	struct kimg_device d = device(88, 13000);
	ck_assert_int_eq(kimg_fix_for(&d, &v, NULL, 0, &f), -KIMG_ENOTFOUND);
	d = device(35, 13000);
	ck_assert_int_eq(kimg_fix_for(&d, &v, NULL, 0, &f), -KIMG_ENOTFOUND);
	d = device(0, 0);
	ck_assert_int_eq(kimg_fix_for(&d, &v, NULL, 0, &f), -KIMG_ENOTFOUND);
}
END_TEST

/* Every template fits its buffer for every CC row and every reason. */
START_TEST(every_row_and_reason_fits)
{
	static const unsigned ccs[] = { 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121 };
	struct kimg_image imgs[] = { sass(121, KIMG_VARIANT_A), ptx(80, 909) };
	for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++) {
		struct kimg_device d = device(ccs[i], 12040);
		for (int r = 0; r < KIMG_REASON_COUNT; r++)
			for (int o = 0; o < KIMG_OUTCOME_COUNT; o++) {
				struct kimg_module_verdict v = { o, r, o == KIMG_OUTCOME_CANNOT_RUN ? -1 : 1, 209, "X" };
				struct kimg_fix f;
				ck_assert_msg(kimg_fix_for(&d, &v, imgs, 2, &f) == 0, "CC %u reason %d", ccs[i], r);
				ck_assert_msg(f.advice[0] && f.nvcc[0] && f.cmake[0] && f.torch_arch_list[0] && f.wheel[0],
					      "CC %u reason %d outcome %d", ccs[i], r, o);
			}
	}
}
END_TEST

/* The wheel line only for PyTorch's own libraries; others get the rebuild. */
START_TEST(wheel_line_only_for_pytorch)
{
	struct kimg_image imgs[] = { sass(80, KIMG_VARIANT_PLAIN) };
	struct kimg_device d = device(90, 13000);
	struct kimg_module_verdict v;
	struct kimg_fix f;
	kimg_rules_check_module(imgs, 1, &d, NULL, &v);
	static const struct {
		const char *file;
		bool wheel;
	} rows[] = {
		{ "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", true },
		{ "torch-2.11.0-cp312-linux_x86_64.whl!/torch/lib/libc10_cuda.so", true },
		{ "/opt/libtorch/lib/libtorch_cuda.so", true },
		{ "/venv/site-packages/my_ext/_C.cpython-312-x86_64-linux-gnu.so", false },
		{ "/venv/site-packages/nvidia/cublas/lib/libcublasLt.so.13", false },
		{ "libtorchvision_extra.so", true }, /* libtorch* names are PyTorch's */
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		ck_assert_int_eq(kimg_fix_for_file(&d, &v, imgs, 1, rows[i].file, &f), 0);
		ck_assert_msg((f.wheel[0] != 0) == rows[i].wheel, "%s: wheel '%s'", rows[i].file, f.wheel);
		ck_assert_str_eq(f.nvcc, "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 "
					 "-gencode arch=compute_90,code=compute_90");
	}
	ck_assert(!kimg_file_is_pytorch(NULL));
	ck_assert_int_eq(kimg_fix_for_file(&d, &v, imgs, 1, NULL, &f), 0);
	ck_assert_str_eq(f.wheel, "any current CUDA wheel (cu126, cu128, cu130)"); /* file unknown: as kimg_fix_for */
}
END_TEST

static Suite *fix_suite(void)
{
	Suite *s = suite_create("fix");
	TCase *tc = tcase_create("cases");
	tcase_add_loop_test(tc, fix_case, 0, sizeof fix_cases / sizeof fix_cases[0]);
	tcase_add_test(tc, wheel_line_only_for_pytorch);
	tcase_add_test(tc, other_rows);
	tcase_add_test(tc, unknown_cc);
	tcase_add_test(tc, every_row_and_reason_fits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(fix_suite());
}
