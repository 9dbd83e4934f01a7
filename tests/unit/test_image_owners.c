/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of probe/image_owners.c: the owning package of each file
 * of an image, from the image's own records. The oracle is the records'
 * documented shapes (dpkg's status and info/<pkg>.list, a dist-info
 * RECORD with its INSTALLER, a conda-meta JSON record, paths relative to
 * site-packages and to the conda prefix) and the precedence the host's
 * lookup has (sys/owners.h: a file a Python or conda record names is that
 * package's even when dpkg lists it), written out here by hand. */
#include "testutil.h"
#include "../../probe/image.h" /* probe's, not core/image.h, which testutil.h includes */
#include "owners.h"
#include "fail_alloc.h"

static struct probe_image_record rec(enum record_kind kind, const char *path, const char *text)
{
	struct probe_image_record r = { kind, (char *)path, (unsigned char *)text, strlen(text) };
	return r;
}

/* The package of path: name, version, installer, source, record. */
static void expect_owner(const struct probe_image_owners *o, const char *path, const char *name, const char *version,
			 const char *installer, const char *source, const char *record)
{
	const struct kimg_pkg *p = probe_image_owners_lookup(o, path);
	ck_assert_msg(p != NULL, "%s: no owner", path);
	ck_assert_str_eq(p->name, name);
	ck_assert_str_eq(p->version, version);
	ck_assert_str_eq(p->installer, installer);
	ck_assert_str_eq(p->source, source);
	ck_assert_str_eq(p->record, record);
}

static void expect_none(const struct probe_image_owners *o, const char *path)
{
	const struct kimg_pkg *p = probe_image_owners_lookup(o, path);
	ck_assert_msg(p == NULL, "%s: owned by %s", path, p ? p->name : "");
}

START_TEST(record_kinds)
{
	static const struct {
		const char *path;
		enum record_kind kind;
	} rows[] = {
		{ "/var/lib/dpkg/status", RECORD_DPKG_STATUS },
		{ "/var/lib/dpkg/status-old", RECORD_NONE },
		{ "/var/lib/dpkg/info/libc6:amd64.list", RECORD_DPKG_LIST },
		{ "/var/lib/dpkg/info/a.list", RECORD_DPKG_LIST },
		{ "/var/lib/dpkg/info/.list", RECORD_NONE },        /* no package name */
		{ "/var/lib/dpkg/info/sub/x.list", RECORD_NONE },   /* not in info/ itself */
		{ "/var/lib/dpkg/info/libc6.md5sums", RECORD_NONE },
		{ "/usr/lib/dpkg/info/libc6.list", RECORD_NONE },
		{ "/usr/lib/python3/site-packages/torch-2.8.0.dist-info/RECORD", RECORD_PY_RECORD },
		{ "/usr/lib/python3/site-packages/foo-1.0.egg-info/RECORD", RECORD_PY_RECORD },
		{ "/x/foo-1.0.dist-info/RECORD.bak", RECORD_NONE },
		{ "/x/foo-1.0.dist-info/RECORDS", RECORD_NONE },
		{ "/x/foo-1.0.other/RECORD", RECORD_NONE },
		{ "/a.dist-info/RECORD", RECORD_PY_RECORD },
		{ ".dist-info/RECORD", RECORD_NONE },               /* 17 bytes: no room for a name */
		{ "/x/foo-1.0.dist-info/INSTALLER", RECORD_PY_INSTALLER },
		{ "/x/foo-1.0.egg-info/INSTALLER", RECORD_NONE },
		{ "INSTALLER", RECORD_NONE },
		{ "/opt/conda/conda-meta/numpy-1.26.4-py311_0.json", RECORD_CONDA_META },
		{ "/conda-meta/a.json", RECORD_CONDA_META },
		{ "/opt/conda/conda-meta/history", RECORD_NONE },
		{ "/opt/conda/conda-meta/.json", RECORD_NONE },
		{ "/opt/conda/conda-meta/sub/a.json", RECORD_NONE },
		{ "/opt/conda/not-conda-meta/a.json", RECORD_NONE },
		{ "conda-meta/a.json", RECORD_NONE },               /* no leading slash: not the layout */
		{ "/etc/passwd", RECORD_NONE },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		ck_assert_msg(probe_image_record_kind(rows[i].path) == rows[i].kind, "%s: kind %d, want %d", rows[i].path,
			      (int)probe_image_record_kind(rows[i].path), (int)rows[i].kind);
}
END_TEST

/* dpkg: the .list names the files (its "/." line is the root, owned by
 * nobody), the status the version of the installed package of that name. */
START_TEST(dpkg_list_and_status)
{
	struct probe_image_owners *o = probe_image_owners_new();
	struct probe_image_record recs[] = {
		rec(RECORD_DPKG_LIST, "/var/lib/dpkg/info/libcudnn9:amd64.list",
		    "/.\n/usr\n/usr/lib/x86_64-linux-gnu/libcudnn.so.9\r\n\n/usr/share/doc/libcudnn9\n"),
		rec(RECORD_DPKG_LIST, "/var/lib/dpkg/info/zlib1g.list", "/usr/lib/libz.so.1\n"),
		rec(RECORD_DPKG_LIST, "/var/lib/dpkg/info/notalist", "/usr/bin/orphan\n"),
		rec(RECORD_DPKG_STATUS, "/var/lib/dpkg/status",
		    "Package: zlib1g\nStatus: install ok installed\nVersion: 1:1.2.13\n\n"
		    "Package: libcudnn9\nStatus: install ok installed\nArchitecture: amd64\nVersion: 9.1.0.70-1\n\n"),
	};
	probe_image_owners_build(o, recs, sizeof recs / sizeof recs[0]);
	const char *list = "/var/lib/dpkg/info/libcudnn9:amd64.list";
	expect_owner(o, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "libcudnn9", "9.1.0.70-1", "dpkg", "dpkg", list);
	expect_owner(o, "usr/lib/x86_64-linux-gnu//./libcudnn.so.9", "libcudnn9", "9.1.0.70-1", "dpkg", "dpkg", list);
	expect_owner(o, "/usr/share/doc/libcudnn9", "libcudnn9", "9.1.0.70-1", "dpkg", "dpkg", list);
	expect_owner(o, "/usr", "libcudnn9", "9.1.0.70-1", "dpkg", "dpkg", list);
	expect_owner(o, "/usr/lib/libz.so.1", "zlib1g", "1:1.2.13", "dpkg", "dpkg", "/var/lib/dpkg/info/zlib1g.list");
	expect_none(o, "/");
	expect_none(o, "/.");
	expect_none(o, "/usr/bin/orphan"); /* a record that is no .list names nothing */
	expect_none(o, "/usr/lib/x86_64-linux-gnu/libcudnn.so");
	expect_none(o, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9/x");
	probe_image_owners_free(o);
}
END_TEST

/* A .list with no status beside it: the package, its version unknown. */
START_TEST(dpkg_list_without_status)
{
	struct probe_image_owners *o = probe_image_owners_new();
	struct probe_image_record r = rec(RECORD_DPKG_LIST, "/var/lib/dpkg/info/libnccl2.list", "/usr/lib/libnccl.so.2\n");
	probe_image_owners_build(o, &r, 1);
	expect_owner(o, "/usr/lib/libnccl.so.2", "libnccl2", "", "dpkg", "dpkg", "/var/lib/dpkg/info/libnccl2.list");
	probe_image_owners_free(o);
}
END_TEST

/* A RECORD's paths are relative to site-packages (the dist-info's
 * parent), or absolute; its INSTALLER's first line is the installer. */
START_TEST(python_record)
{
	struct probe_image_owners *o = probe_image_owners_new();
	const char *sp = "/usr/local/lib/python3.11/site-packages";
	struct probe_image_record recs[] = {
		rec(RECORD_PY_INSTALLER, "/usr/local/lib/python3.11/site-packages/flash_attn-2.8.3.dist-info/INSTALLER",
		    "uv\r\nsecond line\n"),
		rec(RECORD_PY_RECORD, "/usr/local/lib/python3.11/site-packages/flash_attn-2.8.3.dist-info/RECORD",
		    "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so,sha256=abc,123\n"
		    "\"flash_attn/un,usual.py\",,\n"
		    "\"broken,unterminated\n"),
		rec(RECORD_PY_INSTALLER, "/usr/local/lib/python3.11/site-packages/other-1.0.dist-info/INSTALLER", "pip\n"),
		rec(RECORD_PY_RECORD, "/usr/local/lib/python3.11/site-packages/torch-2.8.0.dist-info/RECORD",
		    "torch/lib/libtorch_cuda.so,,\n../../../bin/torchrun,,\n/opt/abs/file.so,,\n"),
		rec(RECORD_PY_RECORD, "/usr/local/lib/python3.11/site-packages/old_pkg-0.1-py3.11.egg-info/RECORD",
		    "old_pkg/_C.so\n"),
	};
	probe_image_owners_build(o, recs, sizeof recs / sizeof recs[0]);
	const char *fa = "/usr/local/lib/python3.11/site-packages/flash_attn-2.8.3.dist-info/RECORD";
	const char *tr = "/usr/local/lib/python3.11/site-packages/torch-2.8.0.dist-info/RECORD";
	char p[512];
	snprintf(p, sizeof p, "%s/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so", sp);
	expect_owner(o, p, "flash_attn", "2.8.3", "uv", "dist-info", fa);
	snprintf(p, sizeof p, "%s/flash_attn/un,usual.py", sp);
	expect_owner(o, p, "flash_attn", "2.8.3", "uv", "dist-info", fa);
	snprintf(p, sizeof p, "%s/torch/lib/libtorch_cuda.so", sp);
	expect_owner(o, p, "torch", "2.8.0", "", "dist-info", tr); /* its INSTALLER is another's */
	expect_owner(o, "/usr/local/bin/torchrun", "torch", "2.8.0", "", "dist-info", tr);
	expect_owner(o, "/opt/abs/file.so", "torch", "2.8.0", "", "dist-info", tr);
	snprintf(p, sizeof p, "%s/old_pkg/_C.so", sp);
	expect_owner(o, p, "old_pkg", "0.1", "", "egg-info",
		     "/usr/local/lib/python3.11/site-packages/old_pkg-0.1-py3.11.egg-info/RECORD");
	snprintf(p, sizeof p, "%s/broken", sp);
	expect_none(o, p);
	probe_image_owners_free(o);
}
END_TEST

/* RECORD paths that name no dist-info directory: nothing is owned. */
START_TEST(python_record_misplaced)
{
	struct probe_image_owners *o = probe_image_owners_new();
	struct probe_image_record recs[] = {
		rec(RECORD_PY_RECORD, "RECORD", "/usr/a.so\n"),
		rec(RECORD_PY_RECORD, "/RECORD", "/usr/b.so\n"),
		rec(RECORD_PY_RECORD, "/x/not a dist info/RECORD", "/usr/c.so\n"),
		rec(RECORD_PY_RECORD, "/foo-1.0.dist-info/RECORD", "d.so\n"),
	};
	probe_image_owners_build(o, recs, sizeof recs / sizeof recs[0]);
	expect_none(o, "/usr/a.so");
	expect_none(o, "/usr/b.so");
	expect_none(o, "/usr/c.so");
	/* at the root: its files are relative to "/" */
	expect_owner(o, "/d.so", "foo", "1.0", "", "dist-info", "/foo-1.0.dist-info/RECORD");
	probe_image_owners_free(o);
}
END_TEST

/* conda: "files" relative to the prefix (the parent of conda-meta). */
START_TEST(conda_meta)
{
	struct probe_image_owners *o = probe_image_owners_new();
	struct probe_image_record recs[] = {
		rec(RECORD_CONDA_META, "/opt/conda/conda-meta/cupy-13.3.0-py311h.json",
		    "{\"name\": \"cupy\", \"version\": \"13.3.0\", \"files\": [\"lib/python3.11/site-packages/cupy/_core.so\", "
		    "\"bin/cupy-tool\"]}"),
		rec(RECORD_CONDA_META, "/conda-meta/root-1-0.json", "{\"name\": \"root\", \"version\": \"1\", \"files\": [\"lib/r.so\"]}"),
		rec(RECORD_CONDA_META, "/opt/conda/conda-meta/bad.json", "{\"name\": \"bad\", \"files\": [\"lib/bad.so\""),
		rec(RECORD_CONDA_META, "/opt/other/meta.json", "{\"name\": \"nometa\", \"version\": \"1\", \"files\": [\"lib/n.so\"]}"),
	};
	probe_image_owners_build(o, recs, sizeof recs / sizeof recs[0]);
	const char *cm = "/opt/conda/conda-meta/cupy-13.3.0-py311h.json";
	expect_owner(o, "/opt/conda/lib/python3.11/site-packages/cupy/_core.so", "cupy", "13.3.0", "conda", "conda-meta", cm);
	expect_owner(o, "/opt/conda/bin/cupy-tool", "cupy", "13.3.0", "conda", "conda-meta", cm);
	expect_owner(o, "/lib/r.so", "root", "1", "conda", "conda-meta", "/conda-meta/root-1-0.json");
	expect_none(o, "/opt/conda/lib/bad.so");   /* not JSON: nothing */
	expect_none(o, "/opt/other/lib/n.so");     /* no conda-meta directory: no prefix */
	expect_none(o, "/lib/n.so");
	probe_image_owners_free(o);
}
END_TEST

/* One file in several records: a Python or conda record wins over dpkg
 * whatever the order; between two of a kind, the first keeps it. */
START_TEST(first_record_keeps_a_file)
{
	struct probe_image_owners *o = probe_image_owners_new();
	struct probe_image_record recs[] = {
		rec(RECORD_DPKG_LIST, "/var/lib/dpkg/info/python3-torch.list", "/usr/lib/python3/dist-packages/torch/a.so\n/usr/lib/python3/dist-packages/torch/b.so\n"),
		rec(RECORD_PY_RECORD, "/usr/lib/python3/dist-packages/torch-2.1.0.dist-info/RECORD", "torch/a.so,,\n"),
		rec(RECORD_PY_RECORD, "/usr/lib/python3/dist-packages/torch_dup-9.9.dist-info/RECORD", "torch/a.so,,\ntorch/c.so,,\n"),
		rec(RECORD_CONDA_META, "/usr/conda-meta/t-1-0.json", "{\"name\": \"t\", \"version\": \"1\", \"files\": [\"lib/python3/dist-packages/torch/c.so\"]}"),
	};
	probe_image_owners_build(o, recs, sizeof recs / sizeof recs[0]);
	expect_owner(o, "/usr/lib/python3/dist-packages/torch/a.so", "torch", "2.1.0", "", "dist-info",
		     "/usr/lib/python3/dist-packages/torch-2.1.0.dist-info/RECORD");
	expect_owner(o, "/usr/lib/python3/dist-packages/torch/b.so", "python3-torch", "", "dpkg", "dpkg",
		     "/var/lib/dpkg/info/python3-torch.list");
	expect_owner(o, "/usr/lib/python3/dist-packages/torch/c.so", "torch_dup", "9.9", "", "dist-info",
		     "/usr/lib/python3/dist-packages/torch_dup-9.9.dist-info/RECORD");
	probe_image_owners_free(o);
}
END_TEST

/* Many files and packages: the table grows past its first size (4096
 * slots, half of them used) and every file keeps its package. */
START_TEST(many_files_and_packages)
{
	enum { PKGS = 150, FILES = 40 };
	struct probe_image_record *recs = calloc(PKGS, sizeof *recs);
	char (*paths)[64] = calloc(PKGS, sizeof *paths);
	ck_assert(recs && paths);
	for (int k = 0; k < PKGS; k++) {
		snprintf(paths[k], sizeof paths[k], "/var/lib/dpkg/info/pkg%d.list", k);
		char *text = malloc(FILES * 40);
		ck_assert(text != NULL);
		size_t n = 0;
		for (int f = 0; f < FILES; f++)
			n += (size_t)sprintf(text + n, "/usr/lib/p%d/file%d.so\n", k, f);
		recs[k] = (struct probe_image_record){ RECORD_DPKG_LIST, paths[k], (unsigned char *)text, n };
	}
	struct probe_image_owners *o = probe_image_owners_new();
	probe_image_owners_build(o, recs, PKGS);
	for (int k = 0; k < PKGS; k++)
		for (int f = 0; f < FILES; f++) {
			char p[64], want[16];
			snprintf(p, sizeof p, "/usr/lib/p%d/file%d.so", k, f);
			snprintf(want, sizeof want, "pkg%d", k);
			const struct kimg_pkg *pkg = probe_image_owners_lookup(o, p);
			ck_assert_msg(pkg != NULL, "%s: no owner", p);
			ck_assert_str_eq(pkg->name, want);
			ck_assert_str_eq(pkg->record, paths[k]);
		}
	expect_none(o, "/usr/lib/p0/file40.so");
	probe_image_owners_free(o);
	for (int k = 0; k < PKGS; k++)
		free(recs[k].bytes);
	free(recs);
	free(paths);
}
END_TEST

/* Each allocation of a build failing in turn: never a wrong owner (a file
 * is its package's or, what failed to be recorded, nobody's), no crash. */
START_TEST(allocation_failures)
{
	if (!FAIL_ALLOC_WORKS)
		return;
	enum { FILES = 2100 }; /* past the first table's 2048 */
	char *list = malloc(FILES * 32);
	ck_assert_ptr_nonnull(list);
	size_t n = 0;
	for (int f = 0; f < FILES; f++)
		n += (size_t)sprintf(list + n, "/usr/lib/d/f%d.so\n", f);
	struct probe_image_record recs[] = {
		rec(RECORD_PY_INSTALLER, "/sp/torch-2.8.0.dist-info/INSTALLER", "pip\n"),
		rec(RECORD_PY_RECORD, "/sp/torch-2.8.0.dist-info/RECORD", "torch/a.so,,\n"),
		rec(RECORD_CONDA_META, "/opt/c/conda-meta/cupy-13-0.json",
		    "{\"name\": \"cupy\", \"version\": \"13\", \"files\": [\"lib/c.so\"]}"),
		rec(RECORD_DPKG_STATUS, "/var/lib/dpkg/status", "Package: big\nStatus: install ok installed\nVersion: 1\n\n"),
		{ RECORD_DPKG_LIST, "/var/lib/dpkg/info/big.list", (unsigned char *)list, n },
	};
	bool hit = true;
	long k;
	/* each of the first and those around the table's growth (the 2048th
	 * file), every 101st between: the files' copies all fail alike */
	for (k = 1; hit; k += k < 20 || (k >= 2030 && k < 2080) ? 1 : 101) {
		struct probe_image_owners *o = probe_image_owners_new();
		ck_assert_ptr_nonnull(o);
		fail_alloc_arm(k);
		probe_image_owners_build(o, recs, sizeof recs / sizeof recs[0]);
		hit = fail_alloc_hit();
		const struct kimg_pkg *p = probe_image_owners_lookup(o, "/sp/torch/a.so");
		ck_assert_msg(!p || strcmp(p->name, "torch") == 0, "allocation %ld failed: %s", k, p->name);
		p = probe_image_owners_lookup(o, "/opt/c/lib/c.so");
		ck_assert_msg(!p || strcmp(p->name, "cupy") == 0, "allocation %ld failed: %s", k, p->name);
		for (int f = 0; f < FILES; f += 97) {
			char path[64];
			snprintf(path, sizeof path, "/usr/lib/d/f%d.so", f);
			p = probe_image_owners_lookup(o, path);
			ck_assert_msg(!p || (strcmp(p->name, "big") == 0 && strcmp(p->version, "1") == 0), "allocation %ld failed: %s",
				      k, p->name);
			if (!hit) /* nothing failed: every file its package's */
				ck_assert_ptr_nonnull(p);
		}
		probe_image_owners_free(o);
	}
	ck_assert_int_gt(k, FILES); /* each file's own copy was one of them */
	free(list);
}
END_TEST

START_TEST(empty_and_null)
{
	struct probe_image_owners *o = probe_image_owners_new();
	ck_assert(o != NULL);
	expect_none(o, "/usr/lib/libz.so.1"); /* no table yet */
	probe_image_owners_build(o, NULL, 0);
	expect_none(o, "/usr/lib/libz.so.1");
	ck_assert(probe_image_owners_lookup(NULL, "/x") == NULL);
	probe_image_owners_free(o);
	probe_image_owners_free(NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("image_owners");
	TCase *t = tcase_create("owners");
	tcase_add_test(t, record_kinds);
	tcase_add_test(t, dpkg_list_and_status);
	tcase_add_test(t, dpkg_list_without_status);
	tcase_add_test(t, python_record);
	tcase_add_test(t, python_record_misplaced);
	tcase_add_test(t, conda_meta);
	tcase_add_test(t, first_record_keeps_a_file);
	tcase_add_test(t, many_files_and_packages);
	tcase_add_test(t, empty_and_null);
	tcase_add_test(t, allocation_failures);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
