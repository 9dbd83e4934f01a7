/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of kimg_module_images (core/module_images.c), the one
 * module-to-images reading of kimg-probe and libkimg.so: the images of a
 * fatbin module in file order (the nvcc-built multi.fatbin, whose 9 entries
 * docs/format.md section 12 lists), a raw cubin and raw PTX as one image
 * each, the caller stopping the walk, and which read failed on bad input. */
#include <stdlib.h>
#include <string.h>

#include "module_images.h"
#include "testutil.h"

#define MAX_SEEN 16
struct seen {
	struct kimg_image img[MAX_SEEN];
	int n;
	int stop_at; /* return 7 when the image with this index arrives; -1 never */
};

static int on_image(void *ctx, const struct kimg_image *img)
{
	struct seen *s = ctx;
	if (s->n < MAX_SEEN)
		s->img[s->n] = *img;
	s->n++;
	return s->n - 1 == s->stop_at ? 7 : 0;
}

static struct kimg_module_ref ref(enum kimg_input_kind kind, struct kimg_span bytes)
{
	struct kimg_module_ref r = { kind, KIMG_ORIGIN_RAW, bytes, 0, NULL, NULL };
	return r;
}

static void arch(const struct kimg_image *img, char *buf, size_t size)
{
	kimg_image_arch_name(img, buf, size);
}

struct headers {
	uint64_t at[MAX_SEEN];
	int n;
	struct kimg_span container;
	struct seen *images;
	int images_before[MAX_SEEN]; /* images handed over when header i was announced */
};

static void before_header(void *ctx, struct kimg_span container, uint64_t at)
{
	struct headers *h = ctx;
	if (h->n < MAX_SEEN) {
		h->at[h->n] = at;
		h->images_before[h->n] = h->images->n;
	}
	h->n++;
	h->container = container;
}

static int on_image_h(void *ctx, const struct kimg_image *img)
{
	struct headers *h = ctx;
	return on_image(h->images, img);
}

START_TEST(before_header_announces_each_entry_header_before_it_is_read)
{
	/* The probe asks the kernel ahead for each header from this hook:
	 * it must come before each of the 9 entries, at the walk's cursor (0
	 * for the first, then the entry header's offset in the container,
	 * which is the image's offset), and once more before the read that
	 * finds the end. */
	struct kimg_span f = fixture_load("multi.fatbin");
	struct seen s = { .stop_at = -1 };
	struct headers h = { .images = &s };
	struct kimg_error err = { 0, 0, "" };
	struct kimg_module_ref m = ref(KIMG_INPUT_FATBIN, f);
	ck_assert_int_eq(kimg_module_images_ex(&m, before_header, on_image_h, &h, NULL, &err), 0);
	ck_assert_int_eq(s.n, 9);
	ck_assert_int_eq(h.n, 10);
	for (int i = 0; i < 9; i++) {
		ck_assert_int_eq(h.images_before[i], i);
		ck_assert_uint_eq(h.at[i], i == 0 ? 0 : s.img[i].offset);
	}
	ck_assert_uint_gt(h.at[9], s.img[8].offset);
	ck_assert_ptr_eq(h.container.data, f.data);
	/* raw inputs have no entry headers */
	struct kimg_span c = fixture_load("sm80.cubin");
	struct headers hc = { .images = &s };
	s.n = 0;
	m = ref(KIMG_INPUT_CUBIN, c);
	ck_assert_int_eq(kimg_module_images_ex(&m, before_header, on_image_h, &hc, NULL, &err), 0);
	ck_assert_int_eq(hc.n, 0);
	ck_assert_int_eq(s.n, 1);
	fixture_free(c);
	fixture_free(f);
}
END_TEST

START_TEST(fatbin_module_gives_the_section12_images_in_order)
{
	static const char *const expected[] = { "sm_80",   "sm_90",   "compute_90", "sm_90a", "compute_90a",
						"sm_100a", "sm_100f", "compute_100f", "sm_120" };
	struct kimg_span f = fixture_load("multi.fatbin");
	struct seen s = { .stop_at = -1 };
	enum kimg_module_step step = KIMG_MODULE_PTX;
	struct kimg_error err = { 0, 0, "" };
	struct kimg_module_ref m = ref(KIMG_INPUT_FATBIN, f);
	ck_assert_int_eq(kimg_module_images(&m, on_image, &s, &step, &err), 0);
	ck_assert_int_eq(s.n, 9);
	for (int i = 0; i < 9; i++) {
		char name[32];
		arch(&s.img[i], name, sizeof name);
		ck_assert_str_eq(name, expected[i]);
		ck_assert_int_eq(s.img[i].kind, strncmp(expected[i], "sm_", 3) == 0 ? KIMG_IMAGE_SASS : KIMG_IMAGE_PTX);
		/* the payload lies inside the module's bytes */
		ck_assert(s.img[i].payload.data >= f.data && s.img[i].payload.data + s.img[i].payload.size <= f.data + f.size);
	}
	/* docs/format.md §5: the first entry follows the 16-byte container header */
	ck_assert_uint_eq(s.img[0].offset, 16);
	fixture_free(f);
}
END_TEST

START_TEST(raw_cubin_and_ptx_are_one_image_each)
{
	struct kimg_span c = fixture_load("sm120.cubin");
	struct seen s = { .stop_at = -1 };
	struct kimg_error err = { 0, 0, "" };
	struct kimg_module_ref m = ref(KIMG_INPUT_CUBIN, c);
	ck_assert_int_eq(kimg_module_images(&m, on_image, &s, NULL, &err), 0);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.img[0].kind, KIMG_IMAGE_SASS);
	ck_assert_uint_eq(s.img[0].arch.sm, 120);
	ck_assert_uint_eq(s.img[0].offset, 0);
	ck_assert_uint_eq(s.img[0].size, c.size);
	ck_assert_uint_eq(s.img[0].stored_size, c.size);
	ck_assert_ptr_eq(s.img[0].payload.data, c.data);
	fixture_free(c);

	struct kimg_span p = fixture_load("compute80.ptx");
	s.n = 0;
	m = ref(KIMG_INPUT_PTX, p);
	ck_assert_int_eq(kimg_module_images(&m, on_image, &s, NULL, &err), 0);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.img[0].kind, KIMG_IMAGE_PTX);
	ck_assert_uint_eq(s.img[0].arch.sm, 80);
	ck_assert_uint_eq(s.img[0].ptx_isa, KIMG_ISA(9, 0)); /* nvcc 13 stamps its own ISA */
	ck_assert_uint_eq(s.img[0].size, p.size);
	fixture_free(p);
}
END_TEST

START_TEST(the_callback_stops_the_walk)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	struct seen s = { .stop_at = 2 };
	struct kimg_error err = { 0, 0, "" };
	struct kimg_module_ref m = ref(KIMG_INPUT_FATBIN, f);
	ck_assert_int_eq(kimg_module_images(&m, on_image, &s, NULL, &err), 7);
	ck_assert_int_eq(s.n, 3);
	fixture_free(f);
}
END_TEST

START_TEST(each_failed_read_is_named)
{
	struct kimg_span f = fixture_load("multi.fatbin");
	struct seen s = { .stop_at = -1 };
	enum kimg_module_step step;
	struct kimg_error err = { 0, 0, "" };

	/* a cut container: its header says it is longer */
	struct kimg_module_ref m = ref(KIMG_INPUT_FATBIN, kimg_span_make(f.data, 100));
	ck_assert_int_eq(kimg_module_images(&m, on_image, &s, &step, &err), -KIMG_ETRUNC);
	ck_assert_int_eq(step, KIMG_MODULE_CONTAINER);
	ck_assert_int_eq(s.n, 0);

	/* the second entry's header size runs past the container: the first
	 * image has been handed over */
	uint8_t *p = copy_of(f);
	struct kimg_module_ref whole = ref(KIMG_INPUT_FATBIN, f);
	struct seen first = { .stop_at = 0 };
	ck_assert_int_eq(kimg_module_images(&whole, on_image, &first, NULL, &err), 7);
	uint64_t second = first.img[0].offset + 64 + first.img[0].size; /* §5 */
	put_le32(p + second + 4, 0xfffffff0u);
	m = ref(KIMG_INPUT_FATBIN, kimg_span_make(p, f.size));
	s.n = 0;
	ck_assert_int_lt(kimg_module_images(&m, on_image, &s, &step, &err), 0);
	ck_assert_int_eq(step, KIMG_MODULE_ENTRY);
	ck_assert_int_eq(s.n, 1);
	free(p);

	/* not a cubin; PTX whose .version is not MAJOR.MINOR */
	static const char junk[] = "\177ELF this is not a cubin at all, only a few bytes";
	m = ref(KIMG_INPUT_CUBIN, kimg_span_make(junk, sizeof junk));
	s.n = 0;
	ck_assert_int_lt(kimg_module_images(&m, on_image, &s, &step, &err), 0);
	ck_assert_int_eq(step, KIMG_MODULE_CUBIN);
	ck_assert_int_eq(s.n, 0);
	m = ref(KIMG_INPUT_PTX, str_span(".version x.y\n"));
	ck_assert_int_lt(kimg_module_images(&m, on_image, &s, &step, &err), 0);
	ck_assert_int_eq(step, KIMG_MODULE_PTX);
	ck_assert_int_eq(s.n, 0);
	fixture_free(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("module_images");
	TCase *tc = tcase_create("images");
	tcase_add_test(tc, fatbin_module_gives_the_section12_images_in_order);
	tcase_add_test(tc, before_header_announces_each_entry_header_before_it_is_read);
	tcase_add_test(tc, raw_cubin_and_ptx_are_one_image_each);
	tcase_add_test(tc, the_callback_stops_the_walk);
	tcase_add_test(tc, each_failed_read_is_named);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
