/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/json_read.c, the bounded JSON reader behind
 * `kimg-probe summarize`: RFC 8259 values (valid and invalid), escapes
 * and UTF-8 (RFC 3629), the depth and arena limits, numbers kept exactly,
 * and the split between a truncated input (-KIMG_ETRUNC: a rank killed
 * mid-write) and garbage (-KIMG_EFORMAT), each with the offset found. */
#include <string.h>

#include "json_read.h"
#include "testutil.h"

static unsigned char arena[1 << 16];
static struct kimg_jdoc doc;
static struct kimg_error err;

static int parse_n(const char *text, size_t n)
{
	kimg_jdoc_init(&doc, arena, sizeof arena);
	memset(&err, 0, sizeof err);
	return kimg_jdoc_parse(&doc, kimg_span_make(text, n), &err);
}

static int parse(const char *text) { return parse_n(text, strlen(text)); }

/* A real libkimg.so report line (docs/json-shim-report.md), shortened. */
START_TEST(report_line_reads_back)
{
	static const char line[] =
		"{\"error\":{\"code\":209,\"name\":\"CUDA_ERROR_NO_BINARY_FOR_GPU\"},\"call\":\"cuLibraryGetKernel\","
		"\"kernel\":{\"name\":\"_Z7add_onePfi\",\"demangled\":null},"
		"\"module\":{\"file\":\"/work/app\",\"offset\":237568,\"images\":[{\"arch\":\"sm_80\"},{\"arch\":\"compute_80\"}]},"
		"\"process\":{\"host\":\"node1\",\"pid\":4242,\"rank\":3,\"local_rank\":null},\"stack\":[]}\n";
	ck_assert_int_eq(parse(line), 0);
	const struct kimg_jval *r = doc.root;
	ck_assert_int_eq(r->type, KIMG_JOBJECT);
	ck_assert_int_eq(r->count, 6);
	int64_t n;
	ck_assert(kimg_jval_int(kimg_jval_path(r, "error.code"), &n));
	ck_assert_int_eq(n, 209);
	ck_assert_str_eq(kimg_jval_string(kimg_jval_path(r, "module.file")), "/work/app");
	ck_assert(kimg_jval_int(kimg_jval_path(r, "module.offset"), &n));
	ck_assert_int_eq(n, 237568);
	ck_assert_str_eq(kimg_jval_string(kimg_jval_get(kimg_jval_at(kimg_jval_path(r, "module.images"), 1), "arch")),
			 "compute_80");
	ck_assert_ptr_null(kimg_jval_at(kimg_jval_path(r, "module.images"), 2));
	ck_assert(kimg_jval_is_null(kimg_jval_path(r, "kernel.demangled")));
	ck_assert(kimg_jval_is_null(kimg_jval_path(r, "process.world_size"))); /* missing reads as null */
	ck_assert(!kimg_jval_is_null(kimg_jval_path(r, "process.rank")));
	ck_assert_ptr_null(kimg_jval_string(kimg_jval_path(r, "process.pid"))); /* a number is not a string */
	ck_assert_ptr_null(kimg_jval_path(r, "call.x"));                         /* a string has no members */
	ck_assert_int_eq(kimg_jval_path(r, "stack")->count, 0);
	ck_assert_uint_eq(kimg_jval_get(r, "call")->offset, 67); /* the value's quote */
}
END_TEST

START_TEST(scalars_at_top_level)
{
	ck_assert_int_eq(parse("  true "), 0);
	ck_assert_int_eq(doc.root->type, KIMG_JTRUE);
	ck_assert_int_eq(parse("false"), 0);
	ck_assert_int_eq(doc.root->type, KIMG_JFALSE);
	ck_assert_int_eq(parse("null"), 0);
	ck_assert(kimg_jval_is_null(doc.root));
	ck_assert_int_eq(parse("\"\""), 0);
	ck_assert_str_eq(kimg_jval_string(doc.root), "");
	ck_assert_int_eq(parse("[]"), 0);
	ck_assert_int_eq(doc.root->count, 0);
	ck_assert_ptr_null(doc.root->child);
	ck_assert_int_eq(parse("{ }"), 0);
	ck_assert_int_eq(doc.root->type, KIMG_JOBJECT);
}
END_TEST

/* RFC 8259 section 7: the two-character escapes and \uXXXX, surrogate
 * pairs joined; a lone surrogate becomes U+FFFD (json_read.h). */
START_TEST(string_escapes)
{
	ck_assert_int_eq(parse("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\""), 0);
	ck_assert_str_eq(doc.root->str, "a\"b\\c/d\b\f\n\r\t");
	ck_assert_int_eq(parse("\"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\""), 0);
	ck_assert_str_eq(doc.root->str, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	ck_assert_int_eq(parse("\"x\\u0000y\""), 0); /* embedded NUL kept, length says so */
	ck_assert_uint_eq(doc.root->len, 3);
	ck_assert_int_eq(memcmp(doc.root->str, "x\0y", 4), 0);
	ck_assert_int_eq(parse("\"\\ud800x\""), 0);
	ck_assert_str_eq(doc.root->str, "\xef\xbf\xbdx");
	ck_assert_int_eq(parse("\"\\udc00\""), 0);
	ck_assert_str_eq(doc.root->str, "\xef\xbf\xbd");
	ck_assert_int_eq(parse("\"\\ud800\\u0041\""), 0); /* high surrogate, then a normal escape */
	ck_assert_str_eq(doc.root->str, "\xef\xbf\xbd" "A");
	/* kimg's own writer escapes invalid bytes as \u00XX (report/json.h) */
	ck_assert_int_eq(parse("{\"k\\u00e9y\":1}"), 0);
	ck_assert_ptr_nonnull(kimg_jval_get(doc.root, "k\xc3\xa9y"));
}
END_TEST

START_TEST(utf8_strict)
{
	ck_assert_int_eq(parse("\"\xc3\xa9\xf0\x9f\x98\x80\""), 0);
	ck_assert_str_eq(doc.root->str, "\xc3\xa9\xf0\x9f\x98\x80");
	ck_assert_int_eq(parse("\"a\xff\""), -KIMG_EFORMAT);
	ck_assert_uint_eq(err.offset, 2);
	ck_assert_int_eq(parse("\"\xc0\xaf\""), -KIMG_EFORMAT);     /* overlong '/' */
	ck_assert_int_eq(parse("\"\xe0\x80\xaf\""), -KIMG_EFORMAT); /* overlong, 3 bytes */
	ck_assert_int_eq(parse("\"\xed\xa0\x80\""), -KIMG_EFORMAT); /* encoded surrogate */
	ck_assert_int_eq(parse("\"\xf4\x90\x80\x80\""), -KIMG_EFORMAT); /* above U+10FFFF */
	/* a second byte just past the continuation range 80..BF (RFC 3629 s. 4:
	 * UTF8-tail = %x80-BF), after each kind of lead byte: c3, e2, f0 */
	ck_assert_int_eq(parse("\"\xc3\xc0\""), -KIMG_EFORMAT);
	ck_assert_int_eq(parse("\"\xe2\xc0\x80\""), -KIMG_EFORMAT);
	ck_assert_int_eq(parse("\"\xf0\xc0\x80\x80\""), -KIMG_EFORMAT);
	ck_assert_int_eq(parse("\"\xc3\xbf\""), 0); /* U+00FF: bf, the last tail byte, is one */
	/* each edge of RFC 3629 s. 4's table, the first and last code point of
	 * each row accepted, the byte just outside refused */
	static const struct {
		const char *text;
		int rc;
	} edges[] = {
		{"\"\x7f\"", 0},                       /* U+007F, one byte */
		{"\"\x80\"", -KIMG_EFORMAT},           /* a tail byte alone */
		{"\"\xc1\xbf\"", -KIMG_EFORMAT},      /* c1: overlong U+007F */
		{"\"\xc2\x80\"", 0},                  /* U+0080 */
		{"\"\xdf\xbf\"", 0},                  /* U+07FF */
		{"\"\xe0\x9f\xbf\"", -KIMG_EFORMAT}, /* overlong U+07FF */
		{"\"\xe0\xa0\x80\"", 0},             /* U+0800 */
		{"\"\xed\x9f\xbf\"", 0},             /* U+D7FF */
		{"\"\xee\x80\x80\"", 0},             /* U+E000 */
		{"\"\xef\xbf\xbf\"", 0},             /* U+FFFF */
		{"\"\xe2\x82\xc0\"", -KIMG_EFORMAT}, /* third byte past the tail range */
		{"\"\xe2\x82\x7f\"", -KIMG_EFORMAT}, /* third byte below it */
		{"\"\xf0\x8f\xbf\xbf\"", -KIMG_EFORMAT}, /* overlong U+FFFF */
		{"\"\xf0\x90\x80\x80\"", 0},        /* U+10000 */
		{"\"\xf4\x8f\xbf\xbf\"", 0},        /* U+10FFFF */
		{"\"\xf5\x80\x80\x80\"", -KIMG_EFORMAT}, /* f5: above U+10FFFF */
		{"\"\xf0\x90\x80\xc0\"", -KIMG_EFORMAT}, /* fourth byte past the tail range */
	};
	for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
		ck_assert_msg(parse(edges[i].text) == edges[i].rc, "edge %zu", i);
	ck_assert_int_eq(parse("\"\xc3\""), -KIMG_EFORMAT);         /* lead byte then a quote */
	ck_assert_int_eq(parse("\"\xe2\x82"), -KIMG_ETRUNC);        /* cut inside the sequence */
	/* a continuation byte is 10xxxxxx whatever its low bits (RFC 3629 s. 3):
	 * U+1F600 cut after 3 of its 4 bytes (f0 9f 98), U+2041 after 2 (e2 81) */
	ck_assert_int_eq(parse("\"\xf0\x9f\x98"), -KIMG_ETRUNC);
	ck_assert_int_eq(parse("\"\xe2\x81"), -KIMG_ETRUNC);
}
END_TEST

START_TEST(invalid_documents)
{
	static const struct {
		const char *text;
		uint64_t offset;
	} bad[] = {
		{ "{\"a\":1,}", 7 },     /* trailing comma */
		{ "[1,]", 3 },
		{ "[1 2]", 3 },
		{ "{\"a\" 1}", 5 },
		{ "{a:1}", 1 },          /* unquoted name */
		{ "{\"a\":1} x", 8 },    /* trailing garbage */
		{ "{} {}", 3 },          /* two values: JSON Lines is one per line */
		{ "'s'", 0 },
		{ "trux", 3 },
		{ "nul1", 3 },
		{ "01", 1 },             /* leading zero */
		{ "-x", 1 },
		{ "1.x", 2 },
		{ "1ex", 2 },
		{ ".5", 0 },
		{ "+1", 0 },
		{ "\"a\tb\"", 2 },       /* raw control byte */
		{ "\"\\x\"", 2 },
		{ "\"\\u12g4\"", 5 },
		{ "NaN", 0 },
		{ "kimg: warning: KIMG_FORMAT=xml", 0 }, /* stray text in a log */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = parse(bad[i].text);
		ck_assert_msg(rc == -KIMG_EFORMAT, "%s: %d (%s)", bad[i].text, rc, err.what);
		ck_assert_msg(err.offset == bad[i].offset, "%s: offset %llu, expected %llu (%s)", bad[i].text,
			      (unsigned long long)err.offset, (unsigned long long)bad[i].offset, err.what);
		ck_assert_ptr_null(doc.root);
	}
	ck_assert_int_eq(parse("{\"a\":1,}"), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "'}' where a member name was expected");
	/* the same mistakes at the end of the input are truncation */
	static const char *const cut[] = { "tru", "-", "1.", "1e", "1e+", "\"\\", "\"\\u12", "{\"a\"" };
	for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++)
		ck_assert_msg(parse(cut[i]) == -KIMG_ETRUNC, "%s: %s", cut[i], err.what);
}
END_TEST

/* A rank killed mid-write leaves a line cut anywhere: every proper prefix
 * of a valid document is "truncated", never "malformed" and never OK. */
START_TEST(every_prefix_is_truncated)
{
	static const char full[] =
		"{\"a\":[1,-2.5e+3,true,false,null,\"s\\u00e9\\n\xc3\xa9\"],\"b\":{\"c\":{}},\"d\":[[]]}";
	size_t n = strlen(full);
	ck_assert_int_eq(parse_n(full, n), 0);
	for (size_t cut = 0; cut < n; cut++) {
		int rc = parse_n(full, cut);
		/* a cut right after a number's digits could be a complete number
		 * only at top level; here everything is inside the object */
		ck_assert_msg(rc == -KIMG_ETRUNC, "prefix of %zu bytes: %d (%s)", cut, rc, err.what);
		/* inside a UTF-8 sequence the offset is its lead byte */
		ck_assert_uint_eq(err.offset, cut > 0 && full[cut - 1] == '\xc3' ? cut - 1 : cut);
	}
	ck_assert_int_eq(parse(""), -KIMG_ETRUNC);
	ck_assert_int_eq(parse(" \n"), -KIMG_ETRUNC);
	ck_assert_str_eq(err.what, "JSON ends where a JSON value was expected");
}
END_TEST

START_TEST(depth_limit)
{
	static char deep[200];
	memset(deep, '[', 64);
	memset(deep + 64, ']', 64);
	ck_assert_int_eq(parse_n(deep, 128), 0); /* exactly the default depth */
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	ck_assert_int_eq(parse_n(deep, 130), -KIMG_ELIMIT);
	ck_assert_uint_eq(err.offset, 64);
	/* the limit holds before the input ends: 100000 '[' fail at the same place */
	static char flood[100000];
	memset(flood, '[', sizeof flood);
	ck_assert_int_eq(parse_n(flood, sizeof flood), -KIMG_ELIMIT);
	ck_assert_uint_eq(err.offset, 64);
	/* a caller's own limit */
	kimg_jdoc_init(&doc, arena, sizeof arena);
	doc.max_depth = 2;
	ck_assert_int_eq(kimg_jdoc_parse(&doc, kimg_span_make("[[1]]", 5), &err), 0);
	ck_assert_int_eq(kimg_jdoc_parse(&doc, kimg_span_make("{\"a\":[[1]]}", 11), &err), -KIMG_ELIMIT);
}
END_TEST

/* Numbers are kept as written; only integers that fit int64 convert. */
START_TEST(huge_numbers_are_not_rounded)
{
	int64_t v;
	ck_assert_int_eq(parse("[9223372036854775807,-9223372036854775808,9223372036854775808,"
			       "-9223372036854775809,1e999,123456789012345678901234567890,0.5,-0,2E3]"),
			 0);
	const struct kimg_jval *a = doc.root;
	ck_assert(kimg_jval_int(kimg_jval_at(a, 0), &v));
	ck_assert(v == INT64_MAX);
	ck_assert(kimg_jval_int(kimg_jval_at(a, 1), &v));
	ck_assert(v == INT64_MIN);
	ck_assert(!kimg_jval_int(kimg_jval_at(a, 2), &v));
	ck_assert(v == 0);
	ck_assert(!kimg_jval_int(kimg_jval_at(a, 3), &v));
	ck_assert(!kimg_jval_int(kimg_jval_at(a, 4), &v));
	ck_assert_str_eq(kimg_jval_at(a, 4)->str, "1e999");
	ck_assert(!kimg_jval_int(kimg_jval_at(a, 5), &v));
	ck_assert_str_eq(kimg_jval_at(a, 5)->str, "123456789012345678901234567890");
	ck_assert(!kimg_jval_int(kimg_jval_at(a, 6), &v));
	ck_assert(kimg_jval_int(kimg_jval_at(a, 7), &v));
	ck_assert(v == 0);
	ck_assert(!kimg_jval_int(kimg_jval_at(a, 8), &v)); /* an exponent is not an integer spelling */
	ck_assert(!kimg_jval_int(NULL, &v));
	ck_assert(!kimg_jval_int(kimg_jval_at(a, 99), &v));
}
END_TEST

/* The arena caps what one line may cost: a full arena is ELIMIT, at any
 * point, and the same input parses with room to spare. */
START_TEST(arena_limit)
{
	static const char text[] = "{\"name\":\"a fairly long string value here\",\"list\":[1,2,3,4,5,6,7,8]}";
	static unsigned char small[4096];
	kimg_jdoc_init(&doc, small, sizeof small);
	ck_assert_int_eq(kimg_jdoc_parse(&doc, kimg_span_make(text, strlen(text)), &err), 0);
	size_t need = doc.used;
	for (size_t size = 0; size < need; size++) {
		kimg_jdoc_init(&doc, small, size);
		int rc = kimg_jdoc_parse(&doc, kimg_span_make(text, strlen(text)), &err);
		ck_assert_msg(rc == -KIMG_ELIMIT, "arena %zu of %zu: %d", size, need, rc);
		ck_assert(doc.used <= size);
	}
	/* the same, for a string whose bytes come one escape or one UTF-8
	 * sequence at a time (each added on its own, not in a plain run) */
	static const char esc[] = "[\"\\u00e9\\n\\t\\\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\u20ac\\ud83d\\ude00\"]";
	kimg_jdoc_init(&doc, small, sizeof small);
	ck_assert_int_eq(kimg_jdoc_parse(&doc, kimg_span_make(esc, strlen(esc)), &err), 0);
	ck_assert_str_eq(doc.root->child->str, "\xc3\xa9\n\t\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xe2\x82\xac\xf0\x9f\x98\x80");
	size_t need_esc = doc.used;
	for (size_t size = 0; size < need_esc; size++) {
		kimg_jdoc_init(&doc, small, size);
		int rc = kimg_jdoc_parse(&doc, kimg_span_make(esc, strlen(esc)), &err);
		ck_assert_msg(rc == -KIMG_ELIMIT, "escapes, arena %zu of %zu: %d", size, need_esc, rc);
		ck_assert(doc.used <= size);
	}
	kimg_jdoc_init(&doc, NULL, 100);
	ck_assert_int_eq(kimg_jdoc_parse(&doc, kimg_span_make("1", 1), &err), -KIMG_ELIMIT);
	/* the arena is reused from the start on each parse */
	kimg_jdoc_init(&doc, small, sizeof small);
	ck_assert_int_eq(kimg_jdoc_parse(&doc, kimg_span_make(text, strlen(text)), &err), 0);
	ck_assert_int_eq(kimg_jdoc_parse(&doc, kimg_span_make(text, strlen(text)), &err), 0);
	ck_assert_uint_eq(doc.used, need);
}
END_TEST

START_TEST(duplicate_keys_first_wins_and_order_kept)
{
	ck_assert_int_eq(parse("{\"a\":1,\"b\":2,\"a\":3}"), 0);
	int64_t v;
	ck_assert(kimg_jval_int(kimg_jval_get(doc.root, "a"), &v));
	ck_assert_int_eq(v, 1);
	ck_assert_str_eq(doc.root->child->next->next->key, "a");
	ck_assert_ptr_null(kimg_jval_get(doc.root, "c"));
	ck_assert_ptr_null(kimg_jval_get(NULL, "a"));
	ck_assert_ptr_null(kimg_jval_path(doc.root, "a.b"));
}
END_TEST

START_TEST(null_error_pointer_is_allowed)
{
	kimg_jdoc_init(&doc, arena, sizeof arena);
	ck_assert_int_eq(kimg_jdoc_parse(&doc, kimg_span_make("[1,", 3), NULL), -KIMG_ETRUNC);
	ck_assert_int_eq(kimg_jdoc_parse(&doc, kimg_span_make(NULL, 0), NULL), -KIMG_ETRUNC);
}
END_TEST

static Suite *json_read_suite(void)
{
	Suite *s = suite_create("json_read");
	TCase *ok = tcase_create("valid");
	tcase_add_test(ok, report_line_reads_back);
	tcase_add_test(ok, scalars_at_top_level);
	tcase_add_test(ok, string_escapes);
	tcase_add_test(ok, huge_numbers_are_not_rounded);
	tcase_add_test(ok, duplicate_keys_first_wins_and_order_kept);
	suite_add_tcase(s, ok);
	TCase *bad = tcase_create("invalid");
	tcase_add_test(bad, utf8_strict);
	tcase_add_test(bad, invalid_documents);
	tcase_add_test(bad, every_prefix_is_truncated);
	tcase_add_test(bad, null_error_pointer_is_allowed);
	suite_add_tcase(s, bad);
	TCase *lim = tcase_create("limits");
	tcase_add_test(lim, depth_limit);
	tcase_add_test(lim, arena_limit);
	suite_add_tcase(s, lim);
	return s;
}

int main(void) { return run_suite(json_read_suite()); }
