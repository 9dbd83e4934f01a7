/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of sparse reading plans (core/elf_sparse.c): the section
 * table of an nvcc-built shared object as readelf sees it (code dropped,
 * .nv_fatbin walked), and the fatbin walk over a hand-made stream: every
 * payload over KIMG_SPARSE_PAYLOAD_KEEP announced once, in order, only when
 * its header has arrived; a stream that stops being a container is kept. */
#include <stdlib.h>
#include <string.h>

#include "elf_sparse.h"
#include "fatbin.h"
#include "testutil.h"

START_TEST(plan_of_a_shared_object)
{
	struct kimg_span so = fixture_load("libtwo.so");
	uint64_t lo, hi;
	ck_assert(kimg_sparse_window(so, so.size, &lo, &hi));
	struct kimg_sparse_plan plan;
	ck_assert(kimg_sparse_plan_make(so, kimg_span_sub(&so, lo, hi - lo), lo, so.size, NULL, 0, &plan));
	ck_assert_uint_eq(plan.n_fatbin, 1);
	ck_assert_uint_ge(plan.n_drop, 1); /* .text, .init, .plt ... */
	/* a wrapper pointing outside .nv_fatbin: no plan */
	struct kimg_sparse_wrapper w = { 0, 0 };
	bool found = false;
	for (uint64_t o = 0; o + 24 <= so.size && !found; o += 8) {
		uint32_t m;
		kimg_span_u32(&so, o, &m);
		if (m == KIMG_FATBIN_WRAPPER_MAGIC) {
			w.off = o;
			w.data = 0x10; /* the ELF header's address: no .nv_fatbin there */
			found = true;
		}
	}
	ck_assert(found);
	ck_assert(!kimg_sparse_plan_make(so, kimg_span_sub(&so, lo, hi - lo), lo, so.size, &w, 1, &plan));
	uint8_t not_elf[64] = { 0 };
	ck_assert(!kimg_sparse_window(kimg_span_make(not_elf, sizeof not_elf), 64, &lo, &hi));
	fixture_free(so);
}
END_TEST

static void put_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

START_TEST(fatbin_walk_announces_large_payloads)
{
	const uint64_t big = KIMG_SPARSE_PAYLOAD_KEEP + 8, small = 64;
	uint64_t size = 8 + 16 + 64 + small + 64 + big + 8 + 16 + 64 + big;
	uint8_t *b = calloc(1, size + 64);
	uint64_t o = 8; /* zero padding first */
	/* container 1: a small and a big entry */
	put_u32(b + o, KIMG_FATBIN_MAGIC); put_u16(b + o + 4, 1); put_u16(b + o + 6, 16);
	put_u64(b + o + 8, 64 + small + 64 + big);
	uint64_t e1 = o + 16, e2 = e1 + 64 + small;
	put_u32(b + e1 + 4, 64); put_u64(b + e1 + 8, small);
	put_u32(b + e2 + 4, 64); put_u64(b + e2 + 8, big);
	o = e2 + 64 + big + 8; /* padding between containers */
	put_u32(b + o, KIMG_FATBIN_MAGIC); put_u16(b + o + 4, 1); put_u16(b + o + 6, 16); put_u64(b + o + 8, 64 + big);
	uint64_t e3 = o + 16;
	put_u32(b + e3 + 4, 64); put_u64(b + e3 + 8, big);
	struct kimg_fatbin_stream s;
	struct kimg_sparse_range d;
	kimg_fatbin_stream_begin(&s, 0, size);
	struct kimg_span all = kimg_span_make(b, size);
	ck_assert_int_eq(kimg_fatbin_stream_next(&s, all, e2 + 10, &d), 0); /* e2's header not all there */
	ck_assert_int_eq(kimg_fatbin_stream_next(&s, all, e2 + 64, &d), 1);
	ck_assert_uint_eq(d.off, e2 + 64);
	ck_assert_uint_eq(d.size, big);
	ck_assert_int_eq(kimg_fatbin_stream_next(&s, all, e3 + 64, &d), 1);
	ck_assert_uint_eq(d.off, e3 + 64);
	ck_assert_int_eq(kimg_fatbin_stream_next(&s, all, size, &d), 0);
	ck_assert(s.done);
	/* not a container: given up, nothing announced */
	memset(b, 0x11, 32);
	kimg_fatbin_stream_begin(&s, 0, size);
	ck_assert_int_eq(kimg_fatbin_stream_next(&s, all, size, &d), 0);
	ck_assert(s.done);
	free(b);
}
END_TEST

/* Wrappers put by hand: at 8-aligned offsets in and after the first
 * 32-byte block, one ending exactly at the end; a magic at an unaligned
 * offset and one whose 24 bytes pass the end are not wrappers. */
struct seen {
	struct kimg_sparse_wrapper w[8];
	unsigned n, stop_at;
};

static int note(void *ctx, const struct kimg_sparse_wrapper *w)
{
	struct seen *s = ctx;
	s->w[s->n++] = *w;
	return s->n == s->stop_at ? 7 : 0;
}

static void put(uint8_t *b, uint64_t off, uint64_t data)
{
	uint32_t m = KIMG_SPARSE_WRAPPER_MAGIC, v = 1;
	memcpy(b + off, &m, 4);
	memcpy(b + off + 4, &v, 4);
	memcpy(b + off + 8, &data, 8);
}

START_TEST(wrappers_found_at_aligned_offsets_only)
{
	uint8_t b[200];
	memset(b, 0xB1, sizeof b); /* the magic's first byte everywhere */
	put(b, 8, 0x1000);
	put(b, 52, 0x2000);  /* unaligned */
	put(b, 96, 0x3000);
	put(b, 176, 0x4000); /* ends at 200: whole */
	uint32_t m = KIMG_SPARSE_WRAPPER_MAGIC;
	memcpy(b + 192, &m, 4); /* inside the last one's data: not aligned to a whole wrapper */
	struct seen s = { .stop_at = 0 };
	ck_assert_int_eq(kimg_sparse_wrappers_scan(kimg_span_make(b, sizeof b), 4096, note, &s), 0);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_uint_eq(s.w[0].off, 4096 + 8);
	ck_assert_uint_eq(s.w[0].data, 0x1000);
	ck_assert_uint_eq(s.w[1].off, 4096 + 96);
	ck_assert_uint_eq(s.w[1].data, 0x3000);
	ck_assert_uint_eq(s.w[2].off, 4096 + 176);
	ck_assert_uint_eq(s.w[2].data, 0x4000);
	/* the last one cut short: not whole, not reported */
	struct seen t = { .stop_at = 0 };
	ck_assert_int_eq(kimg_sparse_wrappers_scan(kimg_span_make(b, 199), 0, note, &t), 0);
	ck_assert_uint_eq(t.n, 2);
	/* fn's non-zero return stops the scan */
	struct seen u = { .stop_at = 1 };
	ck_assert_int_eq(kimg_sparse_wrappers_scan(kimg_span_make(b, sizeof b), 0, note, &u), 7);
	ck_assert_uint_eq(u.n, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("elf_sparse");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, plan_of_a_shared_object);
	tcase_add_test(tc, fatbin_walk_announces_large_payloads);
	tcase_add_test(tc, wrappers_found_at_aligned_offsets_only);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
