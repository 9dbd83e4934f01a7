/* SPDX-License-Identifier: Apache-2.0 */
/* The compatibility facts as data. Every row names its source in
 * docs/rules.md (sections in brackets); rules.c and
 * fix.c only loop over these tables. [V] marks facts verified on an H200
 * with CUDA 13.0 / driver 580 (see that document). */
#include "rules_tables.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Tegra (integrated) compute capabilities [§2.1] ---- */

static const struct {
	uint16_t sm;
	const char *source;
} tegra_ccs[] = {
	{ 53, "Jetson TX1 / Nano [§2.1, doc GPUS]" },
	{ 62, "Jetson TX2 [§2.1]" },
	{ 72, "Jetson Xavier [§2.1]" },
	{ 87, "Jetson Orin [§2.1]" },
	{ 101, "Thor under CUDA 12.8-12.9 [§2.1, §2.2]" },
	{ 110, "Thor (T5000/T4000) from CUDA 13.0 [§2.1]" },
};

bool kimg_sm_is_tegra(unsigned sm)
{
	for (size_t i = 0; i < ARRAY_SIZE(tegra_ccs); i++)
		if (tegra_ccs[i].sm == sm)
			return true;
	return false;
}

/* ---- cubin exceptions beyond S1/S2 [§2.1] ----
 * S1 (same major, minor >=) plus S2 (never across Tegra/desktop) already
 * give every row of the §2.1 table (sm_53 on 5.3 only, sm_80 not on 8.7,
 * sm_100 not on 10.1 ...). The one exception is the Thor renumbering. */
static const struct {
	uint16_t from_sm, dev_sm, as_sm;
	const char *source;
} sm_aliases[] = {
	{ 101, 110, 110, "sm_101 cubins run on 10.1 and 11.0 (old and new Thor numbering) [§2.1, §2.2]" },
};

unsigned kimg_sm_alias(unsigned img_sm, unsigned dev_sm)
{
	for (size_t i = 0; i < ARRAY_SIZE(sm_aliases); i++)
		if (sm_aliases[i].from_sm == img_sm && sm_aliases[i].dev_sm == dev_sm)
			return sm_aliases[i].as_sm;
	return img_sm;
}

/* ---- families [§2.2, doc PG-CC "Feature Set Compiler Targets"] ----
 * sm_101f is sm_110f renamed (PTX ISA 9.0); with kimg_sm_alias it is judged
 * as 110f on an 11.0 device and covers 10.1 under the old numbering. */
static const struct {
	uint16_t family;
	uint16_t members[3]; /* 0-terminated */
	const char *source;
} families[] = {
	{ 100, { 100, 103, 0 }, "compute/sm_100f: 10.0, 10.3 [§2.2]" },
	{ 101, { 101, 0, 0 }, "sm_101f (CUDA 12.9 only) = 110f renamed [§2.2]" },
	{ 103, { 103, 0, 0 }, "compute/sm_103f: 10.3 [§2.2]" },
	{ 110, { 110, 0, 0 }, "compute/sm_110f: 11.0 [§2.2]" },
	{ 120, { 120, 121, 0 }, "compute/sm_120f: 12.0, 12.1 [§2.2]" },
	{ 121, { 121, 0, 0 }, "compute/sm_121f: 12.1 [§2.2]" },
};

bool kimg_family_covers(unsigned family_sm, unsigned dev_sm)
{
	for (size_t i = 0; i < ARRAY_SIZE(families); i++) {
		if (families[i].family != family_sm)
			continue;
		for (size_t j = 0; j < ARRAY_SIZE(families[i].members) && families[i].members[j]; j++)
			if (families[i].members[j] == dev_sm)
				return true;
		return false;
	}
	return false; /* no such family (sm_90f): nothing runs it */
}

/* ---- PTX ISA <-> CUDA <-> minimum Linux driver [§4, doc RN132 Table 3] ---- */

static const struct {
	uint16_t isa;
	int cuda;
	const char *driver; /* Linux x86-64 driver of the GA toolkit; NULL: none public */
} isa_rows[] = {
	/* CUDA 7.0-8.0: PTX ISA release history of the PTX ISA manual; drivers
	 * from Table 3 of the CUDA release notes (8.0 GA1). Older drivers get
	 * no limit: kimg_driver_ptx_isa_known says so. */
	{ 402, 7000, "346.46" },     { 403, 7050, "352.31" },     { 500, 8000, "367.48" },
	{ 600, 9000, "384.81" },     { 601, 9010, "390.46" },     { 602, 9020, "396.26" },
	{ 603, 10000, "410.48" },    { 604, 10010, "418.39" },    { 605, 10020, "440.33" },
	{ 700, 11000, "450.51.05" }, { 701, 11010, "455.23" },    { 702, 11020, "460.27.03" },
	{ 703, 11030, "465.19.01" }, { 704, 11040, "470.42.01" }, { 705, 11050, "495.29.05" },
	{ 706, 11060, "510.39.01" }, { 707, 11070, "515.43.04" }, { 708, 11080, "520.61.05" },
	{ 800, 12000, "525.60.13" }, { 801, 12010, "530.30.02" }, { 802, 12020, "535.54.03" },
	{ 803, 12030, "545.23.06" }, { 804, 12040, "550.54.14" },
	{ 805, 12050, "555.42.02" }, { 805, 12060, "560.28.03" }, /* 12.6 -> 8.5 [3P XLA-16504] */
	{ 806, 12070, NULL },        /* no public 12.7 toolkit; R565 drivers report 12.7 */
	{ 807, 12080, "570.26" },    { 808, 12090, "575.51.03" },
	{ 900, 13000, "580.65.06" }, /* [V] 13.0 driver accepts .version 9.0, rejects 9.1 */
	{ 901, 13010, "590.44.01" }, { 902, 13020, "595.45.04" },
};

/* A driver accepts the ISA of the CUDA version it reports [§4, src PTX-MAP].
 * Outside the table (older than its first row, newer than its last) the
 * answer is unknown, 0: a newer driver's limit is not guessed. */
uint16_t kimg_driver_max_ptx_isa(int driver_version)
{
	uint16_t isa = 0;
	if (driver_version > isa_rows[ARRAY_SIZE(isa_rows) - 1].cuda)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(isa_rows); i++)
		if (isa_rows[i].cuda <= driver_version)
			isa = isa_rows[i].isa;
	return isa;
}

int kimg_ptx_isa_table_oldest_cuda(void)
{
	return isa_rows[0].cuda;
}

int kimg_ptx_isa_table_newest_cuda(void)
{
	return isa_rows[ARRAY_SIZE(isa_rows) - 1].cuda;
}

int kimg_ptx_isa_cuda_version(uint16_t isa)
{
	for (size_t i = 0; i < ARRAY_SIZE(isa_rows); i++)
		if (isa_rows[i].isa == isa)
			return isa_rows[i].cuda; /* first row: the version that introduced it */
	return 0;
}

const char *kimg_cuda_min_driver(int cuda_version)
{
	for (size_t i = 0; i < ARRAY_SIZE(isa_rows); i++)
		if (isa_rows[i].cuda / 10 == cuda_version / 10) /* ignore the update digit */
			return isa_rows[i].driver;
	return NULL;
}

bool kimg_cuda_driver_row(size_t index, int *cuda_version, const char **driver)
{
	if (index >= ARRAY_SIZE(isa_rows))
		return false;
	*cuda_version = isa_rows[index].cuda;
	*driver = isa_rows[index].driver;
	return true;
}

/* Newest CUDA version the ISA table knows; P4 is not judged beyond it. */
static int isa_table_newest_cuda(void)
{
	return isa_rows[ARRAY_SIZE(isa_rows) - 1].cuda;
}

/* ---- toolkit targets [§7, §2.2, §4 "new targets"] ----
 * First toolkits of 5.x/6.x are not in docs/rules.md (it says "<= 9.x");
 * the values are NVIDIA's release notes for CUDA 6.0/6.5/7.0/8.0. */
#define TT(s, v, first, last, src) { s, KIMG_VARIANT_##v, first, last, src }
static const struct kimg_toolkit_target toolkit_targets[] = {
	TT(50, PLAIN, 6000, 12090, "CUDA 6.0; removed in 13.0 [§7]"),
	TT(52, PLAIN, 6050, 12090, "CUDA 6.5; removed in 13.0 [§7]"),
	TT(53, PLAIN, 7000, 12090, "CUDA 7.0; removed in 13.0 [§7]"),
	TT(60, PLAIN, 8000, 12090, "CUDA 8.0; removed in 13.0 [§7]"),
	TT(61, PLAIN, 8000, 12090, "CUDA 8.0; removed in 13.0 [§7]"),
	TT(62, PLAIN, 8000, 12090, "CUDA 8.0; removed in 13.0 [§7]"),
	TT(70, PLAIN, 9000, 12090, "ISA 6.0 / CUDA 9.0; removed in 13.0 [§4, §7]"),
	TT(72, PLAIN, 9010, 12090, "ISA 6.1 / CUDA 9.1; removed in 13.0 [§4, §7]"),
	TT(75, PLAIN, 10000, 0, "ISA 6.3 / CUDA 10.0 [§4]"),
	TT(80, PLAIN, 11000, 0, "CUDA 11.0 [§7]"),
	TT(86, PLAIN, 11010, 0, "CUDA 11.1 [§7]"),
	TT(87, PLAIN, 11040, 0, "CUDA 11.4 [§7]"),
	TT(88, PLAIN, 13000, 0, "CUDA 13.0, no product; never suggested [§2.2]"),
	TT(89, PLAIN, 11080, 0, "CUDA 11.8 [§7]"),
	TT(90, PLAIN, 11080, 0, "CUDA 11.8 [§7]"),
	TT(90, A, 12000, 0, "sm_90a from CUDA 12.0 [§7]"),
	TT(100, PLAIN, 12080, 0, "CUDA 12.8 [§7]"),
	TT(100, A, 12080, 0, "CUDA 12.8 [§7]"),
	TT(100, F, 12090, 0, "family targets from CUDA 12.9 [§7]"),
	TT(101, PLAIN, 12080, 12090, "Thor, renamed sm_110 in 13.0 [§2.2, §7]"),
	TT(101, A, 12080, 12090, "Thor, renamed sm_110a in 13.0 [§2.2]"),
	TT(101, F, 12090, 12090, "Thor, renamed sm_110f in 13.0 [§2.2]"),
	TT(103, PLAIN, 12090, 0, "CUDA 12.9 [§7]"),
	TT(103, A, 12090, 0, "CUDA 12.9 [§7]"),
	TT(103, F, 12090, 0, "CUDA 12.9 [§7]"),
	TT(110, PLAIN, 13000, 0, "CUDA 13.0 [§7]"),
	TT(110, A, 13000, 0, "CUDA 13.0 [§7]"),
	TT(110, F, 13000, 0, "CUDA 13.0 [§7]"),
	TT(120, PLAIN, 12080, 0, "CUDA 12.8 [§7]"),
	TT(120, A, 12080, 0, "CUDA 12.8 [§7]"),
	TT(120, F, 12090, 0, "CUDA 12.9 [§7]"),
	TT(121, PLAIN, 12090, 0, "CUDA 12.9 [§7]"),
	TT(121, A, 12090, 0, "CUDA 12.9 [§7]"),
	TT(121, F, 12090, 0, "CUDA 12.9 [§7]"),
};
#undef TT

const struct kimg_toolkit_target *kimg_toolkit_target_find(unsigned sm, enum kimg_arch_variant variant)
{
	for (size_t i = 0; i < ARRAY_SIZE(toolkit_targets); i++)
		if (toolkit_targets[i].sm == sm && toolkit_targets[i].variant == variant)
			return &toolkit_targets[i];
	return NULL;
}

/* ---- reasons and outcomes ---- */

static const struct {
	const char *id;
	const char *text;
	int rank;   /* module level: higher is more telling (see kimg_reason_rank) */
	int error;  /* CUresult when this reason decides the module [§1, §5] */
} reasons[KIMG_REASON_COUNT] = {
	[KIMG_REASON_FITS] = { "fits", "usable on this device", 0, 0 },
	[KIMG_REASON_DIFFERENT_MAJOR] = { "different_major", "cubin for another major version", 5, 209 },
	[KIMG_REASON_MINOR_TOO_HIGH] = { "minor_too_high", "cubin for a later minor version of the same major", 8, 209 },
	[KIMG_REASON_TEGRA_MISMATCH] = { "tegra_mismatch", "cubin across the Tegra / desktop GPU boundary", 9, 209 },
	[KIMG_REASON_ARCH_SPECIFIC] = { "arch_specific", "arch-specific (a) code for another compute capability", 3, 209 },
	[KIMG_REASON_FAMILY] = { "family", "family-specific (f) code outside its family", 4, 209 },
	[KIMG_REASON_PTX_NEWER_THAN_DEVICE] = { "ptx_newer_than_device", "PTX for a newer architecture than the device", 6, 209 },
	[KIMG_REASON_PTX_ISA_TOO_NEW] = { "ptx_isa_too_new", "PTX ISA version newer than the driver supports", 20, 222 },
	[KIMG_REASON_JIT_DISABLED] = { "jit_disabled", "PTX JIT disabled by CUDA_DISABLE_PTX_JIT", 30, 223 },
	[KIMG_REASON_SASS_IGNORED] = { "sass_ignored", "cubin ignored because CUDA_FORCE_PTX_JIT is set", 10, 209 },
	[KIMG_REASON_NOT_LOADABLE] = { "not_loadable", "entry kind the driver never loads (LTO-IR or unknown)", 1, 209 },
	[KIMG_REASON_SHADOWED] = { "shadowed", "usable, but the driver picks another image", 0, 0 },
	[KIMG_REASON_NO_IMAGE] = { "no_image", "module holds no device code", 2, 209 },
};

const char *kimg_reason_text(enum kimg_reason reason)
{
	return (unsigned)reason < KIMG_REASON_COUNT ? reasons[reason].text : "unknown reason";
}

const char *kimg_reason_id(enum kimg_reason reason)
{
	return (unsigned)reason < KIMG_REASON_COUNT ? reasons[reason].id : "unknown";
}

/* Why this order: 223 and 222 name a switch or a driver and are exact
 * (§1 steps 3a/3b). Among the 209 reasons, "nearly ran" beats "far off":
 * a cubin that fits but was ignored, then a Tegra/desktop mismatch of the
 * same major, then a too-new minor, then PTX too new, then a foreign major.
 * a/f mismatches rank low so that a module with plain code for another
 * major is explained by that code; when a module holds only a/f code they
 * are the only reasons and still decide. */
int kimg_reason_rank(enum kimg_reason reason)
{
	return (unsigned)reason < KIMG_REASON_COUNT ? reasons[reason].rank : 0;
}

int kimg_reason_error(enum kimg_reason reason)
{
	return (unsigned)reason < KIMG_REASON_COUNT ? reasons[reason].error : 209;
}

static const char *const outcome_ids[KIMG_OUTCOME_COUNT] = {
	[KIMG_OUTCOME_SASS] = "sass",
	[KIMG_OUTCOME_PTX_JIT] = "ptx_jit",
	[KIMG_OUTCOME_CANNOT_RUN] = "cannot_run",
	[KIMG_OUTCOME_JIT_LINK] = "jit_link",
};

const char *kimg_outcome_id(enum kimg_outcome outcome)
{
	return (unsigned)outcome < KIMG_OUTCOME_COUNT ? outcome_ids[outcome] : "unknown";
}

/* ---- the decision order: predicates ---- */

static bool is_sass(const struct kimg_rule_ctx *c) { return c->img->kind == KIMG_IMAGE_SASS; }
static bool is_ptx(const struct kimg_rule_ctx *c) { return c->img->kind == KIMG_IMAGE_PTX; }
static bool variant_is(const struct kimg_rule_ctx *c, enum kimg_arch_variant v) { return c->img->arch.variant == v; }

static bool not_loadable(const struct kimg_rule_ctx *c) { return !is_sass(c) && !is_ptx(c); }
static bool sass_a_other_cc(const struct kimg_rule_ctx *c)
{
	return is_sass(c) && variant_is(c, KIMG_VARIANT_A) && c->img_sm != c->dev_sm;
}
static bool sass_f_outside(const struct kimg_rule_ctx *c)
{
	return is_sass(c) && variant_is(c, KIMG_VARIANT_F) && !kimg_family_covers(c->img_sm, c->dev_sm);
}
/* Variants past 'f' are not produced by any parser; judge them as plain. */
static bool sass_plain(const struct kimg_rule_ctx *c)
{
	return is_sass(c) && !variant_is(c, KIMG_VARIANT_A) && !variant_is(c, KIMG_VARIANT_F);
}
static bool sass_other_major(const struct kimg_rule_ctx *c)
{
	return sass_plain(c) && c->img_sm / 10 != c->dev_sm / 10;
}
static bool sass_tegra_mismatch(const struct kimg_rule_ctx *c)
{
	return sass_plain(c) && kimg_sm_is_tegra(c->img_sm) != c->dev_tegra;
}
static bool sass_minor_high(const struct kimg_rule_ctx *c)
{
	return sass_plain(c) && c->img_sm % 10 > c->dev_sm % 10;
}
static bool sass_forced_jit(const struct kimg_rule_ctx *c) { return is_sass(c) && c->dev->force_ptx_jit; }
static bool sass_a(const struct kimg_rule_ctx *c) { return is_sass(c) && variant_is(c, KIMG_VARIANT_A); }
static bool sass_f(const struct kimg_rule_ctx *c) { return is_sass(c) && variant_is(c, KIMG_VARIANT_F); }

static bool ptx_a_other_cc(const struct kimg_rule_ctx *c)
{
	return is_ptx(c) && variant_is(c, KIMG_VARIANT_A) && c->img_sm != c->dev_sm;
}
static bool ptx_f_outside(const struct kimg_rule_ctx *c)
{
	return is_ptx(c) && variant_is(c, KIMG_VARIANT_F) && !kimg_family_covers(c->img_sm, c->dev_sm);
}
static bool ptx_newer(const struct kimg_rule_ctx *c) { return is_ptx(c) && c->img_sm > c->dev_sm; }
static bool ptx_jit_disabled(const struct kimg_rule_ctx *c) { return is_ptx(c) && c->dev->disable_ptx_jit; }
static bool ptx_isa_too_new(const struct kimg_rule_ctx *c)
{
	return is_ptx(c) && c->max_isa != 0 && c->dev->driver_version <= isa_table_newest_cuda() &&
	       c->img->ptx_isa > c->max_isa;
}
static bool ptx_plain(const struct kimg_rule_ctx *c) { return is_ptx(c) && variant_is(c, KIMG_VARIANT_PLAIN); }
static bool ptx_any(const struct kimg_rule_ctx *c) { return is_ptx(c); }

#define ROW(k, pred, out, why) { k, pred, KIMG_OUTCOME_##out, KIMG_REASON_##why }
static const struct kimg_rule_row rule_rows[] = {
	/* LTO-IR and unknown entries are linker input, never loaded [docs/format.md §5, §13] */
	ROW("L1", not_loadable, CANNOT_RUN, NOT_LOADABLE),
	/* §1 step 1: cubins under S1-S4 */
	ROW("S3", sass_a_other_cc, CANNOT_RUN, ARCH_SPECIFIC),    /* a: exactly one CC [§2 S3] */
	ROW("S4", sass_f_outside, CANNOT_RUN, FAMILY),            /* f: family members only [§2 S4, §2.2] */
	ROW("S1", sass_other_major, CANNOT_RUN, DIFFERENT_MAJOR), /* never across majors [§2 S1] [V] */
	ROW("S2", sass_tegra_mismatch, CANNOT_RUN, TEGRA_MISMATCH), /* iGPU vs dGPU [§2 S2, §2.1] */
	ROW("S1", sass_minor_high, CANNOT_RUN, MINOR_TOO_HIGH),   /* device minor >= cubin minor [§2 S1] */
	ROW("P6", sass_forced_jit, CANNOT_RUN, SASS_IGNORED),     /* CUDA_FORCE_PTX_JIT [§3 P6] [V] */
	ROW("S3", sass_a, SASS, FITS),
	ROW("S4", sass_f, SASS, FITS),
	ROW("S1", is_sass, SASS, FITS),
	/* §1 steps 2-3: PTX by target (P1-P3), then the switches and the ISA */
	ROW("P2", ptx_a_other_cc, CANNOT_RUN, ARCH_SPECIFIC),     /* compute_XYa [§3 P2] */
	ROW("P2", ptx_f_outside, CANNOT_RUN, FAMILY),             /* compute_XYf [§3 P2] */
	ROW("P3", ptx_newer, CANNOT_RUN, PTX_NEWER_THAN_DEVICE),  /* [§3 P3] [V] */
	ROW("P6", ptx_jit_disabled, CANNOT_RUN, JIT_DISABLED),    /* §1 step 3a, 223 [V] */
	ROW("P4", ptx_isa_too_new, CANNOT_RUN, PTX_ISA_TOO_NEW),  /* §1 step 3b, 222 [§3 P4/P5] [V] */
	ROW("P1", ptx_plain, PTX_JIT, FITS),                      /* any CC >= target, Tegra too [§3 P1] */
	ROW("P2", ptx_any, PTX_JIT, FITS),
};
#undef ROW

size_t kimg_rule_row_count(void)
{
	return ARRAY_SIZE(rule_rows);
}

const struct kimg_rule_row *kimg_rule_row_at(size_t index)
{
	return index < ARRAY_SIZE(rule_rows) ? &rule_rows[index] : NULL;
}
