/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded recursive-descent JSON reader (core/json_read.h).
 *
 * Recursion is bounded by max_depth (64 frames of a few dozen bytes), the
 * only memory is the caller's arena, and every input byte is read through
 * kimg_span_at. Strings are decoded straight into the arena's free tail,
 * so no pre-scan is needed and a string can never take more than the
 * arena holds. */
#include "json_read.h"

#include <string.h>

struct parser {
	struct kimg_span in;
	uint64_t pos;
	struct kimg_jdoc *doc;
	struct kimg_error *err;
	unsigned max_depth;
};

/* -1 at the end of the input. */
static int peek(const struct parser *p)
{
	const uint8_t *c = kimg_span_at(&p->in, p->pos, 1);
	return c ? *c : -1;
}

static void skip_ws(struct parser *p)
{
	const uint8_t *d = p->in.data;
	uint64_t pos = p->pos, size = p->in.size; /* stays below size: inside the span */
	while (pos < size && (d[pos] == ' ' || d[pos] == '\t' || d[pos] == '\n' || d[pos] == '\r'))
		pos++;
	p->pos = pos;
}

/* The end of the input is "truncated", anything else "malformed": a reader
 * of log files must tell a cut-off last line from garbage. */
static int unexpected(struct parser *p, const char *expected)
{
	int c = peek(p);
	if (c < 0)
		return kimg_error_set(p->err, -KIMG_ETRUNC, p->pos, "JSON ends where %s was expected", expected);
	if (c >= 0x20 && c < 0x7f)
		return kimg_error_set(p->err, -KIMG_EFORMAT, p->pos, "'%c' where %s was expected", c, expected);
	return kimg_error_set(p->err, -KIMG_EFORMAT, p->pos, "byte 0x%02x where %s was expected", (unsigned)c,
			      expected);
}

static void *arena_alloc(struct parser *p, size_t size, size_t align)
{
	struct kimg_jdoc *d = p->doc;
	size_t start = (d->used + align - 1) & ~(align - 1);
	if (start < d->used || start > d->arena_size || size > d->arena_size - start)
		return NULL;
	d->used = start + size;
	return d->arena + start;
}

static struct kimg_jval *new_node(struct parser *p, enum kimg_jtype type, uint64_t offset)
{
	struct kimg_jval *v = arena_alloc(p, sizeof *v, _Alignof(struct kimg_jval));
	if (!v) {
		kimg_error_set(p->err, -KIMG_ELIMIT, offset, "JSON arena of %zu bytes is full", p->doc->arena_size);
		return NULL;
	}
	memset(v, 0, sizeof *v);
	v->type = type;
	v->offset = offset;
	return v;
}

/* Match a literal word (true, false, null). */
static int parse_word(struct parser *p, const char *word, enum kimg_jtype type, struct kimg_jval **out)
{
	size_t n = strlen(word);
	uint64_t start = p->pos;
	for (size_t i = 0; i < n; i++, p->pos++)
		if (peek(p) != word[i])
			return unexpected(p, word);
	*out = new_node(p, type, start);
	return *out ? 0 : p->err ? p->err->code : -KIMG_ELIMIT;
}

static int hex4(struct parser *p, uint32_t *cp)
{
	*cp = 0;
	for (int i = 0; i < 4; i++, p->pos++) {
		int c = peek(p);
		uint32_t d;
		if (c >= '0' && c <= '9')
			d = (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (uint32_t)(c - 'A' + 10);
		else
			return unexpected(p, "a hex digit of \\u");
		*cp = *cp << 4 | d;
	}
	return 0;
}

/* Length of the valid UTF-8 sequence at pos (1..4), or 0 (RFC 3629:
 * no overlongs, no surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const struct parser *p)
{
	const uint8_t *s = kimg_span_at(&p->in, p->pos, 1);
	if (!s)
		return 0;
	uint8_t c = s[0];
	size_t len;
	uint8_t lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		if (c == 0xed)
			hi = 0x9f; /* U+D800..DFFF */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else
		return 0;
	const uint8_t *q = kimg_span_at(&p->in, p->pos, len);
	if (!q)
		return 0;
	if (q[1] < lo || q[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((q[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

static size_t put_utf8(unsigned char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The code point of an escape after the backslash (pos at the letter). */
static int parse_escape(struct parser *p, uint32_t *cp)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	int c = peek(p);
	const char *hit = c > 0 ? memchr(from, c, sizeof from - 1) : NULL;
	if (hit) {
		*cp = (unsigned char)to[hit - from];
		p->pos++;
		return 0;
	}
	if (c != 'u')
		return unexpected(p, "an escape letter (\"\\/bfnrtu)");
	p->pos++;
	int rc = hex4(p, cp);
	if (rc < 0)
		return rc;
	if (*cp >= 0xdc00 && *cp <= 0xdfff) {
		*cp = 0xfffd; /* lone low surrogate */
		return 0;
	}
	if (*cp < 0xd800 || *cp > 0xdbff)
		return 0;
	/* a high surrogate: joined with a following \uDC00..DFFF, else U+FFFD */
	const uint8_t *bs = kimg_span_at(&p->in, p->pos, 2);
	if (!bs || bs[0] != '\\' || bs[1] != 'u') {
		*cp = 0xfffd;
		return 0;
	}
	uint64_t save = p->pos;
	uint32_t low;
	p->pos += 2;
	if ((rc = hex4(p, &low)) < 0)
		return rc;
	if (low < 0xdc00 || low > 0xdfff) {
		p->pos = save; /* decode that escape on its own */
		*cp = 0xfffd;
		return 0;
	}
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (low - 0xdc00);
	return 0;
}

/* Bytes a string holds as they are: printable ASCII but '"' and '\\'. */
static const uint8_t plain[256] = {
	[0x20] = 1, [0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1,
};

/* A string (pos at the opening quote) decoded into the arena's tail. */
static int parse_string(struct parser *p, const char **out, uint32_t *out_len)
{
	struct kimg_jdoc *d = p->doc;
	uint64_t start = p->pos;
	unsigned char *o = d->arena + d->used;
	size_t room = d->arena_size - d->used, n = 0;
	p->pos++;
	for (;;) {
		/* A run of plain ASCII (no quote, backslash or control byte) is
		 * copied at once: most of a large document's bytes (a Kubernetes
		 * node list) are such runs. The loop stays inside the span. */
		const uint8_t *bytes = p->in.data;
		uint64_t run_end = p->pos, size = p->in.size;
		while (run_end + 4 <= size && plain[bytes[run_end]] & plain[bytes[run_end + 1]] & plain[bytes[run_end + 2]] &
						      plain[bytes[run_end + 3]])
			run_end += 4;
		while (run_end < size && plain[bytes[run_end]])
			run_end++;
		if (run_end > p->pos) {
			uint64_t run = run_end - p->pos;
			if (run + 1 > room - n || n + run > UINT32_MAX)
				return kimg_error_set(p->err, -KIMG_ELIMIT, start, "string at %llu does not fit the JSON arena",
						      (unsigned long long)start);
			memcpy(o + n, p->in.data + p->pos, (size_t)run);
			n += (size_t)run;
			p->pos = run_end;
		}
		int c = peek(p);
		uint32_t cp = 0;
		unsigned char buf[4];
		size_t add;
		if (c < 0)
			return kimg_error_set(p->err, -KIMG_ETRUNC, p->pos, "JSON ends inside the string at %llu",
					      (unsigned long long)start);
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c < 0x20)
			return kimg_error_set(p->err, -KIMG_EFORMAT, p->pos, "control byte 0x%02x in a string",
					      (unsigned)c);
		if (c == '\\') {
			p->pos++;
			int rc = parse_escape(p, &cp);
			if (rc < 0)
				return rc;
			add = put_utf8(buf, cp);
		} else {
			add = utf8_len(p);
			if (add == 0) {
				/* a sequence cut by the end of input is truncation */
				if (!kimg_span_has(&p->in, p->pos, 4) && c >= 0xc2 && c <= 0xf4) {
					uint64_t i = p->pos + 1;
					while (i < p->in.size && (p->in.data[i] & 0xc0) == 0x80)
						i++;
					if (i == p->in.size)
						return kimg_error_set(p->err, -KIMG_ETRUNC, p->pos,
								      "JSON ends inside a UTF-8 sequence");
				}
				return kimg_error_set(p->err, -KIMG_EFORMAT, p->pos, "invalid UTF-8 in a string");
			}
			memcpy(buf, kimg_span_at(&p->in, p->pos, add), add);
			p->pos += add;
		}
		if (add + 1 > room - n || n + add > UINT32_MAX)
			return kimg_error_set(p->err, -KIMG_ELIMIT, start, "string at %llu does not fit the JSON arena",
					      (unsigned long long)start);
		memcpy(o + n, buf, add);
		n += add;
	}
	if (room - n < 1)
		return kimg_error_set(p->err, -KIMG_ELIMIT, start, "string does not fit the JSON arena");
	o[n] = '\0';
	d->used += n + 1;
	*out = (const char *)o;
	*out_len = (uint32_t)n;
	return 0;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

/* RFC 8259 section 6: -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)? */
static int parse_number(struct parser *p, struct kimg_jval **out)
{
	uint64_t start = p->pos;
	if (peek(p) == '-')
		p->pos++;
	if (peek(p) == '0')
		p->pos++;
	else if (is_digit(peek(p)))
		while (is_digit(peek(p)))
			p->pos++;
	else
		return unexpected(p, "a digit");
	if (peek(p) == '.') {
		p->pos++;
		if (!is_digit(peek(p)))
			return unexpected(p, "a digit after '.'");
		while (is_digit(peek(p)))
			p->pos++;
	}
	if (peek(p) == 'e' || peek(p) == 'E') {
		p->pos++;
		if (peek(p) == '+' || peek(p) == '-')
			p->pos++;
		if (!is_digit(peek(p)))
			return unexpected(p, "an exponent digit");
		while (is_digit(peek(p)))
			p->pos++;
	}
	uint64_t len = p->pos - start;
	if (len > UINT32_MAX)
		return kimg_error_set(p->err, -KIMG_ELIMIT, start, "number of %llu digits", (unsigned long long)len);
	struct kimg_jval *v = new_node(p, KIMG_JNUMBER, start);
	char *text = v ? arena_alloc(p, (size_t)len + 1, 1) : NULL;
	if (!text)
		return kimg_error_set(p->err, -KIMG_ELIMIT, start, "JSON arena of %zu bytes is full",
				      p->doc->arena_size);
	memcpy(text, kimg_span_at(&p->in, start, len), (size_t)len);
	text[len] = '\0';
	v->str = text;
	v->len = (uint32_t)len;
	*out = v;
	return 0;
}

static int parse_value(struct parser *p, unsigned depth, struct kimg_jval **out);

/* Array or object (pos at '[' or '{'). Children are linked in input order
 * through a tail pointer. */
static int parse_container(struct parser *p, unsigned depth, struct kimg_jval **out)
{
	bool object = peek(p) == '{';
	int close = object ? '}' : ']';
	uint64_t start = p->pos;
	if (depth >= p->max_depth)
		return kimg_error_set(p->err, -KIMG_ELIMIT, start, "JSON nested deeper than %u", p->max_depth);
	struct kimg_jval *v = new_node(p, object ? KIMG_JOBJECT : KIMG_JARRAY, start);
	if (!v)
		return p->err ? p->err->code : -KIMG_ELIMIT;
	struct kimg_jval **tail = &v->child;
	p->pos++;
	skip_ws(p);
	if (peek(p) == close) {
		p->pos++;
		*out = v;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		uint32_t key_len = 0;
		int rc;
		if (object) {
			if (peek(p) != '"')
				return unexpected(p, "a member name");
			if ((rc = parse_string(p, &key, &key_len)) < 0)
				return rc;
			skip_ws(p);
			if (peek(p) != ':')
				return unexpected(p, "':'");
			p->pos++;
		}
		struct kimg_jval *child;
		if ((rc = parse_value(p, depth + 1, &child)) < 0)
			return rc;
		child->key = key;
		child->key_len = key_len;
		*tail = child;
		tail = &child->next;
		if (v->count == UINT32_MAX)
			return kimg_error_set(p->err, -KIMG_ELIMIT, start, "container with more than 2^32-1 entries");
		v->count++;
		skip_ws(p);
		int c = peek(p);
		if (c == close) {
			p->pos++;
			break;
		}
		if (c != ',')
			return unexpected(p, object ? "',' or '}'" : "',' or ']'");
		p->pos++;
		skip_ws(p);
	}
	*out = v;
	return 0;
}

static int parse_value(struct parser *p, unsigned depth, struct kimg_jval **out)
{
	skip_ws(p);
	int c = peek(p);
	switch (c) {
	case '{':
	case '[':
		return parse_container(p, depth, out);
	case '"': {
		uint64_t start = p->pos;
		struct kimg_jval *v = new_node(p, KIMG_JSTRING, start);
		if (!v)
			return p->err ? p->err->code : -KIMG_ELIMIT;
		int rc = parse_string(p, &v->str, &v->len);
		if (rc < 0)
			return rc;
		*out = v;
		return 0;
	}
	case 't':
		return parse_word(p, "true", KIMG_JTRUE, out);
	case 'f':
		return parse_word(p, "false", KIMG_JFALSE, out);
	case 'n':
		return parse_word(p, "null", KIMG_JNULL, out);
	default:
		if (c == '-' || is_digit(c))
			return parse_number(p, out);
		return unexpected(p, "a JSON value");
	}
}

void kimg_jdoc_init(struct kimg_jdoc *doc, void *arena, size_t size)
{
	memset(doc, 0, sizeof *doc);
	doc->arena = arena;
	doc->arena_size = arena ? size : 0;
}

int kimg_jdoc_parse(struct kimg_jdoc *doc, struct kimg_span in, struct kimg_error *err)
{
	struct kimg_error local = { 0 };
	struct parser p = { in, 0, doc, err ? err : &local, doc->max_depth ? doc->max_depth : KIMG_JSON_READ_DEPTH };
	struct kimg_jval *root = NULL;
	doc->used = 0;
	doc->root = NULL;
	int rc = parse_value(&p, 0, &root);
	if (rc < 0)
		return rc;
	skip_ws(&p);
	if (p.pos != in.size)
		return unexpected(&p, "the end of the input");
	doc->root = root;
	return 0;
}

int kimg_jdoc_parse_at(struct kimg_jdoc *doc, struct kimg_span in, uint64_t pos, uint64_t *end,
		       struct kimg_error *err)
{
	struct kimg_error local = { 0 };
	struct parser p = { in, pos, doc, err ? err : &local, doc->max_depth ? doc->max_depth : KIMG_JSON_READ_DEPTH };
	struct kimg_jval *root = NULL;
	doc->used = 0;
	doc->root = NULL;
	int rc = parse_value(&p, 0, &root);
	if (rc < 0)
		return rc;
	skip_ws(&p);
	*end = p.pos;
	doc->root = root;
	return 0;
}
