/* SPDX-License-Identifier: Apache-2.0 */
/* The fix generator: docs/rules.md §8 ("Fix table", "Verdict wording by
 * case") as data. A case is picked from the module verdict by one table,
 * build settings come from the per-CC table, and the advice sentence is a
 * template whose {names} are filled from the device and the images. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "fix.h"
#include "rules_tables.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- per-CC build rows [§8 Fix table, §8 PyTorch wheels] ---- */

#define WHEEL_OLD "cu126 wheels (CC 5.0-7.0)"
#define WHEEL_ANY "any current CUDA wheel (cu126, cu128, cu130)"
#define WHEEL_NEW "cu128 or newer wheels (CC 10.x/12.x)"
#define WHEEL_JETSON "NVIDIA JetPack builds (no official PyTorch wheel carries sm_%u)"

static const struct {
	uint16_t sm;
	bool ptx;           /* CMake "XY" (SASS + PTX); false: "XY-real" as §8 lists for CC <= 7.5 */
	const char *wheel;  /* may hold one %u: the SM */
} build_rows[] = {
	{ 50, false, WHEEL_OLD }, { 52, false, WHEEL_OLD },
	{ 53, false, WHEEL_JETSON }, /* Tegra: no official wheel [§8] */
	{ 60, false, WHEEL_OLD }, { 61, false, WHEEL_OLD },
	{ 62, false, WHEEL_JETSON },
	{ 70, false, WHEEL_OLD },
	{ 72, false, WHEEL_JETSON },
	{ 75, false, WHEEL_ANY }, /* §8: "75-real" */
	{ 80, true, WHEEL_ANY }, { 86, true, WHEEL_ANY },
	{ 87, true, WHEEL_JETSON }, /* Orin: JetPack builds [§8, 3P JAX-40492] */
	{ 89, true, WHEEL_ANY }, { 90, true, WHEEL_ANY },
	{ 100, true, WHEEL_NEW },
	{ 101, true, "cu130 wheels (aarch64) after a CUDA 13 driver, which reports this GPU as 11.0" },
	{ 103, true, WHEEL_NEW },
	{ 110, true, "cu130 wheels (aarch64)" }, /* Thor [§8] */
	{ 120, true, WHEEL_NEW }, { 121, true, WHEEL_NEW },
};

/* ---- cases [§8 Verdict wording by case] ---- */

enum fix_case {
	CASE_FITS_SASS = 0,
	CASE_FITS_PTX,
	CASE_JIT_DISABLED,  /* 223 */
	CASE_PTX_ISA,       /* 222 */
	CASE_PTX_ISA_UNKNOWN, /* 222, ISA newer than every release in the table */
	CASE_FORCE_JIT,     /* CUDA_FORCE_PTX_JIT, no PTX */
	CASE_OLD_CC,        /* CC < 7.5: CUDA 13 cannot target it */
	CASE_TEGRA,         /* S2 */
	CASE_ARCH_SPECIFIC, /* S3 */
	CASE_NO_IMAGE,
	CASE_GENERIC,
	CASE_COUNT
};

enum build_mode { BUILD_BOTH = 0, BUILD_SASS, BUILD_PTX };

static const struct {
	enum build_mode mode;
	const char *advice;
} cases[CASE_COUNT] = {
	[CASE_FITS_SASS] = { BUILD_BOTH, "Nothing to fix: the module has {sel} code for CC {cc}." },
	[CASE_FITS_PTX] = { BUILD_BOTH,
		"Runs only after the driver JIT-compiles {sel} PTX; ship {sm} SASS to skip the JIT cost." },
	[CASE_JIT_DISABLED] = { BUILD_SASS,
		"CUDA_DISABLE_PTX_JIT is set and the module has only PTX for CC {cc} (223): "
		"unset CUDA_DISABLE_PTX_JIT, or ship {sm} SASS." },
	[CASE_PTX_ISA] = { BUILD_SASS,
		"The PTX is ISA {isa} (CUDA {isa_cuda}) but the driver (CUDA {drv_cuda}) takes ISA {drv_isa} at most "
		"(222): update the driver to {min_driver}+, use the forward-compatibility package "
		"(data center GPUs only), or rebuild with {sm} SASS." },
	[CASE_PTX_ISA_UNKNOWN] = { BUILD_SASS,
		"The PTX is ISA {isa}, newer than any CUDA release kimg knows, and the driver (CUDA {drv_cuda}) takes "
		"ISA {drv_isa} at most (222): install a driver that supports PTX ISA {isa}, or rebuild with {sm} SASS." },
	[CASE_FORCE_JIT] = { BUILD_PTX,
		"CUDA_FORCE_PTX_JIT is set, so cubins are ignored, and the module has no PTX for CC {cc}: "
		"unset CUDA_FORCE_PTX_JIT, or ship {compute} PTX." },
	[CASE_OLD_CC] = { BUILD_BOTH,
		"CUDA 13 cannot build for CC {cc} (its oldest target is sm_75): rebuild with CUDA 12.9 or older "
		"for {sm} and run on an R580 driver, the last branch for this GPU." },
	[CASE_TEGRA] = { BUILD_BOTH,
		"CC {cc} is a Tegra (Jetson) GPU and desktop cubins never run on it (S2): "
		"build {sm} SASS, or ship PTX for {compute} or older." },
	[CASE_ARCH_SPECIFIC] = { BUILD_BOTH,
		"The module has arch-specific {other} code, which runs on CC {other_cc} alone (S3): "
		"build {targets} SASS, or ship plain PTX." },
	[CASE_NO_IMAGE] = { BUILD_BOTH, "The module holds no device code: rebuild with {sm} SASS and {compute} PTX." },
	[CASE_GENERIC] = { BUILD_BOTH,
		"No {sm} SASS and no PTX this GPU can JIT: rebuild with {sm} SASS, plus {compute} PTX for newer GPUs." },
};

/* Failed verdicts: first matching row wins. KIMG_REASON_COUNT = any reason. */
static const struct {
	enum kimg_reason reason;
	bool old_cc_only;
	enum fix_case fcase;
} case_rows[] = {
	{ KIMG_REASON_JIT_DISABLED, false, CASE_JIT_DISABLED },
	{ KIMG_REASON_PTX_ISA_TOO_NEW, false, CASE_PTX_ISA },
	{ KIMG_REASON_SASS_IGNORED, false, CASE_FORCE_JIT },
	{ KIMG_REASON_COUNT, true, CASE_OLD_CC }, /* any rebuild must use CUDA <= 12.9 [§8] */
	{ KIMG_REASON_TEGRA_MISMATCH, false, CASE_TEGRA },
	{ KIMG_REASON_ARCH_SPECIFIC, false, CASE_ARCH_SPECIFIC },
	{ KIMG_REASON_NO_IMAGE, false, CASE_NO_IMAGE },
	{ KIMG_REASON_COUNT, false, CASE_GENERIC },
};

static enum fix_case pick_case(const struct kimg_module_verdict *v, bool old_cc)
{
	if (v->outcome == KIMG_OUTCOME_SASS)
		return CASE_FITS_SASS;
	if (v->outcome == KIMG_OUTCOME_PTX_JIT)
		return CASE_FITS_PTX;
	for (size_t i = 0; i < ARRAY_SIZE(case_rows); i++)
		if ((case_rows[i].reason == KIMG_REASON_COUNT || case_rows[i].reason == v->reason) &&
		    (!case_rows[i].old_cc_only || old_cc))
			return case_rows[i].fcase;
	return CASE_GENERIC;
}

/* ---- template values ---- */

struct fix_vars {
	char cc[12], sm[16], compute[20], sel[20], other[20], other_cc[12], targets[48];
	char isa[16], isa_cuda[16], drv_isa[16], drv_cuda[16], min_driver[24];
};

static void fmt_version(char *buf, size_t size, int cuda) /* 12080 -> "12.8" */
{
	snprintf(buf, size, "%d.%d", cuda / 1000, cuda % 1000 / 10);
}

static void fmt_isa(char *buf, size_t size, unsigned isa) /* 807 -> "8.7" */
{
	snprintf(buf, size, "%u.%u", KIMG_ISA_MAJOR(isa), KIMG_ISA_MINOR(isa));
}

static void image_name(const struct kimg_image *img, char *buf, size_t size)
{
	kimg_arch_format(img->arch, img->kind == KIMG_IMAGE_PTX, buf, size);
}

/* "sm_100, sm_100a or sm_100f": the targets that would run on the device
 * (its own SM plus the a/f variants a toolkit can emit, §7). */
static void fmt_targets(char *buf, size_t size, unsigned sm)
{
	struct kimg_arch a = { (uint16_t)sm, KIMG_VARIANT_PLAIN };
	char names[KIMG_VARIANT_COUNT][16];
	size_t count = 0;
	static const enum kimg_arch_variant order[] = { KIMG_VARIANT_PLAIN, KIMG_VARIANT_A, KIMG_VARIANT_F };
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		if (!kimg_toolkit_target_find(sm, order[i]))
			continue;
		a.variant = (uint8_t)order[i];
		kimg_arch_format(a, false, names[count++], sizeof names[0]);
	}
	buf[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		const char *sep = i == 0 ? "" : i + 1 == count ? " or " : ", ";
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s", sep, names[i]);
	}
}

/* Values from the images: the selected one, the first `a` image that
 * failed S3/P2, and the lowest PTX ISA that the driver rejected. */
static void scan_images(const struct kimg_image *imgs, size_t n, const struct kimg_device *dev,
			const struct kimg_module_verdict *v, struct fix_vars *vars, unsigned *bad_isa)
{
	*bad_isa = 0;
	for (size_t i = 0; i < n; i++) {
		struct kimg_image_verdict iv;
		kimg_rules_check_image(&imgs[i], dev, &iv);
		if ((int)i == v->selected)
			image_name(&imgs[i], vars->sel, sizeof vars->sel);
		if (iv.reason == KIMG_REASON_ARCH_SPECIFIC && !vars->other[0]) {
			image_name(&imgs[i], vars->other, sizeof vars->other);
			struct kimg_arch plain = { imgs[i].arch.sm, KIMG_VARIANT_PLAIN };
			kimg_arch_format_cc(plain, vars->other_cc, sizeof vars->other_cc);
		}
		if (iv.reason == KIMG_REASON_PTX_ISA_TOO_NEW && (!*bad_isa || imgs[i].ptx_isa < *bad_isa))
			*bad_isa = imgs[i].ptx_isa;
	}
}

static const char *var_value(const struct fix_vars *v, const char *name, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
	} names[] = {
#define V(f) { #f, offsetof(struct fix_vars, f) }
		V(cc), V(sm), V(compute), V(sel), V(other), V(other_cc), V(targets),
		V(isa), V(isa_cuda), V(drv_isa), V(drv_cuda), V(min_driver),
#undef V
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i].name) == len && memcmp(names[i].name, name, len) == 0)
			return (const char *)v + names[i].off;
	return "";
}

/* Expand "{name}" placeholders; false when the result did not fit. */
static bool expand(const char *tmpl, const struct fix_vars *v, char *out, size_t size)
{
	size_t n = 0;
	for (const char *p = tmpl; *p;) {
		const char *piece = p, *end;
		size_t len = 1;
		if (*p == '{' && (end = strchr(p, '}')) != NULL) {
			piece = var_value(v, p + 1, (size_t)(end - p - 1));
			len = strlen(piece);
			p = end + 1;
		} else {
			p++;
		}
		if (n + len >= size)
			return false;
		memcpy(out + n, piece, len);
		n += len;
	}
	out[n] = '\0';
	return true;
}

/* ---- the module's targets plus the device's [§8] ---- */

#define TARGETS_MAX 48
struct target_set {
	struct {
		struct kimg_arch arch;
		bool sass, ptx;
	} t[TARGETS_MAX];
	size_t n;
};

/* Merge by arch; kept sorted by SM, then plain < a < f. Past TARGETS_MAX
 * (no real module has that many distinct targets) the rest is dropped. */
static void target_add(struct target_set *ts, struct kimg_arch a, bool sass, bool ptx)
{
	size_t i = 0;
	while (i < ts->n && (ts->t[i].arch.sm < a.sm || (ts->t[i].arch.sm == a.sm && ts->t[i].arch.variant < a.variant)))
		i++;
	if (i < ts->n && ts->t[i].arch.sm == a.sm && ts->t[i].arch.variant == a.variant) {
		ts->t[i].sass |= sass;
		ts->t[i].ptx |= ptx;
		return;
	}
	if (ts->n == TARGETS_MAX)
		return;
	memmove(&ts->t[i + 1], &ts->t[i], (ts->n - i) * sizeof ts->t[0]);
	ts->t[i].arch = a;
	ts->t[i].sass = sass;
	ts->t[i].ptx = ptx;
	ts->n++;
}

static bool append(char *buf, size_t size, const char *sep, const char *piece)
{
	size_t used = strlen(buf);
	int w = snprintf(buf + used, size - used, "%s%s", used ? sep : "", piece);
	return w >= 0 && (size_t)w < size - used;
}

/* "-gencode arch=compute_80,code=sm_80 ...", "80-real;90", "8.0;9.0+PTX". */
static bool render_targets(const struct target_set *ts, struct kimg_fix *fix)
{
	static const char *const variant_suffix[KIMG_VARIANT_COUNT] = { "", "a", "f" };
	bool ok = true;
	for (size_t i = 0; i < ts->n; i++) {
		struct kimg_arch a = ts->t[i].arch;
		const char *v = a.variant < KIMG_VARIANT_COUNT ? variant_suffix[a.variant] : "";
		char piece[96];
		if (ts->t[i].sass) {
			snprintf(piece, sizeof piece, "-gencode arch=compute_%u%s,code=sm_%u%s", a.sm, v, a.sm, v);
			ok &= append(fix->nvcc, sizeof fix->nvcc, " ", piece);
		}
		if (ts->t[i].ptx) {
			snprintf(piece, sizeof piece, "-gencode arch=compute_%u%s,code=compute_%u%s", a.sm, v, a.sm, v);
			ok &= append(fix->nvcc, sizeof fix->nvcc, " ", piece);
		}
		snprintf(piece, sizeof piece, "%u%s%s", a.sm, v,
			 ts->t[i].sass && ts->t[i].ptx ? "" : ts->t[i].sass ? "-real" : "-virtual");
		ok &= append(fix->cmake, sizeof fix->cmake, ";", piece);
		/* torch has no PTX-only form: "+PTX" adds PTX next to the SASS */
		snprintf(piece, sizeof piece, "%u.%u%s%s", a.sm / 10, a.sm % 10, v, ts->t[i].ptx ? "+PTX" : "");
		ok &= append(fix->torch_arch_list, sizeof fix->torch_arch_list, ";", piece);
	}
	return ok;
}

/* ---- whose code is it ---- */

/* PyTorch's own libraries (the wheel line is for them alone): files under
 * a torch/lib/ directory as the torch wheels install them, and PyTorch's
 * library names anywhere (libtorch*.so, libc10*.so, libcaffe2*). */
static const char *const pytorch_prefixes[] = { "libtorch", "libc10", "libcaffe2" };

bool kimg_file_is_pytorch(const char *file)
{
	if (!file)
		return false;
	const char *slash = strrchr(file, '/');
	const char *base = slash ? slash + 1 : file;
	if (strstr(file, "torch/lib/"))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(pytorch_prefixes); i++)
		if (strncmp(base, pytorch_prefixes[i], strlen(pytorch_prefixes[i])) == 0)
			return true;
	return false;
}

int kimg_fix_for(const struct kimg_device *dev, const struct kimg_module_verdict *verdict,
		 const struct kimg_image *imgs, size_t n, struct kimg_fix *fix)
{
	return kimg_fix_for_file(dev, verdict, imgs, n, NULL, fix);
}

int kimg_fix_for_file(const struct kimg_device *dev, const struct kimg_module_verdict *verdict,
		      const struct kimg_image *imgs, size_t n, const char *file, struct kimg_fix *fix)
{
	memset(fix, 0, sizeof *fix);
	unsigned sm = dev->cc.sm;
	const struct kimg_toolkit_target *tt = kimg_toolkit_target_find(sm, KIMG_VARIANT_PLAIN);
	size_t row = ARRAY_SIZE(build_rows);
	for (size_t i = 0; i < ARRAY_SIZE(build_rows); i++)
		if (build_rows[i].sm == sm)
			row = i;
	if (!tt || row == ARRAY_SIZE(build_rows))
		return -KIMG_ENOTFOUND;

	struct fix_vars vars;
	memset(&vars, 0, sizeof vars);
	struct kimg_arch plain = { (uint16_t)sm, KIMG_VARIANT_PLAIN };
	kimg_arch_format_cc(plain, vars.cc, sizeof vars.cc);
	kimg_arch_format(plain, false, vars.sm, sizeof vars.sm);
	kimg_arch_format(plain, true, vars.compute, sizeof vars.compute);
	fmt_targets(vars.targets, sizeof vars.targets, sm);
	unsigned bad_isa;
	scan_images(imgs, n, dev, verdict, &vars, &bad_isa);

	bool old_cc = tt->last_toolkit != 0;
	enum fix_case fc = pick_case(verdict, old_cc);
	enum build_mode mode = cases[fc].mode;
	if (mode == BUILD_BOTH && !build_rows[row].ptx)
		mode = BUILD_SASS;

	/* nvcc / CMake / TORCH_CUDA_ARCH_LIST [§8, §10 arch-list syntaxes]:
	 * the module's current targets plus what this GPU needs, so applying
	 * the fix never takes code away from the GPUs the module already runs on. */
	struct target_set ts = { .n = 0 };
	for (size_t i = 0; i < n; i++)
		if (imgs[i].kind == KIMG_IMAGE_SASS || imgs[i].kind == KIMG_IMAGE_PTX)
			target_add(&ts, imgs[i].arch, imgs[i].kind == KIMG_IMAGE_SASS, imgs[i].kind == KIMG_IMAGE_PTX);
	target_add(&ts, plain, mode != BUILD_PTX, mode != BUILD_SASS);
	if (!render_targets(&ts, fix))
		return -KIMG_ELIMIT;

	fix->min_toolkit = tt->first_toolkit;
	fix->max_toolkit = tt->last_toolkit;
	/* The wheel line speaks to PyTorch users about PyTorch's own code; for
	 * anyone else's module it would be advice about someone else's build. */
	if (!file || kimg_file_is_pytorch(file))
		snprintf(fix->wheel, sizeof fix->wheel, build_rows[row].wheel, sm);

	/* Driver: for 222 the one of the toolkit that wrote the PTX; otherwise
	 * the one that runs the newest allowed (CC < 7.5) or the first toolkit. */
	int drv_for = fix->max_toolkit ? fix->max_toolkit : fix->min_toolkit;
	if (fc == CASE_PTX_ISA && bad_isa) {
		fmt_isa(vars.isa, sizeof vars.isa, bad_isa);
		drv_for = kimg_ptx_isa_cuda_version((uint16_t)bad_isa);
		fmt_version(vars.isa_cuda, sizeof vars.isa_cuda, drv_for);
		fmt_isa(vars.drv_isa, sizeof vars.drv_isa, kimg_driver_max_ptx_isa(dev->driver_version));
		fmt_version(vars.drv_cuda, sizeof vars.drv_cuda, dev->driver_version);
		if (drv_for == 0) /* no release stamps this ISA: no driver to name */
			fc = CASE_PTX_ISA_UNKNOWN;
	}
	const char *drv = kimg_cuda_min_driver(drv_for);
	snprintf(fix->min_driver, sizeof fix->min_driver, "%s", drv ? drv : "");
	snprintf(vars.min_driver, sizeof vars.min_driver, "%s", fix->min_driver);

	/* Every template fits for every table row (test_fix.c walks them all);
	 * a miss would be a table defect, reported rather than truncated. */
	return expand(cases[fc].advice, &vars, fix->advice, sizeof fix->advice) ? 0 : -KIMG_ELIMIT;
}
