/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-256 of image blobs, at the speed of the machine's libcrypto where
 * there is one: OpenSSL's EVP digest (SHA extensions, AVX2) is loaded at
 * first use (dlopen "libcrypto.so.3", then "libcrypto.so.1.1"), never
 * linked; without it the portable core/sha256.c computes the same digest
 * (some 6 times slower: 75 against 468 MB/s on this project's build
 * machine, one measurement each, under load). Not thread safe per digest. */
#ifndef KIMG_SYS_DIGEST_H
#define KIMG_SYS_DIGEST_H

#include <stdbool.h>
#include <stddef.h>

#include "sha256.h"

struct kimg_digest {
	void *evp;                 /* EVP_MD_CTX, or NULL: soft is used */
	struct kimg_sha256 soft;
};

void kimg_digest_init(struct kimg_digest *d);
void kimg_digest_update(struct kimg_digest *d, const void *data, size_t len);
/* 64 lowercase hex digits and a NUL; frees what init took. */
void kimg_digest_hex(struct kimg_digest *d, char out[65]);
/* Whether libcrypto is in use (tests, messages). $KIMG_LIBCRYPTO="" turns
 * it off (kimg_digest_set_library). */
bool kimg_digest_is_fast(void);
void kimg_digest_set_library(const char *soname);

#endif
