/* SPDX-License-Identifier: Apache-2.0 */
/* Device ELF (cubin) reader: both CUDA ELF ABIs, SM number, kernel entries.
 * Reference: docs/format.md sections 8 and 10. */
#ifndef KIMG_CUBIN_H
#define KIMG_CUBIN_H

#include "error.h"
#include "span.h"

struct kimg_cubin_info {
	uint8_t abi;       /* 1 (OSABI 0x33, ABI version 7) or 2 (OSABI 0x41, ABI version 8) */
	uint16_t sm;       /* decoded SM number, e.g. 90 */
	bool sm_a_v1;      /* ABI V1 EF_CUDA_ACCELERATORS_V1 (0x800): sm_90a */
	uint16_t e_type;   /* 1 REL, 2 EXEC */
	uint32_t e_flags;
	uint32_t kernel_count;
};

int kimg_cubin_parse(struct kimg_span elf, struct kimg_cubin_info *info, struct kimg_error *err);

/* Called per kernel entry (STT_FUNC with STO_CUDA_ENTRY); name is the
 * mangled name, NUL-terminated inside the cubin's string table. */
typedef int (*kimg_name_fn)(void *ctx, const char *name, size_t len);

/* Returns the number of kernels, or a negative error. A non-zero return of
 * fn stops the walk and is returned. */
int kimg_cubin_for_each_kernel(struct kimg_span elf, kimg_name_fn fn, void *ctx, struct kimg_error *err);

#endif
