/* SPDX-License-Identifier: Apache-2.0 */
/* Decompressors for fatbin payloads, loaded on first use.
 *
 * libzstd.so.1 and liblz4.so.1 are opened with dlopen, never linked: the
 * shim lives inside other people's processes and must not add load-time
 * dependencies, and a missing library should only cost the compressed
 * entries (kimg_payload_get then returns -KIMG_ENOCODEC). */
#ifndef KIMG_CODECS_H
#define KIMG_CODECS_H

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

#endif
