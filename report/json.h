/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal streaming JSON writer for the front ends (probe output, shim
 * JSON Lines). Keeps comma state per nesting level; strings are escaped
 * per RFC 8259 (control bytes as \u00XX; invalid UTF-8 bytes as \u00XX of
 * the byte so output stays valid). */
#ifndef KIMG_REPORT_JSON_H
#define KIMG_REPORT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define KIMG_JSON_MAX_DEPTH 32

struct kimg_json {
	FILE *out;
	int depth;
	bool first[KIMG_JSON_MAX_DEPTH];
	char closer[KIMG_JSON_MAX_DEPTH]; /* '}' or ']' of each open level */
	bool after_key;
	char *buf;                        /* kimg_json_set_buffer's, or NULL: each token written to out */
	size_t buf_len, buf_cap;
};

/* Unbuffered: every token goes to `out` as it is made (a stream other
 * code also writes to, or that other threads share under stdio's lock). */
void kimg_json_init(struct kimg_json *j, FILE *out);
/* Gather the output in buf[0..cap) and write it to `out` when full and at
 * kimg_json_flush: a stdio call per buffer, not per token (a scan of
 * cuBLASLt writes 1.2 MB in about 60,000 keys and values). The caller
 * flushes before anything else writes to `out`, and before `out` is
 * flushed or closed; buf must outlive the writer or its next flush.
 * cap 0 or buf NULL: unbuffered again (after a flush). A copy of the
 * struct shares buf: re-initialise the copy (kimg_json_init) first. */
void kimg_json_set_buffer(struct kimg_json *j, char *buf, size_t cap);
/* Write what the buffer holds to `out` (nothing when unbuffered). */
void kimg_json_flush(struct kimg_json *j);
void kimg_json_begin_object(struct kimg_json *j);
void kimg_json_end_object(struct kimg_json *j);
/* A top-level document (a probe --json output, a shim report): its object,
 * opened with "kimg_version" (the file VERSION, passed as -DKIMG_VERSION). */
void kimg_json_begin_document(struct kimg_json *j);
void kimg_json_begin_array(struct kimg_json *j);
void kimg_json_end_array(struct kimg_json *j);
void kimg_json_key(struct kimg_json *j, const char *key);
void kimg_json_string(struct kimg_json *j, const char *s);       /* NULL -> null */
void kimg_json_string_n(struct kimg_json *j, const char *s, size_t n);
void kimg_json_int(struct kimg_json *j, int64_t v);
void kimg_json_uint(struct kimg_json *j, uint64_t v);
void kimg_json_double(struct kimg_json *j, double v); /* "%.3f"; NaN/inf -> null */
void kimg_json_bool(struct kimg_json *j, bool v);
void kimg_json_null(struct kimg_json *j);
/* Close every container opened deeper than `depth` (a key still waiting
 * gets null), so a document abandoned midway stays valid JSON. */
void kimg_json_close_to(struct kimg_json *j, int depth);

/* Length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF) at s[0..n), n >= 1; 0 when there is
 * none. Shared with the probe's escaping of names for text output. */
size_t kimg_utf8_seq_len(const unsigned char *s, size_t n);

/* key + value shorthands */
void kimg_json_kv_string(struct kimg_json *j, const char *key, const char *s);
void kimg_json_kv_int(struct kimg_json *j, const char *key, int64_t v);
void kimg_json_kv_uint(struct kimg_json *j, const char *key, uint64_t v);

/* The same with a key that is a literal in the program, given as
 * KIMG_JSON_LIT("size"): the key quoted, its colon and their length, made
 * by the compiler, so the writer copies it without looking for bytes to
 * escape (the rows of a scan repeat nine keys for each of 20,000 images).
 * The macro compiles only for a string literal: data cannot pass for one. */
#define KIMG_JSON_LIT(key) ("\"" key "\":"), (sizeof("\"" key "\":") - 1)
void kimg_json_kvl_string(struct kimg_json *j, const char *quoted_key, size_t len, const char *s);
void kimg_json_kvl_uint(struct kimg_json *j, const char *quoted_key, size_t len, uint64_t v);
void kimg_json_kv_bool(struct kimg_json *j, const char *key, bool v);

#endif
