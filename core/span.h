/* SPDX-License-Identifier: Apache-2.0 */
/* Bounds-checked views over untrusted bytes.
 *
 * Every parser in the core reads through these helpers: a read either lies
 * wholly inside the span or fails, and no (offset + length) can wrap. */
#ifndef KIMG_SPAN_H
#define KIMG_SPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct kimg_span {
	const uint8_t *data;
	uint64_t size;
};

static inline struct kimg_span kimg_span_make(const void *data, uint64_t size)
{
	struct kimg_span s = { (const uint8_t *)data, data ? size : 0 };
	return s;
}

static inline bool kimg_span_has(const struct kimg_span *s, uint64_t off, uint64_t len)
{
	return off <= s->size && len <= s->size - off;
}

/* Pointer to [off, off + len) or NULL when that range is not inside s. */
static inline const void *kimg_span_at(const struct kimg_span *s, uint64_t off, uint64_t len)
{
	return kimg_span_has(s, off, len) ? s->data + off : NULL;
}

/* Sub-span [off, off + len); an empty span when out of range. */
static inline struct kimg_span kimg_span_sub(const struct kimg_span *s, uint64_t off, uint64_t len)
{
	struct kimg_span r = { NULL, 0 };
	if (kimg_span_has(s, off, len)) {
		r.data = s->data + off;
		r.size = len;
	}
	return r;
}

/* Little-endian loads; false when out of range (the output is then 0). */
static inline bool kimg_span_u16(const struct kimg_span *s, uint64_t off, uint16_t *v)
{
	const uint8_t *p = (const uint8_t *)kimg_span_at(s, off, 2);
	*v = p ? (uint16_t)(p[0] | p[1] << 8) : 0;
	return p != NULL;
}

static inline bool kimg_span_u32(const struct kimg_span *s, uint64_t off, uint32_t *v)
{
	const uint8_t *p = (const uint8_t *)kimg_span_at(s, off, 4);
	*v = p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24 : 0;
	return p != NULL;
}

static inline bool kimg_span_u64(const struct kimg_span *s, uint64_t off, uint64_t *v)
{
	uint32_t lo, hi;
	bool ok = kimg_span_u32(s, off, &lo) && kimg_span_u32(s, off + 4, &hi);
	*v = ok ? (uint64_t)hi << 32 | lo : 0;
	return ok;
}

#endif
