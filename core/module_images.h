/* SPDX-License-Identifier: Apache-2.0 */
/* A module's images: the one reading of libkimg.so (shim/diag/module_read.c,
 * for its reports and its load checks) and kimg-probe (probe/collect.c, which asks the
 * kernel ahead for each header through before_header). A module found
 * by kimg_input_for_each_module is a fatbin container (one image per entry
 * header) or a raw cubin or PTX text (one image). Pure: no allocation, the
 * images' spans point into the module's bytes. */
#ifndef KIMG_MODULE_IMAGES_H
#define KIMG_MODULE_IMAGES_H

#include "error.h"
#include "image.h"
#include "input.h"

/* What failed, for the caller's message. */
enum kimg_module_step {
	KIMG_MODULE_CONTAINER = 0, /* the fatbin container header (kimg_fatbin_open) */
	KIMG_MODULE_ENTRY,         /* an entry header (kimg_fatbin_next) */
	KIMG_MODULE_CUBIN,         /* the raw cubin (kimg_cubin_parse) */
	KIMG_MODULE_PTX,           /* the raw PTX text (kimg_ptx_parse) */
};

/* Called once per image in file order; 0 goes on, any other value stops
 * the walk and is returned. img->offset is relative to the module (0 for
 * a raw image). */
typedef int (*kimg_module_image_fn)(void *ctx, const struct kimg_image *img);

/* Hand every image of module m to on_image. A module of another kind than
 * fatbin or cubin is read as PTX text. Returns 0 when every image was
 * handed over; on_image's non-zero value; or a negative error, with *step
 * saying which read failed and err filled in (images before a bad fatbin
 * entry have been handed over). */
int kimg_module_images(const struct kimg_module_ref *m, kimg_module_image_fn on_image, void *ctx,
		       enum kimg_module_step *step, struct kimg_error *err);

/* Called before each fatbin entry header is read, with the container's
 * bytes and the header's offset in them. */
typedef void (*kimg_module_header_fn)(void *ctx, struct kimg_span container, uint64_t at);

/* kimg_module_images with before_header (NULL: none). */
int kimg_module_images_ex(const struct kimg_module_ref *m, kimg_module_header_fn before_header,
			  kimg_module_image_fn on_image, void *ctx, enum kimg_module_step *step,
			  struct kimg_error *err);

#endif
