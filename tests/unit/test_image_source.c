/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of probe/image_source.c: where an image's blobs are. The
 * containers are built here (tars field by field, tests/unit/tarbuild.h;
 * layout directories file by file), so the oracle is what was written:
 * which members a tar has under which names (pax paths, GNU long names,
 * "./" and "/" dropped, the last of a name winning as tar extraction has
 * it, symbolic link members followed inside the archive only), the bytes
 * of each blob, SHA-256 digests computed by sha256sum(1) when the test
 * was written, and one error naming the input for each hostile input
 * (a member past the end of the file, an extended header over its limit,
 * a pax size that contradicts its header, a blob outside a layout). */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_format.h"
#include "image_int.h"
#include "tar_header.h"
#include "tarbuild.h"
#include "fail_alloc.h"

static char dir[] = "/tmp/kimg-test-image-source.XXXXXX";

/* sha256sum of the bytes (printf '%s' ... | sha256sum) */
#define SHA_ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define MANIFEST "{\"schemaVersion\":2}"
#define SHA_MANIFEST "bafebd36189ad3688b7b3915ea55d461e0bfcfbdde11e54b0a123999fb6be50f"

static const char *path_of(const char *name)
{
	static char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return p;
}

static void mkdir_in(const char *name)
{
	ck_assert_int_eq(mkdir(path_of(name), 0755), 0);
}

static const char *write_bytes(const char *name, const void *data, size_t n)
{
	const char *p = path_of(name);
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	fclose(f);
	return p;
}

static const char *write_tar(const char *name, const struct tb *t)
{
	return write_bytes(name, t->p, t->n);
}

/* The archive opened; its index's members by name. */
static int open_tar(const char *name, const struct tb *t, struct source *s, struct kimg_error *err)
{
	return image_source_open(write_tar(name, t), s, err);
}

/* A member's whole content read through the source, as a string. */
static char *doc(const struct source *s, const char *name, const char *want_hex, struct kimg_error *err, int *rc)
{
	unsigned char *out = NULL;
	uint64_t len = 0;
	*rc = image_blob_read_doc(s, name, want_hex, &out, &len, err);
	if (*rc == 0)
		ck_assert_uint_eq(strlen((char *)out), len);
	return (char *)out;
}

static void expect_doc(const struct source *s, const char *name, const char *want)
{
	struct kimg_error err = { 0, 0, "" };
	int rc;
	char *got = doc(s, name, NULL, &err, &rc);
	ck_assert_msg(rc == 0, "%s: %d %s", name, rc, err.what);
	ck_assert_str_eq(got, want);
	free(got);
}

static void expect_error(int rc, const struct kimg_error *err, int code, const char *what)
{
	ck_assert_int_eq(rc, code);
	ck_assert_int_eq(err->code, code);
	ck_assert_str_eq(err->what, what);
}

/* ---- tars ---- */

/* docker save's shape: manifest.json, a layer under its ID, a symbolic
 * link member to it; names with "./" and "/" before them. */
START_TEST(docker_archive_members)
{
	struct tb t = { 0 };
	tb_file(&t, "./manifest.json", MANIFEST);
	tb_header(&t, "abc/", '5', 0, NULL);
	tb_file(&t, "./abc/layer.tar", "abc");
	tb_header(&t, "def/layer.tar", '2', 0, "../abc/layer.tar");
	tb_file(&t, ".//x/y", "slash");
	tb_header(&t, "hard", '1', 0, "abc/layer.tar");
	tb_end(&t);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("d.tar", &t, &s, &err), 0);
	ck_assert_str_eq(s.format, "docker-archive");
	ck_assert(!s.is_dir);
	ck_assert_uint_eq(s.n, 4); /* the regular files and the symbolic link */
	ck_assert_str_eq(s.m[0].name, "manifest.json");
	ck_assert_str_eq(s.m[1].name, "abc/layer.tar");
	ck_assert_uint_eq(s.m[1].off, 4 * 512); /* after two headers, the manifest's block, its own header */
	ck_assert_uint_eq(s.m[1].size, 3);
	ck_assert_ptr_null(s.m[1].link);
	ck_assert_str_eq(s.m[2].name, "def/layer.tar");
	ck_assert_str_eq(s.m[2].link, "../abc/layer.tar");
	ck_assert_uint_eq(s.m[2].size, 0);
	ck_assert_str_eq(s.m[3].name, "x/y");
	ck_assert(image_tar_find(&s, "./def/layer.tar") == &s.m[1]);
	ck_assert(image_tar_find(&s, "/abc/layer.tar") == &s.m[1]);
	ck_assert(image_tar_find(&s, "x/y") == &s.m[3]);
	ck_assert_ptr_null(image_tar_find(&s, "hard")); /* a hard link member is not indexed */
	ck_assert_ptr_null(image_tar_find(&s, "abc"));
	ck_assert_ptr_null(image_tar_find(&s, "abc/layer"));
	ck_assert(image_source_has(&s, "manifest.json"));
	ck_assert(!image_source_has(&s, "index.json"));
	expect_doc(&s, "manifest.json", MANIFEST);
	expect_doc(&s, "def/layer.tar", "abc");
	expect_doc(&s, "././x/y", "slash");
	struct blob b;
	ck_assert_int_eq(image_blob_open(&s, "def/layer.tar", &b, &err), 0);
	ck_assert_int_eq(b.fd, s.fd);
	ck_assert(!b.own_fd);
	ck_assert_uint_eq(b.off, 4 * 512);
	ck_assert_uint_eq(b.size, 3);
	image_blob_close(&b);
	ck_assert_int_eq(b.fd, -1);
	ck_assert(fcntl(s.fd, F_GETFD) >= 0); /* the archive's own descriptor stays open */
	int rc = image_blob_open(&s, "blobs/sha256/0000", &b, &err);
	expect_error(rc, &err, -ENOENT, "blob blobs/sha256/0000 missing from the archive");
	image_source_close(&s);
	ck_assert_int_eq(s.fd, -1);
	free(t.p);
}
END_TEST

/* An OCI archive (no manifest.json); the last member of a name wins. */
START_TEST(oci_archive_last_member_wins)
{
	struct tb t = { 0 };
	tb_file(&t, "oci-layout", "{}");
	tb_file(&t, "index.json", "first");
	tb_file(&t, "index.json", "second");
	tb_end(&t);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("o.tar", &t, &s, &err), 0);
	ck_assert_str_eq(s.format, "oci-archive");
	expect_doc(&s, "index.json", "second");
	image_source_close(&s);
	free(t.p);
}
END_TEST

/* Symbolic link members: relative to their directory, followed up to
 * eight times, never out of the archive or to an absolute name. */
START_TEST(symlink_members)
{
	struct tb t = { 0 };
	tb_file(&t, "d/f", "target");
	tb_header(&t, "l1", '2', 0, "l2");
	tb_header(&t, "l2", '2', 0, "d/e/../f");
	tb_header(&t, "d/sib", '2', 0, "f");
	tb_header(&t, "abs", '2', 0, "/d/f");
	tb_header(&t, "d/up", '2', 0, "../../d/f");
	tb_header(&t, "loop1", '2', 0, "loop2");
	tb_header(&t, "loop2", '2', 0, "loop1");
	tb_header(&t, "dangling", '2', 0, "nothing");
	/* eight links followed in a row: a chain of seven resolves, of eight not */
	char name[16], to[16];
	for (int i = 0; i < 9; i++) {
		snprintf(name, sizeof name, "c%d", i);
		if (i == 8)
			snprintf(to, sizeof to, "d/f");
		else
			snprintf(to, sizeof to, "c%d", i + 1);
		tb_header(&t, name, '2', 0, to);
	}
	tb_end(&t);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("l.tar", &t, &s, &err), 0);
	const struct tar_member *f = image_tar_find(&s, "d/f");
	ck_assert_ptr_nonnull(f);
	ck_assert(image_tar_find(&s, "l1") == f);
	ck_assert(image_tar_find(&s, "d/sib") == f);
	ck_assert_ptr_null(image_tar_find(&s, "abs"));
	ck_assert_ptr_null(image_tar_find(&s, "d/up"));
	ck_assert_ptr_null(image_tar_find(&s, "loop1"));
	ck_assert_ptr_null(image_tar_find(&s, "dangling"));
	ck_assert(image_tar_find(&s, "c2") == f);
	ck_assert_ptr_null(image_tar_find(&s, "c1"));
	expect_doc(&s, "l1", "target");
	image_source_close(&s);
	free(t.p);
}
END_TEST

/* Names longer than ustar's 100 bytes: a pax path, GNU long names (the
 * later of two in a row); a pax size equal to the header's. */
START_TEST(long_names)
{
	char longa[300], longb[300], longc[300], rec[700], recs[1400];
	memset(longa, 'a', 250);
	strcpy(longa + 250, "/blob");
	memset(longb, 'b', 250);
	strcpy(longb + 250, "/blob");
	memset(longc, 'c', 250);
	strcpy(longc + 250, "/blob");
	struct tb t = { 0 };
	char kv[320];
	snprintf(kv, sizeof kv, "path=%s", longa);
	size_t n = pax_record(rec, sizeof rec, kv);
	memcpy(recs, rec, n);
	n += pax_record(recs + n, sizeof recs - n, "size=3");
	recs[n] = '\0';
	tb_pax(&t, recs);
	tb_file(&t, "short-a", "pax");
	tb_header(&t, "././@LongLink", 'L', strlen(longc) + 1, NULL);
	tb_data(&t, longc, strlen(longc) + 1);
	tb_header(&t, "././@LongLink", 'L', strlen(longb) + 1, NULL);
	tb_data(&t, longb, strlen(longb) + 1);
	tb_file(&t, "short-b", "gnu");
	tb_file(&t, "plain", "plain"); /* after them: its own name */
	tb_end(&t);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("n.tar", &t, &s, &err), 0);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_str_eq(s.m[0].name, longa);
	ck_assert_str_eq(s.m[1].name, longb);
	ck_assert_str_eq(s.m[2].name, "plain");
	expect_doc(&s, longa, "pax");
	expect_doc(&s, longb, "gnu");
	ck_assert_ptr_null(image_tar_find(&s, "short-a"));
	ck_assert_ptr_null(image_tar_find(&s, longc));
	image_source_close(&s);
	free(t.p);
}
END_TEST

/* A pax linkpath and a GNU long link name: a symbolic link member's
 * target past ustar's 100 bytes. */
START_TEST(long_link_targets)
{
	char dirname[200], target[300], kv[320], rec[400];
	memset(dirname, 'd', 150);
	dirname[150] = '\0';
	snprintf(target, sizeof target, "%s/f", dirname);
	struct tb t = { 0 };
	snprintf(kv, sizeof kv, "path=%s", target);
	pax_record(rec, sizeof rec, kv);
	tb_pax(&t, rec);
	tb_file(&t, "short", "far");
	snprintf(kv, sizeof kv, "linkpath=%s", target);
	pax_record(rec, sizeof rec, kv);
	tb_pax(&t, rec);
	tb_header(&t, "paxlink", '2', 0, "truncated");
	tb_header(&t, "././@LongLink", 'K', strlen(target) + 1, NULL);
	tb_data(&t, target, strlen(target) + 1);
	tb_header(&t, "gnulink", '2', 0, "truncated");
	/* one-character ones: a pax path "y", a pax linkpath "y" */
	tb_pax(&t, "10 path=y\n");
	tb_file(&t, "not-y", "why");
	tb_pax(&t, "14 linkpath=y\n");
	tb_header(&t, "to-y", '2', 0, "nothing");
	tb_end(&t);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("k.tar", &t, &s, &err), 0);
	const struct tar_member *f = image_tar_find(&s, target);
	ck_assert_ptr_nonnull(f);
	ck_assert(image_tar_find(&s, "paxlink") == f);
	ck_assert(image_tar_find(&s, "gnulink") == f);
	const struct tar_member *y = image_tar_find(&s, "y");
	ck_assert_ptr_nonnull(y);
	ck_assert_ptr_null(image_tar_find(&s, "not-y"));
	ck_assert(image_tar_find(&s, "to-y") == y);
	image_source_close(&s);
	free(t.p);
}
END_TEST

static void expect_open_error(const char *name, const struct tb *t, int code, uint64_t offset, const char *what)
{
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	int rc = open_tar(name, t, &s, &err);
	expect_error(rc, &err, code, what);
	ck_assert_uint_eq(err.offset, offset);
	image_source_close(&s);
}

START_TEST(member_past_the_end)
{
	struct tb t = { 0 };
	tb_file(&t, "ok", "fine");
	tb_header(&t, "big", '0', 1025, NULL);
	tb_raw(&t, NULL, 1024);
	expect_open_error("end.tar", &t, -KIMG_ETRUNC, 1024, "tar member 'big' passes the end of the file");
	tb_raw(&t, NULL, 1); /* its 1025 bytes just there (unpadded: the file's end) */
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("fits.tar", &t, &s, &err), 0);
	const struct tar_member *m = image_tar_find(&s, "big");
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->size, 1025);
	image_source_close(&s);
	free(t.p);
}
END_TEST

START_TEST(bad_header_checksum)
{
	struct tb t = { 0 };
	tb_file(&t, "ok", "fine");
	tb_file(&t, "bad", "x");
	tb_end(&t);
	t.p[1024] = 'B'; /* the second header's name, after its checksum was taken */
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	int rc = open_tar("sum.tar", &t, &s, &err);
	ck_assert_int_eq(rc, -KIMG_EFORMAT);
	ck_assert_int_eq(err.code, -KIMG_EFORMAT);
	image_source_close(&s);
	free(t.p);
}
END_TEST

START_TEST(extended_header_limits)
{
	/* a pax header one byte over 1 MiB (its bytes there: the file is long enough) */
	struct tb t = { 0 };
	tb_header(&t, "PaxHeaders/x", 'x', KIMG_TAR_EXT_MAX + 1, NULL);
	tb_raw(&t, NULL, (size_t)kimg_tar_padded(KIMG_TAR_EXT_MAX + 1) + 1024);
	expect_open_error("ext.tar", &t, -KIMG_ELIMIT, 512, "tar extended header larger than 1048576 bytes");
	free(t.p);
	/* a GNU long name of exactly 1 MiB is read */
	t = (struct tb){ 0 };
	tb_header(&t, "././@LongLink", 'L', KIMG_TAR_EXT_MAX, NULL);
	tb_raw(&t, NULL, (size_t)KIMG_TAR_EXT_MAX);
	memcpy(t.p + 512, "long", 4);
	tb_file(&t, "short", "z");
	tb_end(&t);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("ext2.tar", &t, &s, &err), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.m[0].name, "long");
	image_source_close(&s);
	free(t.p);
}
END_TEST

START_TEST(pax_size_differs)
{
	char rec[64];
	struct tb t = { 0 };
	pax_record(rec, sizeof rec, "size=5");
	tb_pax(&t, rec);
	tb_file(&t, "member", "abc");
	tb_end(&t);
	expect_open_error("paxsize.tar", &t, -KIMG_ENOTSUP, 3 * 512 + 512,
			  "tar member 'member': pax size differs from the header");
	free(t.p);
	/* malformed pax records: the reader's error */
	t = (struct tb){ 0 };
	tb_pax(&t, "99 path=x\n");
	tb_file(&t, "member", "abc");
	tb_end(&t);
	expect_open_error("paxbad.tar", &t, -KIMG_EFORMAT, 0, "pax header: malformed record");
	free(t.p);
}
END_TEST

/* Ends without end blocks, or with less than a block after the last
 * member; an archive of no members. */
START_TEST(tar_ends)
{
	struct tb t = { 0 };
	tb_file(&t, "manifest.json", MANIFEST);
	tb_raw(&t, "tail", 4);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("tail.tar", &t, &s, &err), 0);
	ck_assert_uint_eq(s.n, 1);
	expect_doc(&s, "manifest.json", MANIFEST);
	image_source_close(&s);
	free(t.p);
	t = (struct tb){ 0 };
	tb_end(&t);
	ck_assert_int_eq(open_tar("empty.tar", &t, &s, &err), 0);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_str_eq(s.format, "oci-archive");
	image_source_close(&s);
	free(t.p);
}
END_TEST

/* More members than the index's first allocation (64). */
START_TEST(many_members)
{
	struct tb t = { 0 };
	char name[32], body[32];
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof name, "m%d", i);
		snprintf(body, sizeof body, "body %d", i);
		tb_file(&t, name, body);
	}
	tb_end(&t);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("many.tar", &t, &s, &err), 0);
	ck_assert_uint_eq(s.n, 200);
	for (int i = 0; i < 200; i += 37) {
		snprintf(name, sizeof name, "m%d", i);
		snprintf(body, sizeof body, "body %d", i);
		expect_doc(&s, name, body);
	}
	image_source_close(&s);
	free(t.p);
}
END_TEST

/* Run with stdin closed (`kimg-probe ... <&-`), the archive gets
 * descriptor 0: a descriptor like any other. */
START_TEST(descriptor_zero)
{
	struct tb t = { 0 };
	tb_file(&t, "manifest.json", MANIFEST);
	tb_end(&t);
	const char *p = write_tar("zero.tar", &t);
	close(STDIN_FILENO);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(image_source_open(p, &s, &err), 0);
	ck_assert_int_eq(s.fd, 0);
	expect_doc(&s, "manifest.json", MANIFEST);
	image_source_close(&s);
	ck_assert_int_eq(fcntl(0, F_GETFD), -1); /* closed with the source */
	/* a layout's blob on descriptor 0 */
	mkdir_in("zero");
	write_bytes("zero/blob", "abc", 3);
	ck_assert_int_eq(open("/dev/null", O_RDONLY), 0);
	ck_assert_int_eq(image_source_open(path_of("zero"), &s, &err), 0);
	close(0);
	struct blob b;
	ck_assert_int_eq(image_blob_open(&s, "blob", &b, &err), 0);
	ck_assert_int_eq(b.fd, 0);
	image_blob_close(&b);
	ck_assert_int_eq(fcntl(0, F_GETFD), -1);
	image_source_close(&s);
	free(t.p);
}
END_TEST

START_TEST(not_a_container)
{
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	int rc = image_source_open(path_of("no-such-file"), &s, &err);
	expect_error(rc, &err, -ENOENT, "No such file or directory");
	image_source_close(&s);
	rc = image_source_open("/dev/null", &s, &err);
	expect_error(rc, &err, -KIMG_EFORMAT, "not a regular file");
	image_source_close(&s);
}
END_TEST

/* ---- the digest of a document ---- */

START_TEST(document_digest)
{
	struct tb t = { 0 };
	tb_file(&t, "blobs/sha256/" SHA_MANIFEST, MANIFEST);
	tb_end(&t);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(open_tar("dg.tar", &t, &s, &err), 0);
	int rc;
	char *got = doc(&s, "blobs/sha256/" SHA_MANIFEST, SHA_MANIFEST, &err, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(got, MANIFEST);
	free(got);
	got = doc(&s, "blobs/sha256/" SHA_MANIFEST, SHA_ABC, &err, &rc);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(rc, -KIMG_EFORMAT);
	/* the whole message within struct kimg_error's 120 bytes: the blob's
	 * name and the start of the digest its bytes have */
	ck_assert_str_eq(err.what, "blobs/sha256/" SHA_MANIFEST ": digest mismatch (bytes: bafebd36189a...)");
	got = doc(&s, "blobs/sha256/" SHA_ABC, NULL, &err, &rc);
	ck_assert_ptr_null(got);
	expect_error(rc, &err, -ENOENT, "blob blobs/sha256/" SHA_ABC " missing from the archive");
	image_source_close(&s);
	free(t.p);
}
END_TEST

/* ---- layout directories ---- */

START_TEST(layout_blobs)
{
	mkdir_in("lay");
	mkdir_in("lay/blobs");
	mkdir_in("lay/blobs/sha256");
	write_bytes("lay/oci-layout", "{}", 2);
	write_bytes("lay/index.json", MANIFEST, strlen(MANIFEST));
	write_bytes("lay/blobs/sha256/" SHA_ABC, "abc", 3);
	ck_assert_int_eq(symlink("../../index.json", path_of("lay/blobs/sha256/link")), 0);
	write_bytes("outside", "secret", 6);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(image_source_open(path_of("lay"), &s, &err), 0);
	ck_assert(s.is_dir);
	ck_assert_str_eq(s.format, "oci-layout");
	ck_assert(image_source_has(&s, "index.json"));
	ck_assert(image_source_has(&s, "blobs/sha256/" SHA_ABC));
	ck_assert(!image_source_has(&s, "blobs"));
	ck_assert(!image_source_has(&s, "manifest.json"));
	expect_doc(&s, "index.json", MANIFEST);
	expect_doc(&s, "./blobs/../index.json", MANIFEST);
	int rc;
	char *got = doc(&s, "blobs/sha256/" SHA_ABC, SHA_ABC, &err, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(got, "abc");
	free(got);
	struct blob b;
	ck_assert_int_eq(image_blob_open(&s, "blobs/sha256/" SHA_ABC, &b, &err), 0);
	ck_assert(b.own_fd);
	ck_assert_int_ne(b.fd, s.fd);
	ck_assert_uint_eq(b.off, 0);
	ck_assert_uint_eq(b.size, 3);
	int fd = b.fd;
	image_blob_close(&b);
	ck_assert_int_eq(fcntl(fd, F_GETFD), -1); /* its own descriptor closed */
	rc = image_blob_open(&s, "../outside", &b, &err);
	expect_error(rc, &err, -KIMG_EFORMAT, "blob name '../outside' leaves the layout");
	rc = image_blob_open(&s, "blobs/../../outside", &b, &err);
	expect_error(rc, &err, -KIMG_EFORMAT, "blob name 'blobs/../../outside' leaves the layout");
	rc = image_blob_open(&s, "/etc/passwd", &b, &err);
	expect_error(rc, &err, -KIMG_EFORMAT, "blob name '/etc/passwd' leaves the layout");
	rc = image_blob_open(&s, "", &b, &err);
	expect_error(rc, &err, -KIMG_EFORMAT, "blob name '' leaves the layout");
	rc = image_blob_open(&s, "blobs/sha256/none", &b, &err);
	expect_error(rc, &err, -ENOENT, "blob blobs/sha256/none missing: No such file or directory");
	rc = image_blob_open(&s, "blobs/sha256/link", &b, &err);
	expect_error(rc, &err, -ELOOP, "blob blobs/sha256/link missing: Too many levels of symbolic links");
	rc = image_blob_open(&s, "blobs//sha256/", &b, &err);
	expect_error(rc, &err, -KIMG_EFORMAT, "blob blobs/sha256 is not a regular file");
	ck_assert_int_eq(b.fd, -1);
	got = doc(&s, "blobs/sha256/none", NULL, &err, &rc);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(rc, -ENOENT);
	image_source_close(&s);
}
END_TEST

/* A document of 16 MiB is read; one byte more is refused. */
START_TEST(document_size_limit)
{
	mkdir_in("big");
	write_bytes("big/doc", "", 0);
	ck_assert_int_eq(truncate(path_of("big/doc"), (off_t)KIMG_IMAGE_DOC_MAX), 0);
	struct source s;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(image_source_open(path_of("big"), &s, &err), 0);
	unsigned char *out = NULL;
	uint64_t len = 0;
	ck_assert_int_eq(image_blob_read_doc(&s, "doc", NULL, &out, &len, &err), 0);
	ck_assert_uint_eq(len, KIMG_IMAGE_DOC_MAX);
	ck_assert_uint_eq(out[len], 0);
	free(out);
	ck_assert_int_eq(truncate(path_of("big/doc"), (off_t)KIMG_IMAGE_DOC_MAX + 1), 0);
	out = NULL;
	int rc = image_blob_read_doc(&s, "doc", NULL, &out, &len, &err);
	expect_error(rc, &err, -KIMG_ELIMIT, "doc: larger than 16777216 bytes");
	ck_assert_ptr_null(out);
	image_source_close(&s);
}
END_TEST

/* ---- reads ---- */

START_TEST(pread_all)
{
	const char *p = write_bytes("ten", "0123456789", 10);
	int fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	char buf[32] = "";
	ck_assert_int_eq(image_pread_all(fd, buf, 4, 3), 0);
	ck_assert_str_eq(buf, "3456");
	ck_assert_int_eq(image_pread_all(fd, buf, 0, 100), 0);
	ck_assert_int_eq(image_pread_all(fd, buf, 8, 3), -KIMG_ETRUNC);
	ck_assert_int_eq(image_pread_all(fd, buf, 1, 10), -KIMG_ETRUNC);
	close(fd);
	ck_assert_int_eq(image_pread_all(fd, buf, 1, 0), -EBADF);
}
END_TEST

static struct layer_source layer_on(int fd, uint64_t off, uint64_t size)
{
	struct layer_source ls;
	memset(&ls, 0, sizeof ls);
	ls.fd = fd;
	ls.off = off;
	ls.size = size;
	ls.buf = malloc(IMAGE_CHUNK);
	ck_assert_ptr_nonnull(ls.buf);
	return ls;
}

/* A blob at an offset no page starts at, its digest taken on the way. */
START_TEST(layer_read_mapped)
{
	char bytes[5000];
	memset(bytes, 'x', sizeof bytes);
	memcpy(bytes + 4097, "abc", 3);
	int fd = open(write_bytes("layer", bytes, sizeof bytes), O_RDONLY);
	struct layer_source ls = layer_on(fd, 4097, 3);
	struct kimg_digest d;
	kimg_digest_init(&d);
	ls.sha = &d;
	const void *buf = NULL;
	ck_assert_int_eq(image_layer_read(&ls, &buf), 3);
	ck_assert_int_eq(memcmp(buf, "abc", 3), 0);
	ck_assert_ptr_nonnull(ls.map);
	ck_assert_int_eq(image_layer_read(&ls, &buf), 0);
	ck_assert_ptr_null(ls.map);
	char hex[65];
	kimg_digest_hex(&d, hex);
	ck_assert_str_eq(hex, SHA_ABC);
	image_layer_end(&ls);
	free(ls.buf);
	close(fd);
}
END_TEST

/* A blob cut short after it was indexed: read, not mapped, a chunk at a
 * time, until the bytes run out (no SIGBUS). */
START_TEST(layer_read_cut_short)
{
	size_t n = 2 * IMAGE_CHUNK;
	unsigned char *bytes = malloc(n);
	ck_assert_ptr_nonnull(bytes);
	for (size_t i = 0; i < n; i++)
		bytes[i] = (unsigned char)(i % 251);
	int fd = open(write_bytes("cut", bytes, n), O_RDONLY);
	struct layer_source ls = layer_on(fd, 0, 3 * IMAGE_CHUNK);
	const void *buf = NULL;
	ck_assert_int_eq(image_layer_read(&ls, &buf), (int64_t)IMAGE_CHUNK);
	ck_assert_ptr_null(ls.map);
	ck_assert(buf == ls.buf);
	ck_assert_int_eq(memcmp(buf, bytes, IMAGE_CHUNK), 0);
	ck_assert_int_eq(image_layer_read(&ls, &buf), (int64_t)IMAGE_CHUNK);
	ck_assert_int_eq(memcmp(buf, bytes + IMAGE_CHUNK, IMAGE_CHUNK), 0);
	ck_assert_int_eq(image_layer_read(&ls, &buf), -KIMG_ETRUNC);
	free(ls.buf);
	free(bytes);
	close(fd);
}
END_TEST

/* A descriptor that cannot be mapped or read at an offset (a pipe). */
START_TEST(layer_read_pipe)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "abc", 3), 3);
	struct layer_source ls = layer_on(p[0], 0, 3);
	const void *buf = NULL;
	ck_assert_int_eq(image_layer_read(&ls, &buf), -ESPIPE);
	free(ls.buf);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* ---- detection among the inputs ---- */

START_TEST(detect)
{
	/* layout directories: oci-layout and index.json, both files */
	mkdir_in("det");
	mkdir_in("det/lay");
	write_bytes("det/lay/oci-layout", "{}", 2);
	ck_assert(!probe_image_detect(path_of("det/lay")));
	mkdir_in("det/lay/index.json");
	ck_assert(!probe_image_detect(path_of("det/lay")));
	rmdir(path_of("det/lay/index.json"));
	write_bytes("det/lay/index.json", "{}", 2);
	ck_assert(probe_image_detect(path_of("det/lay")));
	unlink(path_of("det/lay/oci-layout"));
	mkdir_in("det/lay/oci-layout");
	ck_assert(!probe_image_detect(path_of("det/lay")));
	ck_assert(!probe_image_detect(path_of("det")));
	ck_assert(!probe_image_detect(path_of("det/none")));
	ck_assert_int_eq(mkfifo(path_of("det/fifo"), 0600), 0);
	ck_assert(!probe_image_detect(path_of("det/fifo")));
	/* tars: a docker archive of exactly two blocks (the least there is) */
	struct tb t = { 0 };
	tb_header(&t, "manifest.json", '0', 500, NULL);
	tb_raw(&t, NULL, 512);
	ck_assert_uint_eq(t.n, 1024);
	ck_assert(probe_image_detect(write_tar("det/two-blocks.tar", &t)));
	t.n = 1023;
	ck_assert(!probe_image_detect(write_tar("det/short.tar", &t)));
	free(t.p);
	/* an OCI archive needs both of its files */
	t = (struct tb){ 0 };
	tb_file(&t, "oci-layout", "{}");
	tb_end(&t);
	ck_assert(!probe_image_detect(write_tar("det/layout-only.tar", &t)));
	t.n -= 1024;
	tb_file(&t, "index.json", "{}");
	tb_end(&t);
	ck_assert(probe_image_detect(write_tar("det/oci.tar", &t)));
	free(t.p);
	t = (struct tb){ 0 };
	tb_file(&t, "index.json", "{}");
	tb_end(&t);
	ck_assert(!probe_image_detect(write_tar("det/index-only.tar", &t)));
	free(t.p);
	/* a tar of other files; one whose index fails after its manifest */
	t = (struct tb){ 0 };
	tb_file(&t, "usr/lib/libfoo.so", "elf");
	tb_end(&t);
	ck_assert(!probe_image_detect(write_tar("det/plain.tar", &t)));
	free(t.p);
	t = (struct tb){ 0 };
	tb_file(&t, "manifest.json", MANIFEST);
	tb_header(&t, "big", '0', 100000, NULL);
	tb_raw(&t, NULL, 1024);
	ck_assert(!probe_image_detect(write_tar("det/cut.tar", &t)));
	free(t.p);
	/* not a tar: no header checksum; the end of an empty one first */
	char junk[2048];
	memset(junk, 'A', sizeof junk);
	ck_assert(!probe_image_detect(write_bytes("det/junk", junk, sizeof junk)));
	memset(junk, 0, sizeof junk);
	ck_assert(!probe_image_detect(write_bytes("det/zeros", junk, sizeof junk)));
}
END_TEST

/* Each allocation failing in turn: the index either whole or refused with
 * "out of memory" (an extended header's: "reading a tar extended
 * header"), a document read or refused, detection a plain no; never a
 * crash or a member under a wrong name. */
START_TEST(allocation_failures)
{
	if (!FAIL_ALLOC_WORKS)
		return;
	char longname[200], kv[300], rec[400];
	memset(longname, 'n', 150);
	strcpy(longname + 150, "/blob");
	struct tb t = { 0 };
	snprintf(kv, sizeof kv, "path=%s", longname);
	pax_record(rec, sizeof rec, kv);
	tb_pax(&t, rec);
	tb_file(&t, "short", "pax");
	tb_header(&t, "././@LongLink", 'L', 9, NULL);
	tb_data(&t, "gnu/long", 9);
	tb_file(&t, "x", "gnu");
	tb_header(&t, "././@LongLink", 'K', 9, NULL);
	tb_data(&t, "gnu/long", 9);
	tb_header(&t, "link", '2', 0, "x");
	char name[16];
	for (int i = 0; i < 70; i++) { /* past the index's first 64 */
		snprintf(name, sizeof name, "m%d", i);
		tb_file(&t, name, "m");
	}
	tb_file(&t, "manifest.json", MANIFEST);
	tb_end(&t);
	const char *path = write_tar("fail.tar", &t);
	bool hit = true;
	for (long k = 1; hit; k++) {
		struct source s;
		struct kimg_error err = { 0, 0, "" };
		fail_alloc_arm(k);
		int rc = image_source_open(path, &s, &err);
		hit = fail_alloc_hit();
		if (rc == 0) {
			ck_assert_msg(!hit, "allocation %ld failed unsaid", k);
			ck_assert_uint_eq(s.n, 74);
			ck_assert_str_eq(s.m[0].name, longname);
			ck_assert_str_eq(s.m[1].name, "gnu/long");
			ck_assert_str_eq(s.m[2].link, "gnu/long");
			ck_assert_str_eq(s.format, "docker-archive");
			/* the documents, under failures of their own */
			for (long j = 1;; j++) {
				unsigned char *out = NULL;
				uint64_t len;
				fail_alloc_arm(j);
				rc = image_blob_read_doc(&s, "manifest.json", SHA_MANIFEST, &out, &len, &err);
				bool doc_hit = fail_alloc_hit();
				if (!doc_hit) {
					ck_assert_int_eq(rc, 0);
					ck_assert_str_eq((char *)out, MANIFEST);
					free(out);
					break;
				}
				expect_error(rc, &err, -ENOMEM, "manifest.json: cannot read it");
			}
		} else {
			ck_assert_msg(hit, "allocation %ld: %s", k, err.what);
			ck_assert_int_eq(rc, -ENOMEM);
			ck_assert_msg(strcmp(err.what, "out of memory") == 0 || strcmp(err.what, "reading a tar extended header") == 0,
				      "allocation %ld: %s", k, err.what);
		}
		image_source_close(&s);
		fail_alloc_arm(k);
		bool image = probe_image_detect(path);
		ck_assert(image || fail_alloc_hit());
		fail_alloc_hit();
	}
	free(t.p);
}
END_TEST

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static Suite *suite(void)
{
	Suite *s = suite_create("image_source");
	TCase *t = tcase_create("tar");
	tcase_add_test(t, docker_archive_members);
	tcase_add_test(t, oci_archive_last_member_wins);
	tcase_add_test(t, symlink_members);
	tcase_add_test(t, long_names);
	tcase_add_test(t, long_link_targets);
	tcase_add_test(t, member_past_the_end);
	tcase_add_test(t, bad_header_checksum);
	tcase_add_test(t, extended_header_limits);
	tcase_add_test(t, pax_size_differs);
	tcase_add_test(t, tar_ends);
	tcase_add_test(t, many_members);
	tcase_add_test(t, not_a_container);
	tcase_add_test(t, descriptor_zero);
	tcase_add_test(t, document_digest);
	suite_add_tcase(s, t);
	t = tcase_create("layout");
	tcase_add_test(t, layout_blobs);
	tcase_add_test(t, document_size_limit);
	suite_add_tcase(s, t);
	t = tcase_create("read");
	tcase_add_test(t, pread_all);
	tcase_add_test(t, layer_read_mapped);
	tcase_add_test(t, layer_read_cut_short);
	tcase_add_test(t, layer_read_pipe);
	tcase_add_test(t, detect);
	tcase_add_test(t, allocation_failures);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	int rc = run_suite(suite());
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
