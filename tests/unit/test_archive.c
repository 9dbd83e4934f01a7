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
	ck_assert_int_eq(kimg_ar_open(kimg_span_make(thin, 8), &ar, &err), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_ar_open(str_span("\177ELF not an archive"), &ar, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_ar_open(str_span("!<ar"), &ar, &err), -KIMG_EFORMAT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("archive");
	TCase *tc = tcase_create("members");
	tcase_add_test(tc, members_as_ar_lists_them);
	tcase_add_test(tc, thin_and_foreign_inputs_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
