/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/gpus.c: GPU names -> CC, docs/rules.md §6,
 * including its "name traps" and the prefix collisions of short names. */
#include <string.h>

#include "testutil.h"
#include "gpus.h"

struct name_case {
	const char *name;
	unsigned sm;
	bool tegra;
};

static const struct name_case names[] = {
	/* §6 name traps */
	{ "Quadro RTX 6000", 75, false },
	{ "RTX 6000 Ada", 89, false },
	{ "NVIDIA RTX 6000 Ada Generation", 89, false }, /* as the driver names it */
	{ "RTX PRO 6000 Blackwell", 120, false },
	{ "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 120, false },
	{ "RTX PRO 6000", 120, false },
	{ "RTX 4060 Ti", 89, false },
	{ "RTX 4060", 89, false },
	/* data center */
	{ "A100", 80, false },
	{ "NVIDIA A100-SXM4-80GB", 80, false },
	{ "NVIDIA A100 80GB PCIe", 80, false },
	{ "H100", 90, false },
	{ "NVIDIA H100 80GB HBM3", 90, false },
	{ "H200", 90, false },
	{ "NVIDIA H200", 90, false },
	{ "GH200", 90, false },
	{ "B200", 100, false },
	{ "GB200", 100, false },
	{ "B300", 103, false },
	{ "GB300", 103, false },
	{ "GB10", 121, false }, /* DGX Spark: integrated, not Tegra (§2.1) */
	{ "NVIDIA GB10", 121, false },
	{ "T4", 75, false },
	{ "Tesla T4", 75, false },
	{ "V100", 70, false },
	{ "Tesla V100-SXM2-16GB", 70, false },
	{ "P100", 60, false },
	{ "Tesla P100-PCIE-16GB", 60, false },
	{ "L4", 89, false },
	{ "L40", 89, false },
	{ "L40S", 89, false },
	{ "NVIDIA L40S", 89, false },
	{ "A10", 86, false },
	{ "A40", 86, false },
	{ "A30", 80, false },
	/* prefix collisions: exact first, no match across a digit run */
	{ "T400", 75, false },
	{ "NVIDIA T400 4GB", 75, false },
	{ "T1000", 75, false },
	{ "P40", 61, false },
	{ "Tesla P4", 61, false },
	{ "Quadro P4000", 61, false },
	{ "M60", 52, false },
	{ "Quadro M6000", 52, false },
	/* GeForce, with vendor prefixes, mobile suffixes and odd spacing */
	{ "RTX 5090", 120, false },
	{ "NVIDIA GeForce RTX 5090", 120, false },
	{ "GeForce RTX 4090 D", 89, false },
	{ "NVIDIA GeForce RTX 4060 Laptop GPU", 89, false },
	{ "NVIDIA GeForce RTX 4060 Ti", 89, false },
	{ "rtx4060ti", 89, false },
	{ "RTX-4060-Ti", 89, false },
	{ "  rtx   4060  TI ", 89, false },
	{ "RTX 3090", 86, false },
	{ "RTX A6000", 86, false },
	{ "GTX 1080 Ti", 61, false },
	{ "GeForce GTX 1080", 61, false },
	{ "GTX 1660 SUPER", 75, false },
	{ "TITAN RTX", 75, false },
	{ "NVIDIA TITAN X (Pascal)", 61, false },
	{ "GeForce GTX TITAN X", 52, false },
	{ "GTX 750 Ti", 50, false },
	{ "GTX 960M", 50, false }, /* mobile 960M is 5.0 ... */
	{ "GTX 960", 52, false },  /* ... the desktop part 5.2 */
	/* Jetson (Tegra) */
	{ "Jetson AGX Orin", 87, true },
	{ "Orin", 87, true }, /* the name the driver reports */
	{ "Orin (nvgpu)", 87, true },
	{ "Jetson Orin Nano", 87, true },
	{ "Jetson Nano", 53, true },
	{ "NVIDIA Tegra X1", 53, true },
	{ "Jetson TX2", 62, true },
	{ "Jetson AGX Xavier", 72, true },
	{ "Jetson AGX Thor", 110, true },
	{ "T5000", 110, true },
	{ "Jetson T5000", 110, true },
	{ "T4000", 110, true },
	{ "NVIDIA Thor", 110, true },
	/* issue 12 item 15: names users type that the table lacked (CCs from
	 * NVIDIA's CUDA GPUs page or the die each part shares, see gpus.c) */
	{ "Jetson Thor", 110, true },
	{ "B100", 100, false },
	{ "NVIDIA A800-SXM4-80GB", 80, false },
	{ "A800", 80, false },
	{ "H800", 90, false },
	{ "NVIDIA H800 PCIe", 90, false },
	{ "H20", 90, false },
	{ "NVIDIA H20", 90, false },
	{ "L20", 89, false },
	{ "DGX Spark", 121, false },
	{ "NVIDIA GB10", 121, false },
	{ "A6000", 86, false },
	{ "NVIDIA RTX A6000", 86, false },
	{ "MX450", 75, false },
	{ "NVIDIA GeForce MX450", 75, false },
};

START_TEST(names_resolve)
{
	const struct name_case *c = &names[_i];
	const struct kimg_gpu *g = kimg_gpu_lookup(c->name);
	ck_assert_msg(g != NULL, "'%s' not found", c->name);
	ck_assert_msg(g->sm == c->sm, "'%s' -> %s sm %u, want %u", c->name, g->name, g->sm, c->sm);
	ck_assert_msg(g->tegra == c->tegra, "'%s' tegra", c->name);
}
END_TEST

START_TEST(canonical_names)
{
	ck_assert_str_eq(kimg_gpu_lookup("rtx4060ti")->name, "GeForce RTX 4060 Ti");
	ck_assert_str_eq(kimg_gpu_lookup("RTX 4060")->name, "GeForce RTX 4060");
	ck_assert_str_eq(kimg_gpu_lookup("Quadro RTX 6000")->name, "Quadro RTX 6000");
	ck_assert_str_eq(kimg_gpu_lookup("A10")->name, "A10");
	ck_assert_str_eq(kimg_gpu_lookup("Tesla T4")->name, "Tesla T4");
	ck_assert_str_eq(kimg_gpu_lookup("T5000")->name, "Jetson AGX Thor");
	ck_assert_str_eq(kimg_gpu_lookup("L40S")->family, "Ada");
	ck_assert_str_eq(kimg_gpu_lookup("B300")->family, "Blackwell");
}
END_TEST

START_TEST(unknown_names)
{
	ck_assert_ptr_null(kimg_gpu_lookup(NULL));
	ck_assert_ptr_null(kimg_gpu_lookup(""));
	ck_assert_ptr_null(kimg_gpu_lookup("   "));
	ck_assert_ptr_null(kimg_gpu_lookup("NVIDIA"));
	ck_assert_ptr_null(kimg_gpu_lookup("Radeon RX 7900 XTX"));
	ck_assert_ptr_null(kimg_gpu_lookup("RTX 9090"));
	ck_assert_ptr_null(kimg_gpu_lookup("A1")); /* not a prefix of A10/A100 the other way */
	ck_assert_ptr_null(kimg_gpu_lookup("H1000")); /* H100 does not match across a digit */
	ck_assert_ptr_null(kimg_gpu_lookup("TITAN X")); /* ambiguous: Maxwell or Pascal */
	char longname[400];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	ck_assert_ptr_null(kimg_gpu_lookup(longname));
}
END_TEST

/* Table listing: every row is reachable, NULL past the end, and each row's
 * own name finds itself (no row is shadowed by another). */
/* Compute capabilities that exist (issue 12 item 12: "860" is no 86.0),
 * and every GPU row's CC among them. */
START_TEST(known_ccs)
{
	static const unsigned yes[] = { 35, 50, 53, 61, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121 };
	static const unsigned no[] = { 0, 9, 14, 38, 81, 99, 102, 130, 860, 999 };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		ck_assert_msg(kimg_cc_is_known(yes[i]), "%u", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		ck_assert_msg(!kimg_cc_is_known(no[i]), "%u", no[i]);
	for (size_t i = 0; kimg_gpu_at(i); i++)
		ck_assert_msg(kimg_cc_is_known(kimg_gpu_at(i)->sm), "%s", kimg_gpu_at(i)->name);
}
END_TEST

START_TEST(table_listing)
{
	size_t n = 0;
	while (kimg_gpu_at(n))
		n++;
	ck_assert_uint_gt(n, 100);
	for (size_t i = 0; i < n; i++) {
		const struct kimg_gpu *g = kimg_gpu_at(i);
		ck_assert_msg(kimg_gpu_lookup(g->name) == g, "%s resolves to another row", g->name);
		ck_assert_msg(g->sm >= 50 && g->sm <= 121, "%s sm %u", g->name, g->sm);
		ck_assert_ptr_nonnull(g->family);
	}
}
END_TEST

static Suite *gpus_suite(void)
{
	Suite *s = suite_create("gpus");
	TCase *tc = tcase_create("lookup");
	tcase_add_loop_test(tc, names_resolve, 0, (int)(sizeof names / sizeof names[0]));
	tcase_add_test(tc, canonical_names);
	tcase_add_test(tc, unknown_names);
	tcase_add_test(tc, table_listing);
	tcase_add_test(tc, known_ccs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(gpus_suite());
}
