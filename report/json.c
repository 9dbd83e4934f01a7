/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "json.h"

void kimg_json_init(struct kimg_json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->first[0] = true;
	j->after_key = false;
}

/* Comma before a value unless it is the first in its container or follows a key. */
static void value_prefix(struct kimg_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->out);
	j->first[j->depth] = false;
}

static void open_level(struct kimg_json *j, char c)
{
	value_prefix(j);
	fputc(c, j->out);
	if (j->depth + 1 < KIMG_JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
	j->closer[j->depth] = c == '{' ? '}' : ']';
}

static void close_level(struct kimg_json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->out);
}

void kimg_json_close_to(struct kimg_json *j, int depth)
{
	if (!j->out)
		return;
	if (j->after_key)
		kimg_json_null(j);
	while (j->depth > depth && j->depth > 0)
		close_level(j, j->closer[j->depth]);
}

void kimg_json_begin_object(struct kimg_json *j) { open_level(j, '{'); }
void kimg_json_end_object(struct kimg_json *j) { close_level(j, '}'); }

void kimg_json_begin_document(struct kimg_json *j)
{
	open_level(j, '{');
	kimg_json_kv_string(j, "kimg_version", KIMG_VERSION);
}
void kimg_json_begin_array(struct kimg_json *j) { open_level(j, '['); }
void kimg_json_end_array(struct kimg_json *j) { close_level(j, ']'); }

/* Length of a valid UTF-8 sequence starting at s (at most n bytes), or 0.
 * Valid means RFC 3629's table: no overlong forms (C0, C1, E0 80-9F,
 * F0 80-8F), no encoded surrogates (ED A0-BF), nothing above U+10FFFF
 * (F4 90-BF, F5-FF), no truncated sequence. Strict decoders (Python's
 * json, jq) refuse any of these, so they must never be copied out. */
size_t kimg_utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (len > n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* Plain printable ASCII needs no escaping: such runs go out in one fwrite,
 * which keeps large outputs (scan of a 500 MB library) cheap. */
static bool is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

static void write_escaped(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;
		if (is_plain(c)) {
			size_t run = 1;
			while (i + run < n && is_plain(s[i + run]))
				run++;
			fwrite(s + i, 1, run, out);
			i += run;
		} else if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc(c, out);
			i++;
		} else if (c == '\n') {
			fputs("\\n", out);
			i++;
		} else if (c == '\t') {
			fputs("\\t", out);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			i++;
		} else if (c == 0xc0 && i + 1 < n && s[i + 1] == 0x80) {
			fputs("\\u0000", out); /* a NUL inside a name (text_escape.h) */
			i += 2;
		} else if ((len = kimg_utf8_seq_len(s + i, n - i)) != 0) {
			fwrite(s + i, 1, len, out);
			i += len;
		} else {
			fprintf(out, "\\u%04x", c); /* stray byte: keep it visible, keep JSON valid */
			i++;
		}
	}
	fputc('"', out);
}

/* A token of plain text goes out in one fwrite with the comma before it:
 * a scan of cuBLASLt writes 1.2 MB in about 60,000 keys and values, and
 * three or four stdio calls each were a third of its time. */
#define TOKEN_MAX 160

/* The comma value_prefix would write, into buf: its length (0 or 1). */
static size_t prefix_into(struct kimg_json *j, char *buf)
{
	if (j->after_key) {
		j->after_key = false;
		return 0;
	}
	bool comma = !j->first[j->depth];
	j->first[j->depth] = false;
	buf[0] = ',';
	return comma;
}

/* s[0..n) quoted into buf at pos when it needs no escaping and fits:
 * the new length, or 0. */
static size_t quoted_into(char *buf, size_t pos, const char *s, size_t n)
{
	if (n > TOKEN_MAX - 4 - pos)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_plain((unsigned char)s[i]))
			return 0;
	buf[pos++] = '"';
	memcpy(buf + pos, s, n);
	pos += n;
	buf[pos++] = '"';
	return pos;
}

static size_t uint_into(char *buf, size_t pos, uint64_t v)
{
	char digits[20];
	size_t n = 0;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		buf[pos++] = digits[--n];
	return pos;
}

void kimg_json_key(struct kimg_json *j, const char *key)
{
	char buf[TOKEN_MAX];
	size_t n = strlen(key), pre = prefix_into(j, buf), len = quoted_into(buf, pre, key, n);
	if (len) {
		buf[len++] = ':';
		fwrite(buf, 1, len, j->out);
	} else {
		if (pre)
			fputc(',', j->out);
		write_escaped(j->out, key, n);
		fputc(':', j->out);
	}
	j->after_key = true;
}

void kimg_json_string_n(struct kimg_json *j, const char *s, size_t n)
{
	char buf[TOKEN_MAX];
	size_t pre = prefix_into(j, buf), len = quoted_into(buf, pre, s, n);
	if (len) {
		fwrite(buf, 1, len, j->out);
		return;
	}
	if (pre)
		fputc(',', j->out);
	write_escaped(j->out, s, n);
}

void kimg_json_string(struct kimg_json *j, const char *s)
{
	if (!s) {
		kimg_json_null(j);
		return;
	}
	kimg_json_string_n(j, s, strlen(s));
}

void kimg_json_int(struct kimg_json *j, int64_t v)
{
	char buf[TOKEN_MAX];
	size_t len = prefix_into(j, buf);
	if (v < 0)
		buf[len++] = '-';
	len = uint_into(buf, len, v < 0 ? -(uint64_t)v : (uint64_t)v);
	fwrite(buf, 1, len, j->out);
}

void kimg_json_uint(struct kimg_json *j, uint64_t v)
{
	char buf[TOKEN_MAX];
	size_t len = uint_into(buf, prefix_into(j, buf), v);
	fwrite(buf, 1, len, j->out);
}

/* Fixed 3 decimals (milliseconds to the microsecond); JSON has no NaN or
 * infinity, so those become null. */
void kimg_json_double(struct kimg_json *j, double v)
{
	if (v != v || v > 1e300 || v < -1e300) {
		kimg_json_null(j);
		return;
	}
	value_prefix(j);
	fprintf(j->out, "%.3f", v);
}

static void literal(struct kimg_json *j, const char *word, size_t n)
{
	char buf[8];
	size_t len = prefix_into(j, buf);
	memcpy(buf + len, word, n);
	fwrite(buf, 1, len + n, j->out);
}

void kimg_json_bool(struct kimg_json *j, bool v)
{
	if (v)
		literal(j, "true", 4);
	else
		literal(j, "false", 5);
}

void kimg_json_null(struct kimg_json *j)
{
	literal(j, "null", 4);
}

void kimg_json_kv_string(struct kimg_json *j, const char *key, const char *s)
{
	char buf[TOKEN_MAX];
	if (s) {
		bool after_key = j->after_key, first = j->first[j->depth];
		size_t len = quoted_into(buf, prefix_into(j, buf), key, strlen(key));
		if (len && len < TOKEN_MAX - 4) {
			buf[len++] = ':';
			size_t all = quoted_into(buf, len, s, strlen(s));
			if (all) {
				fwrite(buf, 1, all, j->out);
				return;
			}
		}
		j->after_key = after_key;
		j->first[j->depth] = first;
	}
	kimg_json_key(j, key);
	kimg_json_string(j, s);
}

void kimg_json_kv_int(struct kimg_json *j, const char *key, int64_t v)
{
	kimg_json_key(j, key);
	kimg_json_int(j, v);
}

void kimg_json_kv_uint(struct kimg_json *j, const char *key, uint64_t v)
{
	char buf[TOKEN_MAX];
	bool after_key = j->after_key, first = j->first[j->depth];
	size_t len = quoted_into(buf, prefix_into(j, buf), key, strlen(key));
	if (len && len + 21 <= TOKEN_MAX) {
		buf[len++] = ':';
		fwrite(buf, 1, uint_into(buf, len, v), j->out);
		return;
	}
	j->after_key = after_key; /* as it was: the long way */
	j->first[j->depth] = first;
	kimg_json_key(j, key);
	kimg_json_uint(j, v);
}

void kimg_json_kv_bool(struct kimg_json *j, const char *key, bool v)
{
	kimg_json_key(j, key);
	kimg_json_bool(j, v);
}
