/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for core/json_read.c. Besides "no crash, no read past
 * the input" (ASan), it checks the reader's promises: the arena is never
 * overrun, every string is NUL-terminated at its length and valid UTF-8,
 * container counts match their children; and a round trip: the tree
 * written back as JSON parses to an equal tree. The first input byte picks
 * the arena size (small arenas exercise the KIMG_ELIMIT paths). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *buf;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *b = realloc(o->buf, cap);
		if (!b)
			abort();
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void put_string(struct out *o, const char *s, size_t n)
{
	put(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];
		if (c < 0x20 || c == '"' || c == '\\') {
			snprintf(esc, sizeof esc, "\\u%04x", c);
			put(o, esc, 6);
		} else
			put(o, s + i, 1);
	}
	put(o, "\"", 1);
}

static void check_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (len == 0 || i + len > n)
			abort();
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				abort();
		i += len;
	}
}

static void check_str(const char *s, uint32_t len)
{
	if (!s || s[len] != '\0' || strlen(s) > len)
		abort();
	check_utf8((const unsigned char *)s, len);
}

static void write_tree(struct out *o, const struct kimg_jval *v)
{
	static const char *const words[] = { "null", "false", "true" };
	switch (v->type) {
	case KIMG_JNULL:
	case KIMG_JFALSE:
	case KIMG_JTRUE:
		put(o, words[v->type], strlen(words[v->type]));
		break;
	case KIMG_JNUMBER:
		check_str(v->str, v->len);
		put(o, v->str, v->len);
		break;
	case KIMG_JSTRING:
		check_str(v->str, v->len);
		put_string(o, v->str, v->len);
		break;
	case KIMG_JARRAY:
	case KIMG_JOBJECT: {
		bool obj = v->type == KIMG_JOBJECT;
		uint32_t n = 0;
		put(o, obj ? "{" : "[", 1);
		for (const struct kimg_jval *c = v->child; c; c = c->next, n++) {
			if (n)
				put(o, ",", 1);
			if (obj) {
				check_str(c->key, c->key_len);
				put_string(o, c->key, c->key_len);
				put(o, ":", 1);
			} else if (c->key)
				abort();
			write_tree(o, c);
		}
		if (n != v->count)
			abort();
		put(o, obj ? "}" : "]", 1);
		break;
	}
	default:
		abort();
	}
}

static bool same(const struct kimg_jval *a, const struct kimg_jval *b)
{
	if (a->type != b->type || a->count != b->count || a->len != b->len || a->key_len != b->key_len)
		return false;
	if (a->key && memcmp(a->key, b->key, a->key_len) != 0)
		return false;
	if (a->str && memcmp(a->str, b->str, a->len) != 0)
		return false;
	const struct kimg_jval *x = a->child, *y = b->child;
	for (; x && y; x = x->next, y = y->next)
		if (!same(x, y))
			return false;
	return !x && !y;
}

static unsigned char arena1[1 << 20], arena2[1 << 20];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t arena_size = sizeof arena1;
	if (size > 0) {
		if (data[0] < 0x40)
			arena_size = (size_t)data[0] * 16;
		data++;
		size--;
	}
	struct kimg_jdoc doc, again;
	struct kimg_error err = { 0 };
	kimg_jdoc_init(&doc, arena1, arena_size);
	int rc = kimg_jdoc_parse(&doc, kimg_span_make(data, size), &err);
	if (doc.used > arena_size)
		abort();
	if (rc < 0) {
		if (doc.root || (rc != -KIMG_EFORMAT && rc != -KIMG_ETRUNC && rc != -KIMG_ELIMIT) || err.code != rc ||
		    err.offset > size)
			abort();
		return 0;
	}
	if (rc != 0 || !doc.root)
		abort();
	struct out o = { 0 };
	write_tree(&o, doc.root);
	kimg_jdoc_init(&again, arena2, sizeof arena2);
	/* escapes may grow strings 6x in the text, never in the tree: the
	 * second parse needs no more arena than the first */
	if (kimg_jdoc_parse(&again, kimg_span_make(o.buf, o.len), &err) != 0 || !same(doc.root, again.root))
		abort();
	free(o.buf);
	return 0;
}
