/* SPDX-License-Identifier: Apache-2.0 */
/* The PTX JIT fallback (KIMG_FALLBACK=ptx / force-ptx), pure part: given a
 * module's images and the device, decide whether a PTX image can stand in
 * for the module and how it must be rewritten, then build that stand-in
 * (plain, NUL-terminated PTX text) from the image.
 *
 * Deciding follows the rules of docs/rules.md: an image the rules reject
 * only for its .target (P2, P3) or its .version (P4) is made acceptable by
 * lowering those values (ptx_rewrite.h); CUDA_DISABLE_PTX_JIT (P6) and a
 * module without PTX cannot be rescued. Lowering does not make the code
 * valid for the lower target: the JIT may still reject it (218), and code
 * chosen by __CUDA_ARCH__ keeps the original target's path (§3). */
#ifndef KIMG_FALLBACK_PLAN_H
#define KIMG_FALLBACK_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "error.h"
#include "image.h"
#include "payload.h"
#include "ptx_rewrite.h"
#include "rules.h"

enum kimg_fallback_mode {
	KIMG_FALLBACK_MODE_PTX = 0,   /* only modules the rules say cannot run */
	KIMG_FALLBACK_MODE_FORCE,     /* every module with PTX, SASS ignored (per-module CUDA_FORCE_PTX_JIT) */
	KIMG_FALLBACK_MODE_COUNT
};

enum kimg_fallback_outcome {
	KIMG_FALLBACK_OUTCOME_NOT_NEEDED = 0, /* mode ptx: the module runs as it is */
	KIMG_FALLBACK_OUTCOME_REWRITE,        /* load plan.image's PTX, rewritten as planned */
	KIMG_FALLBACK_OUTCOME_NO_PTX,         /* no PTX image at all (SASS only): not rescuable */
	KIMG_FALLBACK_OUTCOME_JIT_DISABLED,   /* CUDA_DISABLE_PTX_JIT: the driver would refuse any PTX */
	KIMG_FALLBACK_OUTCOME_UNUSABLE_PTX,   /* PTX present, none rescuable by lowering (ISA too new
	                                         for an unknown driver, or not loadable) */
	KIMG_FALLBACK_OUTCOME_COUNT
};

struct kimg_fallback_plan {
	enum kimg_fallback_outcome outcome;
	struct kimg_module_verdict before; /* the module as it is (rules.h) */
	int image;               /* REWRITE: index of the PTX image to use, else -1 */
	uint16_t new_isa;        /* .version of the output (lowered, or the entry's own for insertion); 0: keep */
	unsigned new_sm;         /* .target lowered to this SM; 0: keep the targets */
	bool lowers_isa;         /* the image's ISA is above the driver's */
	bool lowers_target;      /* the image's target does not fit the device as it is */
};

/* Decide for a module of n images on dev. Pure, no allocation. Returns 0,
 * or -EINVAL for bad arguments (imgs NULL with n > 0, plan NULL, mode out
 * of range). */
int kimg_fallback_plan(const struct kimg_image *imgs, size_t n, const struct kimg_device *dev,
		       enum kimg_fallback_mode mode, struct kimg_fallback_plan *plan);

/* Capacities kimg_fallback_build needs for img: scratch for the
 * decompressed payload (0 when the payload is stored plain) and out for
 * the rewritten text. Returns 0, or -KIMG_ELIMIT above KIMG_PAYLOAD_MAX. */
int kimg_fallback_sizes(const struct kimg_image *img, uint64_t *scratch_cap, size_t *out_cap);

/* The stand-in text for img as planned: the payload (decompressed through
 * codecs into scratch when compressed) rewritten by kimg_ptx_rewrite with
 * plan->new_isa / plan->new_sm into out, NUL-terminated; *out_len excludes
 * the NUL. info may be NULL. Returns 0; -EINVAL when img is not PTX;
 * kimg_payload_get's and kimg_ptx_rewrite's errors otherwise. */
int kimg_fallback_build(const struct kimg_image *img, const struct kimg_fallback_plan *plan,
			const struct kimg_codecs *codecs, void *scratch, uint64_t scratch_cap, char *out,
			size_t out_cap, size_t *out_len, struct kimg_ptx_rewrite_info *info, struct kimg_error *err);

/* "not_needed", "rewrite", "no_ptx", "jit_disabled", "unusable_ptx" */
const char *kimg_fallback_outcome_id(enum kimg_fallback_outcome o);
/* A sentence for the report: "the module has no PTX to JIT-compile (SASS only)" */
const char *kimg_fallback_outcome_text(enum kimg_fallback_outcome o);

#endif
