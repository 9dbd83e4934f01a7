/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of core/packages.c (package records, advice by package)
 * and core/inventory.c (device documents of fleets). Oracles: the record
 * formats as pip (PEP 376 RECORD, CSV), conda (conda-meta JSON) and dpkg
 * (info/PACKAGE.list, status) write them. */
#include <string.h>

#include "testutil.h"
#include "inventory.h"
#include "packages.h"

static struct kimg_span text(const char *s)
{
	return kimg_span_make(s, strlen(s));
}

START_TEST(dist_info_names)
{
	char n[64], v[64];
	ck_assert_int_eq(kimg_dist_info_parse_dirname("flash_attn-2.8.3.dist-info", n, sizeof n, v, sizeof v), 0);
	ck_assert_str_eq(n, "flash_attn");
	ck_assert_str_eq(v, "2.8.3");
	ck_assert_int_eq(kimg_dist_info_parse_dirname("torch-2.5.1+cu124.dist-info", n, sizeof n, v, sizeof v), 0);
	ck_assert_str_eq(v, "2.5.1+cu124");
	ck_assert_int_eq(kimg_dist_info_parse_dirname("apex-0.1-py3.11.egg-info", n, sizeof n, v, sizeof v), 0);
	ck_assert_str_eq(n, "apex");
	ck_assert_str_eq(v, "0.1");
	ck_assert_int_eq(kimg_dist_info_parse_dirname("noversion.dist-info", n, sizeof n, v, sizeof v), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_dist_info_parse_dirname("-1.0.dist-info", n, sizeof n, v, sizeof v), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_dist_info_parse_dirname("foo-1.0", n, sizeof n, v, sizeof v), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_dist_info_parse_dirname("averyveryverylongname-1.0.dist-info", n, 8, v, sizeof v),
			 -KIMG_EFORMAT);
}
END_TEST

START_TEST(record_lines)
{
	struct kimg_span t = text("foo/_C.so,sha256=abc,123\r\n\n\"foo/a,b.so\",,\n\"foo/q\"\"uote\",sha,1\nbar/x\n");
	char p[64];
	uint64_t pos = 0;
	ck_assert_int_eq(kimg_record_next(t, &pos, p, sizeof p), 1);
	ck_assert_str_eq(p, "foo/_C.so");
	ck_assert_int_eq(kimg_record_next(t, &pos, p, sizeof p), 1);
	ck_assert_str_eq(p, "foo/a,b.so");
	ck_assert_int_eq(kimg_record_next(t, &pos, p, sizeof p), 1);
	ck_assert_str_eq(p, "foo/q\"uote");
	ck_assert_int_eq(kimg_record_next(t, &pos, p, sizeof p), 1);
	ck_assert_str_eq(p, "bar/x");
	ck_assert_int_eq(kimg_record_next(t, &pos, p, sizeof p), 0);
	/* a path longer than the buffer is skipped with ELIMIT, the next one read */
	t = text("a/very/long/path/name,,\nok,,\n");
	pos = 0;
	ck_assert_int_eq(kimg_record_next(t, &pos, p, 8), -KIMG_ELIMIT);
	ck_assert_int_eq(kimg_record_next(t, &pos, p, 8), 1);
	ck_assert_str_eq(p, "ok");
	/* an unterminated quote ends the file */
	t = text("\"open,,\n");
	pos = 0;
	ck_assert_int_eq(kimg_record_next(t, &pos, p, sizeof p), -KIMG_EFORMAT);
}
END_TEST

START_TEST(dpkg_records)
{
	char n[64];
	ck_assert_int_eq(kimg_dpkg_list_package("python3-torch:amd64.list", n, sizeof n), 0);
	ck_assert_str_eq(n, "python3-torch");
	ck_assert_int_eq(kimg_dpkg_list_package("libc6.list", n, sizeof n), 0);
	ck_assert_str_eq(n, "libc6");
	ck_assert_int_eq(kimg_dpkg_list_package("libc6.md5sums", n, sizeof n), -KIMG_EFORMAT);
	struct kimg_span t = text("/.\n/usr/lib/x.so\r\n\n/usr/lib/y.so");
	uint64_t pos = 0;
	ck_assert_int_eq(kimg_list_next(t, &pos, n, sizeof n), 1);
	ck_assert_str_eq(n, "/.");
	ck_assert_int_eq(kimg_list_next(t, &pos, n, sizeof n), 1);
	ck_assert_str_eq(n, "/usr/lib/x.so");
	ck_assert_int_eq(kimg_list_next(t, &pos, n, sizeof n), 1);
	ck_assert_str_eq(n, "/usr/lib/y.so");
	ck_assert_int_eq(kimg_list_next(t, &pos, n, sizeof n), 0);
}
END_TEST

static char seen[256];
static int status_fn(void *ctx, const char *p, const char *v)
{
	(void)ctx;
	strncat(seen, p, sizeof seen - strlen(seen) - 1);
	strncat(seen, "=", sizeof seen - strlen(seen) - 1);
	strncat(seen, v, sizeof seen - strlen(seen) - 1);
	strncat(seen, ";", sizeof seen - strlen(seen) - 1);
	return 0;
}

START_TEST(dpkg_status)
{
	seen[0] = '\0';
	struct kimg_span t = text("Package: a\nStatus: install ok installed\nVersion: 1.0-1\n\n"
				  "Package: b\nStatus: deinstall ok config-files\nVersion: 2\n\n"
				  "Package: c\nVersion: 3:4.5\nDescription: x\n more\n");
	ck_assert_int_eq(kimg_dpkg_status_each(t, status_fn, NULL), 2);
	ck_assert_str_eq(seen, "a=1.0-1;c=3:4.5;");
	/* issue 23: the status is the third word, matched whole (dpkg(1),
	 * "package states"): "not-installed" and "half-installed" contain
	 * "installed" but are not; triggers-pending is configured. */
	seen[0] = '\0';
	t = text("Package: d\nStatus: install ok not-installed\nVersion: 1\n\n"
		 "Package: e\nStatus: install reinstreq half-installed\nVersion: 2\n\n"
		 "Package: f\nStatus: install ok triggers-pending\nVersion: 3\n\n"
		 "Package: g\nStatus: install ok unpacked\nVersion: 4\n\n"
		 "Package: h\nStatus: hold ok installed\nVersion: 5\n\n");
	ck_assert_int_eq(kimg_dpkg_status_each(t, status_fn, NULL), 2);
	ck_assert_str_eq(seen, "f=3;h=5;");
}
END_TEST

static char files_seen[256];
static int conda_fn(void *ctx, const char *p)
{
	(void)ctx;
	strncat(files_seen, p, sizeof files_seen - strlen(files_seen) - 2);
	strcat(files_seen, ";");
	return 0;
}

START_TEST(conda_meta)
{
	static unsigned char arena[1 << 14];
	char n[64], v[64];
	struct kimg_error err = { 0, 0, "" };
	files_seen[0] = '\0';
	struct kimg_span t = text("{\"name\":\"pytorch\",\"version\":\"2.5.1\",\"build\":\"cuda12\","
				  "\"files\":[\"lib/libtorch_cuda.so\",\"\",\"bin/x\"]}");
	ck_assert_int_eq(kimg_conda_meta_parse(t, arena, sizeof arena, n, sizeof n, v, sizeof v, conda_fn, NULL, &err), 2);
	ck_assert_str_eq(n, "pytorch");
	ck_assert_str_eq(v, "2.5.1");
	ck_assert_str_eq(files_seen, "lib/libtorch_cuda.so;bin/x;");
	ck_assert_int_eq(kimg_conda_meta_parse(text("{\"files\":[]}"), arena, sizeof arena, n, sizeof n, v, sizeof v,
					       conda_fn, NULL, &err), -KIMG_EFORMAT);
	ck_assert_int_lt(kimg_conda_meta_parse(text("{\"name\":"), arena, sizeof arena, n, sizeof n, v, sizeof v, conda_fn,
					       NULL, &err), 0);
}
END_TEST

struct advice_case {
	const char *name;
	enum kimg_pkg_family family;
};

static const struct advice_case advices[] = {
	{ "torch", KIMG_PKG_PYTORCH },           { "Torch", KIMG_PKG_PYTORCH },
	{ "torchvision", KIMG_PKG_PYTORCH },     { "cupy-cuda12x", KIMG_PKG_CUPY },
	{ "cupy_cuda13x", KIMG_PKG_CUPY },       { "jax", KIMG_PKG_JAX },
	{ "jax-cuda12-plugin", KIMG_PKG_JAX },   { "jaxlib", KIMG_PKG_JAX },
	{ "tensorflow", KIMG_PKG_TENSORFLOW },   { "tensorflow-gpu", KIMG_PKG_TENSORFLOW },
	{ "flash_attn", KIMG_PKG_TORCH_EXTENSION }, { "flash-attn-3", KIMG_PKG_TORCH_EXTENSION },
	{ "xformers", KIMG_PKG_TORCH_EXTENSION }, { "bitsandbytes", KIMG_PKG_TORCH_EXTENSION },
	{ "vllm", KIMG_PKG_TORCH_EXTENSION },    { "mamba_ssm", KIMG_PKG_TORCH_EXTENSION },
	{ "nvidia-cublas-cu12", KIMG_PKG_NVIDIA_LIBRARY }, { "numpy", KIMG_PKG_OTHER },
	{ "python3-torch", KIMG_PKG_OTHER },     { "", KIMG_PKG_OTHER },
};

START_TEST(advice_rows)
{
	const struct advice_case *c = &advices[_i];
	const struct kimg_pkg_advice *a = kimg_pkg_advice_for(c->name);
	ck_assert_msg(a->family == c->family, "%s: family %d, want %d", c->name, a->family, c->family);
	ck_assert_ptr_nonnull(a->label);
	ck_assert_ptr_nonnull(a->advice);
}
END_TEST

START_TEST(advice_text)
{
	char out[512];
	kimg_pkg_advice_format(kimg_pkg_advice_for("flash_attn"), "flash_attn", "sm_120", "12.0", "12.0", out, sizeof out);
	ck_assert_ptr_nonnull(strstr(out, "TORCH_CUDA_ARCH_LIST=\"12.0\""));
	ck_assert_ptr_nonnull(strstr(out, "flash_attn built for sm_120"));
	kimg_pkg_advice_format(kimg_pkg_advice_for("tensorflow"), "tensorflow", "sm_90", "9.0", NULL, out, sizeof out);
	ck_assert_ptr_nonnull(strstr(out, "TF_CUDA_COMPUTE_CAPABILITIES=9.0"));
	kimg_pkg_advice_format(kimg_pkg_advice_for("libfoo"), "libfoo", "sm_90", "9.0", NULL, out, sizeof out);
	ck_assert_ptr_nonnull(strstr(out, "CMAKE_CUDA_ARCHITECTURES=\"90\""));
	/* issue 22 item 17: no value known is no literal "?" in the advice */
	static const char *const names[] = { "libfoo", "torch", "tensorflow", "flash_attn", "cupy-cuda12x", "jax" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		kimg_pkg_advice_format(kimg_pkg_advice_for(names[i]), NULL, NULL, NULL, NULL, out, sizeof out);
		ck_assert_msg(!strchr(out, '?'), "%s: %s", names[i], out);
		kimg_pkg_advice_format(kimg_pkg_advice_for(names[i]), "", "", "", "", out, sizeof out);
		ck_assert_msg(!strchr(out, '?'), "%s: %s", names[i], out);
	}
	kimg_pkg_advice_format(kimg_pkg_advice_for(""), NULL, "sm_90", "9.0", NULL, out, sizeof out);
	ck_assert_msg(strstr(out, "rebuild the code for sm_90") && strstr(out, "CMAKE_CUDA_ARCHITECTURES=\"90\""), "%s", out);
	/* truncation is safe */
	ck_assert_uint_eq(kimg_pkg_advice_format(kimg_pkg_advice_for("torch"), "torch", "sm_90", "9.0", "9.0", out, 10), 9);
	char norm[32];
	kimg_pkg_normalize("Flash__Attn.Ext", norm, sizeof norm);
	ck_assert_str_eq(norm, "flash-attn-ext");
	/* cut to the buffer, its NUL inside it: 4 bytes hold "fla" (the byte
	 * after the buffer keeps its sentinel) */
	memset(norm, '#', sizeof norm);
	kimg_pkg_normalize("Flash__Attn.Ext", norm, 4);
	ck_assert_str_eq(norm, "fla");
	ck_assert_int_eq(norm[4], '#');
	/* every row has a pattern, a label and advice, except the extension rows borrowing the generic text */
	unsigned rows = 0;
	for (unsigned i = 0; kimg_pkg_advice_at(i); i++, rows++)
		ck_assert(kimg_pkg_advice_at(i)->label || kimg_pkg_advice_at(i)->family == KIMG_PKG_TORCH_EXTENSION);
	ck_assert_uint_gt(rows, 20);
}
END_TEST

struct gpu_seen {
	char host[32];
	struct kimg_inventory_gpu g;
	int n;
};

static int inv_fn(void *ctx, const char *host, const struct kimg_inventory_gpu *g)
{
	struct gpu_seen *s = ctx;
	snprintf(s[s[0].n].host, sizeof s[0].host, "%s", host);
	s[s[0].n].g = *g;
	s[0].n++;
	return 0;
}

START_TEST(inventory_docs)
{
	static unsigned char arena[1 << 14];
	struct gpu_seen s[4];
	struct kimg_error err = { 0, 0, "" };
	memset(s, 0, sizeof s);
	const char *doc = "{\"host\":\"n1\",\"driver\":{\"release\":\"535.1\",\"cuda_version\":\"12.2\"},\"devices\":["
			  "{\"index\":0,\"name\":\"NVIDIA A100\",\"cc\":\"8.0\",\"tegra\":false,\"cuda_driver\":\"12.2\"},"
			  "{\"index\":1,\"name\":\"Orin\",\"cc\":\"8.7\",\"tegra\":true},"
			  "{\"index\":2,\"name\":\"undescribed\",\"cc\":null}]}";
	ck_assert_int_eq(kimg_inventory_parse(text(doc), arena, sizeof arena, inv_fn, s, &err), 2);
	ck_assert_int_eq(s[0].n, 2);
	ck_assert_str_eq(s[0].host, "n1");
	ck_assert_uint_eq(s[0].g.sm, 80);
	ck_assert_int_eq(s[0].g.driver_version, 12020);
	ck_assert_str_eq(s[0].g.release, "535.1");
	ck_assert_uint_eq(s[1].g.sm, 87);
	ck_assert(s[1].g.tegra);
	ck_assert_int_eq(s[1].g.driver_version, 12020); /* from the document's driver */
	ck_assert_int_eq(kimg_inventory_parse(text("{\"error\":{\"code\":209}}"), arena, sizeof arena, inv_fn, s, &err),
			 -KIMG_EFORMAT);
	ck_assert_int_lt(kimg_inventory_parse(text("{\"devices\":["), arena, sizeof arena, inv_fn, s, &err), 0);
}
END_TEST

/* issue 22 item 16: a fleet document is validated as --sm and --driver
 * are, never silently dropped or turned into "CUDA ?" */
START_TEST(inventory_values_validated_as_sm_and_driver)
{
	static unsigned char arena[1 << 14];
	struct gpu_seen s[4];
	char doc[512];
	static const char *const bad_cc[] = { "\"860\"", "\"x\"", "\"8.6.1\"", "\"0.5\"", "\"99.9\"", "86", "true", "\"\"" };
	for (size_t i = 0; i < sizeof bad_cc / sizeof bad_cc[0]; i++) {
		struct kimg_error err = { 0, 0, "" };
		memset(s, 0, sizeof s);
		snprintf(doc, sizeof doc, "{\"driver\":{},\"devices\":[{\"cc\":\"8.0\"},{\"cc\":%s}]}", bad_cc[i]);
		ck_assert_msg(kimg_inventory_parse(text(doc), arena, sizeof arena, inv_fn, s, &err) == -KIMG_EFORMAT,
			      "cc %s accepted", bad_cc[i]);
		ck_assert_msg(strstr(err.what, "device 1") && strstr(err.what, "compute capability"), "%s", err.what);
	}
	static const char *const bad_cuda[] = { "\"12.4.1\"", "\"12\"", "\"twelve\"", "12.4", "\"12.40\"" };
	for (size_t i = 0; i < sizeof bad_cuda / sizeof bad_cuda[0]; i++) {
		struct kimg_error err = { 0, 0, "" };
		memset(s, 0, sizeof s);
		snprintf(doc, sizeof doc, "{\"driver\":{},\"devices\":[{\"cc\":\"8.6\",\"cuda_driver\":%s}]}", bad_cuda[i]);
		ck_assert_msg(kimg_inventory_parse(text(doc), arena, sizeof arena, inv_fn, s, &err) == -KIMG_EFORMAT,
			      "cuda_driver %s accepted", bad_cuda[i]);
		ck_assert_msg(strstr(err.what, "cuda_driver") && strstr(err.what, "CUDA version"), "%s", err.what);
		snprintf(doc, sizeof doc, "{\"driver\":{\"cuda_version\":%s},\"devices\":[{\"cc\":\"8.6\"}]}", bad_cuda[i]);
		ck_assert_msg(kimg_inventory_parse(text(doc), arena, sizeof arena, inv_fn, s, &err) == -KIMG_EFORMAT,
			      "driver.cuda_version %s accepted", bad_cuda[i]);
	}
	/* null and absent are unknown, not wrong */
	struct kimg_error err = { 0, 0, "" };
	memset(s, 0, sizeof s);
	ck_assert_int_eq(kimg_inventory_parse(text("{\"driver\":{\"cuda_version\":null},\"devices\":[{\"cc\":\"8.6\","
						   "\"cuda_driver\":null},{\"cc\":\"9.0\"}]}"),
					      arena, sizeof arena, inv_fn, s, &err),
			 2);
	ck_assert_int_eq(s[0].g.driver_version, 0);
}
END_TEST

static Suite *packages_suite(void)
{
	Suite *s = suite_create("packages");
	TCase *tc = tcase_create("records");
	tcase_add_test(tc, dist_info_names);
	tcase_add_test(tc, record_lines);
	tcase_add_test(tc, dpkg_records);
	tcase_add_test(tc, dpkg_status);
	tcase_add_test(tc, conda_meta);
	tcase_add_loop_test(tc, advice_rows, 0, (int)(sizeof advices / sizeof advices[0]));
	tcase_add_test(tc, advice_text);
	tcase_add_test(tc, inventory_docs);
	tcase_add_test(tc, inventory_values_validated_as_sm_and_driver);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(packages_suite());
}
