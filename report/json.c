/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "json.h"

void kimg_json_init(struct kimg_json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->first[0] = true;
	j->after_key = false;
	j->buf = NULL;
	j->buf_len = j->buf_cap = 0;
}

void kimg_json_flush(struct kimg_json *j)
{
	if (j->buf_len && j->out)
		fwrite(j->buf, 1, j->buf_len, j->out);
	j->buf_len = 0;
}

void kimg_json_set_buffer(struct kimg_json *j, char *buf, size_t cap)
{
	kimg_json_flush(j);
	j->buf = cap ? buf : NULL;
	j->buf_cap = buf ? cap : 0;
}

/* Every byte of the output passes here: into the buffer, or to out. */
static void emit(struct kimg_json *j, const void *p, size_t n)
{
	if (!j->buf) {
		fwrite(p, 1, n, j->out);
		return;
	}
	if (n > j->buf_cap - j->buf_len) {
		kimg_json_flush(j);
		if (n > j->buf_cap) {
			fwrite(p, 1, n, j->out);
			return;
		}
	}
	memcpy(j->buf + j->buf_len, p, n);
	j->buf_len += n;
}

static void emit_char(struct kimg_json *j, char c)
{
	if (!j->buf) {
		fputc(c, j->out);
		return;
	}
	if (j->buf_len == j->buf_cap)
		kimg_json_flush(j);
	j->buf[j->buf_len++] = c;
}

/* Comma before a value unless it is the first in its container or follows a key. */
static void value_prefix(struct kimg_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		emit_char(j, ',');
	j->first[j->depth] = false;
}

static void open_level(struct kimg_json *j, char c)
{
	value_prefix(j);
	emit_char(j, c);
	if (j->depth + 1 < KIMG_JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
	j->closer[j->depth] = c == '{' ? '}' : ']';
}

static void close_level(struct kimg_json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	emit_char(j, c);
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

/* \u00XX of a byte, as the JSON of a control or stray byte. */
static void emit_u00(struct kimg_json *j, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
	emit(j, u, sizeof u);
}

static void write_escaped(struct kimg_json *j, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	emit_char(j, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;
		if (is_plain(c)) {
			size_t run = 1;
			while (i + run < n && is_plain(s[i + run]))
				run++;
			emit(j, s + i, run);
			i += run;
		} else if (c == '"' || c == '\\') {
			emit_char(j, '\\');
			emit_char(j, (char)c);
			i++;
		} else if (c == '\n') {
			emit(j, "\\n", 2);
			i++;
		} else if (c == '\t') {
			emit(j, "\\t", 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			emit_u00(j, c);
			i++;
		} else if (c == 0xc0 && i + 1 < n && s[i + 1] == 0x80) {
			emit_u00(j, 0); /* a NUL inside a name (text_escape.h) */
			i += 2;
		} else if ((len = kimg_utf8_seq_len(s + i, n - i)) != 0) {
			emit(j, s + i, len);
			i += len;
		} else {
			emit_u00(j, c); /* stray byte: keep it visible, keep JSON valid */
			i++;
		}
	}
	emit_char(j, '"');
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

/* Whether none of the 8 bytes of x needs escaping (is_plain of each):
 * no byte below 0x20, none at 0x7f or above, no '"', no '\\'. Each test
 * is exact about whether such a byte exists, whatever the byte order. */
static inline bool is_plain_word(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t quote = x ^ (ones * '"'), slash = x ^ (ones * '\\');
	uint64_t below = (x - ones * 0x20) & ~x & highs;
	uint64_t above = ((x + ones) | x) & highs; /* a byte > 0x7e */
	uint64_t quotes = (quote - ones) & ~quote & highs, slashes = (slash - ones) & ~slash & highs;
	return !(below | above | quotes | slashes);
}

/* s[0..n) quoted into buf at pos when it needs no escaping and fits:
 * the new length, or 0. Checked and copied 8 bytes at a time: every key
 * and string value of a document passes here. */
static size_t quoted_into(char *buf, size_t pos, const char *s, size_t n)
{
	if (n > TOKEN_MAX - 4 - pos)
		return 0;
	char *d = buf + pos + 1;
	size_t i = 0;
	uint64_t x;
	for (; n - i >= 8; i += 8) {
		memcpy(&x, s + i, 8);
		if (!is_plain_word(x))
			return 0;
		memcpy(d + i, &x, 8);
	}
	/* The rest without a loop over bytes: the last 8 (or two times 4)
	 * bytes again, overlapping what is done (most keys and values are
	 * short: "kind", "arch", "sm_90", "stored_size"). */
	if (i < n && n >= 8) {
		memcpy(&x, s + n - 8, 8);
		if (!is_plain_word(x))
			return 0;
		memcpy(d + n - 8, &x, 8);
	} else if (n >= 4) {
		uint32_t lo, hi;
		memcpy(&lo, s, 4);
		memcpy(&hi, s + n - 4, 4);
		if (!is_plain_word((uint64_t)lo | (uint64_t)hi << 32))
			return 0;
		memcpy(d, &lo, 4);
		memcpy(d + n - 4, &hi, 4);
	} else {
		for (; i < n; i++) {
			if (!is_plain((unsigned char)s[i]))
				return 0;
			d[i] = s[i];
		}
	}
	buf[pos] = '"';
	d[n] = '"';
	return pos + n + 2;
}

/* Decimal digits of v into buf at pos, two at a time: the new length. */
static size_t uint_into(char *buf, size_t pos, uint64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				    "8081828384858687888990919293949596979899";
	char digits[20];
	size_t n = sizeof digits;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		digits[--n] = pairs[2 * r + 1];
		digits[--n] = pairs[2 * r];
	}
	if (v >= 10) {
		digits[--n] = pairs[2 * v + 1];
		digits[--n] = pairs[2 * v];
	} else {
		digits[--n] = (char)('0' + v);
	}
	memcpy(buf + pos, digits + n, sizeof digits - n);
	return pos + sizeof digits - n;
}

void kimg_json_key(struct kimg_json *j, const char *key)
{
	char buf[TOKEN_MAX];
	size_t n = strlen(key), pre = prefix_into(j, buf), len = quoted_into(buf, pre, key, n);
	if (len) {
		buf[len++] = ':';
		emit(j, buf, len);
	} else {
		if (pre)
			emit_char(j, ',');
		write_escaped(j, key, n);
		emit_char(j, ':');
	}
	j->after_key = true;
}

void kimg_json_string_n(struct kimg_json *j, const char *s, size_t n)
{
	char buf[TOKEN_MAX];
	size_t pre = prefix_into(j, buf), len = quoted_into(buf, pre, s, n);
	if (len) {
		emit(j, buf, len);
		return;
	}
	if (pre)
		emit_char(j, ',');
	write_escaped(j, s, n);
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
	emit(j, buf, len);
}

void kimg_json_uint(struct kimg_json *j, uint64_t v)
{
	char buf[TOKEN_MAX];
	size_t len = uint_into(buf, prefix_into(j, buf), v);
	emit(j, buf, len);
}

/* Fixed 3 decimals (milliseconds to the microsecond); JSON has no NaN or
 * infinity, so those become null. */
void kimg_json_double(struct kimg_json *j, double v)
{
	if (v != v || v > 1e300 || v < -1e300) {
		kimg_json_null(j);
		return;
	}
	char num[320];
	int n = snprintf(num, sizeof num, "%.3f", v);
	value_prefix(j);
	if (n > 0)
		emit(j, num, (size_t)n < sizeof num ? (size_t)n : sizeof num - 1);
}

static void literal(struct kimg_json *j, const char *word, size_t n)
{
	char buf[8];
	size_t len = prefix_into(j, buf);
	memcpy(buf + len, word, n);
	emit(j, buf, len + n);
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
	if (!s) {
		bool after_key = j->after_key, first = j->first[j->depth];
		size_t len = quoted_into(buf, prefix_into(j, buf), key, strlen(key));
		if (len && len + 5 <= TOKEN_MAX) {
			memcpy(buf + len, ":null", 5);
			emit(j, buf, len + 5);
			return;
		}
		j->after_key = after_key; /* as it was: the long way */
		j->first[j->depth] = first;
	} else {
		bool after_key = j->after_key, first = j->first[j->depth];
		size_t len = quoted_into(buf, prefix_into(j, buf), key, strlen(key));
		if (len && len < TOKEN_MAX - 4) {
			buf[len++] = ':';
			size_t all = quoted_into(buf, len, s, strlen(s));
			if (all) {
				emit(j, buf, all);
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
		emit(j, buf, uint_into(buf, len, v));
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

/* Keys of KIMG_JSON_LIT: already quoted, with their colon. Longer than
 * this (no key is), the general path. */
#define LIT_KEY_MAX 64

/* The comma and the quoted key into buf: the length so far. A key too
 * long for buf goes out at once instead, and 0 says the value must too
 * (a quoted key is 3 bytes at least, so 0 is never a length). */
static size_t lit_key_into(struct kimg_json *j, char *buf, const char *quoted_key, size_t len)
{
	if (len > LIT_KEY_MAX) {
		value_prefix(j);
		emit(j, quoted_key, len);
		j->after_key = true;
		return 0;
	}
	size_t at = prefix_into(j, buf);
	memcpy(buf + at, quoted_key, len);
	return at + len;
}

void kimg_json_kvl_string(struct kimg_json *j, const char *quoted_key, size_t len, const char *s)
{
	char buf[TOKEN_MAX];
	size_t at = lit_key_into(j, buf, quoted_key, len);
	if (!at) {
		kimg_json_string(j, s);
		return;
	}
	if (!s) {
		memcpy(buf + at, "null", 4);
		emit(j, buf, at + 4);
		return;
	}
	size_t n = strlen(s), all = quoted_into(buf, at, s, n);
	if (all) {
		emit(j, buf, all);
		return;
	}
	emit(j, buf, at);
	write_escaped(j, s, n);
}

void kimg_json_kvl_uint(struct kimg_json *j, const char *quoted_key, size_t len, uint64_t v)
{
	char buf[TOKEN_MAX];
	size_t at = lit_key_into(j, buf, quoted_key, len);
	if (!at)
		kimg_json_uint(j, v);
	else
		emit(j, buf, uint_into(buf, at, v));
}
