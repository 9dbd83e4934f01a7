/* SPDX-License-Identifier: Apache-2.0 */
/* PTX directive scanner: a small lexer over untrusted text.
 *
 * PTX is line-oriented assembly, but directives may share a line, be split
 * over lines, or sit next to comments that themselves contain directive
 * words (nvcc writes "// .globl name"). So this is a real tokenizer rather
 * than a line grep: whitespace, // and block comments are skipped, string
 * literals (".file 1 \"a.cu\"") are single tokens, and a "word" is a run of
 * identifier characters including '.', so that instruction names such as
 * ld.param.f32 or a value such as 9.0 are never mistaken for directives. */
#include "ptx_scan.h"

#include <string.h>

#include "image.h"

enum tok_kind { TOK_EOF = 0, TOK_WORD, TOK_STRING, TOK_PUNCT };

struct token {
	enum tok_kind kind;
	uint64_t off;
	uint64_t len;
};

struct lexer {
	struct kimg_span text; /* already cut at the first NUL */
	uint64_t pos;
};

/* The only read of the text: a byte or -1 past the end. */
static int lx_byte(const struct lexer *lx, uint64_t i)
{
	const uint8_t *p = kimg_span_at(&lx->text, i, 1);
	return p ? *p : -1;
}

static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* PTX identifiers use [A-Za-z0-9_$%]; '.' joins instruction and type
 * suffixes and starts directives, so it belongs to the word too. */
static bool is_word(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c == '%' || c == '.';
}

static void lx_next(struct lexer *lx, struct token *t)
{
	for (;;) {
		while (is_space(lx_byte(lx, lx->pos)))
			lx->pos++;
		int c = lx_byte(lx, lx->pos);
		int c1 = lx_byte(lx, lx->pos + 1);
		t->off = lx->pos;
		t->len = 0;
		if (c < 0) {
			t->kind = TOK_EOF;
			return;
		}
		if (c == '/' && c1 == '/') {
			while (lx_byte(lx, lx->pos) >= 0 && lx_byte(lx, lx->pos) != '\n')
				lx->pos++;
			continue;
		}
		if (c == '/' && c1 == '*') {
			/* An unterminated block comment runs to the end of the text. */
			lx->pos += 2;
			while (lx_byte(lx, lx->pos) >= 0 &&
			       !(lx_byte(lx, lx->pos) == '*' && lx_byte(lx, lx->pos + 1) == '/'))
				lx->pos++;
			if (lx_byte(lx, lx->pos) >= 0)
				lx->pos += 2;
			continue;
		}
		if (c == '"') {
			/* Strings do not span lines; stopping at '\n' resynchronises
			 * after an unterminated one instead of swallowing the file. */
			lx->pos++;
			for (;;) {
				int s = lx_byte(lx, lx->pos);
				if (s < 0 || s == '\n')
					break;
				lx->pos++;
				if (s == '"')
					break;
				if (s == '\\' && lx_byte(lx, lx->pos) >= 0 && lx_byte(lx, lx->pos) != '\n')
					lx->pos++;
			}
			t->kind = TOK_STRING;
			t->len = lx->pos - t->off;
			return;
		}
		if (is_word(c)) {
			while (is_word(lx_byte(lx, lx->pos)))
				lx->pos++;
			t->kind = TOK_WORD;
			t->len = lx->pos - t->off;
			return;
		}
		lx->pos++;
		t->kind = TOK_PUNCT;
		t->len = 1;
		return;
	}
}

static bool tok_is(const struct lexer *lx, const struct token *t, const char *word)
{
	size_t n = strlen(word);
	const void *p = kimg_span_at(&lx->text, t->off, t->len);
	return t->kind == TOK_WORD && t->len == n && p && memcmp(p, word, n) == 0;
}

static bool tok_is_directive(const struct lexer *lx, const struct token *t)
{
	return t->kind == TOK_WORD && lx_byte(lx, t->off) == '.';
}

/* Decimal digits at [*i, end) into *v; false when none or above max. */
static bool parse_uint(const struct lexer *lx, uint64_t *i, uint64_t end, uint32_t max, uint32_t *v)
{
	uint64_t start = *i;
	uint32_t n = 0;
	while (*i < end) {
		int c = lx_byte(lx, *i);
		if (c < '0' || c > '9')
			break;
		n = n * 10 + (uint32_t)(c - '0');
		if (n > max)
			return false;
		(*i)++;
	}
	*v = n;
	return *i > start;
}

/* "X.Y" with 1 <= X <= 99, 0 <= Y <= 99 (the KIMG_ISA encoding's range). */
static bool parse_isa(const struct lexer *lx, const struct token *t, uint16_t *isa)
{
	uint64_t i = t->off, end = t->off + t->len;
	uint32_t major, minor;
	if (!parse_uint(lx, &i, end, 99, &major) || major == 0 || lx_byte(lx, i) != '.')
		return false;
	i++;
	if (!parse_uint(lx, &i, end, 99, &minor) || i != end)
		return false;
	*isa = KIMG_ISA(major, minor);
	return true;
}

/* "sm_N", "sm_Na", "sm_Nf"; the caller has checked the "sm_" prefix. */
static bool parse_sm(const struct lexer *lx, const struct token *t, struct kimg_arch *arch)
{
	uint64_t i = t->off + 3, end = t->off + t->len;
	uint32_t sm;
	if (!parse_uint(lx, &i, end, UINT16_MAX, &sm) || sm == 0)
		return false;
	arch->sm = (uint16_t)sm;
	arch->variant = KIMG_VARIANT_PLAIN;
	if (i + 1 == end && lx_byte(lx, i) == 'a')
		arch->variant = KIMG_VARIANT_A;
	else if (i + 1 == end && lx_byte(lx, i) == 'f')
		arch->variant = KIMG_VARIANT_F;
	else if (i != end)
		return false;
	return true;
}

static bool tok_has_prefix(const struct lexer *lx, const struct token *t, const char *prefix)
{
	size_t n = strlen(prefix);
	const void *p = kimg_span_at(&lx->text, t->off, n);
	return t->kind == TOK_WORD && t->len >= n && p && memcmp(p, prefix, n) == 0;
}

static void dir_init(struct kimg_ptx_dir *d, enum kimg_ptx_dir_kind kind, uint64_t offset,
		     const struct token *value)
{
	memset(d, 0, sizeof *d);
	d->kind = kind;
	d->offset = offset;
	d->value_off = value->off;
	d->value_len = value->len;
}

/* A directive's value: a word that is not itself a directive. */
static bool next_value(struct lexer *lx, struct token *v)
{
	lx_next(lx, v);
	return v->kind == TOK_WORD && !tok_is_directive(lx, v);
}

/* .target item, item, ...: reports each sm_ item; an empty list or a
 * dangling comma is malformed. */
static int scan_target(struct lexer *lx, const struct token *dir, kimg_ptx_dir_fn fn, void *ctx,
		       struct kimg_error *err)
{
	struct kimg_ptx_dir d;
	struct token item, sep;
	bool any_sm = false;
	for (;;) {
		if (!next_value(lx, &item))
			return kimg_error_set(err, -KIMG_EFORMAT, item.off, "PTX .target without a target name");
		if (tok_has_prefix(lx, &item, "sm_")) {
			dir_init(&d, KIMG_PTX_DIR_TARGET, dir->off, &item);
			if (!parse_sm(lx, &item, &d.arch))
				return kimg_error_set(err, -KIMG_EFORMAT, item.off, "PTX .target item is not sm_N[a|f]");
			any_sm = true;
			int rc = fn ? fn(ctx, &d) : 0;
			if (rc)
				return rc;
		}
		struct lexer save = *lx;
		lx_next(lx, &sep);
		if (sep.kind != TOK_PUNCT || lx_byte(lx, sep.off) != ',') {
			*lx = save; /* not ours: the next directive or instruction */
			break;
		}
	}
	if (!any_sm) {
		dir_init(&d, KIMG_PTX_DIR_OTHER, dir->off, dir);
		return fn ? fn(ctx, &d) : 0;
	}
	return 0;
}

uint64_t kimg_ptx_text_len(struct kimg_span s)
{
	const uint8_t *p = kimg_span_at(&s, 0, s.size);
	const uint8_t *nul = p && s.size ? memchr(p, 0, (size_t)s.size) : NULL;
	return nul ? (uint64_t)(nul - p) : s.size;
}

int kimg_ptx_scan(struct kimg_span s, kimg_ptx_dir_fn fn, void *ctx, struct kimg_error *err)
{
	struct lexer lx = { kimg_span_sub(&s, 0, kimg_ptx_text_len(s)), 0 };
	struct token t, v;
	struct kimg_ptx_dir d;
	int rc = 0;
	for (;;) {
		lx_next(&lx, &t);
		if (t.kind == TOK_EOF)
			return 0;
		if (!tok_is_directive(&lx, &t))
			continue;
		if (tok_is(&lx, &t, ".version")) {
			dir_init(&d, KIMG_PTX_DIR_VERSION, t.off, &t);
			if (!next_value(&lx, &v) || !parse_isa(&lx, &v, &d.isa))
				return kimg_error_set(err, -KIMG_EFORMAT, v.off, "PTX .version is not MAJOR.MINOR");
			d.value_off = v.off;
			d.value_len = v.len;
			rc = fn ? fn(ctx, &d) : 0;
		} else if (tok_is(&lx, &t, ".target")) {
			rc = scan_target(&lx, &t, fn, ctx, err);
		} else if (tok_is(&lx, &t, ".entry")) {
			if (!next_value(&lx, &v))
				return kimg_error_set(err, -KIMG_EFORMAT, v.off, "PTX .entry without a name");
			dir_init(&d, KIMG_PTX_DIR_ENTRY, t.off, &v);
			rc = fn ? fn(ctx, &d) : 0;
		} else {
			dir_init(&d, KIMG_PTX_DIR_OTHER, t.off, &t);
			rc = fn ? fn(ctx, &d) : 0;
		}
		if (rc)
			return rc;
	}
}

static int variant_rank(uint8_t variant)
{
	return variant == KIMG_VARIANT_A ? 2 : variant == KIMG_VARIANT_F ? 1 : 0;
}

bool kimg_ptx_target_higher(struct kimg_arch a, struct kimg_arch b)
{
	return a.sm > b.sm || (a.sm == b.sm && variant_rank(a.variant) > variant_rank(b.variant));
}
