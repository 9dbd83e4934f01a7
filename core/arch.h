/* SPDX-License-Identifier: Apache-2.0 */
/* GPU architecture names: sm_XY / compute_XY with the a/f suffix.
 *
 * An architecture is its SM number (major * 10 + minor: 90 = 9.0,
 * 100 = 10.0, 121 = 12.1) plus a variant. SASS and PTX share the number;
 * the image kind says whether it is printed sm_ or compute_. */
#ifndef KIMG_ARCH_H
#define KIMG_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kimg_arch_variant {
	KIMG_VARIANT_PLAIN = 0,
	KIMG_VARIANT_A,  /* arch-specific: runs on exactly one CC (sm_90a) */
	KIMG_VARIANT_F,  /* family-specific: runs within its family (sm_100f) */
	KIMG_VARIANT_COUNT
};

struct kimg_arch {
	uint16_t sm;     /* 0 = unknown */
	uint8_t variant; /* enum kimg_arch_variant */
};

static inline unsigned kimg_arch_major(struct kimg_arch a) { return a.sm / 10; }
static inline unsigned kimg_arch_minor(struct kimg_arch a) { return a.sm % 10; }

/* Parse one user-supplied token: "9.0", "90", "sm_90", "sm_90a", "compute_90",
 * "compute_100f", "9.0a", "10.0f". *is_virtual (may be NULL) is set for
 * compute_ spellings. Returns 0 or -KIMG_EFORMAT. */
int kimg_arch_parse(const char *text, struct kimg_arch *out, bool *is_virtual);

/* "sm_90a" (is_virtual false) or "compute_90a"; returns the length that
 * snprintf would have written. */
int kimg_arch_format(struct kimg_arch arch, bool is_virtual, char *buf, size_t size);

/* "9.0", "10.0a" */
int kimg_arch_format_cc(struct kimg_arch arch, char *buf, size_t size);

#endif
