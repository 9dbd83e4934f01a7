/* SPDX-License-Identifier: Apache-2.0 */
/* Fatbin containers (magic 0xBA55ED50) and their entries.
 * Layout and flags: docs/format.md sections 4 to 7.
 *
 * Iteration is cursor based and allocation free, so the shim can walk a
 * registered fatbin on its cold path without touching the heap. */
#ifndef KIMG_FATBIN_H
#define KIMG_FATBIN_H

#include "error.h"
#include "image.h"

#define KIMG_FATBIN_MAGIC 0xBA55ED50u
#define KIMG_FATBIN_WRAPPER_MAGIC 0x466243B1u
#define KIMG_FATBIN_HEADER_SIZE 16u
#define KIMG_FATBIN_ENTRY_HEADER_SIZE 64u

#define KIMG_FATBIN_FLAG_COMPRESS_LEGACY 0x1000u
#define KIMG_FATBIN_FLAG_COMPRESS_LZ4 0x2000u
#define KIMG_FATBIN_FLAG_COMPRESS_ZSTD 0x8000u
#define KIMG_FATBIN_FLAG_ARCH_SPECIFIC 0x100000u
#define KIMG_FATBIN_FLAG_FAMILY_SPECIFIC 0x200000u

struct kimg_fatbin {
	struct kimg_span bytes;  /* the whole container: header + entries */
	uint64_t offset;         /* of the container within the input it came from */
	uint16_t version;
	uint16_t header_size;
};

/* Validate the container header at `off` in `in`; on success *fb covers
 * exactly header + fatSize bytes. -KIMG_EFORMAT on a bad magic or version,
 * -KIMG_ETRUNC when the declared size passes the end of `in`. */
int kimg_fatbin_open(struct kimg_span in, uint64_t off, struct kimg_fatbin *fb, struct kimg_error *err);

/* Next entry. *cursor starts at 0 and is advanced by the call.
 * Returns 1 with *img filled, 0 at the end of the container, or a negative
 * error for a malformed entry (iteration must stop then). img->offset is
 * relative to the input the container was opened in. */
int kimg_fatbin_next(const struct kimg_fatbin *fb, uint64_t *cursor, struct kimg_image *img, struct kimg_error *err);

/* Size in bytes of the object at `p` when its length is unknown (an
 * in-memory image passed to cuModuleLoadData or a registration wrapper),
 * bounded by its own headers and by `limit`: a fatbin container, a
 * registration wrapper (reports the container it points to through
 * *target, else *target = p), an ELF cubin, or NUL-terminated PTX text.
 * Reads only inside the bounds it has established. Returns 0 or -KIMG_E*. */
int kimg_memory_image_extent(const void *p, uint64_t limit, const void **target, uint64_t *size, struct kimg_error *err);

#endif
