/* SPDX-License-Identifier: Apache-2.0 */
/* PTX text reader: .version, .target, .entry names.
 * Reference: docs/format.md section 11, docs/rules.md P7. */
#ifndef KIMG_PTX_H
#define KIMG_PTX_H

#include "arch.h"
#include "cubin.h" /* kimg_name_fn */
#include "error.h"
#include "span.h"

struct kimg_ptx_info {
	uint16_t isa;             /* KIMG_ISA(major, minor); 0 when absent */
	struct kimg_arch target;  /* the highest .target (P7); sm 0 when absent */
	uint32_t entry_count;
};

/* Reads directives outside comments and strings; text ends at the first NUL
 * or at the end of the span. */
int kimg_ptx_parse(struct kimg_span text, struct kimg_ptx_info *info, struct kimg_error *err);

/* Names of .entry functions (kernels), in order. Returns the count. */
int kimg_ptx_for_each_entry(struct kimg_span text, kimg_name_fn fn, void *ctx, struct kimg_error *err);

#endif
