/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of sys/tar.c: tar archives in memory through libarchive
 * (conda's .tar.bz2, the .tar.zst inside a .conda, tarballs named on the
 * command line), and the layer streams sys/tar_stream.c hands it (bzip2,
 * xz). The tars are built here field by field (tarbuild.h) and compressed
 * by gzip(1) and bzip2(1), so the oracle is the members written: which
 * are regular files, their bytes, and what sys/tar.h promises for each
 * hostile input (the members before the damage delivered, then the
 * member's error, the walk ended where libarchive cannot go on; a
 * callback's non-zero return stopping the walk; the limits named). */
#include "testutil.h"

#include <errno.h>

#include "error.h"
#include "tar.h"
#include "tar_la.h"
#include "tarbuild.h"
#include "fail_alloc.h"

/* What the walk delivered, one line a member: "NAME SIZE" or "NAME !ERROR". */
struct seen {
	char log[4096];
	size_t n;
	int stop_at;          /* fn returns 7 at this member (1-based; 0: never) */
	const char *skip;     /* want() says no to this name */
	char first[16];       /* the first bytes of the last member */
	bool long_head;       /* want() was shown more than KIMG_TAR_HEAD_SIZE */
};

static bool want(void *ctx, const char *name, struct kimg_span head)
{
	struct seen *s = ctx;
	s->long_head |= head.size > KIMG_TAR_HEAD_SIZE; /* checked after the walk: Check allocates */
	return !s->skip || strcmp(name, s->skip) != 0;
}

static const char *code_name(int code)
{
	return code == -KIMG_EFORMAT ? "EFORMAT" : code == -KIMG_ELIMIT ? "ELIMIT" : "other";
}

static int member(void *ctx, const char *name, struct kimg_span bytes, const struct kimg_error *merr)
{
	struct seen *s = ctx;
	s->n++;
	size_t used = strlen(s->log);
	if (merr)
		snprintf(s->log + used, sizeof s->log - used, "%s !%s\n", name, code_name(merr->code));
	else
		snprintf(s->log + used, sizeof s->log - used, "%s %llu\n", name, (unsigned long long)bytes.size);
	snprintf(s->first, sizeof s->first, "%.*s", (int)(bytes.size < 15 ? bytes.size : 15), (const char *)bytes.data);
	return s->stop_at && (int)s->n == s->stop_at ? 7 : 0;
}

/* a.txt (small), d/ (a directory), link (a symbolic link), big.bin (two
 * heads and some), z (empty). */
static struct tb sample(void)
{
	struct tb t = { 0 };
	tb_file(&t, "a.txt", "hello");
	tb_header(&t, "d/", '5', 0, NULL);
	tb_header(&t, "link", '2', 0, "a.txt");
	static char big[10000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	tb_header(&t, "big.bin", '0', sizeof big, NULL);
	tb_data(&t, big, sizeof big);
	tb_header(&t, "z", '0', 0, NULL);
	tb_end(&t);
	return t;
}

static int walk(const struct tb *t, struct seen *s, struct kimg_error *err)
{
	int rc = kimg_tar_for_each_member(kimg_span_make(t->p, t->n), want, member, s, err);
	ck_assert(!s->long_head);
	return rc;
}

START_TEST(members_in_order)
{
	struct tb t = sample();
	struct tb gz = compress(&t, "gzip -c -n"), bz = compress(&t, "bzip2 -c");
	const struct tb *forms[] = { &t, &gz, &bz };
	for (int f = 0; f < 3; f++) {
		struct seen s = { .stop_at = 0 };
		struct kimg_error err = { 0, 0, "" };
		ck_assert_int_eq(walk(forms[f], &s, &err), 3);
		ck_assert_str_eq(s.log, "a.txt 5\nbig.bin 10000\nz 0\n");
	}
	/* big.bin's bytes whole (past its head) */
	struct seen s = { .skip = "z" };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(walk(&t, &s, &err), 2);
	ck_assert_str_eq(s.first, "abcdefghijklmno");
	free(t.p);
	free(gz.p);
	free(bz.p);
	ck_assert_str_eq(kimg_tar_library(), "libarchive.so.13");
}
END_TEST

/* want() says no: the member is skipped, the walk goes on. */
START_TEST(unwanted_members_skipped)
{
	struct tb t = sample();
	struct seen s = { .skip = "big.bin" };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(walk(&t, &s, &err), 2);
	ck_assert_str_eq(s.log, "a.txt 5\nz 0\n");
	struct seen all = { .skip = NULL };
	ck_assert_int_eq(kimg_tar_for_each_member(kimg_span_make(t.p, t.n), NULL, member, &all, &err), 3);
	free(t.p);
}
END_TEST

/* fn's non-zero return stops the walk and is returned. */
START_TEST(callback_stops_the_walk)
{
	struct tb t = sample();
	for (int at = 1; at <= 3; at++) {
		struct seen s = { .stop_at = at };
		struct kimg_error err = { 0, 0, "" };
		ck_assert_int_eq(walk(&t, &s, &err), 7);
		ck_assert_uint_eq(s.n, (size_t)at);
	}
	free(t.p);
}
END_TEST

/* Not a tar at all. */
START_TEST(not_a_tar)
{
	char junk[3000];
	memset(junk, 'A', sizeof junk);
	struct seen s = { .stop_at = 0 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_tar_for_each_member(kimg_span_make(junk, sizeof junk), want, member, &s, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(err.code, -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "not a readable tar archive: Unrecognized archive format"); /* libarchive's words */
	ck_assert_uint_eq(s.n, 0);
}
END_TEST

/* Cut inside the header after a good member: that member, then the
 * archive's error. */
START_TEST(damaged_header)
{
	struct tb t = sample();
	t.n = 1024 + 100; /* inside d/'s header */
	struct seen s = { .stop_at = 0 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(walk(&t, &s, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(err.code, -KIMG_EFORMAT);
	ck_assert_msg(strncmp(err.what, "tar archive: ", 13) == 0 && strlen(err.what) > 13, "%s", err.what);
	ck_assert_str_eq(s.log, "a.txt 5\n");
	free(t.p);
}
END_TEST

/* Cut inside a member: the members before it delivered, then that one
 * with its error, and nothing after (libarchive cannot go on). */
START_TEST(truncated_archives)
{
	struct tb t = sample();
	/* a.txt header+block, d/, link: 4 blocks; big.bin's header at 2048, data at 2560 */
	static const size_t cuts[] = { 2560 + 1000, 2560 + 6000 };
	for (int i = 0; i < 2; i++) {
		struct tb c = t;
		c.n = cuts[i];
		struct seen s = { .stop_at = 0 };
		struct kimg_error err = { 0, 0, "" };
		ck_assert_int_eq(walk(&c, &s, &err), 2);
		ck_assert_str_eq(s.log, "a.txt 5\nbig.bin !EFORMAT\n");
		/* fn's return for the damaged member is the walk's */
		struct seen stop = { .stop_at = 2 };
		ck_assert_int_eq(walk(&c, &stop, &err), 7);
	}
	free(t.p);
}
END_TEST

/* A malformed pax record: libarchive warns ("Ignoring malformed pax
 * extended attribute") and gives the member under its ustar name; a
 * warning is no error, in either walk. */
static struct tb pax_warned(void)
{
	struct tb t = { 0 };
	tb_pax(&t, "99 path=x\n");
	tb_file(&t, "short", "abc");
	tb_file(&t, "next", "z");
	tb_end(&t);
	return t;
}

START_TEST(warnings_are_not_errors)
{
	struct tb t = pax_warned();
	struct seen s = { .stop_at = 0 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(walk(&t, &s, &err), 2);
	ck_assert_str_eq(s.log, "short 3\nnext 1\n");
	free(t.p);
}
END_TEST

/* The member limit and the archive's budget, each named. */
START_TEST(limits)
{
	struct tb t = sample();
	struct seen s = { .stop_at = 0 };
	struct kimg_error err = { 0, 0, "" };
	kimg_tar_set_member_max(9999);
	ck_assert_int_eq(walk(&t, &s, &err), 3);
	ck_assert_str_eq(s.log, "a.txt 5\nbig.bin !ELIMIT\nz 0\n");
	kimg_tar_set_member_max(10000);
	memset(&s, 0, sizeof s);
	ck_assert_int_eq(walk(&t, &s, &err), 3);
	ck_assert_str_eq(s.log, "a.txt 5\nbig.bin 10000\nz 0\n");
	kimg_tar_set_member_max(0); /* the default again */
	/* 20 MiB of zeros in a small gzip: past 1 times its size plus 16 MiB */
	struct tb z = { 0 };
	tb_header(&z, "zeros", '0', 20 << 20, NULL);
	tb_raw(&z, NULL, 20 << 20);
	tb_end(&z);
	struct tb gz = compress(&z, "gzip -c -n -1");
	kimg_tar_set_ratio_max(1);
	struct kimg_error merr = { 0, 0, "" };
	memset(&s, 0, sizeof s);
	ck_assert_int_eq(walk(&gz, &s, &merr), 1);
	ck_assert_str_eq(s.log, "zeros !ELIMIT\n");
	kimg_tar_set_ratio_max(0);
	memset(&s, 0, sizeof s);
	ck_assert_int_eq(walk(&gz, &s, &merr), 1);
	ck_assert_str_eq(s.log, "zeros 20971520\n");
	free(z.p);
	free(gz.p);
	free(t.p);
}
END_TEST

START_TEST(library_absent)
{
	kimg_tar_set_library("libkimg-test-absent.so.13");
	struct tb t = sample();
	struct seen s = { .stop_at = 0 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(walk(&t, &s, &err), -KIMG_ENOCODEC);
	ck_assert_str_eq(err.what, "cannot read tar archives: libkimg-test-absent.so.13 not found");
	ck_assert_str_eq(kimg_tar_library(), "libkimg-test-absent.so.13");
	free(t.p);
}
END_TEST

/* Each of kimg's allocations failing in turn (not libarchive's: 3.6
 * crashes on its own): a member whole or with its error; never a member
 * cut short unsaid. */
START_TEST(allocation_failures)
{
	if (!FAIL_ALLOC_WORKS)
		return;
	struct tb t = sample();
	struct seen s = { .stop_at = 0 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(walk(&t, &s, &err), 3); /* libarchive loaded first */
	fail_alloc_own_only(true);
	bool hit = true;
	long k;
	for (k = 1; hit; k++) {
		memset(&s, 0, sizeof s);
		err = (struct kimg_error){ 0, 0, "" };
		fail_alloc_arm(k);
		int rc = kimg_tar_for_each_member(kimg_span_make(t.p, t.n), want, member, &s, &err);
		hit = fail_alloc_hit();
		if (!hit) {
			ck_assert_int_eq(rc, 3);
			ck_assert_str_eq(s.log, "a.txt 5\nbig.bin 10000\nz 0\n");
			break;
		}
		if (rc < 0) {
			ck_assert_msg(err.what[0] != '\0', "allocation %ld: %d unsaid", k, rc);
			continue;
		}
		/* each line as written or an error; fewer than three only after an error */
		static const char *const lines[] = { "a.txt 5\n", "big.bin 10000\n", "z 0\n" };
		const char *p = s.log;
		bool last_error = false;
		for (int i = 0; i < rc; i++) {
			const char *name_end = strchr(lines[i], ' ');
			ck_assert_msg(strncmp(p, lines[i], (size_t)(name_end - lines[i]) + 1) == 0, "allocation %ld: %s", k, s.log);
			last_error = p[name_end - lines[i] + 1] == '!';
			ck_assert_msg(last_error || strncmp(p, lines[i], strlen(lines[i])) == 0, "allocation %ld: %s", k, s.log);
			p = strchr(p, '\n') + 1;
		}
		ck_assert_msg(rc == 3 || last_error, "allocation %ld: %d members, the last whole: %s", k, rc, s.log);
	}
	ck_assert_int_gt(k, 1);
	free(t.p);
}
END_TEST

/* ---- the stream walk (kimg_tar_la_walk) ---- */

struct src {
	const struct tb *t;
	size_t pos, chunk;
	int fail_after;       /* chunks handed out before -EIO (-1: never) */
	int calls;
};

static int64_t source(void *ctx, const void **buf)
{
	struct src *s = ctx;
	if (s->fail_after >= 0 && s->calls++ >= s->fail_after)
		return -EIO;
	size_t n = s->t->n - s->pos < s->chunk ? s->t->n - s->pos : s->chunk;
	*buf = s->t->p + s->pos;
	s->pos += n;
	return (int64_t)n;
}

struct entries {
	char log[4096];
	unsigned n;
	uint64_t read_len;
};

static int entry(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e, void *la)
{
	struct entries *o = ctx;
	size_t used = strlen(o->log);
	char data[16] = "";
	int64_t got = 0;
	if (e->type == KIMG_TAR_ENTRY_FILE && o->read_len) {
		static unsigned char buf[1 << 16];
		struct kimg_error err = { 0, 0, "" };
		got = kimg_tar_la_read(la, buf, o->read_len < sizeof buf ? o->read_len : sizeof buf, &err);
		if (got > 0)
			snprintf(data, sizeof data, "%.*s", (int)(got < 5 ? got : 5), (const char *)buf);
	}
	snprintf(o->log + used, sizeof o->log - used, "%u %d %s %s %lld %lld [%s]\n", ordinal, (int)e->type, e->name,
		 e->link ? e->link : "-", (long long)e->size, (long long)got, data);
	o->n++;
	return 0;
}

static const char sample_entries[] = "0 0 a.txt - 5 5 [hello]\n"
				     "1 1 d/ - 0 0 []\n"
				     "2 2 link a.txt 0 0 []\n"
				     "3 0 big.bin - 10000 10000 [abcde]\n"
				     "4 0 z - 0 0 []\n";

START_TEST(stream_entries)
{
	struct tb t = sample();
	struct tb bz = compress(&t, "bzip2 -c");
	struct src s = { &bz, 0, 1000, -1, 0 };
	struct entries o = { .read_len = 1 << 16 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_tar_la_walk(source, &s, entry, &o, &err), 5);
	ck_assert_str_eq(o.log, sample_entries);
	free(t.p);
	free(bz.p);
}
END_TEST

START_TEST(stream_warnings_are_not_errors)
{
	struct tb t = pax_warned();
	struct src s = { &t, 0, 1 << 20, -1, 0 };
	struct entries o = { .read_len = 1 << 16 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_tar_la_walk(source, &s, entry, &o, &err), 2);
	ck_assert_str_eq(o.log, "0 0 short - 3 3 [abc]\n1 0 next - 1 1 [z]\n");
	free(t.p);
}
END_TEST

START_TEST(stream_source_fails)
{
	struct tb t = sample();
	struct tb bz = compress(&t, "bzip2 -c");
	/* at once: nothing to tell the format by */
	struct src s = { &bz, 0, 1 << 20, 0, 0 };
	struct entries o = { .read_len = 1 << 16 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_tar_la_walk(source, &s, entry, &o, &err), -EIO);
	ck_assert_int_eq(err.code, -EIO);
	ck_assert_msg(strncmp(err.what, "not a readable tar stream: ", 27) == 0, "%s", err.what);
	ck_assert_uint_eq(err.offset, 0);
	ck_assert_uint_eq(o.n, 0);
	/* after the first chunk, a plain tar's first three entries */
	struct src s2 = { &t, 0, 2048, 1, 0 };
	struct entries o2 = { .read_len = 1 << 16 };
	int rc = kimg_tar_la_walk(source, &s2, entry, &o2, &err);
	ck_assert_int_eq(rc, -EIO);
	ck_assert_int_eq(err.code, -EIO);
	ck_assert_msg(strncmp(err.what, "tar entry 4: ", 13) == 0, "%s", err.what);
	ck_assert_uint_eq(err.offset, 3);
	ck_assert_str_eq(o2.log, "0 0 a.txt - 5 5 [hello]\n1 1 d/ - 0 0 []\n2 2 link a.txt 0 0 []\n");
	free(t.p);
	free(bz.p);
}
END_TEST

/* A stream cut inside a member's data: the entry's read fails and the
 * walk ends with it, naming the entry. */
START_TEST(stream_cut_short)
{
	struct tb t = sample();
	struct tb c = t;
	c.n = 2560 + 6000;
	struct tb bz = compress(&c, "bzip2 -c");
	struct src s = { &bz, 0, 1 << 20, -1, 0 };
	struct entries o = { .read_len = 1 << 16 };
	struct kimg_error err = { 0, 0, "" };
	int rc = kimg_tar_la_walk(source, &s, entry, &o, &err);
	ck_assert_int_eq(rc, -KIMG_EFORMAT);
	ck_assert_int_eq(err.code, -KIMG_EFORMAT);
	ck_assert_msg(strncmp(err.what, "tar entry 4: ", 13) == 0, "%s", err.what);
	ck_assert_uint_eq(err.offset, 3);
	ck_assert_uint_eq(o.n, 4);
	/* garbage after a bzip2 header: no entry */
	struct tb junk = { 0 };
	tb_raw(&junk, "BZh91AY&SY", 10);
	tb_raw(&junk, "not bzip2 data at all, not at all", 33);
	struct src js = { &junk, 0, 1 << 20, -1, 0 };
	struct entries jo = { .read_len = 1 };
	rc = kimg_tar_la_walk(source, &js, entry, &jo, &err);
	ck_assert_int_eq(rc, -KIMG_EFORMAT);
	ck_assert_uint_eq(jo.n, 0);
	free(t.p);
	free(bz.p);
	free(junk.p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tar");
	TCase *t = tcase_create("members");
	tcase_set_timeout(t, 30);
	tcase_add_test(t, members_in_order);
	tcase_add_test(t, unwanted_members_skipped);
	tcase_add_test(t, callback_stops_the_walk);
	tcase_add_test(t, not_a_tar);
	tcase_add_test(t, damaged_header);
	tcase_add_test(t, truncated_archives);
	tcase_add_test(t, limits);
	tcase_add_test(t, library_absent);
	tcase_add_test(t, warnings_are_not_errors);
	tcase_add_test(t, allocation_failures);
	suite_add_tcase(s, t);
	t = tcase_create("stream");
	tcase_add_test(t, stream_entries);
	tcase_add_test(t, stream_warnings_are_not_errors);
	tcase_add_test(t, stream_source_fails);
	tcase_add_test(t, stream_cut_short);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
