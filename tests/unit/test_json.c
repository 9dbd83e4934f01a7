/* SPDX-License-Identifier: Apache-2.0 */
/* report/json.c: the JSON writer shared by kimg-probe and libkimg.so.
 * Its output must be valid UTF-8 JSON whatever bytes a string holds (file
 * and member names come from untrusted inputs): the oracle is the strict
 * reader of core/json_read.c (RFC 8259 + RFC 3629), another implementation,
 * and the exact escapes for the cases issue 12 (item 5) found. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_read.h"
#include "report.h"
#include "testutil.h"

/* kimg_json_string_n(bytes) as the writer renders it, NUL-terminated. */
static char *render_string(const char *bytes, size_t n, size_t *out_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	struct kimg_json j;
	kimg_json_init(&j, f);
	kimg_json_string_n(&j, bytes, n);
	fclose(f);
	if (out_len)
		*out_len = len;
	return buf;
}

/* The rendering parses strictly, as one JSON string. */
static void expect_valid(const char *bytes, size_t n)
{
	size_t len;
	char *out = render_string(bytes, n, &len);
	static unsigned char arena[1 << 16];
	struct kimg_jdoc doc;
	struct kimg_error err = { 0, 0, "" };
	kimg_jdoc_init(&doc, arena, sizeof arena);
	int rc = kimg_jdoc_parse(&doc, kimg_span_make(out, len), &err);
	ck_assert_msg(rc == 0, "output %s not valid JSON: %s at %llu", out, err.what, (unsigned long long)err.offset);
	ck_assert_int_eq(doc.root->type, KIMG_JSTRING);
	free(out);
}

static void expect_rendered(const char *bytes, const char *want)
{
	char *out = render_string(bytes, strlen(bytes), NULL);
	ck_assert_str_eq(out, want);
	free(out);
	expect_valid(bytes, strlen(bytes));
}

START_TEST(invalid_utf8_is_escaped)
{
	/* Each invalid byte becomes \u00XX of that byte: visible, lossless, valid. */
	expect_rendered("a\xed\xa0\x80z", "\"a\\u00ed\\u00a0\\u0080z\"");         /* encoded surrogate U+D800 */
	expect_rendered("\xed\xbf\xbf", "\"\\u00ed\\u00bf\\u00bf\"");             /* U+DFFF */
	expect_rendered("\xc0\xaf", "\"\\u00c0\\u00af\"");                        /* overlong '/' */
	expect_rendered("\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\"");             /* overlong, 3 bytes */
	expect_rendered("\xf0\x80\x80\xaf", "\"\\u00f0\\u0080\\u0080\\u00af\"");  /* overlong, 4 bytes */
	expect_rendered("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"");  /* U+110000 */
	expect_rendered("\xf5\x80\x80\x80", "\"\\u00f5\\u0080\\u0080\\u0080\"");
	expect_rendered("\xe2\x82", "\"\\u00e2\\u0082\"");                        /* truncated at the end */
	expect_rendered("\xe2\x82z", "\"\\u00e2\\u0082z\"");                      /* truncated mid-string */
	expect_rendered("\xff\xfe", "\"\\u00ff\\u00fe\"");
}
END_TEST

START_TEST(valid_utf8_passes_unchanged)
{
	expect_rendered("\xc3\xa9", "\"\xc3\xa9\"");                 /* U+00E9 */
	expect_rendered("\xe0\xa0\x80", "\"\xe0\xa0\x80\"");         /* U+0800, the first 3-byte form */
	expect_rendered("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");         /* U+D7FF, just below the surrogates */
	expect_rendered("\xee\x80\x80", "\"\xee\x80\x80\"");         /* U+E000, just above */
	expect_rendered("\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\""); /* U+10000 */
	expect_rendered("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
	expect_rendered("tab\tnl\nq\"b\\\x1b[31m", "\"tab\\tnl\\nq\\\"b\\\\\\u001b[31m\"");
}
END_TEST

/* Every pair of bytes, and every lead byte with each second byte and a
 * continuation after it: the writer's output always parses strictly. */
START_TEST(every_two_and_three_byte_string_is_valid_json)
{
	char s[4];
	for (unsigned a = 1; a < 256; a++)
		for (unsigned b = 1; b < 256; b++) {
			s[0] = (char)a;
			s[1] = (char)b;
			expect_valid(s, 2);
			s[2] = (char)0x80;
			expect_valid(s, 3);
		}
}
END_TEST

/* A document abandoned midway (kimg-probe, when a file changes while it
 * is read) is closed back to a depth and stays valid JSON. */
START_TEST(close_to_leaves_valid_json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct kimg_json j;
	kimg_json_init(&j, f);
	kimg_json_begin_object(&j);
	kimg_json_key(&j, "files");
	kimg_json_begin_array(&j);
	int depth = j.depth;
	kimg_json_begin_object(&j);
	kimg_json_key(&j, "modules");
	kimg_json_begin_array(&j);
	kimg_json_begin_object(&j);
	kimg_json_key(&j, "size");
	kimg_json_close_to(&j, depth);
	kimg_json_begin_object(&j); /* the error object that follows */
	kimg_json_kv_string(&j, "error", "file changed while it was read");
	kimg_json_end_object(&j);
	kimg_json_end_array(&j);
	kimg_json_end_object(&j);
	fclose(f);
	ck_assert_str_eq(buf, "{\"files\":[{\"modules\":[{\"size\":null}]},{\"error\":\"file changed while it was read\"}]}");
	free(buf);
}
END_TEST

/* report/report_json.c kimg_report_json_image_begin: the one writer of an
 * image's first keys for kimg-probe's, libkimg's and the API's JSON. The
 * oracle is docs/json-probe.md's and docs/json-shim-report.md's examples: ptx_isa
 * only for PTX, null for SASS even where a header left a version. */
static char *image_begin(const struct kimg_image *img)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct kimg_json j;
	kimg_json_init(&j, f);
	kimg_report_json_image_begin(&j, img);
	kimg_json_end_object(&j);
	fclose(f);
	return buf;
}

START_TEST(image_first_keys)
{
	struct kimg_image ptx = { .kind = KIMG_IMAGE_PTX, .arch = { .sm = 90 }, .ptx_isa = KIMG_ISA(8, 4) };
	struct kimg_image sass = { .kind = KIMG_IMAGE_SASS, .arch = { .sm = 90, .variant = KIMG_VARIANT_A },
				   .ptx_isa = KIMG_ISA(8, 4) };
	struct kimg_image no_isa = { .kind = KIMG_IMAGE_PTX, .arch = { .sm = 120 } };
	char *s = image_begin(&ptx);
	ck_assert_str_eq(s, "{\"kind\":\"ptx\",\"arch\":\"compute_90\",\"ptx_isa\":\"8.4\"}");
	free(s);
	s = image_begin(&sass);
	ck_assert_str_eq(s, "{\"kind\":\"sass\",\"arch\":\"sm_90a\",\"ptx_isa\":null}");
	free(s);
	s = image_begin(&no_isa);
	ck_assert_str_eq(s, "{\"kind\":\"ptx\",\"arch\":\"compute_120\",\"ptx_isa\":null}");
	free(s);
}
END_TEST

/* The one-fwrite tokens (a key with its value, numbers, plain strings)
 * against the text written out by hand: commas, escapes, the extremes of
 * the integers, and keys and strings too long for one token, which take
 * the long way. */
START_TEST(tokens_as_written_by_hand)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	char longkey[301], longval[301];
	memset(longkey, 'k', 300);
	longkey[300] = '\0';
	memset(longval, 'v', 300);
	longval[300] = '\0';
	struct kimg_json j;
	kimg_json_init(&j, f);
	kimg_json_begin_object(&j);
	kimg_json_kv_uint(&j, "a", 0);
	kimg_json_kv_uint(&j, "max", UINT64_MAX);
	kimg_json_kv_int(&j, "min", INT64_MIN);
	kimg_json_kv_int(&j, "neg", -7);
	kimg_json_kv_string(&j, "s", "plain");
	kimg_json_kv_string(&j, "q\"k", "t\"ab\t");
	kimg_json_kv_string(&j, "n", NULL);
	kimg_json_kv_bool(&j, "t", true);
	kimg_json_kv_bool(&j, "f", false);
	kimg_json_kv_uint(&j, longkey, 12);
	kimg_json_kv_string(&j, "lv", longval);
	kimg_json_key(&j, "arr");
	kimg_json_begin_array(&j);
	kimg_json_uint(&j, 1);
	kimg_json_int(&j, -2);
	kimg_json_string(&j, "x");
	kimg_json_null(&j);
	kimg_json_bool(&j, false);
	kimg_json_end_array(&j);
	kimg_json_end_object(&j);
	fclose(f);
	char want[2048];
	snprintf(want, sizeof want,
		 "{\"a\":0,\"max\":18446744073709551615,\"min\":-9223372036854775808,\"neg\":-7,\"s\":\"plain\","
		 "\"q\\\"k\":\"t\\\"ab\\t\",\"n\":null,\"t\":true,\"f\":false,\"%s\":12,\"lv\":\"%s\","
		 "\"arr\":[1,-2,\"x\",null,false]}",
		 longkey, longval);
	ck_assert_str_eq(buf, want);
	free(buf);
}
END_TEST

/* One byte b among 'a's, at each position of strings of 1 to 24 bytes:
 * the 8-bytes-at-a-time check of plain text (quoted_into) must send
 * every byte that needs an escape the long way, in whichever lane of a
 * word it sits. The oracle is written out here: the escape of a lone byte. */
START_TEST(every_byte_in_every_lane)
{
	for (unsigned b = 1; b < 256; b++) {
		char esc[8];
		if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\')
			snprintf(esc, sizeof esc, "%c", b);
		else if (b == '"' || b == '\\')
			snprintf(esc, sizeof esc, "\\%c", b);
		else if (b == '\n')
			snprintf(esc, sizeof esc, "\\n");
		else if (b == '\t')
			snprintf(esc, sizeof esc, "\\t");
		else
			snprintf(esc, sizeof esc, "\\u%04x", b);
		for (size_t n = 1; n <= 24; n++)
			for (size_t at = 0; at < n; at++) {
				char in[32], want[64];
				memset(in, 'a', n);
				in[at] = (char)b;
				in[n] = '\0';
				snprintf(want, sizeof want, "\"%.*s%s%.*s\"", (int)at, in, esc, (int)(n - at - 1), in + at + 1);
				char *out = render_string(in, n, NULL);
				ck_assert_msg(strcmp(out, want) == 0, "byte 0x%02x at %zu of %zu: %s, want %s", b, at, n, out, want);
				free(out);
			}
	}
}
END_TEST

/* Keys given as KIMG_JSON_LIT write what the general calls write, with
 * their commas, null, escaped values (a byte to escape in each lane of
 * values of 1 to 20 bytes) and 64-bit numbers; the oracle is the general
 * path, which every_byte_in_every_lane and tokens_as_written_by_hand pin. */
static void kv_pairs(struct kimg_json *j, bool literal, const char *value)
{
	kimg_json_begin_object(j);
	if (literal) {
		kimg_json_kvl_uint(j, KIMG_JSON_LIT("size"), UINT64_MAX);
		kimg_json_kvl_string(j, KIMG_JSON_LIT("arch"), value);
		kimg_json_kvl_string(j, KIMG_JSON_LIT("ptx_isa"), NULL);
		kimg_json_kvl_uint(j, KIMG_JSON_LIT("offset"), 0);
		/* a key longer than the writer's buffer takes: the general path */
		kimg_json_kvl_uint(j, KIMG_JSON_LIT("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"), 7);
		kimg_json_kvl_string(j, KIMG_JSON_LIT("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"), value);
	} else {
		kimg_json_kv_uint(j, "size", UINT64_MAX);
		kimg_json_kv_string(j, "arch", value);
		kimg_json_kv_string(j, "ptx_isa", NULL);
		kimg_json_kv_uint(j, "offset", 0);
		kimg_json_kv_uint(j, "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk", 7);
		kimg_json_kv_string(j, "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk", value);
	}
	kimg_json_end_object(j);
}

START_TEST(literal_keys_as_the_general_ones)
{
	static const unsigned char bytes[] = { 'x', '"', '\\', 0x01, 0x7f, 0xc3, 0xff };
	for (size_t b = 0; b < sizeof bytes; b++)
		for (size_t n = 1; n <= 20; n++)
			for (size_t at = 0; at < n; at++) {
				char value[32], *out[2] = { NULL, NULL };
				size_t len[2] = { 0, 0 };
				memset(value, 'a', n);
				value[at] = (char)bytes[b];
				value[n] = '\0';
				for (int lit = 0; lit < 2; lit++) {
					FILE *f = open_memstream(&out[lit], &len[lit]);
					ck_assert_ptr_nonnull(f);
					struct kimg_json j;
					kimg_json_init(&j, f);
					kimg_json_begin_array(&j);
					kv_pairs(&j, lit, value);
					kv_pairs(&j, lit, value);
					kimg_json_end_array(&j);
					fclose(f);
				}
				ck_assert_msg(len[0] == len[1] && memcmp(out[0], out[1], len[0]) == 0,
					      "byte 0x%02x at %zu of %zu: %s, want %s", bytes[b], at, n, out[1], out[0]);
				free(out[0]);
				free(out[1]);
			}
}
END_TEST

/* A document written by a writer with a buffer (kimg_json_set_buffer), of
 * any size down to one byte, is the document written token by token. */
static void write_document(struct kimg_json *j)
{
	kimg_json_begin_document(j);
	kimg_json_key(j, "n");
	kimg_json_begin_array(j);
	for (uint64_t v = 1, k = 0; k < 20; k++, v *= 10) {
		kimg_json_uint(j, v - 1);
		kimg_json_uint(j, v);
		kimg_json_int(j, -(int64_t)v);
	}
	kimg_json_uint(j, UINT64_MAX);
	kimg_json_end_array(j);
	kimg_json_kv_string(j, "esc", "a\"b\\c\x01\xff\xc3\xa9 \xc0\x80");
	kimg_json_kv_string(j, "long", "0123456789012345678901234567890123456789012345678901234567890123456789");
	kimg_json_key(j, "d");
	kimg_json_double(j, 1.5);
	kimg_json_kv_bool(j, "t", true);
	kimg_json_kv_uint(j, "u", 42);
	kimg_json_key(j, "open");
	kimg_json_begin_object(j);
	kimg_json_key(j, "dangling");
	kimg_json_close_to(j, 0);
}

START_TEST(buffered_writes_the_same_bytes)
{
	char *want = NULL, *got = NULL;
	size_t want_len = 0, got_len = 0;
	FILE *f = open_memstream(&want, &want_len);
	ck_assert_ptr_nonnull(f);
	struct kimg_json j;
	kimg_json_init(&j, f);
	write_document(&j);
	fclose(f);
	static const size_t caps[] = { 1, 2, 7, 8, 64, 1 << 16 };
	for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
		char *buf = malloc(caps[c]);
		ck_assert_ptr_nonnull(buf);
		f = open_memstream(&got, &got_len);
		ck_assert_ptr_nonnull(f);
		kimg_json_init(&j, f);
		kimg_json_set_buffer(&j, buf, caps[c]);
		write_document(&j);
		kimg_json_flush(&j);
		fclose(f);
		ck_assert_msg(got_len == want_len && memcmp(got, want, want_len) == 0, "buffer of %zu: %.*s", caps[c],
			      (int)got_len, got);
		free(got);
		free(buf);
	}
	free(want);
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("utf8");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, invalid_utf8_is_escaped);
	tcase_add_test(tc, valid_utf8_passes_unchanged);
	tcase_add_test(tc, every_two_and_three_byte_string_is_valid_json);
	tcase_add_test(tc, close_to_leaves_valid_json);
	tcase_add_test(tc, image_first_keys);
	tcase_add_test(tc, tokens_as_written_by_hand);
	tcase_add_test(tc, every_byte_in_every_lane);
	tcase_add_test(tc, buffered_writes_the_same_bytes);
	tcase_add_test(tc, literal_keys_as_the_general_ones);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return run_suite(json_suite()); }
