/* SPDX-License-Identifier: Apache-2.0 */
/* sys/zip.c and core/zip_dir.c: wheel members read in memory, the
 * directory by the core, deflated members through the lazily loaded zlib
 * (sys/zip.h contract). Archives are built here, stored (method 0) or as
 * deflate "stored blocks" (method 8, RFC 1951 section 3.2.4, written by
 * hand), so every byte of the expected output is known. */
#include "testutil.h"

#include <string.h>

#include "error.h"
#include "zip.h"

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

struct zbuf {
	uint8_t data[1 << 16];
	size_t len;
	uint8_t cd[4096];
	size_t cd_len;
	unsigned count;
};

static void put(uint8_t *p, size_t *len, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[(*len)++] = (uint8_t)(v >> (8 * i));
}

/* method 0: data as is; method 8: data wrapped in one final stored
 * deflate block. declared: the uncompressed size written (0: n);
 * crc_xor spoils the CRC. */
static void add_member_ex(struct zbuf *z, const char *name, const uint8_t *data, size_t n, int method,
			  uint64_t declared, uint32_t crc_xor)
{
	uint32_t crc = crc32_of(data, n) ^ crc_xor;
	size_t nl = strlen(name), off = z->len;
	size_t stored = method == 8 ? n + 5 : n;
	uint64_t usize = declared ? declared : n;
	put(z->data, &z->len, 0x04034b50, 4);
	put(z->data, &z->len, 20, 2); /* version */
	put(z->data, &z->len, 0, 2);  /* flags */
	put(z->data, &z->len, (uint64_t)method, 2);
	put(z->data, &z->len, 0, 4);  /* time, date */
	put(z->data, &z->len, crc, 4);
	put(z->data, &z->len, stored, 4);
	put(z->data, &z->len, usize, 4);
	put(z->data, &z->len, nl, 2);
	put(z->data, &z->len, 0, 2);
	memcpy(z->data + z->len, name, nl);
	z->len += nl;
	if (method == 8) { /* BFINAL=1 BTYPE=00, LEN, NLEN */
		put(z->data, &z->len, 1, 1);
		put(z->data, &z->len, n, 2);
		put(z->data, &z->len, (uint16_t)~n, 2);
	}
	memcpy(z->data + z->len, data, n);
	z->len += n;
	put(z->cd, &z->cd_len, 0x02014b50, 4);
	put(z->cd, &z->cd_len, 20, 2);
	put(z->cd, &z->cd_len, 20, 2);
	put(z->cd, &z->cd_len, 0, 2);
	put(z->cd, &z->cd_len, (uint64_t)method, 2);
	put(z->cd, &z->cd_len, 0, 4);
	put(z->cd, &z->cd_len, crc, 4);
	put(z->cd, &z->cd_len, stored, 4);
	put(z->cd, &z->cd_len, usize, 4);
	put(z->cd, &z->cd_len, nl, 2);
	put(z->cd, &z->cd_len, 0, 2); /* extra */
	put(z->cd, &z->cd_len, 0, 2); /* comment */
	put(z->cd, &z->cd_len, 0, 2); /* disk */
	put(z->cd, &z->cd_len, 0, 2); /* internal attrs */
	put(z->cd, &z->cd_len, 0100644u << 16, 4);
	put(z->cd, &z->cd_len, off, 4);
	memcpy(z->cd + z->cd_len, name, nl);
	z->cd_len += nl;
	z->count++;
}

static void add_member(struct zbuf *z, const char *name, const uint8_t *data, size_t n)
{
	add_member_ex(z, name, data, n, 0, 0, 0);
}

static struct kimg_span finish_zip(struct zbuf *z)
{
	size_t cd_off = z->len;
	memcpy(z->data + z->len, z->cd, z->cd_len);
	z->len += z->cd_len;
	put(z->data, &z->len, 0x06054b50, 4);
	put(z->data, &z->len, 0, 4);
	put(z->data, &z->len, z->count, 2);
	put(z->data, &z->len, z->count, 2);
	put(z->data, &z->len, z->cd_len, 4);
	put(z->data, &z->len, cd_off, 4);
	put(z->data, &z->len, 0, 2);
	return kimg_span_make(z->data, z->len);
}

static uint8_t big[10000], small[3] = { 'a', 'b', 'c' };
static struct zbuf zb;

struct seen {
	unsigned wants, members;
	char names[4][64];
	uint64_t sizes[4];
	bool exact[4];
	uint64_t head_sizes[4];
};

static bool want_not_txt(void *ctx, const char *name, struct kimg_span head)
{
	struct seen *s = ctx;
	if (s->wants < 4)
		s->head_sizes[s->wants] = head.size;
	s->wants++;
	return strstr(name, ".txt") == NULL;
}

static int on_member(void *ctx, const char *name, struct kimg_span bytes, const struct kimg_error *merr)
{
	struct seen *s = ctx;
	ck_assert_ptr_null(merr);
	if (s->members < 4) {
		snprintf(s->names[s->members], sizeof s->names[0], "%s", name);
		s->sizes[s->members] = bytes.size;
		s->exact[s->members] = bytes.size == sizeof big ? memcmp(bytes.data, big, sizeof big) == 0
								: memcmp(bytes.data, small, bytes.size) == 0;
	}
	s->members++;
	return 0;
}

static struct kimg_span sample_zip(void)
{
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (uint8_t)(i * 13 + 1);
	memset(&zb, 0, sizeof zb);
	add_member(&zb, "pkg/lib/libbig.so", big, sizeof big);
	add_member(&zb, "pkg/README.txt", small, sizeof small);
	add_member(&zb, "pkg/small.bin", small, sizeof small);
	return finish_zip(&zb);
}

START_TEST(members_delivered_whole_and_in_order_after_head_filter)
{
	struct kimg_span zip = sample_zip();
	struct seen s;
	struct kimg_error err = { 0, 0, "" };
	memset(&s, 0, sizeof s);
	ck_assert_int_eq(kimg_zip_for_each_member(zip, want_not_txt, on_member, &s, &err), 2);
	ck_assert_uint_eq(s.wants, 3);
	/* The filter sees at most KIMG_ZIP_HEAD_SIZE bytes, all of a small member. */
	ck_assert_uint_eq(s.head_sizes[0], KIMG_ZIP_HEAD_SIZE);
	ck_assert_uint_eq(s.head_sizes[2], sizeof small);
	ck_assert_uint_eq(s.members, 2);
	ck_assert_str_eq(s.names[0], "pkg/lib/libbig.so");
	ck_assert_uint_eq(s.sizes[0], sizeof big);
	ck_assert(s.exact[0]);
	ck_assert_str_eq(s.names[1], "pkg/small.bin");
	ck_assert_uint_eq(s.sizes[1], sizeof small);
	ck_assert(s.exact[1]);
}
END_TEST

static int stop_at_first(void *ctx, const char *name, struct kimg_span bytes, const struct kimg_error *merr)
{
	(*(unsigned *)ctx)++;
	return 42;
}

START_TEST(nonzero_callback_return_stops_and_is_returned)
{
	struct kimg_span zip = sample_zip();
	unsigned calls = 0;
	ck_assert_int_eq(kimg_zip_for_each_member(zip, NULL, stop_at_first, &calls, NULL), 42);
	ck_assert_uint_eq(calls, 1);
}
END_TEST

START_TEST(garbage_is_eformat)
{
	static const uint8_t junk[64] = "this is not a zip archive at all, just some text";
	struct seen s;
	struct kimg_error err = { 0, 0, "" };
	memset(&s, 0, sizeof s);
	ck_assert_int_eq(kimg_zip_for_each_member(kimg_span_make(junk, sizeof junk), NULL, on_member, &s, &err),
			 -KIMG_EFORMAT);
	ck_assert_int_eq(err.code, -KIMG_EFORMAT);
	ck_assert_uint_eq(s.members, 0);
}
END_TEST

/* A central directory entry with a wrong signature is an error, named;
 * only the digital-signature record (PK 05 05, APPNOTE 4.3.13) may end a
 * directory early (a make mutants survivor took any unknown record for
 * that end). */
START_TEST(bad_directory_entry_is_eformat)
{
	for (int variant = 0; variant < 2; variant++) {
		struct kimg_span z = sample_zip();
		uint8_t *d = (uint8_t *)z.data;
		int nth = 0;
		for (uint64_t i = 0; i + 4 <= z.size; i++)
			if (d[i] == 0x50 && d[i + 1] == 0x4b && d[i + 2] == 0x01 && d[i + 3] == 0x02 && ++nth == 2) {
				d[i + 2] = variant ? 0x05 : 0x09;
				d[i + 3] = variant ? 0x05 : 0x09;
				break;
			}
		ck_assert_int_eq(nth, 2);
		struct seen s;
		struct kimg_error err = { 0, 0, "" };
		memset(&s, 0, sizeof s);
		int rc = kimg_zip_for_each_member(z, NULL, on_member, &s, &err);
		if (variant) {
			ck_assert_int_eq(rc, 1); /* the signature record ends the directory: 1 member */
			ck_assert_uint_eq(s.members, 1);
		} else {
			ck_assert_int_eq(rc, -KIMG_EFORMAT);
			ck_assert_msg(strstr(err.what, "bad central directory entry") != NULL, "%s", err.what);
		}
	}
}
END_TEST

/* Every member's outcome, in order: size delivered, or the error code. */
struct outcomes {
	unsigned n;
	int code[8];
	uint64_t size[8];
	bool exact[8];
	char what[8][120];
};

static int record(void *ctx, const char *name, struct kimg_span bytes, const struct kimg_error *merr)
{
	struct outcomes *o = ctx;
	if (o->n < 8) {
		o->code[o->n] = merr ? merr->code : 0;
		o->size[o->n] = bytes.size;
		o->exact[o->n] = bytes.size == sizeof big && memcmp(bytes.data, big, sizeof big) == 0;
		snprintf(o->what[o->n], sizeof o->what[0], "%s", merr ? merr->what : "");
	}
	o->n++;
	return 0;
}

START_TEST(deflated_members_inflated_and_checked)
{
	struct outcomes o;
	memset(&o, 0, sizeof o);
	memset(&zb, 0, sizeof zb);
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (uint8_t)(i * 7 + 3);
	add_member_ex(&zb, "lib/good.so", big, sizeof big, 8, 0, 0);
	add_member_ex(&zb, "lib/badcrc.so", big, sizeof big, 8, 0, 1);
	add_member_ex(&zb, "lib/short.so", big, sizeof big, 8, sizeof big + 10, 0); /* declares more */
	add_member_ex(&zb, "lib/long.so", big, sizeof big, 8, sizeof big - 10, 0);  /* declares less */
	add_member_ex(&zb, "lib/lzma.so", small, sizeof small, 14, 0, 0);           /* LZMA: not supported */
	struct kimg_span zip = finish_zip(&zb);
	ck_assert_int_eq(kimg_zip_for_each_member(zip, NULL, record, &o, NULL), 5);
	ck_assert_int_eq(o.code[0], 0);
	ck_assert(o.exact[0]);
	ck_assert_int_eq(o.code[1], -KIMG_ECODEC);
	ck_assert_str_eq(o.what[1], "CRC mismatch");
	ck_assert_int_eq(o.code[2], -KIMG_ECODEC);
	ck_assert_int_eq(o.code[3], -KIMG_ECODEC);
	ck_assert_int_eq(o.code[4], -KIMG_ENOTSUP);
}
END_TEST

START_TEST(limits_refuse_before_inflating)
{
	struct outcomes o;
	memset(&o, 0, sizeof o);
	memset(&zb, 0, sizeof zb);
	add_member_ex(&zb, "lib/big.so", big, sizeof big, 8, 0, 0);
	/* declares 64 MiB from a 15-byte stream: past the ratio limit */
	add_member_ex(&zb, "lib/bomb.so", small, sizeof small, 8, (uint64_t)64 << 20, 0);
	struct kimg_span zip = finish_zip(&zb);
	ck_assert_int_eq(kimg_zip_for_each_member(zip, NULL, record, &o, NULL), 2);
	ck_assert_int_eq(o.code[0], 0);
	ck_assert_int_eq(o.code[1], -KIMG_ELIMIT);
	ck_assert_ptr_nonnull(strstr(o.what[1], "more than 200 times"));
	kimg_zip_set_limits(1000, 0);
	memset(&o, 0, sizeof o);
	ck_assert_int_eq(kimg_zip_for_each_member(zip, NULL, record, &o, NULL), 2);
	ck_assert_int_eq(o.code[0], -KIMG_ELIMIT);
	ck_assert_str_eq(o.what[0], "member of 10000 bytes is larger than the limit (1000 bytes)");
	kimg_zip_set_limits(0, 0);
}
END_TEST

START_TEST(empty_zip_has_no_members)
{
	memset(&zb, 0, sizeof zb);
	struct kimg_span zip = finish_zip(&zb);
	struct outcomes o;
	memset(&o, 0, sizeof o);
	ck_assert_int_eq(kimg_zip_for_each_member(zip, NULL, record, &o, NULL), 0);
	ck_assert_uint_eq(o.n, 0);
}
END_TEST

/* The end record's disk numbers (APPNOTE 4.3.16): 0 in a one-disk
 * archive, 0xffff where a writer marks them as ZIP64's to fill in; any
 * other number is a multi-disk archive, refused. */
START_TEST(end_record_disk_numbers)
{
	static const uint16_t ok[] = { 0, 0xffff }, refused[] = { 1, 0xfffe };
	for (int field = 0; field < 2; field++) {
		for (size_t k = 0; k < 4; k++) {
			uint16_t v = k < 2 ? ok[k] : refused[k - 2];
			memset(&zb, 0, sizeof zb);
			add_member(&zb, "a.bin", small, sizeof small);
			struct kimg_span zip = finish_zip(&zb);
			uint8_t *disk = zb.data + zip.size - 22 + 4 + 2 * field; /* disk, then the directory's disk */
			disk[0] = (uint8_t)v;
			disk[1] = (uint8_t)(v >> 8);
			struct outcomes o;
			struct kimg_error err = { 0, 0, "" };
			memset(&o, 0, sizeof o);
			int rc = kimg_zip_for_each_member(zip, NULL, record, &o, &err);
			if (k < 2) {
				ck_assert_msg(rc == 1 && o.n == 1, "field %d = 0x%x: %d", field, v, rc);
			} else {
				ck_assert_msg(rc == -KIMG_ENOTSUP, "field %d = 0x%x: %d", field, v, rc);
				ck_assert_str_eq(err.what, "zip: multi-disk archive");
			}
		}
	}
}
END_TEST

/* Directories are skipped; a central directory cut short is EFORMAT. */
START_TEST(directory_entries_and_truncation)
{
	memset(&zb, 0, sizeof zb);
	add_member(&zb, "pkg/", small, 0);
	add_member(&zb, "pkg/a.bin", small, sizeof small);
	struct kimg_span zip = finish_zip(&zb);
	struct outcomes o;
	memset(&o, 0, sizeof o);
	ck_assert_int_eq(kimg_zip_for_each_member(zip, NULL, record, &o, NULL), 1);
	/* every cut of the archive: never a crash, an error or fewer members */
	for (uint64_t cut = 0; cut < zip.size; cut++) {
		struct kimg_error err = { 0, 0, "" };
		memset(&o, 0, sizeof o);
		int rc = kimg_zip_for_each_member(kimg_span_make(zip.data, cut), NULL, record, &o, &err);
		ck_assert_msg(rc < 0 || o.n <= 1, "cut %llu", (unsigned long long)cut);
	}
}
END_TEST

/* ZIP64 (APPNOTE 4.3.14-4.3.15, 4.5.3): the end record's fields all
 * 0xffff/0xffffffff, the real ones in the ZIP64 end record; the entry's
 * sizes and offset in its ZIP64 extra field. Built by hand, one stored member. */
START_TEST(zip64_directory_and_extra_field)
{
	static uint8_t z[512];
	size_t n = 0;
	const char *name = "lib/x.so";
	size_t nl = strlen(name);
	uint32_t crc = crc32_of(small, sizeof small);
	put(z, &n, 0x04034b50, 4);
	put(z, &n, 45, 2);
	put(z, &n, 0, 2);
	put(z, &n, 0, 2);
	put(z, &n, 0, 4);
	put(z, &n, crc, 4);
	put(z, &n, 0xffffffffu, 4);
	put(z, &n, 0xffffffffu, 4);
	put(z, &n, nl, 2);
	put(z, &n, 20, 2); /* ZIP64 extra: sizes */
	memcpy(z + n, name, nl);
	n += nl;
	put(z, &n, 1, 2);
	put(z, &n, 16, 2);
	put(z, &n, sizeof small, 8);
	put(z, &n, sizeof small, 8);
	memcpy(z + n, small, sizeof small);
	n += sizeof small;
	size_t cd = n;
	put(z, &n, 0x02014b50, 4);
	put(z, &n, 45, 2);
	put(z, &n, 45, 2);
	put(z, &n, 0, 2);
	put(z, &n, 0, 2);
	put(z, &n, 0, 4);
	put(z, &n, crc, 4);
	put(z, &n, 0xffffffffu, 4);
	put(z, &n, 0xffffffffu, 4);
	put(z, &n, nl, 2);
	put(z, &n, 28, 2); /* extra: ZIP64 with size, stored size, offset */
	put(z, &n, 0, 2);
	put(z, &n, 0, 2);
	put(z, &n, 0, 2);
	put(z, &n, 0100644u << 16, 4);
	put(z, &n, 0xffffffffu, 4);
	memcpy(z + n, name, nl);
	n += nl;
	put(z, &n, 1, 2);
	put(z, &n, 24, 2);
	put(z, &n, sizeof small, 8);
	put(z, &n, sizeof small, 8);
	put(z, &n, 0, 8); /* local header at 0 */
	size_t cd_size = n - cd, eocd64 = n;
	put(z, &n, 0x06064b50, 4);
	put(z, &n, 44, 8);
	put(z, &n, 45, 2);
	put(z, &n, 45, 2);
	put(z, &n, 0, 4);
	put(z, &n, 0, 4);
	put(z, &n, 1, 8);
	put(z, &n, 1, 8);
	put(z, &n, cd_size, 8);
	put(z, &n, cd, 8);
	put(z, &n, 0x07064b50, 4);
	put(z, &n, 0, 4);
	put(z, &n, eocd64, 8);
	put(z, &n, 1, 4);
	put(z, &n, 0x06054b50, 4);
	put(z, &n, 0xffff, 2);
	put(z, &n, 0xffff, 2);
	put(z, &n, 0xffff, 2);
	put(z, &n, 0xffff, 2);
	put(z, &n, 0xffffffffu, 4);
	put(z, &n, 0xffffffffu, 4);
	put(z, &n, 0, 2);
	struct outcomes o;
	memset(&o, 0, sizeof o);
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_zip_for_each_member(kimg_span_make(z, n), NULL, record, &o, &err), 1);
	ck_assert_int_eq(o.code[0], 0);
	ck_assert_uint_eq(o.size[0], sizeof small);
	/* without the locator the ZIP64 fields cannot be resolved */
	z[eocd64 + 56] = 0;
	ck_assert_int_eq(kimg_zip_for_each_member(kimg_span_make(z, n), NULL, record, &o, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "zip: ZIP64 fields without a ZIP64 locator");
}
END_TEST

START_TEST(missing_zlib_loses_only_deflated_members)
{
	struct outcomes o;
	memset(&o, 0, sizeof o);
	memset(&zb, 0, sizeof zb);
	add_member(&zb, "lib/stored.so", big, sizeof big);
	add_member_ex(&zb, "lib/deflated.so", big, sizeof big, 8, 0, 0);
	struct kimg_span zip = finish_zip(&zb);
	kimg_zip_set_library("libkimg-test-absent.so.1");
	ck_assert_int_eq(kimg_zip_for_each_member(zip, NULL, record, &o, NULL), 2);
	ck_assert_int_eq(o.code[0], 0);
	ck_assert_int_eq(o.code[1], -KIMG_ENOCODEC);
	ck_assert_str_eq(o.what[1], "cannot inflate: libkimg-test-absent.so.1 not found");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("zip");
	TCase *tc = tcase_create("zip");
	tcase_add_test(tc, members_delivered_whole_and_in_order_after_head_filter);
	tcase_add_test(tc, nonzero_callback_return_stops_and_is_returned);
	tcase_add_test(tc, garbage_is_eformat);
	tcase_add_test(tc, bad_directory_entry_is_eformat);
	tcase_add_test(tc, deflated_members_inflated_and_checked);
	tcase_add_test(tc, limits_refuse_before_inflating);
	tcase_add_test(tc, empty_zip_has_no_members);
	tcase_add_test(tc, end_record_disk_numbers);
	tcase_add_test(tc, directory_entries_and_truncation);
	tcase_add_test(tc, zip64_directory_and_extra_field);
	/* Runs in its own forked process (Check's default), so the library
	 * choice does not leak into the other tests. */
	tcase_add_test(tc, missing_zlib_loses_only_deflated_members);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
