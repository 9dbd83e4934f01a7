/* SPDX-License-Identifier: Apache-2.0 */
/* A module's images (module_images.h): fatbin entries through
 * kimg_fatbin_open/next, a raw cubin or PTX text as one image. */
#include "module_images.h"

#include <string.h>

#include "cubin.h"
#include "fatbin.h"
#include "ptx.h"

static int raw_image(const struct kimg_module_ref *m, struct kimg_image *img, enum kimg_module_step *step,
		     struct kimg_error *err)
{
	memset(img, 0, sizeof *img);
	img->payload = m->bytes;
	img->stored_size = img->size = m->bytes.size;
	if (m->kind == KIMG_INPUT_CUBIN) {
		struct kimg_cubin_info ci;
		int rc = kimg_cubin_parse(m->bytes, &ci, err);
		if (rc < 0) {
			*step = KIMG_MODULE_CUBIN;
			return rc;
		}
		img->kind = KIMG_IMAGE_SASS;
		img->arch.sm = ci.sm;
		/* a raw cubin has no fatbin entry flags; ABI V1 still marks sm_90a */
		img->arch.variant = ci.sm_a_v1 ? KIMG_VARIANT_A : KIMG_VARIANT_PLAIN;
		return 0;
	}
	struct kimg_ptx_info pi;
	int rc = kimg_ptx_parse(m->bytes, &pi, err);
	if (rc < 0) {
		*step = KIMG_MODULE_PTX;
		return rc;
	}
	img->kind = KIMG_IMAGE_PTX;
	img->arch = pi.target;
	img->ptx_isa = pi.isa;
	return 0;
}

int kimg_module_images(const struct kimg_module_ref *m, kimg_module_image_fn on_image, void *ctx,
		       enum kimg_module_step *step, struct kimg_error *err)
{
	return kimg_module_images_ex(m, NULL, on_image, ctx, step, err);
}

int kimg_module_images_ex(const struct kimg_module_ref *m, kimg_module_header_fn before_header,
			  kimg_module_image_fn on_image, void *ctx, enum kimg_module_step *step,
			  struct kimg_error *err)
{
	struct kimg_image img;
	enum kimg_module_step unused;
	if (!step)
		step = &unused;
	if (m->kind != KIMG_INPUT_FATBIN) {
		int rc = raw_image(m, &img, step, err);
		return rc < 0 ? rc : on_image(ctx, &img);
	}
	struct kimg_fatbin fb;
	int rc = kimg_fatbin_open(m->bytes, 0, &fb, err);
	if (rc < 0) {
		*step = KIMG_MODULE_CONTAINER;
		return rc;
	}
	uint64_t cursor = 0;
	for (;;) {
		if (before_header)
			before_header(ctx, fb.bytes, cursor);
		if ((rc = kimg_fatbin_next(&fb, &cursor, &img, err)) <= 0)
			break;
		int stop = on_image(ctx, &img);
		if (stop)
			return stop;
	}
	if (rc < 0)
		*step = KIMG_MODULE_ENTRY;
	return rc;
}
