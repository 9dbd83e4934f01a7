/* SPDX-License-Identifier: Apache-2.0 */
/* PTX rewriter for the JIT fallback: lower .version and .target so that an
 * older driver JIT (P4: ISA too new → 222) or an older device (P3: target
 * newer than the device) accepts the module.
 *
 * Only the value tokens of .version and .target change; every other byte,
 * comments and strings included, is copied unchanged. Lowering does not
 * make the code valid for the lower target: ptxas still rejects
 * instructions the lower ISA or SM lacks, and code gated on __CUDA_ARCH__
 * keeps the path compiled for the original target (docs/rules.md §3). */
#ifndef KIMG_PTX_REWRITE_H
#define KIMG_PTX_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "error.h"
#include "span.h"

struct kimg_ptx_rewrite_info {
	uint16_t old_isa;               /* the first .version; 0 when absent */
	uint16_t new_isa;               /* .version of the output; 0 when absent */
	struct kimg_arch old_target;    /* highest .target before (P7); sm 0 when absent */
	struct kimg_arch new_target;    /* highest .target after */
	bool version_lowered;           /* the .version value was replaced */
	bool version_inserted;          /* a .version line was added (nvFatbin strips it, docs/format.md §11) */
	uint32_t targets_lowered;       /* number of .target items replaced */
	bool changed;                   /* output differs from input */
};

/* Capacity of `out` that always suffices for an input of in_size bytes
 * (the text, at most 16 bytes of growth, the terminating NUL); saturates
 * at SIZE_MAX. */
size_t kimg_ptx_rewrite_bound(uint64_t in_size);

/* Copies the PTX text of `in` (up to its first NUL, see ptx.h) to `out`,
 * NUL-terminated, with:
 *  - new_isa != 0: the first .version lowered to new_isa when it is higher;
 *    when the text has no .version, ".version X.Y\n" inserted in front of
 *    the first directive (at the start of the text if there is none);
 *  - new_sm != 0: each .target item sm_N[a|f] replaced by sm_<new_sm> when
 *    N > new_sm, or N == new_sm with an a/f suffix (the suffix is dropped:
 *    a/f PTX is not forward compatible, P2). Lower targets stay as they are.
 * Values are only ever lowered, so a call with nothing to lower copies the
 * text verbatim (info->changed false).
 *
 * *out_len receives the output length without the NUL, also on -ENOSPC
 * (so the caller can size a retry). info may be NULL.
 * Returns 0; -EINVAL for new_isa outside 1.0..99.99 or new_sm above 65535;
 * -ENOSPC when out_cap < *out_len + 1 (nothing written); the scanner's
 * -KIMG_EFORMAT for malformed directives (ptx_scan.h). Pure and
 * thread-safe: no allocation, no global state. */
int kimg_ptx_rewrite(struct kimg_span in, uint16_t new_isa, unsigned new_sm, char *out, size_t out_cap,
		     size_t *out_len, struct kimg_ptx_rewrite_info *info, struct kimg_error *err);

#endif
