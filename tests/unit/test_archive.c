/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the ar member iterator (core/archive.c, archive.h):
 * the members of the nvcc-built libtwo.a in the order and with the names
 * binutils' `ar t` lists (the oracle), each body an ELF object inside the
 * archive's bytes; a cut archive fails at the member header that is cut;
 * a thin archive (committed thin_two.a) is refused; other bytes are not
 * an archive. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "testutil.h"

START_TEST(members_as_ar_lists_them)
{
	struct kimg_span a = fixture_load("libtwo.a");
	const char *dir = getenv("KIMG_FIXTURES");
	char cmd[1200], line[300], expected[8][300];
	int n_expected = 0;
	snprintf(cmd, sizeof cmd, "ar t '%s/libtwo.a'", dir ? dir : "build/fixtures");
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (n_expected < 8 && fgets(line, sizeof line, p)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(expected[n_expected++], sizeof expected[0], "%s", line);
	}
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_int_eq(n_expected, 2); /* tu_a.o, tu_b.o */

	struct kimg_ar ar;
	struct kimg_ar_member m;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_ar_open(a, &ar, &err), 0);
	int n = 0;
	int rc;
	while ((rc = kimg_ar_next(&ar, &m, &err)) > 0) {
		ck_assert_int_lt(n, n_expected);
		ck_assert_str_eq(m.name, expected[n]);
		ck_assert_ptr_eq(m.body.data, a.data + m.offset);
		ck_assert_uint_le(m.offset + m.body.size, a.size);
		ck_assert_mem_eq(m.body.data, "\177ELF", 4);
		n++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(n, n_expected);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 0); /* stays at the end */

	/* cut inside the second member: its header passes the end */
	struct kimg_span cut = kimg_span_make(a.data, a.size - 100);
	ck_assert_int_eq(kimg_ar_open(cut, &ar, &err), 0);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	uint64_t second_hdr = ar.pos;
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), -KIMG_ETRUNC);
	ck_assert_uint_eq(err.offset, second_hdr);
	fixture_free(a);
}
END_TEST

START_TEST(thin_and_foreign_inputs_are_refused)
{
	struct kimg_ar ar;
	struct kimg_error err = { 0, 0, "" };
	static const char thin[] = "!<thin>\n";
	/* each refused at its magic, offset 0 (err.offset preset to tell a
	 * written 0 from one left over) */
	err.offset = 77;
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(thin, 8), &ar, &err), -KIMG_ENOTSUP);
	ck_assert_uint_eq(err.offset, 0);
	err.offset = 77;
	ck_assert_int_eq(kimg_ar_open(str_span("\177ELF not an archive"), &ar, &err), -KIMG_EFORMAT);
	ck_assert_uint_eq(err.offset, 0);
	err.offset = 77;
	ck_assert_int_eq(kimg_ar_open(str_span("!<ar"), &ar, &err), -KIMG_EFORMAT);
	ck_assert_uint_eq(err.offset, 0);
}
END_TEST

/* ar.h's 60-byte header: name (16), mtime, uid, gid, mode, size (10,
 * decimal), "`\n"; then the data, padded to an even offset. */
static size_t ar_member(uint8_t *at, const char *name, const char *size, const void *data, size_t n)
{
	char h[64];
	snprintf(h, sizeof h, "%-16s%-12s%-6s%-6s%-8s%-10s`\n", name, "0", "0", "0", "644", size);
	memcpy(at, h, 60);
	memcpy(at + 60, data, n);
	size_t len = 60 + n;
	if (len & 1)
		at[len++] = '\n';
	return len;
}

/* BSD ar (FreeBSD ar(5)): "#1/N" puts an N-byte name, NUL padded, at the
 * start of the member's data, the body after it; symbol tables
 * ("/", "__.SYMDEF", "__.SYMDEF SORTED") are no members; a name longer
 * than the data, a size that is not decimal or a wrong terminator is a
 * bad archive, refused at that header. */
START_TEST(bsd_names_symbol_tables_and_bad_headers)
{
	static uint8_t b[1024];
	size_t n = 0;
	memcpy(b, "!<arch>\n", 8);
	n = 8;
	n += ar_member(b + n, "/", "4", "\0\0\0\0", 4);
	n += ar_member(b + n, "#1/20", "28", "__.SYMDEF SORTED\0\0\0\0" "symtab..", 28);
	n += ar_member(b + n, "#1/12", "17", "long_name.o\0" "BODY!", 17);
	n += ar_member(b + n, "short.o/", "3", "abc", 3);
	size_t bad_at = n;
	n += ar_member(b + n, "#1/9", "8", "12345678", 8); /* name longer than the data */
	struct kimg_ar ar;
	struct kimg_ar_member m;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n), &ar, &err), 0);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_str_eq(m.name, "long_name.o");
	ck_assert_uint_eq(m.body.size, 5);
	ck_assert_mem_eq(m.body.data, "BODY!", 5);
	ck_assert_ptr_eq(m.body.data, m.offset + b);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_str_eq(m.name, "short.o");
	ck_assert_uint_eq(m.body.size, 3);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "archive: bad member name");
	ck_assert_uint_eq(err.offset, bad_at);
	/* the name exactly as long as the data: a member of no bytes */
	ar_member(b + bad_at, "#1/8", "8", "name8.o\0", 8);
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n), &ar, &err), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_str_eq(m.name, "name8.o");
	ck_assert_uint_eq(m.body.size, 0);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 0);
	/* a size that is not decimal, or a header not ended by "`\n" */
	ar_member(b + bad_at, "x.o/", "8a", "12345678", 8);
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n), &ar, &err), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "archive: bad member header");
	ck_assert_uint_eq(err.offset, bad_at);
	ar_member(b + bad_at, "x.o/", "8", "12345678", 8);
	b[bad_at + 58] = '\'';
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n), &ar, &err), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), -KIMG_EFORMAT);
	b[bad_at + 58] = '`';
	b[bad_at + 59] = ' ';
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n), &ar, &err), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), -KIMG_EFORMAT);
	/* a member larger than what is left */
	ar_member(b + bad_at, "x.o/", "9", "12345678", 8);
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, bad_at + 68), &ar, &err), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), -KIMG_ETRUNC);
	ck_assert_str_eq(err.what, "archive: member of 9 bytes passes the end");
	ck_assert_uint_eq(err.offset, bad_at);
}
END_TEST

/* GNU ar: "//" holds the long names, each ended by "/\n", and "/N" is the
 * name at offset N of it; "/SYM64/" is the 64-bit symbol table; one '\n'
 * may pad the archive's end, anything more is a cut header. */
START_TEST(gnu_long_names_and_the_end)
{
	static uint8_t b[1024];
	size_t n = 8;
	memcpy(b, "!<arch>\n", 8);
	static const char names[] = "a_long_member_name.o/\nsecond_long_name.o/\n";
	n += ar_member(b + n, "/SYM64/", "8", "\0\0\0\0\0\0\0\0", 8);
	n += ar_member(b + n, "//", "42", names, 42);
	n += ar_member(b + n, "/22", "3", "xyz", 3); /* odd: padded */
	n += ar_member(b + n, "/0", "2", "ab", 2);
	size_t bad_at = n;
	n += ar_member(b + n, "/42", "2", "cd", 2); /* past the table */
	struct kimg_ar ar;
	struct kimg_ar_member m;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n), &ar, &err), 0);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_str_eq(m.name, "second_long_name.o");
	ck_assert_mem_eq(m.body.data, "xyz", 3);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_str_eq(m.name, "a_long_member_name.o");
	ck_assert_uint_eq(m.body.size, 2);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "archive: bad member name");
	ck_assert_uint_eq(err.offset, bad_at);
	/* offset 41, the table's last byte: read (a name of nothing but a newline) */
	ar_member(b + bad_at, "/41", "2", "cd", 2);
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n), &ar, &err), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_str_eq(m.name, "");
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 0);
	/* the end: one '\n' of padding is no member, two bytes are a cut header */
	b[n] = '\n';
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n + 1), &ar, &err), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 0);
	b[n + 1] = '\n';
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n + 2), &ar, &err), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), -KIMG_ETRUNC);
	ck_assert_str_eq(err.what, "archive: member header truncated");
	ck_assert_uint_eq(err.offset, n);
	b[n] = 'x';
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(b, n + 1), &ar, &err), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), 1);
	ck_assert_int_eq(kimg_ar_next(&ar, &m, &err), -KIMG_ETRUNC);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("archive");
	TCase *tc = tcase_create("members");
	tcase_add_test(tc, members_as_ar_lists_them);
	tcase_add_test(tc, bsd_names_symbol_tables_and_bad_headers);
	tcase_add_test(tc, gnu_long_names_and_the_end);
	tcase_add_test(tc, thin_and_foreign_inputs_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
