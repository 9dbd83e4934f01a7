/* SPDX-License-Identifier: Apache-2.0 */
/* Lazy loading of libzstd / liblz4 (sys/codecs.h), through sys/lazylib.h. */
#include "codecs.h"

#include <dlfcn.h>

#include "lazylib.h"

static struct kimg_codecs codecs;
static struct kimg_zstd_ctx_api zstd_ctx;

/* Both zstd functions or neither: a library lacking one leaves the
 * compressed entries unreadable, not half read. */
static const struct kimg_lazy_fn zstd_fns[] = {
	KIMG_LAZY_FN("ZSTD_decompress", codecs.zstd_decompress),
	KIMG_LAZY_FN("ZSTD_isError", codecs.zstd_is_error),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_createDCtx", zstd_ctx.create),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_freeDCtx", zstd_ctx.free),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_decompressDCtx", zstd_ctx.decompress),
};
static const struct kimg_lazy_fn lz4_fns[] = {
	KIMG_LAZY_FN("LZ4_decompress_safe", codecs.lz4_decompress_safe),
};
static struct kimg_lazylib zstd = {
	.sonames = { "libzstd.so.1" }, .flags = RTLD_LAZY, .fns = zstd_fns, .n_fns = sizeof zstd_fns / sizeof zstd_fns[0], .once = PTHREAD_ONCE_INIT,
};
static struct kimg_lazylib lz4 = {
	.sonames = { "liblz4.so.1" }, .flags = RTLD_LAZY, .fns = lz4_fns, .n_fns = 1, .once = PTHREAD_ONCE_INIT,
};

const struct kimg_codecs *kimg_codecs_get(void)
{
	kimg_lazylib_load(&zstd);
	kimg_lazylib_load(&lz4);
	return &codecs;
}

const struct kimg_zstd_ctx_api *kimg_codecs_zstd_ctx(void)
{
	kimg_lazylib_load(&zstd);
	return codecs.zstd_decompress && zstd_ctx.create && zstd_ctx.free && zstd_ctx.decompress ? &zstd_ctx : NULL;
}
