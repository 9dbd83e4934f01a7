/* SPDX-License-Identifier: Apache-2.0 */
/* core/fatbin.c and core/extent.c against nvcc 13 output.
 * Reference: docs/format.md §4-7 (layout, flags), §9
 * (walking rules), §12 (the multi-gencode build, entry by entry). */
#include "testutil.h"

#include <string.h>

#include "fatbin.h"

#define MAX_IMAGES 32

struct images {
	struct kimg_image img[MAX_IMAGES];
	int n;
	int rc; /* last kimg_fatbin_next result: 0 at the end, <0 on error */
	struct kimg_error err;
};

/* Open the container at 0 and collect every entry. */
static int collect(struct kimg_span in, struct images *out)
{
	struct kimg_fatbin fb;
	uint64_t cursor = 0;
	int rc;
	memset(out, 0, sizeof *out);
	rc = kimg_fatbin_open(in, 0, &fb, &out->err);
	if (rc < 0)
		return rc;
	while (out->n < MAX_IMAGES && (rc = kimg_fatbin_next(&fb, &cursor, &out->img[out->n], &out->err)) == 1)
		out->n++;
	out->rc = rc;
	return 0;
}


static const char *arch_name(const struct kimg_image *img)
{
	static char buf[32];
	kimg_image_arch_name(img, buf, sizeof buf);
	return buf;
}

/* §12: the image list of the worked example, in file order, with flags. */
static const struct {
	const char *name;
	enum kimg_image_kind kind;
	uint64_t flags;
} multi_expected[] = {
	{ "sm_80", KIMG_IMAGE_SASS, 0x11 },
	{ "sm_90", KIMG_IMAGE_SASS, 0x11 },
	{ "compute_90", KIMG_IMAGE_PTX, 0x11 },
	{ "sm_90a", KIMG_IMAGE_SASS, 0x100011 },
	{ "compute_90a", KIMG_IMAGE_PTX, 0x100011 },
	{ "sm_100a", KIMG_IMAGE_SASS, 0x1100011 },
	{ "sm_100f", KIMG_IMAGE_SASS, 0x1200011 },
	{ "compute_100f", KIMG_IMAGE_PTX, 0x200011 },
	{ "sm_120", KIMG_IMAGE_SASS, 0x1000011 },
};
#define MULTI_N ((int)(sizeof multi_expected / sizeof multi_expected[0]))

START_TEST(multi_fatbin_lists_the_section12_images_in_order)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	struct images im;
	ck_assert_int_eq(collect(f, &im), 0);
	ck_assert_int_eq(im.rc, 0);
	ck_assert_int_eq(im.n, MULTI_N);
	for (int i = 0; i < MULTI_N; i++) {
		const struct kimg_image *img = &im.img[i];
		ck_assert_str_eq(arch_name(img), multi_expected[i].name);
		ck_assert_int_eq(img->kind, multi_expected[i].kind);
		ck_assert_uint_eq(img->flags, multi_expected[i].flags);
		ck_assert_int_eq(img->compression, KIMG_COMPRESS_NONE);
		ck_assert_uint_eq(img->stored_size, img->size);
		ck_assert_uint_eq(img->payload.size, img->stored_size);
		ck_assert_uint_eq(img->size % 8, 0); /* §5: size padded to 8 */
		ck_assert_uint_eq(img->identifier.size, 0);
		if (img->kind == KIMG_IMAGE_SASS) {
			/* payload is the cubin: ELF magic, EM_CUDA */
			ck_assert_mem_eq(img->payload.data, "\177ELF", 4);
			ck_assert_uint_eq(img->payload.data[18], 190);
			ck_assert_uint_eq(img->ptx_isa, 0);
		} else {
			/* §11: ISA from the header; the text agrees */
			ck_assert_uint_eq(img->ptx_isa, KIMG_ISA(9, 0));
			ck_assert_ptr_nonnull(memmem(img->payload.data, img->payload.size, ".version 9.0", 12));
		}
	}
	/* the PTX .target lines carry the suffix too (§11) */
	ck_assert_ptr_nonnull(memmem(im.img[4].payload.data, im.img[4].payload.size, ".target sm_90a", 14));
	ck_assert_ptr_nonnull(memmem(im.img[7].payload.data, im.img[7].payload.size, ".target sm_100f", 15));
	/* §5: the first entry starts right after the 16-byte header; each next
	 * one at entry + header_size + size */
	ck_assert_uint_eq(im.img[0].offset, 16);
	ck_assert_ptr_eq(im.img[0].payload.data, f.data + 16 + 64);
	ck_assert_uint_eq(im.img[8].offset + 64 + 36 + 12 /* pad to 112 */ + im.img[8].size, f.size);
	/* §5.1: sm_100+ cubin entries carry a 36-byte binary options blob */
	ck_assert_uint_eq(im.img[5].options.size, 36);
	fixture_free(f);
}
END_TEST

START_TEST(container_open_reports_version_header_and_exact_extent)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	struct kimg_fatbin fb;
	ck_assert_int_eq(kimg_fatbin_open(f, 0, &fb, NULL), 0);
	ck_assert_uint_eq(fb.version, 1);
	ck_assert_uint_eq(fb.header_size, 16);
	ck_assert_uint_eq(fb.offset, 0);
	ck_assert_uint_eq(fb.bytes.size, f.size);
	ck_assert_ptr_eq(fb.bytes.data, f.data);
	fixture_free(f);
}
END_TEST

/* §6 table: compression per nvcc mode, per entry (sm_90 cubin, compute_90 PTX). */
static const struct {
	const char *file;
	enum kimg_compression cubin, ptx;
} compress_expected[] = {
	{ "compress_none.fatbin", KIMG_COMPRESS_NONE, KIMG_COMPRESS_NONE },
	{ "compress_speed.fatbin", KIMG_COMPRESS_NONE, KIMG_COMPRESS_LZ4 },
	{ "compress_balance.fatbin", KIMG_COMPRESS_NONE, KIMG_COMPRESS_ZSTD },
	{ "compress_size.fatbin", KIMG_COMPRESS_ZSTD, KIMG_COMPRESS_ZSTD },
};

START_TEST(compression_is_read_per_entry_from_the_flags)
{
	struct kimg_span f = fixture_load(compress_expected[_i].file);
	struct kimg_span none = fixture_load("compress_none.fatbin");
	struct images im, ref;
	ck_assert_int_eq(collect(f, &im), 0);
	ck_assert_int_eq(collect(none, &ref), 0);
	ck_assert_int_eq(im.n, 2);
	ck_assert_str_eq(arch_name(&im.img[0]), "sm_90");
	ck_assert_str_eq(arch_name(&im.img[1]), "compute_90");
	ck_assert_int_eq(im.img[0].compression, compress_expected[_i].cubin);
	ck_assert_int_eq(im.img[1].compression, compress_expected[_i].ptx);
	for (int i = 0; i < 2; i++) {
		const struct kimg_image *img = &im.img[i];
		/* the declared plain size equals the raw build's size */
		ck_assert_uint_eq(img->size, ref.img[i].size);
		if (img->compression == KIMG_COMPRESS_NONE) {
			ck_assert_uint_eq(img->stored_size, img->size);
		} else {
			ck_assert_uint_lt(img->stored_size, img->size);
			/* §5: size field = compressed_size rounded up to 8 */
			ck_assert_uint_eq(img->payload.size, img->stored_size);
		}
		if (img->compression == KIMG_COMPRESS_ZSTD)
			ck_assert_mem_eq(img->payload.data, "\x28\xb5\x2f\xfd", 4);
	}
	fixture_free(f);
	fixture_free(none);
}
END_TEST

START_TEST(lineinfo_entries_carry_the_source_identifier_and_ptx_options)
{
	struct kimg_span f = fixture_load("lineinfo.fatbin");
	struct images im;
	static const char id[] = "tests/fixtures/src/kern.cu";
	ck_assert_int_eq(collect(f, &im), 0);
	ck_assert_int_eq(im.n, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(im.img[i].identifier.size, strlen(id));
		ck_assert_mem_eq(im.img[i].identifier.data, id, strlen(id));
	}
	ck_assert_uint_eq(im.img[1].options.size, strlen(" --generate-line-info "));
	ck_assert_mem_eq(im.img[1].options.data, " --generate-line-info ", im.img[1].options.size);
	fixture_free(f);
}
END_TEST

static uint32_t get_le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

/* §5.1: a string may end exactly at header_size; one byte more is outside.
 * Entry 0 (at offset 16) gets 16 bytes of text at the end of its header:
 * the identifier is the last 8, the options all 16 (their descriptor sits in
 * the unused word at 0x30). */
START_TEST(tail_strings_may_end_exactly_at_the_header_end)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	uint8_t *p = copy_of(f), *ent = p + 16;
	uint32_t hs = get_le32(ent + 4);
	struct kimg_span s = kimg_span_make(p, f.size);
	struct kimg_fatbin fb;
	struct kimg_image img;
	struct kimg_error e = { 0, 0, "" };
	uint64_t cursor = 0;

	ck_assert_uint_ge(hs, 64);
	memcpy(ent + hs - 16, "0123456789abcdef", 16);
	put_le32(ent + 0x20, hs - 8); /* identifier [hs-8, hs) */
	put_le32(ent + 0x24, 8);
	put_le32(ent + 0x14, 0x30); /* options descriptor at 0x30 ... */
	put_le32(ent + 0x30, hs - 16); /* ... naming options [hs-16, hs) */
	put_le32(ent + 0x34, 16);
	ck_assert_int_eq(kimg_fatbin_open(s, 0, &fb, NULL), 0);
	ck_assert_int_eq(kimg_fatbin_next(&fb, &cursor, &img, &e), 1);
	ck_assert_ptr_eq(img.identifier.data, ent + hs - 8);
	ck_assert_uint_eq(img.identifier.size, 8);
	ck_assert_ptr_eq(img.options.data, ent + hs - 16);
	ck_assert_uint_eq(img.options.size, 16);

	put_le32(ent + 0x24, 9); /* identifier one byte past the header */
	cursor = 0;
	ck_assert_int_eq(kimg_fatbin_next(&fb, &cursor, &img, &e), -KIMG_EFORMAT);
	put_le32(ent + 0x24, 8);
	put_le32(ent + 0x34, 17); /* options one byte past the header */
	cursor = 0;
	ck_assert_int_eq(kimg_fatbin_next(&fb, &cursor, &img, &e), -KIMG_EFORMAT);
	put_le32(ent + 0x34, 16);
	put_le32(ent + 0x14, hs - 8); /* the descriptor itself in the last 8 bytes */
	memcpy(ent + hs - 8, ent + 0x30, 8);
	cursor = 0;
	ck_assert_int_eq(kimg_fatbin_next(&fb, &cursor, &img, &e), 1);
	ck_assert_uint_eq(img.options.size, 16);
	free(p);
	fixture_free(f);
}
END_TEST

/* §7: flags with both the `a` (0x100000) and `f` (0x200000) bits read as
 * `a`, the narrower claim; each bit alone gives its own suffix. */
START_TEST(arch_specific_wins_over_family_specific)
{
	static const struct { uint64_t flags; enum kimg_arch_variant v; const char *name; } cases[] = {
		{ 0x300011, KIMG_VARIANT_A, "sm_80a" },
		{ 0x100011, KIMG_VARIANT_A, "sm_80a" },
		{ 0x200011, KIMG_VARIANT_F, "sm_80f" },
		{ 0x000011, KIMG_VARIANT_PLAIN, "sm_80" },
	};
	struct kimg_span f = fixture_load("multi.fatbin");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t *p = copy_of(f);
		struct images im;
		put_le64(p + 16 + 0x28, cases[i].flags);
		ck_assert_int_eq(collect(kimg_span_make(p, f.size), &im), 0);
		ck_assert_int_eq(im.img[0].arch.variant, cases[i].v);
		ck_assert_str_eq(arch_name(&im.img[0]), cases[i].name);
		free(p);
	}
	fixture_free(f);
}
END_TEST

/* Every proper prefix of a container declares more than it holds (§9). */
START_TEST(truncated_containers_are_etrunc_at_every_cut)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	for (uint64_t cut = 0; cut < f.size; cut += (cut < 128 ? 1 : 97)) {
		struct kimg_fatbin fb;
		struct kimg_error e = { 0, 0, "" };
		ck_assert_int_eq(kimg_fatbin_open(kimg_span_make(f.data, cut), 0, &fb, &e), -KIMG_ETRUNC);
		ck_assert_int_eq(e.code, -KIMG_ETRUNC);
	}
	fixture_free(f);
}
END_TEST

START_TEST(container_header_checks_have_exact_codes)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	uint8_t *p = copy_of(f);
	struct kimg_span s = kimg_span_make(p, f.size);
	struct kimg_fatbin fb;
	struct kimg_error e;

	put_le32(p, 0x12345678);
	ck_assert_int_eq(kimg_fatbin_open(s, 0, &fb, &e), -KIMG_EFORMAT);
	put_le32(p, 0x1EE55A01); /* §4: pre-4.0 format */
	ck_assert_int_eq(kimg_fatbin_open(s, 0, &fb, &e), -KIMG_ENOTSUP);
	put_le32(p, KIMG_FATBIN_MAGIC);
	put_le16(p + 4, 2);
	ck_assert_int_eq(kimg_fatbin_open(s, 0, &fb, &e), -KIMG_EFORMAT);
	put_le16(p + 4, 1);
	put_le16(p + 6, 8);
	ck_assert_int_eq(kimg_fatbin_open(s, 0, &fb, &e), -KIMG_EFORMAT);
	put_le16(p + 6, 20); /* not a multiple of 8 */
	ck_assert_int_eq(kimg_fatbin_open(s, 0, &fb, &e), -KIMG_EFORMAT);
	put_le16(p + 6, 16);
	put_le64(p + 8, UINT64_MAX - 8); /* would wrap off + 16 + fatSize */
	ck_assert_int_eq(kimg_fatbin_open(s, 0, &fb, &e), -KIMG_ETRUNC);
	ck_assert_uint_eq(e.offset, 0);
	put_le64(p + 8, f.size - 16);
	ck_assert_int_eq(kimg_fatbin_open(s, 0, &fb, &e), 0);
	/* open at an offset past the end */
	ck_assert_int_eq(kimg_fatbin_open(s, f.size + 10, &fb, &e), -KIMG_ETRUNC);
	ck_assert_int_eq(kimg_fatbin_open(s, UINT64_MAX, &fb, &e), -KIMG_ETRUNC);
	free(p);
	fixture_free(f);
}
END_TEST

/* One corruption of entry 0 (header at container offset 16) and the code
 * kimg_fatbin_next must return for it. */
static const struct {
	const char *what;
	unsigned field, width;
	uint64_t value;
	int rc;
} entry_corruptions[] = {
	{ "header_size < 64", 0x04, 4, 63, -KIMG_EFORMAT },
	{ "header_size 0", 0x04, 4, 0, -KIMG_EFORMAT },
	{ "header_size huge", 0x04, 4, 0xFFFFFFF8u, -KIMG_EFORMAT },
	{ "kind 0", 0x00, 2, 0, -KIMG_EFORMAT },
	{ "format version", 0x02, 2, 0x0102, -KIMG_EFORMAT },
	{ "size past container", 0x08, 8, 1u << 30, -KIMG_EFORMAT },
	{ "size wraps", 0x08, 8, UINT64_MAX - 32, -KIMG_EFORMAT },
	{ "identifier past header", 0x20, 4, 60, -KIMG_EFORMAT },
	{ "options descriptor past header", 0x14, 4, 60, -KIMG_EFORMAT },
	{ "compressed_size > size with zstd flag", 0x28, 8, 0x8011, -KIMG_EFORMAT },
};

START_TEST(entry_header_corruptions_have_exact_codes)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	uint8_t *p = copy_of(f);
	uint8_t *ent = p + 16;
	struct kimg_span s = kimg_span_make(p, f.size);
	struct kimg_fatbin fb;
	struct kimg_image img;
	struct kimg_error e = { 0, 0, "" };
	uint64_t cursor = 0;

	switch (entry_corruptions[_i].width) {
	case 2: put_le16(ent + entry_corruptions[_i].field, (uint16_t)entry_corruptions[_i].value); break;
	case 4: put_le32(ent + entry_corruptions[_i].field, (uint32_t)entry_corruptions[_i].value); break;
	default: put_le64(ent + entry_corruptions[_i].field, entry_corruptions[_i].value); break;
	}
	if (entry_corruptions[_i].field == 0x20)
		put_le32(ent + 0x24, 8); /* [60, 68) passes the 64-byte header */
	if (entry_corruptions[_i].field == 0x28)
		put_le32(ent + 0x10, (uint32_t)-1); /* compressed_size > size */
	ck_assert_int_eq(kimg_fatbin_open(s, 0, &fb, NULL), 0);
	ck_assert_msg(kimg_fatbin_next(&fb, &cursor, &img, &e) == entry_corruptions[_i].rc, "%s",
		      entry_corruptions[_i].what);
	ck_assert_int_eq(e.code, entry_corruptions[_i].rc);
	ck_assert_uint_eq(e.offset, 16);
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(unknown_entry_kinds_are_reported_not_rejected)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	uint8_t *p = copy_of(f);
	struct images im;
	put_le16(p + 16, 4); /* §5: kind 4, obsolete pre-ELF cubin */
	ck_assert_int_eq(collect(kimg_span_make(p, f.size), &im), 0);
	ck_assert_int_eq(im.n, MULTI_N);
	ck_assert_int_eq(im.img[0].kind, KIMG_IMAGE_UNKNOWN);
	ck_assert_str_eq(kimg_image_kind_name(im.img[0].kind), "unknown");
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(a_short_fatsize_stops_at_the_entry_that_overruns)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	uint8_t *p = copy_of(f);
	struct images im;
	put_le64(p + 8, f.size - 16 - 8); /* last entry now passes the end */
	ck_assert_int_eq(collect(kimg_span_make(p, f.size - 8), &im), 0);
	ck_assert_int_eq(im.n, MULTI_N - 1);
	ck_assert_int_eq(im.rc, -KIMG_EFORMAT);
	ck_assert_uint_eq(im.err.offset, 50096); /* the sm_120 entry (§12 order) */
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(fewer_than_64_trailing_bytes_end_the_container)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	uint8_t *p = calloc(1, f.size + 40);
	struct images im;
	memcpy(p, f.data, f.size);
	put_le64(p + 8, f.size - 16 + 40); /* 40 bytes of zeros inside the container */
	ck_assert_int_eq(collect(kimg_span_make(p, f.size + 40), &im), 0);
	ck_assert_int_eq(im.rc, 0);
	ck_assert_int_eq(im.n, MULTI_N);
	free(p);
	fixture_free(f);
}
END_TEST

START_TEST(image_names_cover_every_kind_and_compression)
{
	struct kimg_image img = { .kind = KIMG_IMAGE_LTOIR, .arch = { 90, KIMG_VARIANT_PLAIN } };
	char buf[32];
	ck_assert_int_eq(kimg_image_arch_name(&img, buf, sizeof buf), 6);
	ck_assert_str_eq(buf, "lto_90");
	ck_assert_str_eq(kimg_image_kind_name(KIMG_IMAGE_SASS), "sass");
	ck_assert_str_eq(kimg_image_kind_name(KIMG_IMAGE_PTX), "ptx");
	ck_assert_str_eq(kimg_image_kind_name(KIMG_IMAGE_LTOIR), "ltoir");
	ck_assert_str_eq(kimg_image_kind_name((enum kimg_image_kind)99), "unknown");
	ck_assert_ptr_null(kimg_compression_name(KIMG_COMPRESS_NONE));
	ck_assert_str_eq(kimg_compression_name(KIMG_COMPRESS_LZ4), "lz4");
	ck_assert_str_eq(kimg_compression_name(KIMG_COMPRESS_ZSTD), "zstd");
	ck_assert_str_eq(kimg_compression_name(KIMG_COMPRESS_LEGACY), "legacy");
}
END_TEST

/* kimg_memory_image_extent: images handed over as bare pointers. */
START_TEST(extent_of_a_container_cubin_and_ptx_is_exact)
{
	struct kimg_span fat = fixture_load("multi.fatbin");
	struct kimg_span cub = fixture_load("sm80.cubin");
	struct kimg_span big = fixture_load("sm100f.cubin");
	struct kimg_span ptx = fixture_load("compute80.ptx");
	uint8_t *buf = calloc(1, 1 << 20);
	const void *t;
	uint64_t n;

	/* inside a larger buffer, as in memory */
	memcpy(buf, fat.data, fat.size);
	ck_assert_int_eq(kimg_memory_image_extent(buf, 1 << 20, &t, &n, NULL), 0);
	ck_assert_ptr_eq(t, buf);
	ck_assert_uint_eq(n, fat.size);
	memset(buf, 0, 1 << 20);
	memcpy(buf, cub.data, cub.size);
	ck_assert_int_eq(kimg_memory_image_extent(buf, 1 << 20, &t, &n, NULL), 0);
	ck_assert_uint_eq(n, cub.size);
	memcpy(buf, big.data, big.size);
	ck_assert_int_eq(kimg_memory_image_extent(buf, 1 << 20, &t, &n, NULL), 0);
	ck_assert_uint_eq(n, big.size);
	memset(buf, 0, 1 << 20);
	memcpy(buf, ptx.data, ptx.size);
	ck_assert_int_eq(kimg_memory_image_extent(buf, 1 << 20, &t, &n, NULL), 0);
	ck_assert_uint_eq(n, strlen((const char *)buf));
	ck_assert_uint_eq(n, ptx.size);
	free(buf);
	fixture_free(fat);
	fixture_free(cub);
	fixture_free(big);
	fixture_free(ptx);
}
END_TEST

START_TEST(extent_follows_a_wrapper_to_its_container)
{
	struct kimg_span fat = fixture_load("multi.fatbin");
	uint8_t wrapper[24] = { 0 };
	const void *t = NULL;
	uint64_t n = 0;
	put_le32(wrapper, KIMG_FATBIN_WRAPPER_MAGIC);
	put_le32(wrapper + 4, 1);
	put_le64(wrapper + 8, (uint64_t)(uintptr_t)fat.data);
	ck_assert_int_eq(kimg_memory_image_extent(wrapper, fat.size, &t, &n, NULL), 0);
	ck_assert_ptr_eq(t, fat.data);
	ck_assert_uint_eq(n, fat.size);
	/* a null container address */
	put_le64(wrapper + 8, 0);
	ck_assert_int_eq(kimg_memory_image_extent(wrapper, fat.size, &t, &n, NULL), -KIMG_EFORMAT);
	put_le64(wrapper + 8, (uint64_t)(uintptr_t)fat.data);
	put_le32(wrapper + 4, 7);
	ck_assert_int_eq(kimg_memory_image_extent(wrapper, fat.size, &t, &n, NULL), -KIMG_EFORMAT);
	/* the wrapper itself past the limit */
	put_le32(wrapper + 4, 2);
	ck_assert_int_eq(kimg_memory_image_extent(wrapper, 20, &t, &n, NULL), -KIMG_ETRUNC);
	fixture_free(fat);
}
END_TEST

START_TEST(extent_errors_have_exact_codes)
{
	struct kimg_span fat = fixture_load("multi.fatbin");
	struct kimg_span cub = fixture_load("sm80.cubin");
	uint8_t *c = copy_of(cub);
	const void *t;
	uint64_t n;
	struct kimg_error e;
	static const char garbage[] = "hello world, no directives here";
	static const char unterminated[8] = { '.', 't', 'a', 'r', 'g', 'e', 't', ' ' };

	ck_assert_int_eq(kimg_memory_image_extent(fat.data, fat.size - 1, &t, &n, &e), -KIMG_ETRUNC);
	ck_assert_int_eq(kimg_memory_image_extent(cub.data, cub.size - 1, &t, &n, &e), -KIMG_ETRUNC);
	ck_assert_int_eq(kimg_memory_image_extent(cub.data, 40, &t, &n, &e), -KIMG_ETRUNC);
	ck_assert_int_eq(kimg_memory_image_extent(garbage, sizeof garbage, &t, &n, &e), -KIMG_EUNKNOWN);
	ck_assert_int_eq(kimg_memory_image_extent(unterminated, sizeof unterminated, &t, &n, &e), -KIMG_ELIMIT);
	ck_assert_int_eq(kimg_memory_image_extent(garbage, 3, &t, &n, &e), -KIMG_ETRUNC);
	ck_assert_int_eq(kimg_memory_image_extent(NULL, 100, &t, &n, &e), -KIMG_ETRUNC);
	c[4] = 1; /* ELFCLASS32 */
	ck_assert_int_eq(kimg_memory_image_extent(c, cub.size, &t, &n, &e), -KIMG_ENOTSUP);
	c[4] = 2;
	put_le64(c + 0x28, UINT64_MAX - 10); /* e_shoff wraps */
	ck_assert_int_eq(kimg_memory_image_extent(c, cub.size, &t, &n, &e), -KIMG_ETRUNC);
	free(c);
	fixture_free(fat);
	fixture_free(cub);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fatbin");
	TCase *tc = tcase_create("fixtures");
	tcase_add_test(tc, multi_fatbin_lists_the_section12_images_in_order);
	tcase_add_test(tc, container_open_reports_version_header_and_exact_extent);
	tcase_add_loop_test(tc, compression_is_read_per_entry_from_the_flags, 0,
			    sizeof compress_expected / sizeof compress_expected[0]);
	tcase_add_test(tc, lineinfo_entries_carry_the_source_identifier_and_ptx_options);
	tcase_add_test(tc, image_names_cover_every_kind_and_compression);
	suite_add_tcase(s, tc);
	tc = tcase_create("malformed");
	tcase_add_test(tc, truncated_containers_are_etrunc_at_every_cut);
	tcase_add_test(tc, container_header_checks_have_exact_codes);
	tcase_add_loop_test(tc, entry_header_corruptions_have_exact_codes, 0,
			    sizeof entry_corruptions / sizeof entry_corruptions[0]);
	tcase_add_test(tc, unknown_entry_kinds_are_reported_not_rejected);
	tcase_add_test(tc, a_short_fatsize_stops_at_the_entry_that_overruns);
	tcase_add_test(tc, fewer_than_64_trailing_bytes_end_the_container);
	tcase_add_test(tc, tail_strings_may_end_exactly_at_the_header_end);
	tcase_add_test(tc, arch_specific_wins_over_family_specific);
	suite_add_tcase(s, tc);
	tc = tcase_create("extent");
	tcase_add_test(tc, extent_of_a_container_cubin_and_ptx_is_exact);
	tcase_add_test(tc, extent_follows_a_wrapper_to_its_container);
	tcase_add_test(tc, extent_errors_have_exact_codes);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
