/* SPDX-License-Identifier: Apache-2.0 */
/* The central directory of a zip archive (wheels, .conda, .egg, .zip):
 * which members there are, how each is stored and where its bytes lie.
 * Pure and bounds-checked: every offset and size is checked against the
 * archive before it is returned; nothing is inflated here (sys/zip.c does
 * that with zlib). ZIP64 sizes and offsets are read; multi-disk archives
 * and encrypted members are reported as not supported.
 * Format: PKWARE APPNOTE.TXT 6.3 sections 4.3.6 (layout), 4.3.7 (local
 * header), 4.3.12 (central directory header), 4.3.14-4.3.16 (ZIP64 and
 * end of central directory records), 4.5.3 (ZIP64 extra field). */
#ifndef KIMG_ZIP_DIR_H
#define KIMG_ZIP_DIR_H

#include <stdbool.h>

#include "error.h"
#include "span.h"

enum kimg_zip_method {
	KIMG_ZIP_STORED = 0,
	KIMG_ZIP_DEFLATED = 8,
};

struct kimg_zip_dir {
	struct kimg_span zip;
	uint64_t cd_offset, cd_size; /* central directory, inside zip */
	uint64_t entries;            /* as the end record declares them */
};

struct kimg_zip_entry {
	struct kimg_span name;       /* inside zip, not NUL-terminated */
	uint16_t method;             /* enum kimg_zip_method, or another value */
	uint16_t flags;              /* general-purpose bits; bit 0: encrypted */
	uint32_t crc32;
	uint64_t stored_size;        /* compressed size */
	uint64_t size;               /* uncompressed size, as declared */
	uint64_t local_offset;       /* of the local header */
	bool is_dir;                 /* name ends in '/' */
	bool is_symlink;             /* Unix mode S_IFLNK in the external attributes */
};

/* Find and check the end of central directory record (and the ZIP64 one
 * when the classic fields overflow). An archive with no members is valid:
 * d->entries is 0. Errors: -KIMG_EFORMAT (no end record, directory outside
 * the archive), -KIMG_ENOTSUP (multi-disk). */
int kimg_zip_dir_open(struct kimg_span zip, struct kimg_zip_dir *d, struct kimg_error *err);

/* Next central-directory entry at *cursor (start with 0). Returns 1 with
 * *e filled, 0 after the last one, or a negative error (a header outside
 * the directory, a bad signature, a bad ZIP64 extra field). */
int kimg_zip_dir_next(const struct kimg_zip_dir *d, uint64_t *cursor, struct kimg_zip_entry *e,
		      struct kimg_error *err);

/* The stored bytes of a member (after its local header), checked to lie in
 * the archive. -KIMG_ENOTSUP for an encrypted member, -KIMG_EFORMAT for a
 * bad local header, -KIMG_ETRUNC when the data runs past the end. */
int kimg_zip_entry_data(const struct kimg_zip_dir *d, const struct kimg_zip_entry *e, struct kimg_span *data,
			struct kimg_error *err);

#endif
