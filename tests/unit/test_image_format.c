/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the image documents and the blocks under them
 * (core/image_format.c, core/sha256.c, core/tar_header.c): SHA-256 against
 * FIPS 180-4's examples, tar headers as Python's tarfile writes them, the
 * OCI index/manifest, docker's manifest.json and the config, with their
 * malformed forms refused with the exact code. */
#include <string.h>

#include "image_format.h"
#include "sha256.h"
#include "tar_header.h"
#include "testutil.h"

static char arena[1 << 16];

START_TEST(sha256_fips_examples)
{
	struct kimg_sha256 s;
	char hex[65];
	kimg_sha256_init(&s);
	kimg_sha256_update(&s, "abc", 3);
	kimg_sha256_hex(&s, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	kimg_sha256_init(&s);
	const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	for (size_t i = 0; i < strlen(m); i++) /* byte by byte: the buffering */
		kimg_sha256_update(&s, m + i, 1);
	kimg_sha256_hex(&s, hex);
	ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	kimg_sha256_init(&s);
	kimg_sha256_hex(&s, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

START_TEST(tar_headers_and_pax_records)
{
	/* tarfile.TarInfo("dir/f.so", size=5).tobuf(USTAR) checksum computed here */
	uint8_t b[512] = { 0 };
	memcpy(b, "dir/f.so", 8);
	memcpy(b + 100, "0000644", 7);
	memcpy(b + 124, "00000000005", 11);
	b[156] = '0';
	memcpy(b + 257, "ustar\0" "00", 8);
	unsigned sum = 0;
	memset(b + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += b[i];
	snprintf((char *)b + 148, 8, "%06o", sum);
	struct kimg_tar_header h;
	ck_assert_int_eq(kimg_tar_header_parse(kimg_span_make(b, 512), &h, NULL), 1);
	ck_assert_str_eq(h.name, "dir/f.so");
	ck_assert_uint_eq(h.size, 5);
	ck_assert_int_eq(h.type, KIMG_TAR_REG);
	b[0] ^= 1; /* checksum no longer holds */
	ck_assert_int_eq(kimg_tar_header_parse(kimg_span_make(b, 512), &h, NULL), -KIMG_EFORMAT);
	uint8_t zero[512] = { 0 };
	ck_assert_int_eq(kimg_tar_header_parse(kimg_span_make(zero, 512), &h, NULL), 0);
	ck_assert_int_eq(kimg_tar_header_parse(kimg_span_make(zero, 100), &h, NULL), -KIMG_ETRUNC);
	const char pax[] = "30 path=blobs/sha256/abcdefgh\n12 size=123\n";
	ck_assert_int_eq(kimg_tar_pax_apply(kimg_span_make(pax, strlen(pax)), &h, NULL), 0);
	ck_assert_str_eq(h.name, "blobs/sha256/abcdefgh");
	ck_assert_uint_eq(h.size, 123);
	const char bad[] = "99 path=x\n";
	ck_assert_int_eq(kimg_tar_pax_apply(kimg_span_make(bad, strlen(bad)), &h, NULL), -KIMG_EFORMAT);
}
END_TEST

static unsigned layers_seen, manifests_seen;
static int on_layer(void *ctx, unsigned i, const struct kimg_descriptor *d)
{
	(void)ctx;
	ck_assert_uint_eq(i, layers_seen++);
	ck_assert_uint_eq(d->size, 10 + i);
	return 0;
}
static int on_manifest(void *ctx, const struct kimg_descriptor *d)
{
	(void)ctx;
	manifests_seen++;
	ck_assert_str_eq(d->arch, manifests_seen == 1 ? "amd64" : "arm64");
	return 0;
}

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Digests (OCI image spec, descriptor.md "Digests"): ALGORITHM:ENCODED,
 * of which kimg reads sha256 only, with 64 lowercase hex digits. An
 * algorithm that only begins like "sha256" or is one letter off is
 * another algorithm. */
START_TEST(digest_strings)
{
	char hex[65];
	ck_assert_int_eq(kimg_digest_parse("sha256:" D64, hex, NULL), 0);
	ck_assert_str_eq(hex, D64);
	ck_assert_int_eq(kimg_digest_parse("sha255:" D64, hex, NULL), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_digest_parse("sha25:" D64, hex, NULL), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_digest_parse("sha2566:" D64, hex, NULL), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_digest_parse("sha512:" D64, hex, NULL), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_digest_parse(":" D64, hex, NULL), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_digest_parse("sha256:" D64 "0", hex, NULL), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_digest_parse("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", hex, NULL),
			 -KIMG_EFORMAT);
}
END_TEST

START_TEST(index_manifest_and_config_documents)
{
	const char idx[] = "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"sha256:" D64 "\",\"size\":1,"
			   "\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}},{\"digest\":\"sha256:" D64
			   "\",\"platform\":{\"os\":\"linux\",\"architecture\":\"arm64\",\"variant\":\"v8\"}}]}";
	struct kimg_oci_doc_visitor v = { NULL, on_manifest, on_layer, NULL };
	ck_assert_int_eq(kimg_oci_doc_parse(kimg_span_make(idx, strlen(idx)), arena, sizeof arena, &v, NULL), KIMG_OCI_INDEX);
	ck_assert_uint_eq(manifests_seen, 2);
	struct kimg_descriptor config;
	v.config = &config;
	const char man[] = "{\"config\":{\"digest\":\"sha256:" D64 "\",\"size\":5},\"layers\":[{\"digest\":\"sha256:" D64
			   "\",\"size\":10},{\"digest\":\"sha256:" D64 "\",\"size\":11}]}";
	ck_assert_int_eq(kimg_oci_doc_parse(kimg_span_make(man, strlen(man)), arena, sizeof arena, &v, NULL), KIMG_OCI_MANIFEST);
	ck_assert_uint_eq(layers_seen, 2);
	ck_assert_uint_eq(config.size, 5);
	const char bad_digest[] = "{\"config\":{\"digest\":\"sha512:abc\"},\"layers\":[]}";
	ck_assert_int_eq(kimg_oci_doc_parse(kimg_span_make(bad_digest, strlen(bad_digest)), arena, sizeof arena, &v, NULL),
			 -KIMG_ENOTSUP);
	const char neither[] = "{\"layers\":[]}";
	ck_assert_int_eq(kimg_oci_doc_parse(kimg_span_make(neither, strlen(neither)), arena, sizeof arena, &v, NULL),
			 -KIMG_EFORMAT);
	const char cut[] = "{\"manifests\":[";
	ck_assert_int_eq(kimg_oci_doc_parse(kimg_span_make(cut, strlen(cut)), arena, sizeof arena, &v, NULL), -KIMG_ETRUNC);
	const char cfg[] = "{\"os\":\"linux\",\"architecture\":\"arm64\",\"config\":{\"Env\":[\"A=1\",\"CUDA_VERSION=13.0\"]},"
			   "\"history\":[{\"created_by\":\"FROM x\",\"empty_layer\":true},{\"created_by\":\"RUN y\"}],"
			   "\"rootfs\":{\"diff_ids\":[\"sha256:" D64 "\"]}}";
	struct kimg_image_config c;
	ck_assert_int_eq(kimg_image_config_parse(kimg_span_make(cfg, strlen(cfg)), arena, sizeof arena, NULL, &c, NULL), 0);
	ck_assert_str_eq(c.arch, "arm64");
	ck_assert_uint_eq(c.n_env, 2);
	ck_assert_uint_eq(c.n_history, 2);
	ck_assert_uint_eq(c.n_layer_history, 1);
	ck_assert_uint_eq(c.n_diff_ids, 1);
	const char docker[] = "[{\"Config\":\"" D64 ".json\",\"RepoTags\":[\"t:1\"],\"Layers\":[\"a/layer.tar\"]}]";
	ck_assert_int_eq(kimg_docker_manifest_parse(kimg_span_make(docker, strlen(docker)), arena, sizeof arena, NULL, NULL,
						    NULL), 1);
	const char docker_bad[] = "[{\"Config\":1}]";
	ck_assert_int_eq(kimg_docker_manifest_parse(kimg_span_make(docker_bad, strlen(docker_bad)), arena, sizeof arena,
						    NULL, NULL, NULL), -KIMG_EFORMAT);
	char os[32], arch[32], var[32];
	ck_assert_int_eq(kimg_platform_parse("linux/arm64/v8", os, arch, var), 0);
	ck_assert_str_eq(var, "v8");
	ck_assert_int_eq(kimg_platform_parse("linux", os, arch, var), -KIMG_EFORMAT);
	ck_assert(kimg_platform_matches("linux", "aarch64", "", "linux", "arm64", "v8"));
	ck_assert(!kimg_platform_matches("linux", "amd64", "", "linux", "arm64", ""));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("image_format");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, sha256_fips_examples);
	tcase_add_test(tc, tar_headers_and_pax_records);
	tcase_add_test(tc, index_manifest_and_config_documents);
	tcase_add_test(tc, digest_strings);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
