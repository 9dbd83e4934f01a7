/* SPDX-License-Identifier: Apache-2.0 */
/* sys/tar_stream.c: container image layers read without libarchive. The
 * tars are built here field by field (ustar headers, pax records, GNU
 * long names) and compressed by gzip(1) and zstd(1), so the oracle is the
 * bytes written, not the reader; hostile ones are cut or patched copies.
 * libarchive is named absent (KIMG_LIBARCHIVE's setter) in every test:
 * plain, gzip and zstd layers must not need it. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "tar.h"
#include "tar_header.h"
#include "tarbuild.h"
#include "testutil.h"

/* The reference tar: every kind of entry and name the reader knows. */
static struct tb reference_tar(void)
{
	struct tb t = { 0 };
	tb_header(&t, "usr/", '5', 0, NULL);
	tb_file(&t, "usr/a.txt", "hello world");
	tb_header(&t, "usr/link", '2', 0, "a.txt");
	tb_header(&t, "usr/hard", '1', 0, "usr/a.txt");
	char rec[600], long_name[300];
	memset(long_name, 'n', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	char kv[400], recs[1200];
	snprintf(kv, sizeof kv, "path=usr/%s", long_name);
	size_t a = pax_record(recs, sizeof recs, kv);
	pax_record(recs + a, sizeof recs - a, "linkpath=usr/target-of-a-pax-link");
	tb_pax(&t, recs);
	tb_header(&t, "short-name", '2', 0, "short-link");
	pax_record(rec, sizeof rec, "size=5");
	tb_pax(&t, rec);
	tb_header(&t, "usr/paxsize", '0', 0, NULL); /* the pax size (5) wins */
	tb_data(&t, "12345", 5);
	tb_header(&t, "././@LongLink", 'L', strlen(long_name) + 1, NULL);
	tb_data(&t, long_name, strlen(long_name) + 1);
	tb_header(&t, "././@LongLink", 'K', 12, NULL);
	tb_data(&t, "gnu-target\0", 12);
	tb_header(&t, "trunc", '2', 0, "trunc");
	tb_header(&t, "usr/fifo", '6', 0, NULL);
	unsigned char big[70000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 7);
	tb_header(&t, "usr/big.bin", '0', sizeof big, NULL);
	tb_data(&t, big, sizeof big);
	tb_file(&t, "usr/after", "z");
	tb_end(&t);
	return t;
}

struct chunks {
	const unsigned char *p;
	size_t n, pos, chunk;
	unsigned calls;
};

static int64_t chunk_src(void *ctx, const void **buf)
{
	struct chunks *c = ctx;
	size_t k = c->n - c->pos < c->chunk ? c->n - c->pos : c->chunk;
	*buf = c->p + c->pos;
	c->pos += k;
	c->calls++;
	return (int64_t)k;
}

struct seen {
	char log[1 << 16];
	size_t len;
	unsigned entries;
	uint64_t read_len; /* bytes of each entry to read; the rest is skipped */
	uint64_t sum;      /* of the bytes read */
};

static int record(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e, struct kimg_tar_stream *s)
{
	struct seen *o = ctx;
	unsigned char buf[128 * 1024];
	uint64_t want = o->read_len < sizeof buf ? o->read_len : sizeof buf;
	struct kimg_error err = { 0, 0, "" };
	int64_t n = want ? kimg_tar_stream_read(s, buf, want, &err) : 0;
	for (int64_t i = 0; i < n; i++)
		o->sum += buf[i];
	if (o->len < sizeof o->log - 600)
		o->len += (size_t)snprintf(o->log + o->len, sizeof o->log - o->len, "%u %d %.320s -> %s %lld [%.*s]\n",
					   ordinal, (int)e->type, e->name, e->link ? e->link : "-", (long long)e->size,
					   n > 0 && n < 16 ? (int)n : 0, (const char *)buf);
	o->entries++;
	return 0;
}

static int walk(const struct tb *t, size_t chunk, struct seen *o, struct kimg_error *err)
{
	struct chunks c = { t->p, t->n, 0, chunk, 0 };
	return kimg_tar_stream_walk(chunk_src, &c, record, o, err);
}

/* The bytes of t through `tool` (gzip -c -n, zstd -q -c). */
static uint64_t byte_sum(const char *s)
{
	uint64_t v = 0;
	for (; *s; s++)
		v += (unsigned char)*s;
	return v;
}

static const char reference_log[] =
	"0 1 usr/ -> - 0 []\n"
	"1 0 usr/a.txt -> - 11 [hello world]\n"
	"2 2 usr/link -> a.txt 0 []\n"
	"3 3 usr/hard -> usr/a.txt 0 []\n";

static void check_reference(const struct seen *o)
{
	ck_assert_int_eq(strncmp(o->log, reference_log, strlen(reference_log)), 0);
	const char *p = o->log + strlen(reference_log);
	ck_assert_msg(strncmp(p, "4 2 usr/nnnn", 12) == 0, "%s", p);
	ck_assert(strstr(p, "nnn -> usr/target-of-a-pax-link 0 []\n") != NULL);
	ck_assert(strstr(p, "\n5 0 usr/paxsize -> - 5 [12345]\n6 2 nnnn") != NULL);
	ck_assert(strstr(p, "nnn -> gnu-target 0 []\n7 4 usr/fifo -> - 0 []\n8 0 usr/big.bin -> - 70000 []\n"
			    "9 0 usr/after -> - 1 [z]\n") != NULL);
	ck_assert_int_eq(o->entries, 10);
}

START_TEST(plain_gzip_zstd_same_entries_any_chunking)
{
	kimg_tar_set_library("libkimg-test-absent.so.13");
	struct tb t = reference_tar();
	struct tb gz = compress(&t, "gzip -c -n"), zs = compress(&t, "zstd -q -c");
	const struct tb *forms[] = { &t, &gz, &zs };
	size_t chunks[] = { 1, 7, 511, 512, 4096, 1 << 20 };
	uint64_t want_sum = 0;
	for (size_t i = 0; i < 70000; i++)
		want_sum += (unsigned char)(i * 7);
	for (size_t f = 0; f < 3; f++)
		for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
			for (uint64_t rl = 0; rl <= 1 << 17; rl += 1 << 17) {
				struct seen *o = calloc(1, sizeof *o);
				o->read_len = rl ? rl : 15; /* all of each, or a head of 15 and the rest skipped */
				struct kimg_error err = { 0, 0, "" };
				ck_assert_msg(walk(forms[f], chunks[c], o, &err) == 10, "form %zu chunk %zu: %s", f, chunks[c],
					      err.what);
				check_reference(o);
				if (rl)
					ck_assert_uint_eq(o->sum, want_sum + byte_sum("hello world") + byte_sum("12345") + 'z');
				free(o);
			}
		}
	free(t.p);
	free(gz.p);
	free(zs.p);
}
END_TEST

/* The entries before the damage are delivered, then -KIMG_EFORMAT. */
static void expect_damage(const struct tb *t, unsigned before, int code, const char *why)
{
	struct seen *o = calloc(1, sizeof *o);
	o->read_len = 1 << 17;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(walk(t, 4096, o, &err), code);
	ck_assert_int_eq(err.code, code);
	ck_assert_msg(strstr(err.what, why) != NULL, "'%s' lacks '%s'", err.what, why);
	ck_assert_uint_eq(o->entries, before);
	free(o);
}

START_TEST(hostile_tars_give_eformat_after_the_good_entries)
{
	kimg_tar_set_library("libkimg-test-absent.so.13");
	/* truncated header */
	struct tb t = { 0 };
	tb_file(&t, "a", "aaa");
	tb_file(&t, "b", "bbb");
	t.n -= 512 + 300;
	expect_damage(&t, 1, -KIMG_EFORMAT, "tar entry 2: header cut short");
	/* bad checksum */
	t.n = 0;
	tb_file(&t, "a", "aaa");
	tb_file(&t, "b", "bbb");
	t.p[1024 + 148] ^= 1;
	expect_damage(&t, 1, -KIMG_EFORMAT, "checksum mismatch");
	/* size past the end */
	t.n = 0;
	tb_file(&t, "a", "aaa");
	tb_header(&t, "b", '0', 5000, NULL);
	tb_data(&t, "bbb", 3);
	expect_damage(&t, 2, -KIMG_EFORMAT, "tar entry 2 (b): data ends early");
	/* a pax size that lies (past the data: the next header is data) */
	t.n = 0;
	char rec[100];
	pax_record(rec, sizeof rec, "size=1000");
	tb_pax(&t, rec);
	tb_file(&t, "a", "aaa");
	tb_file(&t, "b", "bbb");
	tb_end(&t);
	expect_damage(&t, 1, -KIMG_EFORMAT, "tar entry 2");
	/* a pax record longer than its header's data */
	t.n = 0;
	tb_file(&t, "a", "aaa");
	tb_pax(&t, "99 path=x\n");
	tb_file(&t, "b", "bbb");
	expect_damage(&t, 1, -KIMG_EFORMAT, "pax header: malformed record");
	/* a pax size that is not a number */
	t.n = 0;
	tb_pax(&t, "11 size=1x\n");
	tb_file(&t, "b", "bbb");
	expect_damage(&t, 0, -KIMG_EFORMAT, "size is not a number");
	/* a pax header and then nothing */
	t.n = 0;
	pax_record(rec, sizeof rec, "path=z");
	tb_pax(&t, rec);
	expect_damage(&t, 0, -KIMG_EFORMAT, "header cut short");
	/* an extended header past KIMG_TAR_EXT_MAX: a limit, before reading it */
	t.n = 0;
	tb_file(&t, "a", "aaa");
	tb_header(&t, "././@LongLink", 'L', KIMG_TAR_EXT_MAX + 1, NULL);
	expect_damage(&t, 1, -KIMG_ELIMIT, "extended header of 1048577 bytes");
	/* a run of extended headers without an entry */
	t.n = 0;
	for (int i = 0; i < 17; i++)
		tb_pax(&t, rec);
	tb_file(&t, "a", "aaa");
	expect_damage(&t, 0, -KIMG_EFORMAT, "more than 16 extended headers");
	/* a GNU long name without its NUL, as long as the name limit */
	t.n = 0;
	char *name = malloc(KIMG_TAR_NAME_MAX + 10);
	memset(name, 'q', KIMG_TAR_NAME_MAX + 10);
	tb_header(&t, "././@LongLink", 'L', KIMG_TAR_NAME_MAX + 10, NULL);
	tb_data(&t, name, KIMG_TAR_NAME_MAX + 10);
	tb_file(&t, "a", "aaa");
	free(name);
	expect_damage(&t, 0, -KIMG_EFORMAT, "GNU long name of");
	free(t.p);
}
END_TEST

/* An entry read to its end, one call after another, until a call gives
 * 0 (the end) or fails: the failing call's own error is what it says. */
struct read_out {
	int64_t last;
	uint64_t got;
	struct kimg_error err;
};

static int read_to_end(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e, struct kimg_tar_stream *s)
{
	struct read_out *o = ctx;
	unsigned char buf[1000];
	(void)ordinal;
	(void)e;
	memset(&o->err, 0, sizeof o->err);
	while ((o->last = kimg_tar_stream_read(s, buf, sizeof buf, &o->err)) > 0)
		o->got += (uint64_t)o->last;
	return 0;
}

/* Entry data cut by the end of the layer (POSIX: a header's size counts
 * its data, which must follow): the read that meets the end fails at once
 * with EFORMAT and says so; the walk then ends with the same error. */
START_TEST(a_read_past_the_layers_end_says_so)
{
	kimg_tar_set_library("libkimg-test-absent.so.13");
	struct tb t = { 0 };
	tb_header(&t, "b", '0', 5000, NULL);
	tb_data(&t, "bbb", 3);
	struct chunks c = { t.p, t.n, 0, 4096, 0 };
	struct read_out o = { 0 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_tar_stream_walk(chunk_src, &c, read_to_end, &o, &err), -KIMG_EFORMAT);
	ck_assert_int_eq(o.last, -1);
	ck_assert_uint_eq(o.got, 512); /* what the layer held of it: "bbb" and its block's padding */
	ck_assert_int_eq(o.err.code, -KIMG_EFORMAT);
	ck_assert_msg(strstr(o.err.what, "ends early") != NULL, "read error: '%s'", o.err.what);
	ck_assert_int_eq(err.code, -KIMG_EFORMAT);
	free(t.p);
}
END_TEST

/* A source that gives its bytes in chunks, then fails with -EIO once
 * fail_at bytes have been handed out (as a layer file cut by a read error). */
struct failing {
	struct chunks c;
	size_t fail_at;
	bool once; /* fail one call only, then give the rest: the walk must not read on */
	bool failed;
};

static int64_t failing_src(void *ctx, const void **buf)
{
	struct failing *f = ctx;
	if (f->c.pos >= f->fail_at && !(f->once && f->failed)) {
		f->failed = true;
		return -EIO;
	}
	if (f->failed)
		f->fail_at = f->c.n;
	size_t left = f->fail_at - f->c.pos;
	size_t k = f->c.n - f->c.pos < f->c.chunk ? f->c.n - f->c.pos : f->c.chunk;
	if (k > left)
		k = left;
	*buf = f->c.p + f->c.pos;
	f->c.pos += k;
	return (int64_t)k;
}

static int stop_at_third(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e, struct kimg_tar_stream *s)
{
	(void)ctx; (void)e; (void)s;
	return ordinal == 2 ? 77 : 0;
}

/* The source's own error ends the walk with its code and says where the
 * layer could not be read, in a header, in an entry's data being read or
 * skipped, in each form (plain, gzip, zstd), in chunks of a block or less;
 * the entries before it are delivered, and nothing is read after it even
 * when the source would give more. A callback's stop is returned as it is. */
START_TEST(a_failing_source_ends_the_walk_with_its_error)
{
	kimg_tar_set_library("libkimg-test-absent.so.13");
	struct tb t = reference_tar();
	struct tb gz = compress(&t, "gzip -c -n"), zs = compress(&t, "zstd -q -c");
	const struct tb *forms[] = { &t, &gz, &zs };
	for (size_t f = 0; f < 3; f++) {
		/* a cut at every 997th byte of the form's first half (past it, the
		 * end-of-archive blocks may be all that is left), the entries
		 * read whole and skipped */
		for (size_t at = 0; at < forms[f]->n / 2; at += 997) {
			for (int k = 0; k < 4; k++) {
				uint64_t rl = k & 1 ? 1 << 17 : 0;
				struct seen *o = calloc(1, sizeof *o);
				o->read_len = rl;
				struct failing src = { { forms[f]->p, forms[f]->n, 0, k & 2 ? 100 : 512, 0 }, at, k >= 2, false };
				struct kimg_error err = { 0, 0, "" };
				int rc = kimg_tar_stream_walk(failing_src, &src, record, o, &err);
				ck_assert_msg(rc == -EIO, "form %zu cut at %zu: %d (%s)", f, at, rc, err.what);
				ck_assert_int_eq(err.code, -EIO);
				ck_assert_msg(strstr(err.what, kimg_strerror(-EIO)) != NULL, "form %zu cut at %zu: '%s'", f, at,
					      err.what);
				ck_assert_uint_le(o->entries, 10);
				free(o);
			}
		}
	}
	struct chunks c = { t.p, t.n, 0, 4096, 0 };
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_tar_stream_walk(chunk_src, &c, stop_at_third, NULL, &err), 77);
	free(t.p);
	free(gz.p);
	free(zs.p);
}
END_TEST

START_TEST(huge_declared_sizes_cost_nothing)
{
	kimg_tar_set_library("libkimg-test-absent.so.13");
	/* 1 TiB declared (base-256) in a tar of a few blocks: delivered with
	 * its size for the caller's budget, then the stream ends under it */
	struct tb t = { 0 };
	tb_header_ex(&t, "bomb", '0', (uint64_t)1 << 40, NULL, true);
	tb_data(&t, "x", 1);
	tb_end(&t);
	struct tb gz = compress(&t, "gzip -c -n");
	struct seen *o = calloc(1, sizeof *o);
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(walk(&gz, 4096, o, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(o->log, "0 0 bomb -> - 1099511627776 []\n");
	ck_assert_str_eq(err.what, "tar entry 1 (bomb): data ends early (truncated)");
	/* past INT64_MAX: refused before fn */
	t.n = 0;
	tb_header_ex(&t, "bomb", '0', (uint64_t)1 << 63, NULL, true);
	tb_end(&t);
	memset(o, 0, sizeof *o);
	ck_assert_int_eq(walk(&t, 4096, o, &err), -KIMG_EFORMAT);
	ck_assert_uint_eq(o->entries, 0);
	ck_assert_msg(strstr(err.what, "is not possible") != NULL, "%s", err.what);
	free(o);
	free(t.p);
	free(gz.p);
}
END_TEST

START_TEST(compressed_damage)
{
	kimg_tar_set_library("libkimg-test-absent.so.13");
	struct tb t = { 0 };
	for (int i = 0; i < 64; i++) {
		char n[32];
		snprintf(n, sizeof n, "file%02d", i);
		tb_header(&t, n, '0', 20000, NULL);
		tb_data(&t, NULL, 20000);
		t.p[t.n - 1000] = (unsigned char)i;
	}
	tb_end(&t);
	struct tb gz = compress(&t, "gzip -c -n"), zs = compress(&t, "zstd -q -c");
	struct seen *o = calloc(1, sizeof *o);
	struct kimg_error err = { 0, 0, "" };
	/* a gzip stream cut short: the entries in what is left, then EFORMAT */
	struct tb cut = { gz.p, gz.n / 2, 0 };
	int rc = walk(&cut, 1000, o, &err);
	ck_assert_int_eq(rc, -KIMG_EFORMAT);
	ck_assert_msg(strstr(err.what, "gzip stream ends early") != NULL, "%s", err.what);
	ck_assert(o->entries > 0 && o->entries < 64);
	/* zstd garbage after the magic */
	unsigned char junk[4096];
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (unsigned char)(i * 131 + 17);
	memcpy(junk, "\x28\xb5\x2f\xfd", 4);
	struct tb j = { junk, sizeof junk, 0 };
	memset(o, 0, sizeof *o);
	ck_assert_int_eq(walk(&j, 4096, o, &err), -KIMG_EFORMAT);
	ck_assert_msg(strstr(err.what, "zstd") != NULL, "%s", err.what);
	ck_assert_uint_eq(o->entries, 0);
	/* a wrong CRC-32 in the gzip trailer: an error, unless the caller
	 * checks the blob's digest (kimg_tar_stream_walk_digested) */
	gz.p[gz.n - 8] ^= 0x55;
	memset(o, 0, sizeof *o);
	ck_assert_int_eq(walk(&gz, 4096, o, &err), -KIMG_EFORMAT);
	ck_assert_msg(strstr(err.what, "gzip") != NULL, "%s", err.what);
	struct chunks c = { gz.p, gz.n, 0, 4096, 0 };
	memset(o, 0, sizeof *o);
	ck_assert_int_eq(kimg_tar_stream_walk_digested(chunk_src, &c, record, o, &err), 64);
	ck_assert_uint_eq(o->entries, 64);
	gz.p[gz.n - 8] ^= 0x55;
	/* a flipped byte in the middle of a gzip stream */
	gz.p[gz.n / 2] ^= 0x55;
	memset(o, 0, sizeof *o);
	rc = walk(&gz, 4096, o, &err);
	ck_assert_int_eq(rc, -KIMG_EFORMAT);
	/* a zstd stream cut short */
	struct tb zcut = { zs.p, zs.n - 3, 0 };
	memset(o, 0, sizeof *o);
	o->read_len = 1 << 17;
	ck_assert_int_eq(walk(&zcut, 4096, o, &err), -KIMG_EFORMAT);
	free(o);
	free(t.p);
	free(gz.p);
	free(zs.p);
}
END_TEST

START_TEST(ten_thousand_tiny_entries)
{
	kimg_tar_set_library("libkimg-test-absent.so.13");
	struct tb t = { 0 };
	for (int i = 0; i < 10000; i++) {
		char n[32];
		snprintf(n, sizeof n, "d/f%05d", i);
		tb_file(&t, n, i % 2 ? "x" : "");
	}
	tb_end(&t);
	struct tb gz = compress(&t, "gzip -c -n"), zs = compress(&t, "zstd -q -c");
	const struct tb *forms[] = { &t, &gz, &zs };
	for (int f = 0; f < 3; f++) {
		struct seen *o = calloc(1, sizeof *o);
		o->read_len = 1;
		struct kimg_error err = { 0, 0, "" };
		ck_assert_int_eq(walk(forms[f], 65536, o, &err), 10000);
		ck_assert_uint_eq(o->entries, 10000);
		ck_assert_uint_eq(o->sum, 5000 * (uint64_t)'x');
		free(o);
	}
	free(t.p);
	free(gz.p);
	free(zs.p);
}
END_TEST

START_TEST(other_formats_need_libarchive_and_say_so)
{
	kimg_tar_set_library("libkimg-test-absent.so.13");
	struct tb t = { 0 };
	tb_file(&t, "a", "aaa");
	tb_end(&t);
	struct tb bz = compress(&t, "bzip2 -c");
	struct seen *o = calloc(1, sizeof *o);
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(walk(&bz, 4096, o, &err), -KIMG_ENOCODEC);
	ck_assert_str_eq(err.what, "a bzip2 layer: cannot read tar archives: libkimg-test-absent.so.13 not found");
	/* neither a tar nor a known compression: EFORMAT, with its bytes */
	struct tb g = { (unsigned char *)"hello, this is not a tar", 24, 0 };
	ck_assert_int_eq(walk(&g, 4096, o, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "not a tar archive, nor a gzip or zstd stream (first bytes 68 65 6c 6c)");
	/* an empty blob and an empty tar: no entries */
	struct tb e = { (unsigned char *)"", 0, 0 };
	ck_assert_int_eq(walk(&e, 4096, o, &err), 0);
	t.n = 0;
	tb_end(&t);
	ck_assert_int_eq(walk(&t, 4096, o, &err), 0);
	ck_assert_uint_eq(o->entries, 0);
	free(o);
	free(t.p);
	free(bz.p);
}
END_TEST

/* All its bytes in one call, then its end (0), then -EIO for any call
 * past the end. */
struct once_src {
	const unsigned char *p;
	size_t n;
	int calls;
};

static int64_t once_src_read(void *ctx, const void **buf)
{
	struct once_src *o = ctx;
	o->calls++;
	if (o->calls == 1) {
		*buf = o->p;
		return (int64_t)o->n;
	}
	return o->calls == 2 ? 0 : -EIO;
}

START_TEST(bzip2_through_libarchive_when_present)
{
	void *la = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!la) {
		const char *ci = getenv("CI");
		ck_assert_msg(!ci || strcmp(ci, "true") != 0, "libarchive13 missing under CI (scripts/setup-debian.sh)");
		fprintf(stderr, "SKIP - bzip2_through_libarchive_when_present: libarchive.so.13 missing\n");
		return;
	}
	dlclose(la);
	struct tb t = reference_tar();
	struct tb bz = compress(&t, "bzip2 -c");
	struct seen *o = calloc(1, sizeof *o);
	o->read_len = 15;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_msg(walk(&bz, 777, o, &err) == 10, "%s", err.what);
	/* libarchive's names for the same entries as the native reader's */
	ck_assert_int_eq(strncmp(o->log, reference_log, strlen(reference_log)), 0);
	ck_assert_uint_eq(o->entries, 10);
	/* a source read to its end is not read again (a pipe's end is final):
	 * one that fails any call after its end gives the same entries */
	struct once_src src = { bz.p, bz.n, 0 };
	memset(o, 0, sizeof *o);
	o->read_len = 15;
	ck_assert_msg(kimg_tar_stream_walk(once_src_read, &src, record, o, &err) == 10, "%s", err.what);
	ck_assert_uint_eq(o->entries, 10);
	ck_assert_int_eq(src.calls, 2); /* its bytes, then its end */
	free(o);
	free(t.p);
	free(bz.p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tar_stream");
	TCase *tc = tcase_create("tar_stream");
	tcase_set_timeout(tc, 60);
	/* each in its own forked process (Check's default): the library
	 * choice does not leak */
	tcase_add_test(tc, plain_gzip_zstd_same_entries_any_chunking);
	tcase_add_test(tc, hostile_tars_give_eformat_after_the_good_entries);
	tcase_add_test(tc, huge_declared_sizes_cost_nothing);
	tcase_add_test(tc, a_failing_source_ends_the_walk_with_its_error);
	tcase_add_test(tc, a_read_past_the_layers_end_says_so);
	tcase_add_test(tc, compressed_damage);
	tcase_add_test(tc, ten_thousand_tiny_entries);
	tcase_add_test(tc, other_formats_need_libarchive_and_say_so);
	tcase_add_test(tc, bzip2_through_libarchive_when_present);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
