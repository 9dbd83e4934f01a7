/* SPDX-License-Identifier: Apache-2.0 */
/* Reading payloads, which the probe does only on request (--kernels) or to
 * tell a device-link stub from a real module in `check`. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "glibc_pins.h"
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

/* One decode buffer per thread, reused: a check decodes thousands of
 * small cubins, and a fresh buffer each time is a fresh mapping whose
 * pages the kernel zeroes and unmaps again (a quarter of a warm check's
 * time). Payloads above SCRATCH_MAX get a buffer of their own. Freed when
 * the thread ends. */
#define SCRATCH_MAX ((uint64_t)64 << 20)

struct scratch {
	void *p;
	uint64_t cap;
	void *zstd_ctx;  /* this thread's ZSTD_DCtx, made on first use */
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static bool scratch_ok;

static void scratch_free(void *v)
{
	struct scratch *sc = v;
	const struct kimg_zstd_ctx_api *z = kimg_codecs_zstd_ctx();
	if (sc->zstd_ctx && z)
		z->free(sc->zstd_ctx);
	free(sc->p);
	free(sc);
}

static void scratch_init(void)
{
	scratch_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

/* A buffer of at least size bytes owned by this thread, or NULL. */
static void *scratch_get(uint64_t size)
{
	pthread_once(&scratch_once, scratch_init);
	if (!scratch_ok || size > SCRATCH_MAX)
		return NULL;
	struct scratch *sc = pthread_getspecific(scratch_key);
	if (!sc) {
		if ((sc = calloc(1, sizeof *sc)) == NULL)
			return NULL;
		if (pthread_setspecific(scratch_key, sc) != 0) {
			free(sc);
			return NULL;
		}
	}
	if (sc->cap < size) {
		uint64_t cap = size < (1 << 20) ? (1 << 20) : size;
		void *p = realloc(sc->p, cap);
		if (!p)
			return NULL;
		sc->p = p;
		sc->cap = cap;
	}
	return sc->p;
}

/* ZSTD_decompress through this thread's context: a fresh context per
 * call cost more than decoding the small cubins of a link-stub test. */
static size_t zstd_decompress_here(void *dst, size_t cap, const void *src, size_t n)
{
	const struct kimg_zstd_ctx_api *z = kimg_codecs_zstd_ctx();
	struct scratch *sc = scratch_ok ? pthread_getspecific(scratch_key) : NULL;
	if (z && sc && !sc->zstd_ctx)
		sc->zstd_ctx = z->create();
	if (z && sc && sc->zstd_ctx)
		return z->decompress(sc->zstd_ctx, dst, cap, src, n);
	return kimg_codecs_get()->zstd_decompress(dst, cap, src, n);
}

/* Plain payload of img; *owned is the buffer to free (NULL if none: the
 * thread's scratch buffer, valid until its next payload_of). */
static int payload_of(const struct kimg_image *img, struct kimg_span *out, void **owned, struct kimg_error *err)
{
	*owned = NULL;
	void *dst = NULL, *own = NULL;
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
		if ((dst = scratch_get(cap)) == NULL && (dst = own = malloc(cap)) == NULL)
			return kimg_error_set(err, -ENOMEM, img->offset, "out of memory");
		/* Decoded whole: one read request for it, not a fault per page
		 * (the walk set the mapping to random access). */
		kimg_file_will_need(img->payload);
	}
	struct kimg_codecs codecs = *kimg_codecs_get();
	if (codecs.zstd_decompress && kimg_codecs_zstd_ctx())
		codecs.zstd_decompress = zstd_decompress_here;
	int rc = kimg_payload_get(img, &codecs, dst, cap, out, err);
	if (rc < 0) {
		free(own);
		return rc;
	}
	*owned = own;
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

static uint64_t decode_cost(const struct kimg_image *img)
{
	return img->compression == KIMG_COMPRESS_NONE ? 0 : img->size;
}

uint64_t probe_module_stub_test_cost(const struct probe_module *m)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < m->n_imgs; i++)
		sum += decode_cost(&m->imgs[i]);
	return sum;
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
	/* Then the cubins, cheapest first: the first with a kernel decides.
	 * A stored cubin costs a parse of its headers, a compressed one a
	 * decode of its whole plain size (most of a check's time otherwise). */
	bool *done = calloc(m->n_imgs, sizeof *done);
	for (size_t n = 0; n < m->n_imgs; n++) {
		size_t pick = n;
		if (done) {
			pick = SIZE_MAX;
			for (size_t i = 0; i < m->n_imgs; i++)
				if (!done[i] && (pick == SIZE_MAX || decode_cost(&m->imgs[i]) < decode_cost(&m->imgs[pick])))
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
