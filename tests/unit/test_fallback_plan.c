/* SPDX-License-Identifier: Apache-2.0 */
/* core/fallback_plan.c: which PTX image the JIT fallback uses, what it
 * lowers, and the text it builds. Pins docs/rules.md P3 (target newer
 * than the device: lower .target), P4 (ISA newer than the driver: lower
 * .version), P2 (a/f PTX elsewhere), P6 (CUDA_DISABLE_PTX_JIT: nothing
 * helps), §1 step 1 (SASS-only modules have nothing to JIT) and
 * docs/format.md §11 (a stripped .version comes back from the header).
 * Fixtures are nvcc 13.0 output (ISA 9.0). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "codecs.h"
#include "fallback_plan.h"
#include "fatbin.h"
#include "input.h"
#include "ptx.h"
#include "testutil.h"

#define MAX_IMGS 16

/* The images of one raw cubin, raw PTX text or fatbin container. */
static size_t images_of(struct kimg_span in, struct kimg_image *imgs)
{
	struct kimg_error err = { 0 };
	memset(imgs, 0, sizeof *imgs * MAX_IMGS);
	switch (kimg_input_classify(in)) {
	case KIMG_INPUT_FATBIN: {
		struct kimg_fatbin fb;
		uint64_t cursor = 0;
		size_t n = 0;
		ck_assert_int_eq(kimg_fatbin_open(in, 0, &fb, &err), 0);
		while (n < MAX_IMGS && kimg_fatbin_next(&fb, &cursor, &imgs[n], &err) == 1)
			n++;
		return n;
	}
	case KIMG_INPUT_PTX: {
		struct kimg_ptx_info pi;
		ck_assert_int_eq(kimg_ptx_parse(in, &pi, &err), 0);
		imgs[0].kind = KIMG_IMAGE_PTX;
		imgs[0].arch = pi.target;
		imgs[0].ptx_isa = pi.isa;
		imgs[0].payload = in;
		imgs[0].size = imgs[0].stored_size = in.size;
		return 1;
	}
	case KIMG_INPUT_CUBIN: {
		struct kimg_cubin_info ci;
		ck_assert_int_eq(kimg_cubin_parse(in, &ci, &err), 0);
		imgs[0].kind = KIMG_IMAGE_SASS;
		imgs[0].arch.sm = ci.sm;
		imgs[0].payload = in;
		return 1;
	}
	default:
		ck_abort_msg("fixture is no device code");
		return 0;
	}
}

/* Builds the planned text; the caller frees it. */
static char *build(const struct kimg_image *img, const struct kimg_fallback_plan *p,
		   struct kimg_ptx_rewrite_info *info)
{
	uint64_t scratch_cap;
	size_t out_cap, len = 0;
	struct kimg_error err = { 0 };
	ck_assert_int_eq(kimg_fallback_sizes(img, &scratch_cap, &out_cap), 0);
	void *scratch = scratch_cap ? malloc(scratch_cap) : NULL;
	char *out = malloc(out_cap);
	ck_assert(out != NULL);
	int rc = kimg_fallback_build(img, p, kimg_codecs_get(), scratch, scratch_cap, out, out_cap, &len, info, &err);
	ck_assert_msg(rc == 0, "build: %d %s", rc, err.what);
	ck_assert_uint_eq(strlen(out), len);
	free(scratch);
	return out;
}

/* The text with every occurrence of `from` (one line) replaced by `to`. */
static char *replace(struct kimg_span in, const char *from, const char *to)
{
	char *s = calloc(1, in.size + 64);
	memcpy(s, in.data, in.size);
	char *at = strstr(s, from);
	ck_assert_msg(at != NULL, "%s not in fixture", from);
	memmove(at + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
	memcpy(at, to, strlen(to));
	return s;
}

/* P3 [V]: raw compute_100 PTX on 9.0 fails with 218; lowering .target to
 * sm_90 is the rescue, the ISA (9.0 on a 13.0 driver) stays. */
START_TEST(raw_ptx_newer_target_lowered)
{
	struct kimg_span in = fixture_load("compute100.ptx");
	struct kimg_image imgs[MAX_IMGS];
	struct kimg_device d = device(90, 13000);
	struct kimg_fallback_plan p;
	size_t n = images_of(in, imgs);
	ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, KIMG_FALLBACK_MODE_PTX, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_REWRITE);
	ck_assert_int_eq(p.before.expected_error, 218);
	ck_assert_str_eq(p.before.rule, "P3");
	ck_assert_int_eq(p.image, 0);
	ck_assert(p.lowers_target);
	ck_assert(!p.lowers_isa);
	ck_assert_uint_eq(p.new_sm, 90);
	ck_assert_uint_eq(p.new_isa, KIMG_ISA(9, 0));
	struct kimg_ptx_rewrite_info info;
	char *out = build(&imgs[0], &p, &info);
	ck_assert_ptr_nonnull(strstr(out, "\n.target sm_90\n"));
	ck_assert_ptr_null(strstr(out, "sm_100"));
	ck_assert_ptr_nonnull(strstr(out, ".entry axpy("));
	ck_assert_uint_eq(info.old_target.sm, 100);
	ck_assert_uint_eq(info.new_target.sm, 90);
	ck_assert(!info.version_lowered);
	free(out);
	fixture_free(in);
}
END_TEST

/* P4 [V]: .version 9.9 gives 222 on a 13.0 driver: lower it to 9.0, keep
 * the compute_80 target (it fits 9.0, P1). */
START_TEST(isa_too_new_version_lowered)
{
	struct kimg_span fx = fixture_load("compute80.ptx");
	char *text = replace(fx, ".version 9.0", ".version 9.9");
	struct kimg_image imgs[MAX_IMGS];
	struct kimg_device d = device(90, 13000);
	struct kimg_fallback_plan p;
	size_t n = images_of(kimg_span_make(text, strlen(text)), imgs);
	ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, KIMG_FALLBACK_MODE_PTX, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_REWRITE);
	ck_assert_int_eq(p.before.expected_error, 222);
	ck_assert(p.lowers_isa);
	ck_assert(!p.lowers_target);
	ck_assert_uint_eq(p.new_isa, KIMG_ISA(9, 0));
	ck_assert_uint_eq(p.new_sm, 0);
	struct kimg_ptx_rewrite_info info;
	char *out = build(&imgs[0], &p, &info);
	ck_assert_ptr_nonnull(strstr(out, "\n.version 9.0\n.target sm_80\n"));
	ck_assert(info.version_lowered);
	ck_assert_uint_eq(info.old_isa, KIMG_ISA(9, 9));
	free(out);
	free(text);
	fixture_free(fx);
}
END_TEST

/* P3 then P4: compute_100 with .version 9.9 needs both lowered. */
START_TEST(target_and_version_lowered)
{
	struct kimg_span fx = fixture_load("compute100.ptx");
	char *text = replace(fx, ".version 9.0", ".version 9.9");
	struct kimg_image imgs[MAX_IMGS];
	struct kimg_device d = device(90, 13000);
	struct kimg_fallback_plan p;
	size_t n = images_of(kimg_span_make(text, strlen(text)), imgs);
	ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, KIMG_FALLBACK_MODE_PTX, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_REWRITE);
	ck_assert(p.lowers_isa && p.lowers_target);
	char *out = build(&imgs[0], &p, NULL);
	ck_assert_ptr_nonnull(strstr(out, "\n.version 9.0\n.target sm_90\n"));
	free(out);
	free(text);
	fixture_free(fx);
}
END_TEST

/* A 12.8 driver (ISA 8.7) on a 10.0 GPU: nvcc 13.0's compute_100 PTX
 * (ISA 9.0) fits by target but not by ISA (P5): lower .version only. */
START_TEST(older_driver_version_lowered_in_container)
{
	struct kimg_span in = fixture_load("ptx100.fatbin");
	struct kimg_image imgs[MAX_IMGS];
	struct kimg_device d = device(100, 12080);
	struct kimg_fallback_plan p;
	size_t n = images_of(in, imgs);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, KIMG_FALLBACK_MODE_PTX, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_REWRITE);
	ck_assert_int_eq(p.before.expected_error, 222);
	ck_assert(p.lowers_isa && !p.lowers_target);
	ck_assert_uint_eq(p.new_isa, KIMG_ISA(8, 7));
	char *out = build(&imgs[0], &p, NULL);
	ck_assert_ptr_nonnull(strstr(out, "\n.version 8.7\n.target sm_100\n"));
	free(out);
	fixture_free(in);
}
END_TEST

/* Compressed PTX entries are decompressed first (zstd, docs/format.md §6). */
START_TEST(compressed_ptx_decompressed_and_rewritten)
{
	struct kimg_span in = fixture_load("ptx100_z.fatbin");
	struct kimg_image imgs[MAX_IMGS];
	struct kimg_device d = device(90, 13000);
	struct kimg_fallback_plan p;
	size_t n = images_of(in, imgs);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(imgs[0].compression, KIMG_COMPRESS_ZSTD);
	ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, KIMG_FALLBACK_MODE_PTX, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_REWRITE);
	ck_assert_int_eq(p.before.expected_error, 209); /* inside a fatbin: 209, not 218 (P3) */
	uint64_t scratch;
	size_t cap;
	ck_assert_int_eq(kimg_fallback_sizes(&imgs[0], &scratch, &cap), 0);
	ck_assert_uint_eq(scratch, imgs[0].size);
	char *out = build(&imgs[0], &p, NULL);
	ck_assert_ptr_nonnull(strstr(out, "\n.target sm_90\n"));
	ck_assert_ptr_nonnull(strstr(out, ".entry _Z10big_kernelPKfPfi("));
	ck_assert_uint_gt(strlen(out), imgs[0].stored_size);
	free(out);
	fixture_free(in);
}
END_TEST

/* Mode ptx leaves modules that run alone (the sm_90 cubin is selected). */
START_TEST(mode_ptx_not_needed_when_module_runs)
{
	struct kimg_span in = fixture_load("multi.fatbin");
	struct kimg_image imgs[MAX_IMGS];
	struct kimg_device d = device(90, 13000);
	struct kimg_fallback_plan p;
	size_t n = images_of(in, imgs);
	ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, KIMG_FALLBACK_MODE_PTX, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_NOT_NEEDED);
	ck_assert_int_eq(p.image, -1);
	ck_assert_int_eq(p.before.outcome, KIMG_OUTCOME_SASS);
	fixture_free(in);
}
END_TEST

/* force-ptx: SASS ignored; among PTX that fits as it is, the driver's own
 * preference (P6 selection: highest target, a over plain), untouched. */
START_TEST(mode_force_picks_fitting_ptx_unchanged)
{
	struct kimg_span in = fixture_load("multi.fatbin");
	struct kimg_image imgs[MAX_IMGS];
	struct kimg_device d = device(90, 13000);
	struct kimg_fallback_plan p;
	char arch[32];
	size_t n = images_of(in, imgs);
	ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, KIMG_FALLBACK_MODE_FORCE, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_REWRITE);
	kimg_image_arch_name(&imgs[p.image], arch, sizeof arch);
	ck_assert_str_eq(arch, "compute_90a");
	ck_assert(!p.lowers_isa && !p.lowers_target);
	ck_assert_uint_eq(p.new_sm, 0);
	struct kimg_ptx_rewrite_info info;
	char *out = build(&imgs[p.image], &p, &info);
	ck_assert(!info.changed);
	ck_assert_ptr_nonnull(strstr(out, "\n.target sm_90a\n"));
	free(out);
	/* on 8.0 only compute_100f... and compute_90/90a are above: the
	 * closest target above the device, plain first, lowered to sm_80 */
	d = device(80, 13000);
	ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, KIMG_FALLBACK_MODE_FORCE, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_REWRITE);
	kimg_image_arch_name(&imgs[p.image], arch, sizeof arch);
	ck_assert_str_eq(arch, "compute_90");
	ck_assert(p.lowers_target);
	ck_assert_uint_eq(p.new_sm, 80);
	fixture_free(in);
}
END_TEST

/* §1 step 1 only: a SASS-only module has nothing to JIT. */
START_TEST(sass_only_not_rescuable)
{
	const char *names[] = { "sm80.fatbin", "sm80.cubin" };
	for (size_t k = 0; k < 2; k++) {
		struct kimg_span in = fixture_load(names[k]);
		struct kimg_image imgs[MAX_IMGS];
		struct kimg_device d = device(90, 13000);
		struct kimg_fallback_plan p;
		size_t n = images_of(in, imgs);
		for (int mode = 0; mode < KIMG_FALLBACK_MODE_COUNT; mode++) {
			ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, (enum kimg_fallback_mode)mode, &p), 0);
			ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_NO_PTX);
			ck_assert_int_eq(p.image, -1);
		}
		ck_assert_int_eq(p.before.expected_error, 209);
		ck_assert_str_eq(p.before.rule, "S1");
		fixture_free(in);
	}
}
END_TEST

/* P6 [V]: CUDA_DISABLE_PTX_JIT=1 refuses all PTX (223): not rescuable. */
START_TEST(jit_disabled_not_rescuable)
{
	struct kimg_span in = fixture_load("ptx100.fatbin");
	struct kimg_image imgs[MAX_IMGS];
	struct kimg_device d = device(90, 13000);
	struct kimg_fallback_plan p;
	d.disable_ptx_jit = true;
	size_t n = images_of(in, imgs);
	ck_assert_int_eq(kimg_fallback_plan(imgs, n, &d, KIMG_FALLBACK_MODE_PTX, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_JIT_DISABLED);
	ck_assert_str_eq(kimg_fallback_outcome_id(p.outcome), "jit_disabled");
	fixture_free(in);
}
END_TEST

/* docs/format.md §11: nvFatbin keeps the ISA only in the entry header;
 * the stand-in gets its .version line back. */
START_TEST(stripped_version_inserted_from_header)
{
	static const char text[] = "\n.target sm_100\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
	struct kimg_image img;
	struct kimg_device d = device(90, 13000);
	struct kimg_fallback_plan p;
	memset(&img, 0, sizeof img);
	img.kind = KIMG_IMAGE_PTX;
	img.arch.sm = 100;
	img.ptx_isa = KIMG_ISA(9, 0);
	img.flags = 1; /* a fatbin entry: 209 rather than 218 */
	img.payload = kimg_span_make(text, sizeof text);
	img.size = img.stored_size = sizeof text;
	ck_assert_int_eq(kimg_fallback_plan(&img, 1, &d, KIMG_FALLBACK_MODE_PTX, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_REWRITE);
	struct kimg_ptx_rewrite_info info;
	char *out = build(&img, &p, &info);
	ck_assert_str_eq(out, "\n.version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n");
	ck_assert(info.version_inserted);
	free(out);
}
END_TEST

START_TEST(bad_arguments)
{
	struct kimg_device d = device(90, 13000);
	struct kimg_fallback_plan p;
	struct kimg_image sass;
	struct kimg_error err = { 0 };
	char out[8];
	size_t len;
	ck_assert_int_eq(kimg_fallback_plan(NULL, 1, &d, KIMG_FALLBACK_MODE_PTX, &p), -EINVAL);
	ck_assert_int_eq(kimg_fallback_plan(NULL, 0, &d, KIMG_FALLBACK_MODE_COUNT, &p), -EINVAL);
	ck_assert_int_eq(kimg_fallback_plan(NULL, 0, &d, KIMG_FALLBACK_MODE_PTX, NULL), -EINVAL);
	/* no images at all: D4, nothing to JIT */
	ck_assert_int_eq(kimg_fallback_plan(NULL, 0, &d, KIMG_FALLBACK_MODE_PTX, &p), 0);
	ck_assert_int_eq(p.outcome, KIMG_FALLBACK_OUTCOME_NO_PTX);
	memset(&sass, 0, sizeof sass);
	sass.kind = KIMG_IMAGE_SASS;
	ck_assert_int_eq(kimg_fallback_build(&sass, &p, NULL, NULL, 0, out, sizeof out, &len, NULL, &err), -EINVAL);
	ck_assert_str_eq(kimg_fallback_outcome_id(KIMG_FALLBACK_OUTCOME_COUNT), "unknown");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("fallback_plan");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, raw_ptx_newer_target_lowered);
	tcase_add_test(tc, isa_too_new_version_lowered);
	tcase_add_test(tc, target_and_version_lowered);
	tcase_add_test(tc, older_driver_version_lowered_in_container);
	tcase_add_test(tc, compressed_ptx_decompressed_and_rewritten);
	tcase_add_test(tc, mode_ptx_not_needed_when_module_runs);
	tcase_add_test(tc, mode_force_picks_fitting_ptx_unchanged);
	tcase_add_test(tc, sass_only_not_rescuable);
	tcase_add_test(tc, jit_disabled_not_rescuable);
	tcase_add_test(tc, stripped_version_inserted_from_header);
	tcase_add_test(tc, bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
