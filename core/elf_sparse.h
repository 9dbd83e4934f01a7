/* SPDX-License-Identifier: Apache-2.0 */
/* Which bytes of a large ELF file a check reads, decided from its section
 * table before the file is read again as a stream (container image layers
 * cannot be read at random): the parts a stream may drop once they have
 * passed, so that a 500 MB library costs the pages kimg reads, not its
 * size. Dropped: executable sections (machine code, never parsed), and in
 * .nv_fatbin the payloads larger than KIMG_SPARSE_PAYLOAD_KEEP (found by
 * walking its container and entry headers as they arrive; docs/format.md
 * sections 4 and 5), and the other large PROGBITS sections that hold no
 * registered fatbin (data the check never reads without --deep). Kept:
 * headers, symbol, string, dynamic and relocation tables, .rodata (CUDA
 * release strings, core/cuda_libs.c), .nvFatBinSegment, __nv_relfatbin,
 * small payloads (the link-stub test reads those). A file whose
 * registration wrappers point outside .nv_fatbin gets no plan (read whole).
 * Pure. */
#ifndef KIMG_ELF_SPARSE_H
#define KIMG_ELF_SPARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "span.h"

/* Payloads a stream keeps: the link-stub test reads cubins up to 64 KiB
 * compressed (probe/kernels.c), and those of modules that fail. */
#define KIMG_SPARSE_PAYLOAD_KEEP ((uint64_t)1 << 20)
/* Bytes before the section headers captured for .shstrtab. */
#define KIMG_SPARSE_TAIL_WINDOW ((uint64_t)1 << 20)
#define KIMG_SPARSE_RANGES_MAX 64u
/* PROGBITS sections from this size on are dropped when nothing reads them. */
#define KIMG_SPARSE_SECTION_DROP ((uint64_t)1 << 20)

/* A registration wrapper seen in the stream (magic 0x466243B1 at an
 * 8-aligned offset): its file offset and the address it points to. */
struct kimg_sparse_wrapper {
	uint64_t off, data;
};

struct kimg_sparse_range {
	uint64_t off, size;
};

struct kimg_sparse_plan {
	struct kimg_sparse_range drop[KIMG_SPARSE_RANGES_MAX];   /* sorted, not overlapping */
	unsigned n_drop;
	struct kimg_sparse_range fatbin[KIMG_SPARSE_RANGES_MAX]; /* .nv_fatbin sections, sorted */
	unsigned n_fatbin;
};

/* Each registration wrapper wholly inside bytes, which start at file
 * offset base (a multiple of 8), in order: fn gets its file offset and the
 * address it points to. A non-zero return of fn stops the scan and is
 * returned; else 0. Words are compared 8 bytes at a time, four at once:
 * the scan runs over every byte of a large library, and memmem's search
 * for the 4-byte magic at any offset was a tenth of a check's time. */
#define KIMG_SPARSE_WRAPPER_MAGIC 0x466243B1u
#define KIMG_SPARSE_WRAPPER_SIZE 24u
typedef int (*kimg_sparse_wrapper_fn)(void *ctx, const struct kimg_sparse_wrapper *w);
int kimg_sparse_wrappers_scan(struct kimg_span bytes, uint64_t base, kimg_sparse_wrapper_fn fn, void *ctx);

/* The section headers' place from the ELF header (head: the file's first
 * bytes): false unless a little-endian ELF64 with a section table that
 * lies inside file_size. *lo, *hi: the window to capture, the headers and
 * KIMG_SPARSE_TAIL_WINDOW bytes before them. */
bool kimg_sparse_window(struct kimg_span head, uint64_t file_size, uint64_t *lo, uint64_t *hi);

/* The plan from the captured window (its bytes, starting at file offset
 * lo). false (read the file whole) when the section names are not inside
 * the window, a section passes the file's end, or there are too many
 * ranges. */
bool kimg_sparse_plan_make(struct kimg_span head, struct kimg_span window, uint64_t lo, uint64_t file_size,
			   const struct kimg_sparse_wrapper *wrappers, unsigned n_wrappers, struct kimg_sparse_plan *plan);

/* Walking the .nv_fatbin sections as their bytes arrive. */
struct kimg_fatbin_stream {
	uint64_t sec_end;        /* end of the section being walked */
	uint64_t cont, cont_end; /* current container; cont_end 0: its header not read yet */
	uint64_t entry;          /* next entry header */
	bool done;               /* lost (not a container): the rest of the section is kept */
};
/* Start on section [off, off + size). */
void kimg_fatbin_stream_begin(struct kimg_fatbin_stream *s, uint64_t off, uint64_t size);
/* With the file's bytes known up to `have` (in `bytes`, indexed by file
 * offset): 1 with *drop set to the next payload to drop (its whole range;
 * drop only what `have` passed), 0 when more bytes are needed or the
 * section is done. */
int kimg_fatbin_stream_next(struct kimg_fatbin_stream *s, struct kimg_span bytes, uint64_t have,
			    struct kimg_sparse_range *drop);

#endif
