/* SPDX-License-Identifier: Apache-2.0 */
/* Escaping untrusted names for text output (report/text_escape.h). */
#include "text_escape.h"

#include <stdbool.h>
#include <string.h>

#include "json.h"

/* The code point of a valid sequence of seq bytes when it is a bidi or
 * invisible format character, else 0: U+061C, U+200B-200F, U+2028-202E
 * (line and paragraph separators, embeddings and overrides), U+2060-206F
 * (isolates among them), U+FEFF, U+FFF9-FFFB. Shown raw, they reorder or
 * hide the text around them ("Trojan Source"). */
static unsigned format_char(const unsigned char *s, size_t seq)
{
	unsigned cp;
	if (seq == 2)
		cp = (unsigned)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
	else if (seq == 3)
		cp = (unsigned)(s[0] & 0x0f) << 12 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
	else
		return 0;
	bool fmt = cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
		   (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb);
	return fmt ? cp : 0;
}

/* The rendering of the sequence at s[0..n) (n >= 1): writes at most 8
 * chars to out and their count to *len; returns the bytes consumed. */
static size_t escape_one(const unsigned char *s, size_t n, char out[8], size_t *len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = s[0];
	size_t seq = c < 0x80 ? 1 : kimg_utf8_seq_len(s, n);
	bool c1 = seq == 2 && c == 0xc2 && s[1] < 0xa0; /* terminals may obey U+009B as CSI */
	/* NUL inside a name, as the readers carry it (modified UTF-8 C0 80:
	 * a C string cannot hold the byte itself) */
	if (c == 0xc0 && n >= 2 && s[1] == 0x80) {
		memcpy(out, "\\x00", 4);
		*len = 4;
		return 2;
	}
	unsigned cp = format_char(s, seq);
	if (cp) {
		out[0] = '\\';
		out[1] = 'u';
		for (int k = 0; k < 4; k++)
			out[2 + k] = hex[cp >> (12 - 4 * k) & 15];
		*len = 6;
		return seq;
	}
	if (c == '\\' || c == '\n' || c == '\t' || c == '\r') {
		out[0] = '\\';
		out[1] = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		*len = 2;
		return 1;
	}
	if (c < 0x20 || c == 0x7f || seq == 0 || c1) {
		size_t k = c1 ? 2 : 1;
		for (size_t b = 0; b < k; b++) {
			out[4 * b] = '\\';
			out[4 * b + 1] = 'x';
			out[4 * b + 2] = hex[s[b] >> 4];
			out[4 * b + 3] = hex[s[b] & 15];
		}
		*len = 4 * k;
		return k;
	}
	memcpy(out, s, seq);
	*len = seq;
	return seq;
}

const char *kimg_text_escape(const char *text, char *buf, size_t size)
{
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	size_t n = strlen((const char *)s), o = 0;
	if (size == 0)
		return buf;
	for (size_t i = 0; i < n;) {
		char piece[8];
		size_t len, used = escape_one(s + i, n - i, piece, &len);
		if (o + len + 1 > size)
			break;
		memcpy(buf + o, piece, len);
		o += len;
		i += used;
	}
	buf[o] = '\0';
	return buf;
}

void kimg_text_fputs(const char *text, FILE *out)
{
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	size_t n = strlen((const char *)s);
	for (size_t i = 0; i < n;) {
		/* Runs that need no escape go out in one write. */
		size_t run = 0;
		while (i + run < n && s[i + run] >= 0x20 && s[i + run] < 0x7f && s[i + run] != '\\')
			run++;
		if (run) {
			fwrite(s + i, 1, run, out);
			i += run;
			continue;
		}
		char piece[8];
		size_t len;
		i += escape_one(s + i, n - i, piece, &len);
		fwrite(piece, 1, len, out);
	}
}
