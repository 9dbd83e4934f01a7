/* Static archives ("!<arch>\n") member by member, as kimg_fatbin_open/next
 * walk a container: kimg_ar_open, then kimg_ar_next until it returns 0.
 * Symbol tables and the GNU long-name table are read and skipped; names
 * are resolved (GNU "/N", BSD "#1/N"). Pure and bounds-checked. */
#ifndef KIMG_ARCHIVE_H
#define KIMG_ARCHIVE_H

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

#endif
