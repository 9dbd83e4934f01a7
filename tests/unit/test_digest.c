/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of blob digests (sys/digest.c): libcrypto's SHA-256 and
 * the portable core/sha256.c give the same digest for every length around
 * the block size and for a large buffer fed in odd pieces, and a digest
 * works with libcrypto turned off. */
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "testutil.h"

START_TEST(libcrypto_and_core_agree)
{
	/* scripts/setup-debian.sh installs libssl3: a test that cannot reach
	 * libcrypto compares the core with itself, so it must find it */
	ck_assert_msg(kimg_digest_is_fast(), "libcrypto.so.3 not found (Debian: libssl3)");
	size_t n = 3 << 20;
	unsigned char *b = malloc(n);
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 131 + (i >> 9));
	size_t lens[] = { 0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, n };
	for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
		struct kimg_digest d;
		struct kimg_sha256 s;
		char a[65], c[65];
		kimg_digest_init(&d);
		for (size_t o = 0; o < lens[k]; o += 4099)
			kimg_digest_update(&d, b + o, lens[k] - o < 4099 ? lens[k] - o : 4099);
		kimg_digest_hex(&d, a);
		kimg_sha256_init(&s);
		kimg_sha256_update(&s, b, lens[k]);
		kimg_sha256_hex(&s, c);
		ck_assert_str_eq(a, c);
	}
	free(b);
}
END_TEST

START_TEST(without_libcrypto)
{
	kimg_digest_set_library("");
	ck_assert(!kimg_digest_is_fast());
	struct kimg_digest d;
	char a[65];
	kimg_digest_init(&d);
	kimg_digest_update(&d, "abc", 3);
	kimg_digest_hex(&d, a);
	ck_assert_str_eq(a, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("digest");
	TCase *tc = tcase_create("sys");
	tcase_add_test(tc, libcrypto_and_core_agree);
	tcase_add_test(tc, without_libcrypto);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
