/* SPDX-License-Identifier: Apache-2.0 */
/* The image model: one embedded piece of device code, as found in a fatbin
 * entry or as a raw cubin / PTX input. Values point into the caller's
 * buffer; nothing here owns memory. */
#ifndef KIMG_IMAGE_H
#define KIMG_IMAGE_H

#include "arch.h"
#include "span.h"

enum kimg_image_kind {
	KIMG_IMAGE_SASS = 0, /* ELF cubin, "sm_XY" */
	KIMG_IMAGE_PTX,      /* PTX text, "compute_XY" */
	KIMG_IMAGE_LTOIR,    /* NVVM IR for link-time optimisation, "lto_XY" */
	KIMG_IMAGE_UNKNOWN,  /* an entry kind kimg does not know */
	KIMG_IMAGE_KIND_COUNT
};

enum kimg_compression {
	KIMG_COMPRESS_NONE = 0,
	KIMG_COMPRESS_LZ4,    /* flag 0x2000: raw LZ4 block */
	KIMG_COMPRESS_ZSTD,   /* flag 0x8000: zstd frame */
	KIMG_COMPRESS_LEGACY, /* flag 0x1000: pre-12.x scheme, not decodable */
	KIMG_COMPRESS_COUNT
};

/* PTX ISA version as major * 100 + minor (9.0 -> 900, 8.7 -> 807); 0 = none. */
#define KIMG_ISA(major, minor) ((uint16_t)((major) * 100 + (minor)))
#define KIMG_ISA_MAJOR(isa) ((isa) / 100)
#define KIMG_ISA_MINOR(isa) ((isa) % 100)

struct kimg_image {
	enum kimg_image_kind kind;
	struct kimg_arch arch;        /* suffix from the fatbin entry flags */
	uint16_t ptx_isa;             /* PTX entries: from the entry header */
	enum kimg_compression compression;
	uint64_t offset;              /* entry offset within its input (file or buffer) */
	uint64_t stored_size;         /* payload bytes as stored (compressed length if compressed) */
	uint64_t size;                /* payload bytes once decompressed */
	uint64_t flags;               /* raw fatbin entry flags; 0 for raw inputs */
	struct kimg_span payload;     /* stored payload bytes, inside the caller's buffer */
	struct kimg_span identifier;  /* source file name when present (-lineinfo), not NUL-terminated */
	struct kimg_span options;     /* ptxas options (PTX/LTO-IR entries), may be empty */
};

/* "sass", "ptx", "ltoir", "unknown" */
const char *kimg_image_kind_name(enum kimg_image_kind kind);
/* NULL (none), "lz4", "zstd", "legacy" */
const char *kimg_compression_name(enum kimg_compression c);
/* "sm_90a" for SASS, "compute_90a" for PTX, "lto_90" for LTO-IR */
int kimg_image_arch_name(const struct kimg_image *img, char *buf, size_t size);

#endif
