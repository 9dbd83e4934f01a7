/* SPDX-License-Identifier: Apache-2.0 */
/* Lazy loading of libzstd / liblz4 / zlib (sys/codecs.h), through sys/lazylib.h,
 * and the gzip / zstd streams of container image layers. */
#include "codecs.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "lazylib.h"
#include "zlib_abi.h"

static struct kimg_codecs codecs;
static struct kimg_zstd_ctx_api zstd_ctx;
/* ZSTD_DStream functions for kimg_codec_stream_* (optional: a libzstd
 * without them still decodes fatbin payloads). */
static struct {
	void *(*create)(void);
	size_t (*init)(void *);
	size_t (*run)(void *, void *out, void *in);
	size_t (*free)(void *);
	const char *(*name)(size_t);
} zstd_stream;

/* Both zstd functions or neither: a library lacking one leaves the
 * compressed entries unreadable, not half read. */
static const struct kimg_lazy_fn zstd_fns[] = {
	KIMG_LAZY_FN("ZSTD_decompress", codecs.zstd_decompress),
	KIMG_LAZY_FN("ZSTD_isError", codecs.zstd_is_error),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_createDCtx", zstd_ctx.create),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_freeDCtx", zstd_ctx.free),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_decompressDCtx", zstd_ctx.decompress),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_createDStream", zstd_stream.create),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_initDStream", zstd_stream.init),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_decompressStream", zstd_stream.run),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_freeDStream", zstd_stream.free),
	KIMG_LAZY_FN_OPTIONAL("ZSTD_getErrorName", zstd_stream.name),
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

/* ---- streaming: gzip through zlib, zstd through ZSTD_decompressStream ---- */

#define Z_GZIP_WINDOW (15 + 16) /* a gzip wrapper, 32 KiB window */

static struct {
	const char *(*version)(void);
	int (*init2)(struct z_stream_abi *, int, const char *, int);
	int (*inflate)(struct z_stream_abi *, int);
	int (*reset)(struct z_stream_abi *);
	int (*end)(struct z_stream_abi *);
	int (*validate)(struct z_stream_abi *, int); /* zlib 1.2.9 on */
} zapi;
static const struct kimg_lazy_fn zlib_fns[] = {
	KIMG_LAZY_FN("zlibVersion", zapi.version),
	KIMG_LAZY_FN("inflateInit2_", zapi.init2),
	KIMG_LAZY_FN("inflate", zapi.inflate),
	KIMG_LAZY_FN("inflateReset", zapi.reset),
	KIMG_LAZY_FN("inflateEnd", zapi.end),
	KIMG_LAZY_FN_OPTIONAL("inflateValidate", zapi.validate),
};
static struct kimg_lazylib zlib = {
	.sonames = { "libz.so.1" }, .flags = RTLD_NOW, .fns = zlib_fns, .n_fns = sizeof zlib_fns / sizeof zlib_fns[0],
	.lacks = "the inflate functions", .once = PTHREAD_ONCE_INIT,
};

/* ZSTD_inBuffer / ZSTD_outBuffer of zstd.h (stable API since 1.0). */
struct zstd_in {
	const void *src;
	size_t size, pos;
};
struct zstd_out {
	void *dst;
	size_t size, pos;
};

void kimg_codecs_set_zlib(const char *soname)
{
	kimg_lazylib_set_soname(&zlib, soname);
}

int kimg_codec_stream_open(struct kimg_codec_stream *cs, enum kimg_codec_stream_kind kind, bool check,
			   struct kimg_error *err)
{
	*cs = (struct kimg_codec_stream){ kind, NULL, false };
	if (kind == KIMG_CODEC_GZIP) {
		if (!kimg_lazylib_load(&zlib))
			return kimg_error_set(err, -KIMG_ENOCODEC, 0, "cannot inflate a gzip stream: %s", zlib.why);
		struct z_stream_abi *z = calloc(1, sizeof *z);
		if (!z)
			return kimg_error_set(err, -ENOMEM, 0, "out of memory");
		if (zapi.init2(z, Z_GZIP_WINDOW, zapi.version(), (int)sizeof *z) != Z_OK) {
			free(z);
			return kimg_error_set(err, -ENOMEM, 0, "zlib: inflateInit2 failed");
		}
		/* inflateReset keeps the setting for later members */
		if (!check && zapi.validate)
			zapi.validate(z, 0);
		cs->state = z;
		return 0;
	}
	kimg_lazylib_load(&zstd);
	if (!codecs.zstd_decompress || !zstd_stream.create || !zstd_stream.init || !zstd_stream.run ||
	    !zstd_stream.free)
		return kimg_error_set(err, -KIMG_ENOCODEC, 0, "cannot decompress a zstd stream: %s",
				      codecs.zstd_decompress ? "libzstd.so.1 lacks ZSTD_decompressStream" : zstd.why);
	void *d = zstd_stream.create();
	if (!d)
		return kimg_error_set(err, -ENOMEM, 0, "out of memory");
	if (codecs.zstd_is_error(zstd_stream.init(d))) {
		zstd_stream.free(d);
		return kimg_error_set(err, -ENOMEM, 0, "zstd: ZSTD_initDStream failed");
	}
	cs->state = d;
	return 0;
}

static int64_t gzip_run(struct kimg_codec_stream *cs, const unsigned char **in, size_t *in_len, unsigned char *out,
			size_t cap, struct kimg_error *err)
{
	struct z_stream_abi *z = cs->state;
	if (cs->at_end) {
		if (*in_len == 0)
			return 0;
		/* another member (pigz, cat a.gz b.gz) or trailing bytes */
		if ((*in)[0] != 0x1f)
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "bytes after the end of the gzip stream");
		zapi.reset(z);
		cs->at_end = false;
	}
	z->next_in = *in;
	z->avail_in = *in_len > UINT32_MAX ? UINT32_MAX : (unsigned)*in_len;
	z->next_out = out;
	z->avail_out = cap > UINT32_MAX ? UINT32_MAX : (unsigned)cap;
	unsigned had = z->avail_in;
	int rc = zapi.inflate(z, Z_NO_FLUSH);
	size_t used = had - z->avail_in, made = (size_t)(z->next_out - out);
	*in += used;
	*in_len -= used;
	if (rc == Z_STREAM_END)
		cs->at_end = true;
	else if (rc != Z_OK && !(rc == Z_BUF_ERROR && *in_len == 0))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "damaged gzip stream: %s", z->msg ? z->msg : "inflate failed");
	return (int64_t)made;
}

static int64_t zstd_run(struct kimg_codec_stream *cs, const unsigned char **in, size_t *in_len, unsigned char *out,
			size_t cap, struct kimg_error *err)
{
	if (cs->at_end && *in_len == 0)
		return 0; /* asked again with nothing new: still the end */
	struct zstd_in zi = { *in, *in_len, 0 };
	struct zstd_out zo = { out, cap, 0 };
	size_t rc = zstd_stream.run(cs->state, &zo, &zi);
	*in += zi.pos;
	*in_len -= zi.pos;
	if (codecs.zstd_is_error(rc))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "damaged zstd stream: %s",
				      zstd_stream.name ? zstd_stream.name(rc) : "ZSTD_decompressStream failed");
	/* 0: a frame ended and is flushed; the next input, if any, starts another */
	cs->at_end = rc == 0;
	return (int64_t)zo.pos;
}

int64_t kimg_codec_stream_run(struct kimg_codec_stream *cs, const unsigned char **in, size_t *in_len,
			      unsigned char *out, size_t cap, struct kimg_error *err)
{
	return cs->kind == KIMG_CODEC_GZIP ? gzip_run(cs, in, in_len, out, cap, err) : zstd_run(cs, in, in_len, out, cap, err);
}

void kimg_codec_stream_close(struct kimg_codec_stream *cs)
{
	if (!cs->state)
		return;
	if (cs->kind == KIMG_CODEC_GZIP) {
		zapi.end(cs->state);
		free(cs->state);
	} else {
		zstd_stream.free(cs->state);
	}
	cs->state = NULL;
}
