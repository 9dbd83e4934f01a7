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

#endif
