/* SPDX-License-Identifier: Apache-2.0 */
/* Compatibility rules: can this image, or this module, run on this device?
 * The rules are data tables (rules_tables.c) applied in the driver's order
 * (docs/rules.md section 1); every verdict names the
 * table row that decided it. */
#ifndef KIMG_RULES_H
#define KIMG_RULES_H

#include "device.h"
#include "image.h"
/* the outcomes, reasons and public facts the verdicts are made of */
#include "rules_tables.h"

struct kimg_image_verdict {
	enum kimg_outcome outcome;
	enum kimg_reason reason;
	const char *rule;        /* table row key that decided: "S1", "S2", "P4", ... */
};

struct kimg_module_verdict {
	enum kimg_outcome outcome;
	enum kimg_reason reason;  /* FITS, or the most telling reason none fits */
	int selected;             /* index of the image the driver would use, -1 if none */
	int expected_error;       /* CUresult the driver would give: 0, 209, 222, 223 ... */
	const char *rule;
};

/* One image on one device. */
void kimg_rules_check_image(const struct kimg_image *img, const struct kimg_device *dev,
			    struct kimg_image_verdict *out);

/* A module's images on one device: per-image verdicts into per[] (n items,
 * may be NULL) and the driver's selection (compatible cubin first, nearest
 * arch; then PTX) into *out. Pure; no allocation. */
void kimg_rules_check_module(const struct kimg_image *imgs, size_t n, const struct kimg_device *dev,
			     struct kimg_image_verdict *per, struct kimg_module_verdict *out);

#endif
