/* SPDX-License-Identifier: Apache-2.0 */
/* report/text_escape.c: names from inputs in text output (issue 12 item
 * 14). The oracle is the escape table of text_escape.h written out by hand,
 * and the buffer and stream forms agreeing byte for byte. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "text_escape.h"

static void expect(const char *in, const char *want)
{
	char buf[256];
	ck_assert_str_eq(kimg_text_escape(in, buf, sizeof buf), want);
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	kimg_text_fputs(in, f);
	fclose(f);
	ck_assert_str_eq(s, want);
	free(s);
}

START_TEST(control_bytes_and_bad_utf8_are_escaped)
{
	expect("plain/path-1.so", "plain/path-1.so");
	expect("a\x1b[2Jb", "a\\x1b[2Jb");
	expect("line\nbreak\ttab\rcr", "line\\nbreak\\ttab\\rcr");
	expect("back\\slash", "back\\\\slash");
	expect("del\x7f", "del\\x7f");
	expect("bell\a", "bell\\x07");
	expect("c1 \xc2\x9b csi", "c1 \\xc2\\x9b csi");          /* U+009B */
	expect("nbsp \xc2\xa0 ok", "nbsp \xc2\xa0 ok");          /* U+00A0 is printable */
	expect("\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80", "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80");
	expect("bad \xff \xed\xa0\x80 \xc0\xaf", "bad \\xff \\xed\\xa0\\x80 \\xc0\\xaf");
	expect("cut \xe2\x82", "cut \\xe2\\x82");
	expect(NULL, "");
}
END_TEST

/* issue 22 item 15: bidi and invisible format characters, each range's
 * ends and a neighbour that stays; a NUL carried as C0 80 */
START_TEST(bidi_format_characters_and_carried_nul_are_escaped)
{
	static const struct {
		unsigned cp;
		bool escaped;
	} cases[] = {
		{ 0x202a, true }, { 0x202b, true }, { 0x202c, true }, { 0x202d, true }, { 0x202e, true },
		{ 0x2066, true }, { 0x2067, true }, { 0x2068, true }, { 0x2069, true }, { 0x200e, true },
		{ 0x200f, true }, { 0x061c, true }, { 0x200b, true }, { 0x2028, true }, { 0x2029, true },
		{ 0xfeff, true }, { 0x2060, true }, { 0x206f, true }, { 0xfff9, true }, { 0xfffb, true },
		{ 0x2027, false }, { 0x2030, false }, { 0x200a, false }, { 0x2070, false }, { 0x061b, false },
		{ 0xfffc, false }, { 0x00e9, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned cp = cases[i].cp;
		char in[16], want[32];
		if (cp < 0x800)
			snprintf(in, sizeof in, "a%c%cb", 0xc0 | cp >> 6, 0x80 | (cp & 0x3f));
		else
			snprintf(in, sizeof in, "a%c%c%cb", 0xe0 | cp >> 12, 0x80 | (cp >> 6 & 0x3f), 0x80 | (cp & 0x3f));
		if (cases[i].escaped)
			snprintf(want, sizeof want, "a\\u%04xb", cp);
		else
			snprintf(want, sizeof want, "%s", in);
		expect(in, want);
	}
	/* the example: an override that shows "exe.txt" for "txt.exe" */
	expect("lib\xe2\x80\xaetxt.so", "lib\\u202etxt.so");
	expect("lib.so\xc0\x80.txt", "lib.so\\x00.txt");
	expect("\xc0\x80", "\\x00");
	expect("\xc0\x81", "\\xc0\\x81"); /* other overlong forms stay plain bad bytes */
}
END_TEST

START_TEST(a_small_buffer_cuts_between_escapes)
{
	char buf[8];
	ck_assert_str_eq(kimg_text_escape("ab\x1b" "cd", buf, sizeof buf), "ab\\x1bc");
	ck_assert_str_eq(kimg_text_escape("abc\x1b", buf, 6), "abc");   /* never half an escape */
	ck_assert_str_eq(kimg_text_escape("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", buf, 6), "\xc3\xa9\xc3\xa9");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("text_escape");
	TCase *tc = tcase_create("escape");
	tcase_add_test(tc, control_bytes_and_bad_utf8_are_escaped);
	tcase_add_test(tc, a_small_buffer_cuts_between_escapes);
	tcase_add_test(tc, bidi_format_characters_and_carried_nul_are_escaped);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
