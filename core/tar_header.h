/* SPDX-License-Identifier: Apache-2.0 */
/* Tar headers (POSIX ustar, pax extended headers, GNU long names) read
 * block by block, for archives kimg reads in place without copying their
 * members: container image archives (docker save, OCI layout tars), whose
 * blobs are members kimg hashes and streams from their offset in the file.
 * Compressed layers inside them go through libarchive (sys/tar.h). Pure
 * and bounds-checked (docs/design.md section 5). Format: POSIX.1-2008
 * "pax" (ustar header, 'x'/'g' records), GNU tar's 'L'/'K' long names. */
#ifndef KIMG_TAR_HEADER_H
#define KIMG_TAR_HEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "span.h"

#define KIMG_TAR_BLOCK 512u
#define KIMG_TAR_NAME_MAX 4096u
/* pax and GNU long-name records kimg reads at most. */
#define KIMG_TAR_EXT_MAX ((uint64_t)1 << 20)

enum kimg_tar_type {
	KIMG_TAR_REG = 0,      /* '0', '\0', '7' */
	KIMG_TAR_HARDLINK,     /* '1' */
	KIMG_TAR_SYMLINK,      /* '2' */
	KIMG_TAR_DIR,          /* '5' */
	KIMG_TAR_PAX,          /* 'x': applies to the next header */
	KIMG_TAR_PAX_GLOBAL,   /* 'g' */
	KIMG_TAR_GNU_LONGNAME, /* 'L' */
	KIMG_TAR_GNU_LONGLINK, /* 'K' */
	KIMG_TAR_OTHER,        /* devices, FIFOs, ... */
	KIMG_TAR_TYPE_COUNT
};

struct kimg_tar_header {
	enum kimg_tar_type type;
	uint64_t size;         /* of the member's data (blocks follow, padded to 512) */
	char name[KIMG_TAR_NAME_MAX];
	char link[KIMG_TAR_NAME_MAX];
};

/* Parse one 512-byte header block. Returns 1 with *h filled, 0 for an
 * all-zero block (the end of the archive), or a negative error:
 * -KIMG_ETRUNC (fewer than 512 bytes), -KIMG_EFORMAT (bad checksum, a
 * size that is not a number). */
int kimg_tar_header_parse(struct kimg_span block, struct kimg_tar_header *h, struct kimg_error *err);

/* Apply a pax extended header's records ("%d path=...\n") to the header
 * that follows it: path, linkpath and size override its fields. Returns 0
 * or -KIMG_EFORMAT for a malformed record. */
int kimg_tar_pax_apply(struct kimg_span records, struct kimg_tar_header *h, struct kimg_error *err);

/* Bytes a member's data takes in the archive: size rounded up to 512. */
static inline uint64_t kimg_tar_padded(uint64_t size)
{
	return (size + KIMG_TAR_BLOCK - 1) / KIMG_TAR_BLOCK * KIMG_TAR_BLOCK;
}

#endif
