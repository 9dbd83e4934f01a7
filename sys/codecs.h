/* SPDX-License-Identifier: Apache-2.0 */
/* Decompressors for fatbin payloads, loaded on first use.
 *
 * libzstd.so.1 and liblz4.so.1 are opened with dlopen, never linked: the
 * shim lives inside other people's processes and must not add load-time
 * dependencies, and a missing library should only cost the compressed
 * entries (kimg_payload_get then returns -KIMG_ENOCODEC). */
#ifndef KIMG_CODECS_H
#define KIMG_CODECS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "payload.h"

/* The process-wide table, loaded once (thread safe, pthread_once); fields
 * are NULL for a library that is absent. Never NULL; never freed. */
const struct kimg_codecs *kimg_codecs_get(void);

/* zstd's decompression contexts, for a caller that decodes many payloads
 * on one thread and keeps a context for them (ZSTD_decompress makes and
 * frees one per call): kimg-probe's link-stub test decodes thousands of
 * small cubins. NULL when libzstd is absent or lacks one of them. */
struct kimg_zstd_ctx_api {
	void *(*create)(void);                                          /* ZSTD_createDCtx */
	size_t (*free)(void *ctx);                                      /* ZSTD_freeDCtx */
	size_t (*decompress)(void *ctx, void *dst, size_t dst_cap, const void *src, size_t src_size);
	                                                                /* ZSTD_decompressDCtx */
};
const struct kimg_zstd_ctx_api *kimg_codecs_zstd_ctx(void);

/* ---- streaming decompression (container image layers, sys/tar_stream.c) ----
 *
 * A gzip stream through zlib's inflate (libz.so.1, windowBits 15+16;
 * concatenated members are read on) or a zstd stream through
 * ZSTD_decompressStream (libzstd.so.1; concatenated frames are read on).
 * Both loaded on first use, never linked. Memory: zlib's 32 KiB window,
 * zstd's window (at most 128 MiB, libzstd's default windowLogMax 27). */
enum kimg_codec_stream_kind { KIMG_CODEC_GZIP = 1, KIMG_CODEC_ZSTD };
struct kimg_codec_stream {
	enum kimg_codec_stream_kind kind;
	void *state;                 /* a z_stream or a ZSTD_DStream */
	bool at_end;                 /* the last member or frame ended; no output pending */
};
/* 0, or -KIMG_ENOCODEC (the library or a function is missing; err says
 * which) or -ENOMEM. check false: gzip's CRC-32 is not computed (zlib
 * 1.2.9 on; older zlib still checks), for a caller that checks a digest
 * of the compressed bytes (sys/tar.h). */
int kimg_codec_stream_open(struct kimg_codec_stream *cs, enum kimg_codec_stream_kind kind, bool check,
			   struct kimg_error *err);
/* Decode from *in (*in_len bytes; both advanced past what was used) into
 * out (cap bytes). Returns the bytes made (0 when more input is needed, or
 * at the end: cs->at_end), or -KIMG_EFORMAT with err set for a damaged
 * stream. */
int64_t kimg_codec_stream_run(struct kimg_codec_stream *cs, const unsigned char **in, size_t *in_len,
			      unsigned char *out, size_t cap, struct kimg_error *err);
void kimg_codec_stream_close(struct kimg_codec_stream *cs);
/* Use another zlib name or path than "libz.so.1" (the probe's $KIMG_ZLIB);
 * call before the first stream. */
void kimg_codecs_set_zlib(const char *soname);

#endif
