/* SPDX-License-Identifier: Apache-2.0 */
/* A small bounded JSON reader (RFC 8259): one value from a span into a
 * tree of nodes kept in a caller-supplied arena. It exists for
 * `kimg-probe summarize`, which reads the JSON Lines that libkimg.so wrote,
 * possibly on other hosts and possibly damaged (a killed rank leaves half a
 * line), so every byte is treated as untrusted (docs/design.md section 5).
 *
 * Bounds: nesting depth (kimg_jdoc.max_depth, default KIMG_JSON_READ_DEPTH)
 * and the arena: nodes and decoded strings are carved from it and nothing
 * else is allocated, so the caller's arena size caps the memory one line
 * can take. Strings must be valid UTF-8 (no overlongs, no surrogates, at
 * most U+10FFFF); \uXXXX escapes are decoded, surrogate pairs joined, and
 * a lone surrogate escape becomes U+FFFD (it cannot be written as UTF-8;
 * some writers emit it for broken file names). Numbers are checked against
 * the RFC grammar and kept as written; kimg_jval_int converts them when
 * they are integers that fit, so a huge number is never rounded silently.
 *
 * Not thread safe per document; distinct documents are independent. */
#ifndef KIMG_JSON_READ_H
#define KIMG_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "span.h"

#define KIMG_JSON_READ_DEPTH 64

enum kimg_jtype {
	KIMG_JNULL = 0,
	KIMG_JFALSE,
	KIMG_JTRUE,
	KIMG_JNUMBER,
	KIMG_JSTRING,
	KIMG_JARRAY,
	KIMG_JOBJECT,
	KIMG_JTYPE_COUNT
};

struct kimg_jval {
	enum kimg_jtype type;
	const char *key;        /* member name inside an object (decoded, NUL-terminated), else NULL */
	uint32_t key_len;       /* bytes, without the NUL (a key may hold \u0000) */
	const char *str;        /* STRING: decoded text; NUMBER: the number as written; NUL-terminated */
	uint32_t len;           /* bytes of str, without the NUL */
	uint32_t count;         /* ARRAY / OBJECT: elements or members */
	uint64_t offset;        /* of the value's first byte in the input */
	struct kimg_jval *child;/* ARRAY / OBJECT: first element or member, in input order */
	struct kimg_jval *next; /* next sibling */
};

struct kimg_jdoc {
	unsigned char *arena;   /* caller's memory; nodes and strings live here */
	size_t arena_size;
	size_t used;
	unsigned max_depth;     /* 0: KIMG_JSON_READ_DEPTH; containers nested deeper fail with KIMG_ELIMIT */
	const struct kimg_jval *root; /* after a successful parse */
};

/* Prepare doc over arena[0, size). The arena must outlive every node taken
 * from the document; parsing again reuses it from the start. */
void kimg_jdoc_init(struct kimg_jdoc *doc, void *arena, size_t size);

/* Parse exactly one JSON value, with optional whitespace around it, from
 * in. Returns 0 and sets doc->root, or a negative code with err set
 * (err->offset: the byte where it was detected):
 *   -KIMG_ETRUNC  the input ends inside the value (or is only whitespace)
 *   -KIMG_EFORMAT anything else that is not JSON, trailing bytes included
 *   -KIMG_ELIMIT  nesting deeper than max_depth, a string or container
 *                 over 2^32-1, or the arena is full
 * On failure doc->root is NULL and nothing from the arena may be used. */
int kimg_jdoc_parse(struct kimg_jdoc *doc, struct kimg_span in, struct kimg_error *err);

/* The same for the one value that starts at in[pos] (whitespace before it
 * allowed), for readers that walk a large document's outer structure
 * themselves and parse its elements one at a time into a reused arena
 * (core/cluster_k8s.c). Bytes after the value are not looked at: *end is
 * the offset past it and the whitespace after it. */
int kimg_jdoc_parse_at(struct kimg_jdoc *doc, struct kimg_span in, uint64_t pos, uint64_t *end,
		       struct kimg_error *err);

/* ---- reading the tree: NULL-tolerant, never fail loudly ---- */

/* First member named key of an object; NULL when v is not an object or has
 * no such member. */
const struct kimg_jval *kimg_jval_get(const struct kimg_jval *v, const char *key);

/* Members along a dotted path, "device.name"; NULL when any step is
 * missing. Keys containing '.' cannot be reached this way (use _get). */
const struct kimg_jval *kimg_jval_path(const struct kimg_jval *v, const char *path);

/* Element i of an array, NULL past the end or when v is not an array. */
const struct kimg_jval *kimg_jval_at(const struct kimg_jval *v, size_t i);

/* The string of a STRING node; NULL for anything else (null included). */
const char *kimg_jval_string(const struct kimg_jval *v);

/* True when v is a NUMBER written as an integer (no fraction, no exponent)
 * that fits in int64_t; *out is then its value, else 0. */
bool kimg_jval_int(const struct kimg_jval *v, int64_t *out);

/* True for JNULL and for a missing value (v == NULL). */
bool kimg_jval_is_null(const struct kimg_jval *v);

#endif
