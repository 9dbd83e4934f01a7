/* sys/zip.c: wheel members read in memory through the lazily loaded
 * libarchive (sys/zip.h contract). Archives are built here, stored
 * (method 0), so every byte of the expected output is known. */
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

static void add_member(struct zbuf *z, const char *name, const uint8_t *data, size_t n)
{
	uint32_t crc = crc32_of(data, n);
	size_t nl = strlen(name), off = z->len;
	put(z->data, &z->len, 0x04034b50, 4);
	put(z->data, &z->len, 20, 2); /* version */
	put(z->data, &z->len, 0, 2);  /* flags */
	put(z->data, &z->len, 0, 2);  /* stored */
	put(z->data, &z->len, 0, 4);  /* time, date */
	put(z->data, &z->len, crc, 4);
	put(z->data, &z->len, n, 4);
	put(z->data, &z->len, n, 4);
	put(z->data, &z->len, nl, 2);
	put(z->data, &z->len, 0, 2);
	memcpy(z->data + z->len, name, nl);
	z->len += nl;
	memcpy(z->data + z->len, data, n);
	z->len += n;
	put(z->cd, &z->cd_len, 0x02014b50, 4);
	put(z->cd, &z->cd_len, 20, 2);
	put(z->cd, &z->cd_len, 20, 2);
	put(z->cd, &z->cd_len, 0, 2);
	put(z->cd, &z->cd_len, 0, 2);
	put(z->cd, &z->cd_len, 0, 4);
	put(z->cd, &z->cd_len, crc, 4);
	put(z->cd, &z->cd_len, n, 4);
	put(z->cd, &z->cd_len, n, 4);
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

START_TEST(missing_libarchive_is_enocodec_with_the_documented_message)
{
	struct kimg_span zip = sample_zip();
	struct kimg_error err = { 0, 0, "" };
	kimg_zip_set_library("libkimg-test-absent.so.13");
	ck_assert_int_eq(kimg_zip_for_each_member(zip, NULL, on_member, NULL, &err), -KIMG_ENOCODEC);
	ck_assert_str_eq(err.what, "cannot read archives: libkimg-test-absent.so.13 not found");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("zip");
	TCase *tc = tcase_create("zip");
	tcase_add_test(tc, members_delivered_whole_and_in_order_after_head_filter);
	tcase_add_test(tc, nonzero_callback_return_stops_and_is_returned);
	tcase_add_test(tc, garbage_is_eformat);
	/* Runs in its own forked process (Check's default), so the library
	 * choice does not leak into the other tests. */
	tcase_add_test(tc, missing_libarchive_is_enocodec_with_the_documented_message);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
