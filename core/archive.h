/* SPDX-License-Identifier: Apache-2.0 */
/* Static archives ("!<arch>\n") member by member, as kimg_fatbin_open/next
 * walk a container: kimg_ar_open, then kimg_ar_next until it returns 0.
 * Symbol tables and the GNU long-name table are read and skipped; names
 * are resolved (GNU "/N", BSD "#1/N"). Pure and bounds-checked. */
#ifndef KIMG_ARCHIVE_H
#define KIMG_ARCHIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "span.h"

#define KIMG_AR_NAME_MAX 255u

struct kimg_ar {
	struct kimg_span in;
	struct kimg_span longnames; /* the "//" table once seen */
	uint64_t pos;               /* next member header */
	char name[KIMG_AR_NAME_MAX + 1];
};

struct kimg_ar_member {
	const char *name;       /* NUL-terminated, valid until the next kimg_ar_next */
	struct kimg_span body;  /* the member's bytes (a BSD inline name excluded) */
	uint64_t offset;        /* of body within the archive */
};

/* A thin archive is refused (-KIMG_ENOTSUP: its members are other files),
 * anything without the magic is -KIMG_EFORMAT. */
int kimg_ar_open(struct kimg_span in, struct kimg_ar *ar, struct kimg_error *err);

/* 1 with *m filled, 0 after the last member, or a negative error at the
 * member header that is bad (err->offset is that header's). */
int kimg_ar_next(struct kimg_ar *ar, struct kimg_ar_member *m, struct kimg_error *err);

/* GNU thin archives ("!<thin>\n", ar rcT): the member headers and names
 * are in the archive, the members' bytes are the files they name, by a
 * path relative to the archive's directory (or absolute). The core cannot
 * open files: kimg_input_classify calls one KIMG_INPUT_ARCHIVE, the walk
 * reports it with -KIMG_ENOTSUP, and the front end lists its members
 * here and walks each file itself. */
typedef int (*kimg_thin_member_fn)(void *ctx, const char *path, uint64_t size);
bool kimg_input_is_thin_archive(struct kimg_span in);
/* Each member's path and recorded size, in archive order (symbol and
 * name tables skipped). Returns the member count, or a negative error
 * with err set (after the members before it); a non-zero return of fn
 * stops the walk and is returned. */
int kimg_thin_archive_for_each_member(struct kimg_span in, kimg_thin_member_fn fn, void *ctx,
				      struct kimg_error *err);

#endif
