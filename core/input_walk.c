/* SPDX-License-Identifier: Apache-2.0 */
/* The helpers every input walker shares (input_internal.h): yielding a
 * module, recording the first problem with offsets relative to the
 * outermost input (and the archive member it is in), the known-zero
 * ranges a caller may pass, and the walk of fatbin containers back to back
 * (raw .fatbin files and host ELF sections alike). The walkers
 * themselves: input.c (raw inputs and the dispatch), input_elf.c (host
 * ELF), archive.c (ar); they call these, never each other back. */
#include "input_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fatbin.h"

void kimg_walk_emit(struct kimg_walk *w, enum kimg_input_kind kind, enum kimg_module_origin origin,
		    struct kimg_span bytes, uint64_t off, const char *section)
{
	struct kimg_module_ref m = { kind, origin, bytes, w->base + off, section, w->member };
	int rc = w->call->fn ? w->call->fn(w->call->ctx, &m) : 0;
	w->call->count++;
	if (rc)
		w->call->stop = rc;
}

static void record(struct kimg_walk *w, int code, uint64_t off, const char *what)
{
	struct kimg_error *e = w->call->err;
	size_t n = 0, len;
	if (!e || e->code != 0)
		return;
	e->code = code;
	e->offset = w->base + off;
	if (w->member) {
		int r = snprintf(e->what, sizeof e->what, "member %.60s: ", w->member);
		n = r > 0 ? (size_t)r : 0;
	}
	len = strnlen(what, sizeof e->what - n - 1);
	memcpy(e->what + n, what, len);
	e->what[n + len] = '\0';
}

int kimg_walk_fail(struct kimg_walk *w, int code, uint64_t off, const char *fmt, ...)
{
	char what[sizeof w->call->err->what];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	record(w, code, off, what);
	return code;
}

int kimg_walk_take(struct kimg_walk *w, const struct kimg_error *e, uint64_t off)
{
	record(w, e->code, off + e->offset, e->what);
	return e->code;
}

/* The zero range holding absolute offset `at`, or the first after it:
 * index of the first range whose end is above `at`. */
static size_t zero_index(const struct kimg_zero_ranges *z, uint64_t at)
{
	size_t lo = 0, hi = z->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->r[mid].end <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t kimg_walk_zero_end(const struct kimg_walk *w, uint64_t off)
{
	const struct kimg_zero_ranges *z = w->call->zeros;
	if (!z || z->n == 0 || off > UINT64_MAX - w->base)
		return off;
	uint64_t at = w->base + off;
	size_t i = zero_index(z, at);
	if (i == z->n || z->r[i].start > at)
		return off;
	return z->r[i].end - w->base;
}

uint64_t kimg_walk_next_zero(const struct kimg_walk *w, uint64_t off)
{
	const struct kimg_zero_ranges *z = w->call->zeros;
	if (!z || z->n == 0 || off > UINT64_MAX - w->base)
		return UINT64_MAX;
	uint64_t at = w->base + off;
	size_t i = zero_index(z, at);
	if (i == z->n)
		return UINT64_MAX;
	uint64_t start = z->r[i].start > at ? z->r[i].start : at;
	return start - w->base;
}

int kimg_walk_containers(struct kimg_walk *w, struct kimg_span sec, uint64_t off,
			 enum kimg_module_origin origin, const char *section, bool first_fatal)
{
	uint64_t pos = 0;
	int found = 0;

	while (!w->call->stop) {
		struct kimg_fatbin fb;
		struct kimg_error e = { 0, 0, "" };
		int rc;
		/* §4: each container may be followed by zero padding (to 8). Only
		 * the few bytes between containers are read, never a payload. */
		while (pos < sec.size && sec.data[pos] == 0) {
			uint64_t z = kimg_walk_zero_end(w, off + pos) - off; /* a hole: jump, not read */
			pos = z > pos ? (z < sec.size ? z : sec.size) : pos + 1;
		}
		if (pos >= sec.size)
			break;
		rc = kimg_fatbin_open(sec, pos, &fb, &e);
		if (rc < 0) {
			kimg_walk_take(w, &e, off);
			return first_fatal && found == 0 ? rc : 0;
		}
		kimg_walk_emit(w, KIMG_INPUT_FATBIN, origin, fb.bytes, off + pos, section);
		found++;
		pos += fb.bytes.size;
	}
	return 0;
}

bool kimg_container_is_plausible(struct kimg_span in, uint64_t off, uint64_t *size)
{
	struct kimg_fatbin fb;
	struct kimg_image img;
	uint64_t cursor = 0;
	int rc, entries = 0;

	if (kimg_fatbin_open(in, off, &fb, NULL) < 0 || fb.header_size != KIMG_FATBIN_HEADER_SIZE)
		return false;
	while ((rc = kimg_fatbin_next(&fb, &cursor, &img, NULL)) == 1)
		entries++;
	/* Every byte accounted for: the last entry ends at the container end. */
	if (rc < 0 || entries == 0 || cursor != fb.bytes.size)
		return false;
	*size = fb.bytes.size;
	return true;
}
