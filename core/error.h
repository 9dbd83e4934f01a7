/* SPDX-License-Identifier: Apache-2.0 */
/* Error codes and context returned by the core.
 *
 * Functions return 0 (or a positive count) on success and a negative code on
 * failure: -errno values for system errors, KIMG_E* (below -4000, as libbpf
 * does) for kimg's own. The core never prints: context travels in
 * struct kimg_error for the front end to render. */
#ifndef KIMG_ERROR_H
#define KIMG_ERROR_H

#include <stdint.h>

enum kimg_errno {
	KIMG_EFORMAT = 4001,   /* malformed input: a header or offset does not hold */
	KIMG_ETRUNC = 4002,    /* input ends before a structure it declares */
	KIMG_ENOTSUP = 4003,   /* valid but not supported (old fatbin format, ...) */
	KIMG_ENOCODEC = 4004,  /* decompressor library not available at run time */
	KIMG_ECODEC = 4005,    /* decompressor rejected the payload or size mismatch */
	KIMG_ELIMIT = 4006,    /* a safety limit was hit (size cap, nesting, count) */
	KIMG_ENOTFOUND = 4007, /* no such name in a table (GPU, arch) */
	KIMG_EUNKNOWN = 4008,  /* input is none of the recognised kinds */
};

struct kimg_error {
	int code;          /* negative, as returned */
	uint64_t offset;   /* byte offset in the input where it was detected */
	char what[120];    /* short description, no trailing period */
};

/* Record an error and return its (negative) code; err may be NULL. */
int kimg_error_set(struct kimg_error *err, int code, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Message for a negative code (KIMG_E* or -errno). Never NULL. */
const char *kimg_strerror(int code);

#endif
