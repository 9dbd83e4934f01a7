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

/* Every row of core/gpus.c's table, pinned: canonical name, CC, Tegra,
 * family, typed from docs/rules.md §6 (NVIDIA's
 * CUDA GPUs page [doc GPUS] and legacy page [doc LEGACY]), row by row of
 * that table, not from gpus.c. Rows the reference does not list carry the
 * source gpus.c gives for them (the die they share). The table must hold
 * exactly these rows: one added, dropped or changed fails here. */
struct pinned_row {
	const char *name;
	unsigned sm;
	bool tegra;
	const char *family;
};

static const struct pinned_row pinned[] = {
	/* 12.1 Blackwell: GB10 (DGX Spark) */
	{ "GB10", 121, false, "Blackwell" },
	/* 12.0 Blackwell: RTX PRO 6000/5000/4500/4000/2000 Blackwell; RTX 5090 ... 5050 */
	{ "RTX PRO 6000 Blackwell", 120, false, "Blackwell" },
	{ "RTX PRO 5000 Blackwell", 120, false, "Blackwell" },
	{ "RTX PRO 4500 Blackwell", 120, false, "Blackwell" },
	{ "RTX PRO 4000 Blackwell", 120, false, "Blackwell" },
	{ "RTX PRO 2000 Blackwell", 120, false, "Blackwell" },
	{ "GeForce RTX 5090", 120, false, "Blackwell" },
	{ "GeForce RTX 5080", 120, false, "Blackwell" },
	{ "GeForce RTX 5070 Ti", 120, false, "Blackwell" },
	{ "GeForce RTX 5070", 120, false, "Blackwell" },
	{ "GeForce RTX 5060 Ti", 120, false, "Blackwell" },
	{ "GeForce RTX 5060", 120, false, "Blackwell" },
	{ "GeForce RTX 5050", 120, false, "Blackwell" },
	/* 11.0 Blackwell (Thor), Tegra: Jetson T5000 (AGX Thor), T4000 */
	{ "Jetson AGX Thor", 110, true, "Blackwell" },
	{ "Jetson T4000", 110, true, "Blackwell" },
	/* 10.3 Blackwell Ultra: GB300, B300; 10.0 Blackwell: GB200, B200 */
	{ "B300", 103, false, "Blackwell" },
	{ "GB300", 103, false, "Blackwell" },
	{ "B200", 100, false, "Blackwell" },
	{ "GB200", 100, false, "Blackwell" },
	{ "B100", 100, false, "Blackwell" }, /* not listed: GB100 die as B200 (Blackwell technical brief) */
	/* 9.0 Hopper: GH200, H200, H100 */
	{ "H100", 90, false, "Hopper" },
	{ "H200", 90, false, "Hopper" },
	{ "GH200", 90, false, "Hopper" },
	{ "H800", 90, false, "Hopper" }, /* not listed: GH100 export part (DeepGEMM sm_90a) */
	{ "H20", 90, false, "Hopper" },	 /* not listed: nvidia-smi 9.0 in flashinfer-ai/flashinfer#920 */
	/* 8.9 Ada: L4, L40, L40S; RTX 6000/5000/4500/4000/4000 SFF/2000 Ada; RTX 4090 ... 4050 */
	{ "L4", 89, false, "Ada" },
	{ "L40", 89, false, "Ada" },
	{ "L40S", 89, false, "Ada" },
	{ "L20", 89, false, "Ada" }, /* not listed: AD102 die as L40 */
	{ "RTX 6000 Ada", 89, false, "Ada" },
	{ "RTX 5000 Ada", 89, false, "Ada" },
	{ "RTX 4500 Ada", 89, false, "Ada" },
	{ "RTX 4000 Ada", 89, false, "Ada" },
	{ "RTX 4000 SFF Ada", 89, false, "Ada" },
	{ "RTX 2000 Ada", 89, false, "Ada" },
	{ "GeForce RTX 4090", 89, false, "Ada" },
	{ "GeForce RTX 4080", 89, false, "Ada" },
	{ "GeForce RTX 4070 Ti", 89, false, "Ada" },
	{ "GeForce RTX 4070", 89, false, "Ada" },
	{ "GeForce RTX 4060 Ti", 89, false, "Ada" },
	{ "GeForce RTX 4060", 89, false, "Ada" },
	{ "GeForce RTX 4050", 89, false, "Ada" },
	/* 8.7 Ampere (Tegra): Jetson AGX Orin, Orin NX, Orin Nano */
	{ "Jetson AGX Orin", 87, true, "Ampere" },
	{ "Jetson Orin NX", 87, true, "Ampere" },
	{ "Jetson Orin Nano", 87, true, "Ampere" },
	/* 8.6 Ampere: A40, A10, A16, A2; RTX A6000/A5000/A4000/A3000/A2000; RTX 3090 Ti ... 3050 */
	{ "A40", 86, false, "Ampere" },
	{ "A10", 86, false, "Ampere" },
	{ "A16", 86, false, "Ampere" },
	{ "A2", 86, false, "Ampere" },
	{ "RTX A6000", 86, false, "Ampere" },
	{ "RTX A5000", 86, false, "Ampere" },
	{ "RTX A4000", 86, false, "Ampere" },
	{ "RTX A3000", 86, false, "Ampere" },
	{ "RTX A2000", 86, false, "Ampere" },
	{ "GeForce RTX 3090 Ti", 86, false, "Ampere" },
	{ "GeForce RTX 3090", 86, false, "Ampere" },
	{ "GeForce RTX 3080 Ti", 86, false, "Ampere" },
	{ "GeForce RTX 3080", 86, false, "Ampere" },
	{ "GeForce RTX 3070 Ti", 86, false, "Ampere" },
	{ "GeForce RTX 3070", 86, false, "Ampere" },
	{ "GeForce RTX 3060 Ti", 86, false, "Ampere" },
	{ "GeForce RTX 3060", 86, false, "Ampere" },
	{ "GeForce RTX 3050 Ti", 86, false, "Ampere" },
	{ "GeForce RTX 3050", 86, false, "Ampere" },
	/* 8.0 Ampere: A100, A30 */
	{ "A100", 80, false, "Ampere" },
	{ "A30", 80, false, "Ampere" },
	{ "A800", 80, false, "Ampere" }, /* not listed: GA100 export part as A100 */
	/* 7.5 Turing: T4; Quadro RTX 8000/6000/5000/4000, T1000/T600/T400;
	 * TITAN RTX, RTX 2080 Ti/2080/2070/2060, GTX 1660/1650 family */
	{ "Tesla T4", 75, false, "Turing" },
	{ "Quadro RTX 8000", 75, false, "Turing" },
	{ "Quadro RTX 6000", 75, false, "Turing" },
	{ "Quadro RTX 5000", 75, false, "Turing" },
	{ "Quadro RTX 4000", 75, false, "Turing" },
	{ "T1000", 75, false, "Turing" },
	{ "T600", 75, false, "Turing" },
	{ "T400", 75, false, "Turing" },
	{ "TITAN RTX", 75, false, "Turing" },
	{ "GeForce RTX 2080 Ti", 75, false, "Turing" },
	{ "GeForce RTX 2080", 75, false, "Turing" },
	{ "GeForce RTX 2070", 75, false, "Turing" },
	{ "GeForce RTX 2060", 75, false, "Turing" },
	{ "GeForce GTX 1660 Ti", 75, false, "Turing" },
	{ "GeForce GTX 1660", 75, false, "Turing" },
	{ "GeForce GTX 1650", 75, false, "Turing" },
	{ "GeForce MX450", 75, false, "Turing" }, /* not listed: TU117 die as GTX 1650 */
	/* 7.2 Volta (Tegra): Jetson AGX Xavier, Xavier NX */
	{ "Jetson AGX Xavier", 72, true, "Volta" },
	{ "Jetson Xavier NX", 72, true, "Volta" },
	/* 7.0 Volta: V100; Quadro GV100, TITAN V */
	{ "Tesla V100", 70, false, "Volta" },
	{ "Quadro GV100", 70, false, "Volta" },
	{ "TITAN V", 70, false, "Volta" },
	/* 6.2 Pascal (Tegra): Jetson TX2 */
	{ "Jetson TX2", 62, true, "Pascal" },
	/* 6.1 Pascal: Tesla P40, P4; Quadro P6000 ... P400; TITAN Xp, TITAN X (Pascal), GTX 1080 Ti ... 1050 */
	{ "Tesla P40", 61, false, "Pascal" },
	{ "Tesla P4", 61, false, "Pascal" },
	{ "Quadro P6000", 61, false, "Pascal" },
	{ "Quadro P5000", 61, false, "Pascal" },
	{ "Quadro P4000", 61, false, "Pascal" },
	{ "Quadro P2000", 61, false, "Pascal" },
	{ "Quadro P1000", 61, false, "Pascal" },
	{ "Quadro P620", 61, false, "Pascal" },
	{ "Quadro P600", 61, false, "Pascal" },
	{ "Quadro P400", 61, false, "Pascal" },
	{ "TITAN Xp", 61, false, "Pascal" },
	{ "TITAN X (Pascal)", 61, false, "Pascal" },
	{ "GeForce GTX 1080 Ti", 61, false, "Pascal" },
	{ "GeForce GTX 1080", 61, false, "Pascal" },
	{ "GeForce GTX 1070 Ti", 61, false, "Pascal" },
	{ "GeForce GTX 1070", 61, false, "Pascal" },
	{ "GeForce GTX 1060", 61, false, "Pascal" },
	{ "GeForce GTX 1050 Ti", 61, false, "Pascal" },
	{ "GeForce GTX 1050", 61, false, "Pascal" },
	/* 6.0 Pascal: Tesla P100; Quadro GP100 */
	{ "Tesla P100", 60, false, "Pascal" },
	{ "Quadro GP100", 60, false, "Pascal" },
	/* 5.3 Maxwell (Tegra): Jetson Nano (TX1) */
	{ "Jetson Nano", 53, true, "Maxwell" },
	{ "Jetson TX1", 53, true, "Maxwell" },
	/* 5.2 Maxwell: Tesla M60, M40; Quadro M6000 ... M2000; GTX TITAN X, GTX 980 Ti/980/970/960/950 */
	{ "Tesla M60", 52, false, "Maxwell" },
	{ "Tesla M40", 52, false, "Maxwell" },
	{ "Quadro M6000", 52, false, "Maxwell" },
	{ "Quadro M5000", 52, false, "Maxwell" },
	{ "Quadro M4000", 52, false, "Maxwell" },
	{ "Quadro M2000", 52, false, "Maxwell" },
	{ "GeForce GTX TITAN X", 52, false, "Maxwell" },
	{ "GeForce GTX 980 Ti", 52, false, "Maxwell" },
	{ "GeForce GTX 980", 52, false, "Maxwell" },
	{ "GeForce GTX 970", 52, false, "Maxwell" },
	{ "GeForce GTX 960", 52, false, "Maxwell" },
	{ "GeForce GTX 950", 52, false, "Maxwell" },
	/* 5.0 Maxwell: Quadro K2200/K1200/K620; GTX 750 Ti, 750, 960M/950M/940M */
	{ "Quadro K2200", 50, false, "Maxwell" },
	{ "Quadro K1200", 50, false, "Maxwell" },
	{ "Quadro K620", 50, false, "Maxwell" },
	{ "GeForce GTX 750 Ti", 50, false, "Maxwell" },
	{ "GeForce GTX 750", 50, false, "Maxwell" },
	{ "GeForce GTX 960M", 50, false, "Maxwell" },
	{ "GeForce GTX 950M", 50, false, "Maxwell" },
	{ "GeForce 940M", 50, false, "Maxwell" },
};

/* Each pinned row is in the table, exactly once and unchanged, and the
 * table has no other row. */
START_TEST(every_row_pinned)
{
	size_t n = 0;
	while (kimg_gpu_at(n))
		n++;
	ck_assert_uint_eq(n, sizeof pinned / sizeof pinned[0]);
	for (size_t i = 0; i < n; i++) {
		const struct kimg_gpu *g = kimg_gpu_at(i);
		const struct pinned_row *p = &pinned[i];
		ck_assert_msg(strcmp(g->name, p->name) == 0, "row %zu: '%s', pinned '%s'", i, g->name, p->name);
		ck_assert_msg(g->sm == p->sm, "%s: sm %u, pinned %u", p->name, g->sm, p->sm);
		ck_assert_msg(g->tegra == p->tegra, "%s: tegra %d, pinned %d", p->name, g->tegra, p->tegra);
		ck_assert_msg(strcmp(g->family, p->family) == 0, "%s: %s, pinned %s", p->name, g->family, p->family);
		ck_assert_msg(kimg_gpu_lookup(p->name) == g, "%s does not find its own row", p->name);
	}
}
END_TEST

/* The other spellings the table takes, each to its row (the names the
 * driver reports: "Orin", "NVIDIA Tegra X1"; the short forms of §6). */
static const char *const pinned_aliases[][2] = {
	{ "DGX Spark", "GB10" },
	{ "RTX PRO 6000", "RTX PRO 6000 Blackwell" },
	{ "RTX PRO 5000", "RTX PRO 5000 Blackwell" },
	{ "RTX PRO 4500", "RTX PRO 4500 Blackwell" },
	{ "RTX PRO 4000", "RTX PRO 4000 Blackwell" },
	{ "RTX PRO 2000", "RTX PRO 2000 Blackwell" },
	{ "Jetson T5000", "Jetson AGX Thor" },
	{ "T5000", "Jetson AGX Thor" },
	{ "Thor", "Jetson AGX Thor" },
	{ "Jetson Thor", "Jetson AGX Thor" },
	{ "T4000", "Jetson T4000" },
	{ "Orin", "Jetson AGX Orin" },
	{ "Orin NX", "Jetson Orin NX" },
	{ "Orin Nano", "Jetson Orin Nano" },
	{ "A6000", "RTX A6000" },
	{ "Xavier", "Jetson AGX Xavier" },
	{ "Xavier NX", "Jetson Xavier NX" },
	{ "Tegra X1", "Jetson Nano" },
};

START_TEST(every_alias_pinned)
{
	for (size_t i = 0; i < sizeof pinned_aliases / sizeof pinned_aliases[0]; i++) {
		const struct kimg_gpu *g = kimg_gpu_lookup(pinned_aliases[i][0]);
		ck_assert_msg(g != NULL, "'%s' not found", pinned_aliases[i][0]);
		ck_assert_msg(strcmp(g->name, pinned_aliases[i][1]) == 0, "'%s' -> '%s', pinned '%s'",
			      pinned_aliases[i][0], g->name, pinned_aliases[i][1]);
	}
}
END_TEST

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
	/* every one, written out from the CUDA C++ Programming Guide's
	 * compute-capability tables and the CUDA GPUs / legacy GPUs pages (1.0
	 * to 12.1; 8.8 and 10.1 nvcc targets), and nothing else up to 130.0 */
	static const unsigned yes[] = { 10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72,
					75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121 };
	size_t next = 0;
	for (unsigned sm = 0; sm <= 1300; sm++) {
		bool want = next < sizeof yes / sizeof yes[0] && yes[next] == sm;
		next += want;
		ck_assert_msg(kimg_cc_is_known(sm) == want, "%u: known %d, want %d", sm, kimg_cc_is_known(sm), want);
	}
	ck_assert_uint_eq(next, sizeof yes / sizeof yes[0]);
	for (size_t i = 0; kimg_gpu_at(i); i++)
		ck_assert_msg(kimg_cc_is_known(kimg_gpu_at(i)->sm), "%s", kimg_gpu_at(i)->name);
}
END_TEST

/* A name is read whole or not at all: up to 127 characters once
 * lower-cased with single spaces (the lookup's buffer of 128 with its NUL)
 * it still finds its row by prefix ("H100 " and 122 more letters); one
 * more and it finds nothing, rather than a cut name. */
START_TEST(longest_name_read)
{
	char name[160] = "H100 ";
	memset(name + 5, 'x', 122);
	name[127] = '\0';
	ck_assert_ptr_nonnull(kimg_gpu_lookup(name));
	ck_assert_str_eq(kimg_gpu_lookup(name)->name, "H100");
	name[127] = 'x';
	name[128] = '\0';
	ck_assert_ptr_null(kimg_gpu_lookup(name));
	/* the same with a space before the last word: the space counts */
	memset(name, 0, sizeof name);
	memcpy(name, "H100 ", 5);
	memset(name + 5, 'x', 120);
	memcpy(name + 125, " y", 2);
	ck_assert_ptr_nonnull(kimg_gpu_lookup(name));
	memcpy(name + 125, "x y", 3);
	ck_assert_ptr_null(kimg_gpu_lookup(name));
}
END_TEST

/* Vendor and line words are dropped as whole words only: "TeslaT4" and
 * "GeForceRTX 4090" are no names of the table, though "Tesla T4" and
 * "GeForce RTX 4090" are. */
START_TEST(noise_words_whole_only)
{
	ck_assert_ptr_nonnull(kimg_gpu_lookup("Tesla T4"));
	ck_assert_ptr_null(kimg_gpu_lookup("TeslaT4"));
	ck_assert_ptr_nonnull(kimg_gpu_lookup("GeForce RTX 4090"));
	ck_assert_ptr_null(kimg_gpu_lookup("GeForceRTX 4090"));
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
	tcase_add_test(tc, longest_name_read);
	tcase_add_test(tc, noise_words_whole_only);
	tcase_add_test(tc, every_row_pinned);
	tcase_add_test(tc, every_alias_pinned);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(gpus_suite());
}
