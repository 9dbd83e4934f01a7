/* Internal: the compatibility facts of docs/rules.md as
 * const tables, and the accessors rules.c and fix.c use to read them.
 * Nothing here is part of the public API; rules.h and fix.h are. */
#ifndef KIMG_RULES_TABLES_H
#define KIMG_RULES_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "image.h"
#include "rules.h"

/* ---- per-image decision order (docs/rules.md §1, §2, §3) ---- */

/* What a decision row may look at: the image, the device and the values
 * derived once per check so the predicates stay one-liners. */
struct kimg_rule_ctx {
	const struct kimg_image *img;
	const struct kimg_device *dev;
	unsigned img_sm;    /* image SM after renumbering (sm_101 -> 110 on an 11.0 device) */
	unsigned dev_sm;
	bool dev_tegra;     /* from the CC (kimg_sm_is_tegra), see rules.c for why */
	uint16_t max_isa;   /* kimg_driver_max_ptx_isa(); 0 = no limit known */
};

struct kimg_rule_row {
	const char *key;                 /* "S1", "P4", ... (docs/rules.md) */
	bool (*applies)(const struct kimg_rule_ctx *ctx);
	enum kimg_outcome outcome;
	enum kimg_reason reason;
};

/* Rows in decision order; the first row whose predicate holds decides.
 * The last rows always match, so every image gets exactly one row. */
size_t kimg_rule_row_count(void);
const struct kimg_rule_row *kimg_rule_row_at(size_t index);

/* Index of the deciding row for one image (tests use it to prove every row
 * is reachable). */
size_t kimg_rules_decide(const struct kimg_image *img, const struct kimg_device *dev);

/* ---- facts the predicates and the fix generator read ---- */

/* SM an image is judged as on this device: the Thor renumbering
 * (sm_101* became sm_110* with PTX ISA 9.0, docs/rules.md §2.1/§2.2)
 * lets sm_101, sm_101a and sm_101f code run on an 11.0 device. */
unsigned kimg_sm_alias(unsigned img_sm, unsigned dev_sm);

/* True when an `f` target (sm, e.g. 100) covers the device SM (§2.2). */
bool kimg_family_covers(unsigned family_sm, unsigned dev_sm);

/* Rank of a module-level failure reason: higher is more telling
 * (docs/rules.md §1: 223 over 222 over 209). */
int kimg_reason_rank(enum kimg_reason reason);

/* Expected CUresult for an image that cannot run for this reason. */
int kimg_reason_error(enum kimg_reason reason);

/* §7: which toolkits can emit a target offline. */
struct kimg_toolkit_target {
	uint16_t sm;
	uint8_t variant;          /* enum kimg_arch_variant */
	int first_toolkit;        /* CUDA version that added it: 11080 */
	int last_toolkit;         /* last CUDA version that emits it; 0 = current */
	const char *source;
};
/* Row for (sm, variant), NULL when no toolkit has that target (sm_86a). */
const struct kimg_toolkit_target *kimg_toolkit_target_find(unsigned sm, enum kimg_arch_variant variant);

#endif
