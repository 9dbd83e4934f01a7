/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the image documents and the blocks under them
 * (core/image_format.c, core/sha256.c, core/tar_header.c): SHA-256 against
 * FIPS 180-4's examples, tar headers as Python's tarfile writes them, the
 * OCI index/manifest, docker's manifest.json and the config, with their
 * malformed forms refused with the exact code. */
#include <stdlib.h>
#include <string.h>

#include "image_format.h"
#include "json_read.h"
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
	/* every name field full, with no NUL (POSIX ustar: name 100 bytes,
	 * linkname 100, prefix 155; the path is prefix "/" name, 256 bytes):
	 * the name fields as tarfile.TarInfo("p" * 155 + "/" + "n" * 100,
	 * type=SYMTYPE, linkname="l" * 100).tobuf(USTAR) writes them, and
	 * tarfile reads this block back as that name and link */
	memset(b, 0, sizeof b);
	memset(b, 'n', 100);
	memcpy(b + 100, "0000777", 7);
	memcpy(b + 124, "00000000000", 11);
	b[156] = '2';
	memset(b + 157, 'l', 100);
	memcpy(b + 257, "ustar\0" "00", 8);
	memset(b + 345, 'p', 155);
	memset(b + 148, ' ', 8);
	sum = 0;
	for (int i = 0; i < 512; i++)
		sum += b[i];
	snprintf((char *)b + 148, 8, "%06o", sum);
	ck_assert_int_eq(kimg_tar_header_parse(kimg_span_make(b, 512), &h, NULL), 1);
	char want[257];
	memset(want, 'p', 155);
	want[155] = '/';
	memset(want + 156, 'n', 100);
	want[256] = '\0';
	ck_assert_str_eq(h.name, want);
	memset(want, 'l', 100);
	want[100] = '\0';
	ck_assert_str_eq(h.link, want);
	ck_assert_int_eq(h.type, KIMG_TAR_SYMLINK);
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
	char out[67];
	memset(out, 'x', sizeof out);
	ck_assert_int_eq(kimg_digest_parse("sha256:" D64, out, NULL), 0);
	ck_assert_str_eq(out, D64); /* 64 digits and their NUL, nothing past */
	ck_assert_int_eq(out[65], 'x');
	ck_assert_int_eq(kimg_digest_parse("sha255:" D64, hex, NULL), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_digest_parse("sha25:" D64, hex, NULL), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_digest_parse("sha2566:" D64, hex, NULL), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_digest_parse("sha512:" D64, hex, NULL), -KIMG_ENOTSUP);
	ck_assert_int_eq(kimg_digest_parse(":" D64, hex, NULL), -KIMG_EFORMAT);
	struct kimg_error e = { 1, 9, "" };
	ck_assert_int_eq(kimg_digest_parse(NULL, hex, &e), -KIMG_EFORMAT);
	ck_assert_str_eq(e.what, "no digest");
	ck_assert_uint_eq(e.offset, 0);
	/* each refusal at offset 0 of the string; an algorithm quoted to 20 bytes */
	e.offset = 9;
	ck_assert_int_eq(kimg_digest_parse("sha256" D64, hex, &e), -KIMG_EFORMAT);
	ck_assert_uint_eq(e.offset, 0);
	e.offset = 9;
	ck_assert_int_eq(kimg_digest_parse("md5:00", hex, &e), -KIMG_ENOTSUP);
	ck_assert_uint_eq(e.offset, 0);
	ck_assert_str_eq(e.what, "digest algorithm 'md5' is not supported (sha256 only)");
	ck_assert_int_eq(kimg_digest_parse("abcdefghijklmnopqrst:00", hex, &e), -KIMG_ENOTSUP);
	ck_assert_str_eq(e.what, "digest algorithm 'abcdefghijklmnopqrst' is not supported (sha256 only)");
	ck_assert_int_eq(kimg_digest_parse("abcdefghijklmnopqrstu:00", hex, &e), -KIMG_ENOTSUP);
	ck_assert_str_eq(e.what, "digest algorithm 'abcdefghijklmnopqrst' is not supported (sha256 only)");
	ck_assert_int_eq(kimg_digest_parse("abcdefghijklmnopqrs:00", hex, &e), -KIMG_ENOTSUP);
	ck_assert_str_eq(e.what, "digest algorithm 'abcdefghijklmnopqrs' is not supported (sha256 only)");
	e.offset = 9;
	ck_assert_int_eq(kimg_digest_parse("sha256:abc", hex, &e), -KIMG_EFORMAT);
	ck_assert_uint_eq(e.offset, 0);
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

/* Hostile documents, each refused with its code and the message that
 * names what is wrong (OCI image spec: manifest.md, image-index.md,
 * descriptor.md, config.md; docker save's manifest.json): the value of the
 * wrong type, the descriptor field that is not a string, a callback's stop
 * passed through as it was returned. */
static char big_arena[1 << 20];
static struct kimg_error err;

static int oci(const char *doc, const struct kimg_oci_doc_visitor *v)
{
	memset(&err, 0, sizeof err);
	return kimg_oci_doc_parse(kimg_span_make(doc, strlen(doc)), big_arena, sizeof big_arena, v, &err);
}

static int docker(const char *doc, kimg_docker_image_fn fn)
{
	memset(&err, 0, sizeof err);
	return kimg_docker_manifest_parse(kimg_span_make(doc, strlen(doc)), big_arena, sizeof big_arena, fn, NULL, &err);
}

static int config(const char *doc, const struct kimg_image_config_visitor *v, struct kimg_image_config *c)
{
	memset(&err, 0, sizeof err);
	return kimg_image_config_parse(kimg_span_make(doc, strlen(doc)), big_arena, sizeof big_arena, v, c, &err);
}

#define EXPECT(call, code, text)                                                                 \
	do {                                                                                     \
		ck_assert_int_eq((call), (code));                                                \
		ck_assert_msg(strstr(err.what, (text)) != NULL, "'%s' lacks '%s'", err.what, (text)); \
	} while (0)

static int stop_7(void *ctx, const struct kimg_descriptor *d) { (void)ctx; (void)d; return 7; }
static int stop_layer_8(void *ctx, unsigned i, const struct kimg_descriptor *d) { (void)ctx; (void)i; (void)d; return 8; }
static int stop_image_9(void *ctx, unsigned i, const char *c, const char *t, const char *const *l, unsigned n)
{
	(void)ctx; (void)i; (void)c; (void)t; (void)l; (void)n;
	return 9;
}
static int stop_env(void *ctx, const char *e) { (void)ctx; (void)e; return 3; }
static int stop_history(void *ctx, int layer, const char *cb) { (void)ctx; (void)layer; (void)cb; return 4; }
static int stop_diff(void *ctx, unsigned i, const char *d) { (void)ctx; (void)i; (void)d; return 5; }

/* "[" N zeros "]" or "{\"config\":...,\"layers\":[" N zeros "]}" */
static char *zeros_array(const char *head, unsigned n, const char *tail)
{
	size_t len = strlen(head) + 2 * (size_t)n + strlen(tail) + 1;
	char *s = malloc(len), *p = s;
	ck_assert(s != NULL);
	p += sprintf(p, "%s", head);
	for (unsigned i = 0; i < n; i++)
		p += sprintf(p, i ? ",0" : "0");
	sprintf(p, "%s", tail);
	return s;
}

#define CONF "\"config\":{\"digest\":\"sha256:" D64 "\"}"
#define DESC "{\"digest\":\"sha256:" D64 "\"}"

START_TEST(hostile_index_and_manifest)
{
	struct kimg_oci_doc_visitor v = { NULL, NULL, NULL, NULL };
	EXPECT(oci("[]", &v), -KIMG_EFORMAT, "manifest: not a JSON object");
	ck_assert_uint_eq(err.offset, 0); /* the document itself */
	EXPECT(oci("{\"layers\":[]}", &v), -KIMG_EFORMAT,
	       "manifest: neither an index (\"manifests\") nor a manifest (\"config\", \"layers\")");
	ck_assert_uint_eq(err.offset, 0);
	/* no config asked for: the manifest is read all the same */
	ck_assert_int_eq(oci("{" CONF ",\"layers\":[" DESC "]}", &v), KIMG_OCI_MANIFEST);
	EXPECT(oci("{\"manifests\":{}}", &v), -KIMG_EFORMAT, "index: \"manifests\" is not an array");
	ck_assert_uint_eq(err.offset, 13);
	EXPECT(oci("{\"manifests\":[1]}", &v), -KIMG_EFORMAT, "index entry: descriptor is not an object");
	ck_assert_uint_eq(err.offset, 14);
	EXPECT(oci("{\"manifests\":[{\"digest\":\"sha512:ab\"}]}", &v), -KIMG_ENOTSUP, "index entry: digest algorithm");
	EXPECT(oci("{\"manifests\":[{\"digest\":\"sha256:" D64 "\",\"mediaType\":5}]}", &v), -KIMG_EFORMAT,
	       "index entry: a descriptor field is not a string or too long");
	EXPECT(oci("{\"manifests\":[{\"digest\":5}]}", &v), -KIMG_EFORMAT,
	       "index entry: a descriptor field is not a string or too long");
	/* a null field is an absent one; the digest then missing is the error */
	EXPECT(oci("{\"manifests\":[{\"digest\":null}]}", &v), -KIMG_EFORMAT, "is not ALGORITHM:HEX");
	ck_assert_uint_eq(err.offset, 14); /* the entry */
	/* a field one byte too long for its buffer: variant holds 31 */
	EXPECT(oci("{\"manifests\":[{\"digest\":\"sha256:" D64 "\",\"platform\":{\"variant\":"
		   "\"0123456789012345678901234567890X\"}}]}", &v),
	       -KIMG_EFORMAT, "a descriptor field is not a string or too long");
	struct kimg_descriptor c;
	v.config = &c;
	ck_assert_int_eq(oci("{\"config\":{\"digest\":\"sha256:" D64 "\",\"platform\":{\"variant\":"
			     "\"012345678901234567890123456789X\"}},\"layers\":[]}", &v), KIMG_OCI_MANIFEST);
	ck_assert_str_eq(c.variant, "012345678901234567890123456789X");
	ck_assert(!c.has_size);
	/* a callback's stop is returned as it is */
	v.on_manifest = stop_7;
	ck_assert_int_eq(oci("{\"manifests\":[" DESC "," DESC "]}", &v), 7);
	v.on_manifest = NULL;
	ck_assert_int_eq(oci("{\"manifests\":[" DESC "," DESC "]}", &v), KIMG_OCI_INDEX);

	EXPECT(oci("{" CONF ",\"layers\":{}}", &v), -KIMG_EFORMAT, "manifest: \"layers\" is not an array");
	EXPECT(oci("{\"config\":{\"digest\":\"sha256:abc\"},\"layers\":[]}", &v), -KIMG_EFORMAT,
	       "manifest config: digest 'sha256:abc' is not sha256");
	EXPECT(oci("{\"config\":3,\"layers\":[]}", &v), -KIMG_EFORMAT, "manifest config: descriptor is not an object");
	EXPECT(oci("{" CONF ",\"layers\":[" DESC ",7]}", &v), -KIMG_EFORMAT, "layer 2: descriptor is not an object");
	EXPECT(oci("{" CONF ",\"layers\":[" DESC ",{\"digest\":\"md5:00\"}]}", &v), -KIMG_ENOTSUP, "layer 2: digest");
	v.on_layer = stop_layer_8;
	ck_assert_int_eq(oci("{" CONF ",\"layers\":[" DESC "]}", &v), 8);
	v.on_layer = NULL;
	/* sizes: a byte count is an integer from 0 */
	ck_assert_int_eq(oci("{\"config\":{\"digest\":\"sha256:" D64 "\",\"size\":0},\"layers\":[]}", &v),
			 KIMG_OCI_MANIFEST);
	ck_assert(c.has_size);
	ck_assert_uint_eq(c.size, 0);
	EXPECT(oci("{\"config\":{\"digest\":\"sha256:" D64 "\",\"size\":-1},\"layers\":[]}", &v), -KIMG_EFORMAT,
	       "manifest config: size is not a byte count");
	EXPECT(oci("{\"config\":{\"digest\":\"sha256:" D64 "\",\"size\":\"5\"},\"layers\":[]}", &v), -KIMG_EFORMAT,
	       "size is not a byte count");

	/* KIMG_IMAGE_LAYERS_MAX layers are read (the first then judged), one more is a limit */
	char *at_max = zeros_array("{" CONF ",\"layers\":[", KIMG_IMAGE_LAYERS_MAX, "]}");
	EXPECT(oci(at_max, &v), -KIMG_EFORMAT, "layer 1: descriptor is not an object");
	free(at_max);
	char *past = zeros_array("{" CONF ",\"layers\":[", KIMG_IMAGE_LAYERS_MAX + 1, "]}");
	EXPECT(oci(past, &v), -KIMG_ELIMIT, "manifest lists 4097 layers, more than kimg reads (4096)");
	free(past);
}
END_TEST

/* A document of KIMG_IMAGE_DOC_MAX bytes is read; one byte more is not. */
START_TEST(document_size_limit)
{
	size_t n = (size_t)KIMG_IMAGE_DOC_MAX + 1;
	char *doc = malloc(n);
	ck_assert(doc != NULL);
	memset(doc, ' ', n);
	doc[0] = '[';
	doc[n - 2] = ']';
	struct kimg_oci_doc_visitor v = { NULL, NULL, NULL, NULL };
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(kimg_oci_doc_parse(kimg_span_make(doc, n - 1), big_arena, sizeof big_arena, &v, &err),
			 -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "manifest: not a JSON object");
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(kimg_oci_doc_parse(kimg_span_make(doc, n), big_arena, sizeof big_arena, &v, &err), -KIMG_ELIMIT);
	ck_assert_str_eq(err.what, "manifest larger than 16777216 bytes");
	ck_assert_uint_eq(err.offset, 0);
	free(doc);
}
END_TEST

struct seen {
	unsigned images, env, history, diff_ids;
	char tag[32];
	int layers[4];
};
static struct seen seen;
static int count_image(void *ctx, unsigned i, const char *c, const char *t, const char *const *l, unsigned n)
{
	(void)ctx; (void)c; (void)l; (void)n;
	ck_assert_uint_eq(i, seen.images++);
	if (i == 0)
		snprintf(seen.tag, sizeof seen.tag, "%s", t ? t : "(none)");
	return 0;
}
static int count_env(void *ctx, const char *e) { (void)ctx; (void)e; seen.env++; return 0; }
static int count_history(void *ctx, int layer, const char *cb)
{
	(void)ctx; (void)cb;
	if (seen.history < 4)
		seen.layers[seen.history] = layer;
	seen.history++;
	return 0;
}
static int count_diff(void *ctx, unsigned i, const char *d) { (void)ctx; (void)d; ck_assert_uint_eq(i, seen.diff_ids++); return 0; }

/* A callback returning 0 goes on to the next item; the first RepoTags
 * entry is the tag; history steps number their layers, an empty_layer
 * step is -1; a control byte that is not NUL is a string's own. A good
 * document leaves the error untouched. */
START_TEST(visitors_see_every_item)
{
	memset(&seen, 0, sizeof seen);
	ck_assert_int_eq(docker("[{\"Config\":\"c.json\",\"RepoTags\":[\"a:1\",\"b:2\"],\"Layers\":[]},"
				"{\"Config\":\"d.json\",\"Layers\":[\"x\"]}]", count_image), 2);
	ck_assert_uint_eq(seen.images, 2);
	ck_assert_str_eq(seen.tag, "a:1");
	ck_assert_str_eq(err.what, "");
	ck_assert_int_eq(err.code, 0);
	struct kimg_image_config c;
	struct kimg_image_config_visitor v = { NULL, count_env, count_history, count_diff };
	ck_assert_int_eq(config("{\"config\":{\"Env\":[\"A=1\",\"B=\\u0001\"]},\"history\":[{\"created_by\":\"FROM\","
				"\"empty_layer\":true},{\"created_by\":\"RUN a\"},{\"created_by\":\"RUN b\"}],"
				"\"rootfs\":{\"diff_ids\":[\"sha256:" D64 "\",\"sha256:" D64 "\"]}}", &v, &c), 0);
	ck_assert_str_eq(err.what, "");
	ck_assert_uint_eq(seen.env, 2);
	ck_assert_uint_eq(c.n_env, 2);
	ck_assert_uint_eq(seen.history, 3);
	ck_assert_int_eq(seen.layers[0], -1);
	ck_assert_int_eq(seen.layers[1], 0);
	ck_assert_int_eq(seen.layers[2], 1);
	ck_assert_uint_eq(seen.diff_ids, 2);
	struct kimg_oci_doc_visitor ov = { NULL, NULL, NULL, NULL };
	ck_assert_int_eq(oci("{\"manifests\":[{\"digest\":\"sha256:" D64 "\",\"mediaType\":\"x\\u0001\"}]}", &ov),
			 KIMG_OCI_INDEX);
	ck_assert_str_eq(err.what, "");
	ck_assert_int_eq(docker("[{\"Config\":\"c.json\",\"Layers\":[\"a\\u0001b\"]}]", NULL), 1);
}
END_TEST

START_TEST(hostile_docker_manifest)
{
	EXPECT(docker("[", NULL), -KIMG_ETRUNC, "manifest.json is not valid JSON: ");
	struct kimg_error inner = { 0, 0, "" };
	struct kimg_jdoc jd;
	kimg_jdoc_init(&jd, big_arena, sizeof big_arena);
	ck_assert_int_eq(kimg_jdoc_parse(&jd, kimg_span_make("[", 1), &inner), -KIMG_ETRUNC);
	char want[200];
	snprintf(want, sizeof want, "manifest.json is not valid JSON: %s", inner.what);
	ck_assert_str_eq(err.what, want); /* the JSON reader's own words, where it stopped */
	ck_assert_uint_eq(err.offset, inner.offset);
	EXPECT(docker("{}", NULL), -KIMG_EFORMAT, "manifest.json: not a JSON array");
	ck_assert_uint_eq(err.offset, 0);
	EXPECT(docker("[{\"Config\":\"c.json\"}]", NULL), -KIMG_EFORMAT,
	       "manifest.json image 1: no \"Config\" string or \"Layers\" array");
	EXPECT(docker("[{\"Config\":\"c.json\",\"Layers\":[]},{\"Config\":\"c.json\",\"Layers\":{}}]", NULL), -KIMG_EFORMAT,
	       "manifest.json image 2: no \"Config\" string");
	EXPECT(docker("[{\"Config\":\"c.json\",\"Layers\":[\"a.tar\",5]}]", NULL), -KIMG_EFORMAT,
	       "manifest.json image 1: layer 2 is not a path");
	EXPECT(docker("[{\"Config\":\"c.json\",\"Layers\":[\"a\\u0000b\"]}]", NULL), -KIMG_EFORMAT,
	       "layer 1 is not a path");
	ck_assert_int_eq(docker("[{\"Config\":\"c.json\",\"Layers\":[]},{\"Config\":\"d.json\",\"Layers\":[\"x\"]}]", NULL), 2);
	ck_assert_int_eq(docker("[{\"Config\":\"c.json\",\"Layers\":[]}]", stop_image_9), 9);
	char *past = zeros_array("[{\"Config\":\"c.json\",\"Layers\":[", KIMG_IMAGE_LAYERS_MAX + 1, "]}]");
	EXPECT(docker(past, NULL), -KIMG_ELIMIT, "manifest.json image 1 lists 4097 layers, more than kimg reads (4096)");
	free(past);
	char *at_max = zeros_array("[{\"Config\":\"c.json\",\"Layers\":[", KIMG_IMAGE_LAYERS_MAX, "]}]");
	EXPECT(docker(at_max, NULL), -KIMG_EFORMAT, "layer 1 is not a path");
	free(at_max);
}
END_TEST

START_TEST(hostile_image_config)
{
	struct kimg_image_config c;
	EXPECT(config("{", NULL, &c), -KIMG_ETRUNC, "image config is not valid JSON: ");
	EXPECT(config("[]", NULL, &c), -KIMG_EFORMAT, "image config: not a JSON object");
	ck_assert_uint_eq(err.offset, 0);
	EXPECT(config("{\"os\":1}", NULL, &c), -KIMG_EFORMAT, "image config: os/architecture/variant not a short string");
	ck_assert_uint_eq(err.offset, 0);
	EXPECT(config("{\"architecture\":\"012345678901234567890123456789012\"}", NULL, &c), -KIMG_EFORMAT,
	       "not a short string");
	/* 31 bytes fit each field, the copy no longer than the field */
	ck_assert_int_eq(config("{\"os\":\"0123456789012345678901234567890\",\"architecture\":\"abc\","
				"\"variant\":\"0123456789012345678901234567890\"}", NULL, &c), 0);
	ck_assert_str_eq(c.os, "0123456789012345678901234567890");
	ck_assert_str_eq(c.arch, "abc");
	ck_assert_str_eq(c.variant, "0123456789012345678901234567890");
	ck_assert_uint_eq(c.n_env, 0);
	ck_assert_uint_eq(c.n_history, 0);
	EXPECT(config("{\"config\":{\"Env\":{}}}", NULL, &c), -KIMG_EFORMAT, "image config: config.Env is not an array");
	EXPECT(config("{\"config\":{\"Env\":[\"A=1\",2]}}", NULL, &c), -KIMG_EFORMAT,
	       "image config: an Env entry is not a string");
	EXPECT(config("{\"history\":{}}", NULL, &c), -KIMG_EFORMAT, "image config: history is not an array");
	EXPECT(config("{\"history\":[1]}", NULL, &c), -KIMG_EFORMAT, "image config: a history entry is malformed");
	EXPECT(config("{\"history\":[{\"created_by\":1}]}", NULL, &c), -KIMG_EFORMAT, "a history entry is malformed");
	EXPECT(config("{\"rootfs\":{\"diff_ids\":\"x\"}}", NULL, &c), -KIMG_EFORMAT,
	       "image config: rootfs.diff_ids is not an array");
	EXPECT(config("{\"rootfs\":{\"diff_ids\":[\"sha256:" D64 "\",\"sha256:0\"]}}", NULL, &c), -KIMG_EFORMAT,
	       "image config: diff_id 2 is not a sha256 digest");
	EXPECT(config("{\"rootfs\":{\"diff_ids\":[7]}}", NULL, &c), -KIMG_EFORMAT, "diff_id 1 is not a sha256 digest");
	/* null Env, history and created_by are absent ones */
	ck_assert_int_eq(config("{\"config\":{\"Env\":null},\"history\":[{\"created_by\":null}],\"rootfs\":"
				"{\"diff_ids\":null}}", NULL, &c), 0);
	ck_assert_uint_eq(c.n_env, 0);
	ck_assert_uint_eq(c.n_history, 1);
	ck_assert_uint_eq(c.n_layer_history, 1);
	/* each visitor's stop is returned as it is */
	const char full[] = "{\"config\":{\"Env\":[\"A=1\"]},\"history\":[{\"created_by\":\"RUN x\"}],"
			    "\"rootfs\":{\"diff_ids\":[\"sha256:" D64 "\"]}}";
	struct kimg_image_config_visitor v = { NULL, stop_env, NULL, NULL };
	ck_assert_int_eq(config(full, &v, &c), 3);
	v = (struct kimg_image_config_visitor){ NULL, NULL, stop_history, NULL };
	ck_assert_int_eq(config(full, &v, &c), 4);
	v = (struct kimg_image_config_visitor){ NULL, NULL, NULL, stop_diff };
	ck_assert_int_eq(config(full, &v, &c), 5);
	v = (struct kimg_image_config_visitor){ NULL, NULL, NULL, NULL };
	ck_assert_int_eq(config(full, &v, &c), 0);
	ck_assert_uint_eq(c.n_diff_ids, 1);
}
END_TEST

/* OS/ARCH[/VARIANT], each part under 32 bytes, the text under 100 */
START_TEST(platform_strings)
{
	char os[32], arch[32], var[32];
	ck_assert_int_eq(kimg_platform_parse("linux/amd64", os, arch, var), 0);
	ck_assert_str_eq(os, "linux");
	ck_assert_str_eq(arch, "amd64");
	ck_assert_str_eq(var, "");
	ck_assert_int_eq(kimg_platform_parse(NULL, os, arch, var), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_platform_parse("/amd64", os, arch, var), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_platform_parse("linux/", os, arch, var), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_platform_parse("linux/arm64/", os, arch, var), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_platform_parse("linux/arm64/v8/x", os, arch, var), -KIMG_EFORMAT);
	/* 31 bytes fit, 32 do not, in each part */
	ck_assert_int_eq(kimg_platform_parse("0123456789012345678901234567890/a", os, arch, var), 0);
	ck_assert_str_eq(os, "0123456789012345678901234567890");
	ck_assert_int_eq(kimg_platform_parse("l/0123456789012345678901234567890", os, arch, var), 0);
	ck_assert_str_eq(arch, "0123456789012345678901234567890");
	ck_assert_int_eq(kimg_platform_parse("01234567890123456789012345678901/a", os, arch, var), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_platform_parse("l/01234567890123456789012345678901", os, arch, var), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_platform_parse("l/a/01234567890123456789012345678901", os, arch, var), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_platform_parse("l/a/0123456789012345678901234567890", os, arch, var), 0);
	ck_assert_str_eq(var, "0123456789012345678901234567890");
	char text[101];
	memset(text, 'a', 100);
	text[1] = '/';
	text[99] = '\0'; /* 99 bytes: read, then refused for its arch's length */
	ck_assert_int_eq(kimg_platform_parse(text, os, arch, var), -KIMG_EFORMAT);
	/* containerd's Normalize: x86_64 and x86-64 are amd64 */
	ck_assert(kimg_platform_matches("linux", "x86_64", "", "linux", "amd64", ""));
	ck_assert(kimg_platform_matches("linux", "amd64", "", "linux", "x86-64", ""));
	ck_assert(!kimg_platform_matches("windows", "amd64", "", "linux", "amd64", ""));
	ck_assert(!kimg_platform_matches("linux", "arm64", "v7", "linux", "arm64", "v8"));
	ck_assert(kimg_platform_matches("linux", "arm64", "v8", "linux", "arm64", ""));
	ck_assert(kimg_platform_matches("linux", "arm64", "v8", "linux", "arm64", "v8"));
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
	tcase_add_test(tc, hostile_index_and_manifest);
	tcase_add_test(tc, document_size_limit);
	tcase_add_test(tc, hostile_docker_manifest);
	tcase_add_test(tc, hostile_image_config);
	tcase_add_test(tc, platform_strings);
	tcase_add_test(tc, visitors_see_every_item);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
