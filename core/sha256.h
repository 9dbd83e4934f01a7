/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-256 (FIPS 180-4), streaming: image blobs are named by the SHA-256 of
 * their bytes (OCI image-spec descriptor.md, "Digests"), and kimg checks
 * every blob it reads against its name. Pure; no allocation. */
#ifndef KIMG_SHA256_H
#define KIMG_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct kimg_sha256 {
	uint32_t h[8];
	uint64_t len;          /* bytes hashed so far */
	uint8_t buf[64];
	unsigned used;         /* bytes waiting in buf */
};

void kimg_sha256_init(struct kimg_sha256 *s);
void kimg_sha256_update(struct kimg_sha256 *s, const void *data, size_t len);
/* The digest as 64 lowercase hex digits and a NUL. */
void kimg_sha256_hex(struct kimg_sha256 *s, char out[65]);

#endif
