/* SPDX-License-Identifier: Apache-2.0 */
/* Applies the decision table of rules_tables.c to one image, and the
 * driver's selection (docs/rules.md §1) to a module. Pure: no state,
 * no allocation, no I/O. */
#include "rules.h"

#include "rules_tables.h"

static void rule_ctx_init(struct kimg_rule_ctx *ctx, const struct kimg_image *img, const struct kimg_device *dev)
{
	ctx->img = img;
	ctx->dev = dev;
	ctx->dev_sm = dev->cc.sm;
	ctx->img_sm = kimg_sm_alias(img->arch.sm, dev->cc.sm);
	/* Binary compatibility follows the CC, not the "integrated" attribute:
	 * GB10 (12.1) is integrated yet runs desktop sm_120 code (§2.1), and
	 * every Tegra CC is in the table. dev->tegra stays informational. */
	ctx->dev_tegra = kimg_sm_is_tegra(dev->cc.sm);
	ctx->max_isa = kimg_driver_max_ptx_isa(dev->driver_version);
}

size_t kimg_rules_decide(const struct kimg_image *img, const struct kimg_device *dev)
{
	struct kimg_rule_ctx ctx;
	rule_ctx_init(&ctx, img, dev);
	size_t n = kimg_rule_row_count();
	for (size_t i = 0; i < n; i++)
		if (kimg_rule_row_at(i)->applies(&ctx))
			return i;
	return n;
}

void kimg_rules_check_image(const struct kimg_image *img, const struct kimg_device *dev,
			    struct kimg_image_verdict *out)
{
	const struct kimg_rule_row *row = kimg_rule_row_at(kimg_rules_decide(img, dev));
	/* The table ends in rows that match every SASS/PTX image and starts with
	 * one for everything else, so row is never NULL; stay safe anyway. */
	out->outcome = row ? row->outcome : KIMG_OUTCOME_CANNOT_RUN;
	out->reason = row ? row->reason : KIMG_REASON_NOT_LOADABLE;
	out->rule = row ? row->key : "L1";
}

/* Selection among usable images (documented order, tested in test_rules.c):
 * cubins before PTX (§1 step 1, P6); then the nearest arch, i.e. the highest
 * SM not above the device (after Thor renumbering); on a tie the most
 * specific code, `a` over `f` over plain, since feature sets nest
 * baseline ⊂ f ⊂ a (§2.2); then the first in file order. NVIDIA documents
 * only "cubin over PTX"; the rest follows docs/format.md §13 (unverified). */
static unsigned selection_key(const struct kimg_image *img, const struct kimg_device *dev)
{
	static const unsigned variant_pref[KIMG_VARIANT_COUNT] = {
		[KIMG_VARIANT_PLAIN] = 0, [KIMG_VARIANT_A] = 2, [KIMG_VARIANT_F] = 1,
	};
	unsigned v = img->arch.variant < KIMG_VARIANT_COUNT ? variant_pref[img->arch.variant] : 0;
	unsigned kind = img->kind == KIMG_IMAGE_SASS ? 1 : 0;
	return kind << 24 | kimg_sm_alias(img->arch.sm, dev->cc.sm) << 4 | v;
}

/* Raw PTX (no fatbin entry, flags 0) whose target is above the device
 * fails in the JIT with 218, not 209 (§3 P3, §5) [V]. */
static bool is_raw_ptx(const struct kimg_image *imgs, size_t n)
{
	return n == 1 && imgs[0].kind == KIMG_IMAGE_PTX && imgs[0].flags == 0;
}

void kimg_rules_check_module(const struct kimg_image *imgs, size_t n, const struct kimg_device *dev,
			     struct kimg_image_verdict *per, struct kimg_module_verdict *out)
{
	int best = -1, worst = -1;
	unsigned best_key = 0;
	struct kimg_image_verdict best_v = { 0 }, worst_v = { 0 };

	for (size_t i = 0; i < n; i++) {
		struct kimg_image_verdict v;
		kimg_rules_check_image(&imgs[i], dev, &v);
		if (per)
			per[i] = v;
		if (v.reason == KIMG_REASON_FITS) {
			unsigned key = selection_key(&imgs[i], dev);
			if (best < 0 || key > best_key) {
				best = (int)i;
				best_key = key;
				best_v = v;
			}
		} else if (worst < 0 || kimg_reason_rank(v.reason) > kimg_reason_rank(worst_v.reason)) {
			worst = (int)i;
			worst_v = v;
		}
	}

	if (best >= 0) {
		out->outcome = best_v.outcome;
		out->reason = KIMG_REASON_FITS;
		out->selected = best;
		out->expected_error = 0;
		out->rule = best_v.rule;
		if (per) {
			/* §1 step 1 (a cubin was chosen) or step 2 (a PTX was) */
			const char *why = best_v.outcome == KIMG_OUTCOME_SASS ? "D1" : "D2";
			for (size_t i = 0; i < n; i++)
				if ((int)i != best && per[i].reason == KIMG_REASON_FITS) {
					per[i].reason = KIMG_REASON_SHADOWED;
					per[i].rule = why;
				}
		}
		return;
	}

	out->outcome = KIMG_OUTCOME_CANNOT_RUN;
	out->selected = -1;
	if (worst < 0) { /* n == 0: §1 step 4, nothing at all */
		out->reason = KIMG_REASON_NO_IMAGE;
		out->expected_error = 209;
		out->rule = "D4";
		return;
	}
	out->reason = worst_v.reason;
	out->rule = worst_v.rule;
	out->expected_error = kimg_reason_error(worst_v.reason);
	if (worst_v.reason == KIMG_REASON_PTX_NEWER_THAN_DEVICE && is_raw_ptx(imgs, n))
		out->expected_error = 218;
}
