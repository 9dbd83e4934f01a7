/* SPDX-License-Identifier: Apache-2.0 */
/* Error recording and messages for the core (core/error.h). */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int kimg_error_set(struct kimg_error *err, int code, uint64_t offset, const char *fmt, ...)
{
	/* Callers write -KIMG_E*; a positive code is a slip we forgive rather than
	 * return a "success" value from an error path. */
	if (code > 0)
		code = -code;
	if (err) {
		va_list ap;
		err->code = code;
		err->offset = offset;
		va_start(ap, fmt);
		vsnprintf(err->what, sizeof err->what, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* One row per kimg code, indexed by code - KIMG_EFORMAT. */
static const char *const kimg_messages[] = {
	[KIMG_EFORMAT - KIMG_EFORMAT] = "malformed input",
	[KIMG_ETRUNC - KIMG_EFORMAT] = "input truncated",
	[KIMG_ENOTSUP - KIMG_EFORMAT] = "format not supported",
	[KIMG_ENOCODEC - KIMG_EFORMAT] = "decompressor library not available",
	[KIMG_ECODEC - KIMG_EFORMAT] = "decompression failed",
	[KIMG_ELIMIT - KIMG_EFORMAT] = "safety limit reached",
	[KIMG_ENOTFOUND - KIMG_EFORMAT] = "not found",
	[KIMG_EUNKNOWN - KIMG_EFORMAT] = "unrecognised input",
};

const char *kimg_strerror(int code)
{
	int c = code < 0 ? -code : code;
	if (c == 0)
		return "success";
	if (c >= KIMG_EFORMAT && c <= KIMG_EUNKNOWN)
		return kimg_messages[c - KIMG_EFORMAT];
	/* glibc returns static strings for known errno values; the core never
	 * formats into shared state itself. */
	if (c < 4000)
		return strerror(c);
	return "unknown error";
}
