/* Reading payloads, which the probe does only on request (--kernels) or to
 * tell a device-link stub from a real module in `check`. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "codecs.h"
#include "cubin.h"
#include "payload.h"
#include "probe.h"
#include "ptx.h"

/* Largest payload decompressed into memory ($KIMG_PAYLOAD_LIMIT). */
static uint64_t payload_limit = PROBE_PAYLOAD_LIMIT_DEFAULT;

void probe_set_payload_limit(uint64_t bytes)
{
	payload_limit = bytes;
}

/* Plain payload of img; *owned is the buffer to free (NULL if none). */
static int payload_of(const struct kimg_image *img, struct kimg_span *out, void **owned, struct kimg_error *err)
{
	*owned = NULL;
	void *dst = NULL;
	uint64_t cap = 0;
	if (img->compression != KIMG_COMPRESS_NONE) {
		int rc = kimg_payload_check_size(img, err);
		if (rc < 0)
			return rc;
		if (img->size == 0 || img->size > payload_limit)
			return kimg_error_set(err, -KIMG_ELIMIT, img->offset,
					      "payload: declared size %llu over the %llu-byte limit ($KIMG_PAYLOAD_LIMIT)",
					      (unsigned long long)img->size, (unsigned long long)payload_limit);
		cap = img->size;
		if ((dst = malloc(cap)) == NULL)
			return kimg_error_set(err, -ENOMEM, img->offset, "out of memory");
		/* Decoded whole: one read request for it, not a fault per page
		 * (the walk set the mapping to random access). */
		kimg_file_will_need(img->payload);
	}
	int rc = kimg_payload_get(img, kimg_codecs_get(), dst, cap, out, err);
	if (rc < 0) {
		free(dst);
		return rc;
	}
	*owned = dst;
	return 0;
}

int probe_image_kernels(const struct kimg_image *img, int (*fn)(void *, const char *, size_t),
			void *ctx, struct kimg_error *err)
{
	if (img->kind != KIMG_IMAGE_SASS && img->kind != KIMG_IMAGE_PTX)
		return 0; /* LTO-IR is NVVM bitcode: no kernel table to read */
	struct kimg_span plain;
	void *owned;
	int rc = payload_of(img, &plain, &owned, err);
	if (rc < 0)
		return rc;
	if (img->kind == KIMG_IMAGE_SASS)
		rc = kimg_cubin_for_each_kernel(plain, fn, ctx, err);
	else
		rc = kimg_ptx_for_each_entry(plain, fn, ctx, err);
	free(owned);
	return rc;
}

static int count_only(void *ctx, const char *name, size_t len)
{
	(void)ctx;
	(void)name;
	(void)len;
	return 0;
}

bool probe_module_is_link_stub(const struct probe_module *m)
{
	if (m->n_imgs == 0)
		return false;
	/* The header test first: one image that is not a cubin (PTX, LTO-IR)
	 * decides without decoding anything. */
	for (size_t i = 0; i < m->n_imgs; i++)
		if (m->imgs[i].kind != KIMG_IMAGE_SASS)
			return false;
	/* Then the cubins, smallest first: the first with a kernel decides,
	 * and a module's cubins differ in size by their code (a whole
	 * module's decode costs most of a cold check otherwise). */
	bool *done = calloc(m->n_imgs, sizeof *done);
	for (size_t n = 0; n < m->n_imgs; n++) {
		size_t pick = n;
		if (done) {
			pick = SIZE_MAX;
			for (size_t i = 0; i < m->n_imgs; i++)
				if (!done[i] && (pick == SIZE_MAX || m->imgs[i].stored_size < m->imgs[pick].stored_size))
					pick = i;
			done[pick] = true;
		}
		struct kimg_error err = { 0, 0, "" };
		/* An unreadable cubin is not evidence of a stub: treat as real. */
		if (probe_image_kernels(&m->imgs[pick], count_only, NULL, &err) != 0) {
			free(done);
			return false;
		}
	}
	free(done);
	return true;
}
