/* SPDX-License-Identifier: Apache-2.0 */
/* Deciding and building the PTX JIT fallback (fallback_plan.h).
 *
 * What lowering can repair is a table keyed by the reason the rules give
 * for an image (rules.h), so the fallback never second-guesses the rules:
 * it asks them once for the image as it is, and once more for the same
 * image with its target moved onto the device, which tells whether the
 * .version must come down as well (P4) or the JIT is off (P6). */
#include "fallback_plan.h"

#include <errno.h>
#include <string.h>

/* How an image rejected for `reason` can be made acceptable. */
enum repair {
	REPAIR_NONE = 0, /* nothing the rewriter can change */
	REPAIR_KEEP,     /* usable as it is */
	REPAIR_TARGET,   /* lower .target to the device (P2 a/f elsewhere, P3 newer) */
	REPAIR_ISA,      /* lower .version to the driver's ISA (P4) */
	REPAIR_JIT_OFF,  /* CUDA_DISABLE_PTX_JIT: nothing helps (P6) */
};

static const enum repair repair_for_reason[KIMG_REASON_COUNT] = {
	[KIMG_REASON_FITS] = REPAIR_KEEP,
	[KIMG_REASON_ARCH_SPECIFIC] = REPAIR_TARGET,       /* compute_XYa for another CC [P2] */
	[KIMG_REASON_FAMILY] = REPAIR_TARGET,              /* compute_XYf outside its family [P2] */
	[KIMG_REASON_PTX_NEWER_THAN_DEVICE] = REPAIR_TARGET, /* [P3] */
	[KIMG_REASON_PTX_ISA_TOO_NEW] = REPAIR_ISA,        /* [P4] */
	[KIMG_REASON_JIT_DISABLED] = REPAIR_JIT_OFF,       /* [P6] */
	/* SASS reasons, NOT_LOADABLE, SHADOWED, NO_IMAGE: REPAIR_NONE */
};

static const struct {
	const char *id;
	const char *text;
} outcome_rows[KIMG_FALLBACK_OUTCOME_COUNT] = {
	[KIMG_FALLBACK_OUTCOME_NOT_NEEDED] = { "not_needed", "the module runs on this device as it is" },
	[KIMG_FALLBACK_OUTCOME_REWRITE] = { "rewrite", "PTX rewritten for this device and JIT-compiled" },
	[KIMG_FALLBACK_OUTCOME_NO_PTX] = { "no_ptx", "not rescuable: the module has no PTX to JIT-compile (SASS only)" },
	[KIMG_FALLBACK_OUTCOME_JIT_DISABLED] = { "jit_disabled",
					 "not rescuable: CUDA_DISABLE_PTX_JIT forbids JIT-compiling the PTX" },
	[KIMG_FALLBACK_OUTCOME_UNUSABLE_PTX] = { "unusable_ptx",
					 "not rescuable: no PTX image can be made acceptable by lowering "
					 ".version/.target" },
};

const char *kimg_fallback_outcome_id(enum kimg_fallback_outcome o)
{
	return (unsigned)o < KIMG_FALLBACK_OUTCOME_COUNT ? outcome_rows[o].id : "unknown";
}

const char *kimg_fallback_outcome_text(enum kimg_fallback_outcome o)
{
	return (unsigned)o < KIMG_FALLBACK_OUTCOME_COUNT ? outcome_rows[o].text : "unknown";
}

static enum repair repair_of(enum kimg_reason r)
{
	return (unsigned)r < KIMG_REASON_COUNT ? repair_for_reason[r] : REPAIR_NONE;
}

/* One PTX image's candidacy. class: 0 usable as is, 1 .version only,
 * 2 .target (and maybe .version); lower is better. */
struct candidate {
	bool ok;
	bool jit_off;
	int klass;
	bool lowers_isa, lowers_target;
};

static struct candidate judge(const struct kimg_image *img, const struct kimg_device *dev)
{
	struct candidate c = { 0 };
	struct kimg_image_verdict v;
	kimg_rules_check_image(img, dev, &v);
	switch (repair_of(v.reason)) {
	case REPAIR_KEEP:
		c.ok = true;
		break;
	case REPAIR_ISA:
		c.ok = kimg_driver_max_ptx_isa(dev->driver_version) != 0;
		c.klass = 1;
		c.lowers_isa = true;
		break;
	case REPAIR_TARGET: {
		/* the same image with its target on the device: what is left? */
		struct kimg_image moved = *img;
		struct kimg_image_verdict mv;
		moved.arch.sm = dev->cc.sm;
		moved.arch.variant = KIMG_VARIANT_PLAIN;
		kimg_rules_check_image(&moved, dev, &mv);
		enum repair rest = repair_of(mv.reason);
		c.klass = 2;
		c.lowers_target = true;
		c.lowers_isa = rest == REPAIR_ISA;
		c.jit_off = rest == REPAIR_JIT_OFF;
		c.ok = rest == REPAIR_KEEP || (rest == REPAIR_ISA && kimg_driver_max_ptx_isa(dev->driver_version) != 0);
		break;
	}
	case REPAIR_JIT_OFF:
		c.jit_off = true;
		break;
	case REPAIR_NONE:
		break;
	}
	return c;
}

/* a over f over plain, as the driver's selection (rules.c) */
static unsigned variant_rank(uint8_t v)
{
	return v == KIMG_VARIANT_A ? 2 : v == KIMG_VARIANT_F ? 1 : 0;
}

/* Is candidate a (image ia) better than b (image ib)? Usable-as-is and
 * .version-only candidates: the driver's own preference (highest target,
 * most specific). Target-lowering ones: the target closest above the
 * device, plain first, since that PTX uses the fewest instructions the
 * device may lack. */
static bool better(const struct candidate *a, const struct kimg_image *ia, const struct candidate *b,
		   const struct kimg_image *ib)
{
	if (a->klass != b->klass)
		return a->klass < b->klass;
	if (a->klass < 2) {
		if (ia->arch.sm != ib->arch.sm)
			return ia->arch.sm > ib->arch.sm;
		return variant_rank(ia->arch.variant) > variant_rank(ib->arch.variant);
	}
	if (ia->arch.sm != ib->arch.sm)
		return ia->arch.sm < ib->arch.sm;
	return variant_rank(ia->arch.variant) < variant_rank(ib->arch.variant);
}

int kimg_fallback_plan(const struct kimg_image *imgs, size_t n, const struct kimg_device *dev,
		       enum kimg_fallback_mode mode, struct kimg_fallback_plan *plan)
{
	if (!plan || !dev || (n > 0 && !imgs) || (unsigned)mode >= KIMG_FALLBACK_MODE_COUNT)
		return -EINVAL;
	memset(plan, 0, sizeof *plan);
	plan->image = -1;
	kimg_rules_check_module(imgs, n, dev, NULL, &plan->before);
	if (mode == KIMG_FALLBACK_MODE_PTX && plan->before.outcome != KIMG_OUTCOME_CANNOT_RUN) {
		plan->outcome = KIMG_FALLBACK_OUTCOME_NOT_NEEDED;
		return 0;
	}

	bool any_ptx = false, jit_off = false;
	struct candidate best = { 0 };
	for (size_t i = 0; i < n; i++) {
		if (imgs[i].kind != KIMG_IMAGE_PTX)
			continue;
		any_ptx = true;
		struct candidate c = judge(&imgs[i], dev);
		jit_off |= c.jit_off;
		if (c.ok && (plan->image < 0 || better(&c, &imgs[i], &best, &imgs[plan->image]))) {
			best = c;
			plan->image = (int)i;
		}
	}
	if (plan->image < 0) {
		plan->outcome = jit_off ? KIMG_FALLBACK_OUTCOME_JIT_DISABLED
			       : any_ptx ? KIMG_FALLBACK_OUTCOME_UNUSABLE_PTX
					 : KIMG_FALLBACK_OUTCOME_NO_PTX;
		return 0;
	}
	const struct kimg_image *img = &imgs[plan->image];
	plan->outcome = KIMG_FALLBACK_OUTCOME_REWRITE;
	plan->lowers_isa = best.lowers_isa;
	plan->lowers_target = best.lowers_target;
	/* The entry's own ISA when it stays: a .version that nvFatbin stripped
	 * from the text is put back from the header (docs/format.md §11). */
	plan->new_isa = best.lowers_isa ? kimg_driver_max_ptx_isa(dev->driver_version) : img->ptx_isa;
	plan->new_sm = best.lowers_target ? dev->cc.sm : 0;
	return 0;
}

int kimg_fallback_sizes(const struct kimg_image *img, uint64_t *scratch_cap, size_t *out_cap)
{
	bool compressed = img->compression != KIMG_COMPRESS_NONE;
	uint64_t text = compressed ? img->size : img->payload.size;
	if (text > KIMG_PAYLOAD_MAX)
		return -KIMG_ELIMIT;
	*scratch_cap = compressed ? img->size : 0;
	*out_cap = kimg_ptx_rewrite_bound(text);
	return 0;
}

int kimg_fallback_build(const struct kimg_image *img, const struct kimg_fallback_plan *plan,
			const struct kimg_codecs *codecs, void *scratch, uint64_t scratch_cap, char *out,
			size_t out_cap, size_t *out_len, struct kimg_ptx_rewrite_info *info, struct kimg_error *err)
{
	if (!img || !plan || img->kind != KIMG_IMAGE_PTX)
		return kimg_error_set(err, -EINVAL, img ? img->offset : 0, "fallback image is not PTX");
	struct kimg_span text;
	int rc = kimg_payload_get(img, codecs, scratch, scratch_cap, &text, err);
	if (rc < 0)
		return rc;
	return kimg_ptx_rewrite(text, plan->new_isa, plan->new_sm, out, out_cap, out_len, info, err);
}
