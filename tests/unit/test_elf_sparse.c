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

int main(void)
{
	Suite *s = suite_create("elf_sparse");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, plan_of_a_shared_object);
	tcase_add_test(tc, fatbin_walk_announces_large_payloads);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
