/* SPDX-License-Identifier: Apache-2.0 */
/* Blob digests (digest.h): libcrypto's EVP SHA-256 when it loads, else
 * the core's. Both give the same bytes (tests/unit/test_digest.c). */
#include "digest.h"

#include <dlfcn.h>
#include <string.h>

#include "lazylib.h"

struct evp_api {
	void *(*ctx_new)(void);
	void (*ctx_free)(void *);
	const void *(*sha256)(void);
	int (*init)(void *, const void *, void *);
	int (*update)(void *, const void *, size_t);
	int (*final)(void *, unsigned char *, unsigned *);
};

static struct evp_api api;
static const struct kimg_lazy_fn evp_fns[] = {
	KIMG_LAZY_FN("EVP_MD_CTX_new", api.ctx_new),
	KIMG_LAZY_FN("EVP_MD_CTX_free", api.ctx_free),
	KIMG_LAZY_FN("EVP_sha256", api.sha256),
	KIMG_LAZY_FN("EVP_DigestInit_ex", api.init),
	KIMG_LAZY_FN("EVP_DigestUpdate", api.update),
	KIMG_LAZY_FN("EVP_DigestFinal_ex", api.final),
};
static struct kimg_lazylib libcrypto = {
	.sonames = { "libcrypto.so.3", "libcrypto.so.1.1" }, .flags = RTLD_NOW, .fns = evp_fns,
	.n_fns = sizeof evp_fns / sizeof evp_fns[0], .once = PTHREAD_ONCE_INIT,
};
static bool off;

void kimg_digest_set_library(const char *soname)
{
	if (soname && !*soname)
		off = true;
	else
		kimg_lazylib_set_soname(&libcrypto, soname);
}

bool kimg_digest_is_fast(void)
{
	return !off && kimg_lazylib_load(&libcrypto);
}

void kimg_digest_init(struct kimg_digest *d)
{
	d->evp = NULL;
	kimg_sha256_init(&d->soft);
	if (!kimg_digest_is_fast())
		return;
	void *ctx = api.ctx_new();
	if (ctx && api.init(ctx, api.sha256(), NULL) == 1)
		d->evp = ctx;
	else if (ctx)
		api.ctx_free(ctx);
}

void kimg_digest_update(struct kimg_digest *d, const void *data, size_t len)
{
	if (d->evp)
		api.update(d->evp, data, len);
	else
		kimg_sha256_update(&d->soft, data, len);
}

void kimg_digest_hex(struct kimg_digest *d, char out[65])
{
	if (!d->evp) {
		kimg_sha256_hex(&d->soft, out);
		return;
	}
	unsigned char md[32];
	unsigned n = 0;
	static const char hex[] = "0123456789abcdef";
	int ok = api.final(d->evp, md, &n);
	api.ctx_free(d->evp);
	d->evp = NULL;
	if (ok != 1 || n != 32) {
		memset(out, '0', 64); /* never matches a real digest: the blob is reported */
		out[64] = '\0';
		return;
	}
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}
