/* SPDX-License-Identifier: Apache-2.0 */
/* sys/owners.c: the owning-package index (sys/owners.h contract). The
 * records are written here, so the expected owner of every path is known
 * from what the test wrote, not from the index. Paths that lookups seldom
 * ask for (source files, docs, headers, /usr/share) are left out at first
 * and read on the first lookup of one: these tests check that the answers
 * are the same as if every path had been indexed from the start. */
#include "testutil.h"

#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owners.h"

static char root[] = "/tmp/kimg-test-owners.XXXXXX";

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Each test runs in its own process (Check's fork mode): root is fresh. */
static void remove_env(void)
{
	ck_assert_int_eq(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void put(const char *rel, const char *text)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	/* the directories on the way */
	for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static const char *owner(struct kimg_owners *o, const char *rel)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	const struct kimg_pkg *p = kimg_owners_lookup(o, path);
	return p ? p->name : NULL;
}

/* A site-packages inside a conda environment, and a dpkg directory:
 *   env/lib/site/near-1.0.dist-info  lists near/_C.so, near/__init__.py, near/api.h, shared.py
 *   env/lib/far-2.0.dist-info        lists site/shared.py (the same file as near's) and site/far/x.so
 *   env/conda-meta/cpkg-3.0-0.json   lists lib/libc.so, include/c.h
 *   env/lib/site/egg-4.0.egg-info    lists ../egg/e.so and ../egg/e.py, relative to itself
 *   dpkg/info/libfoo1:amd64.list     lists a library, a .so under /usr/share and a README.md */
static void write_env(void)
{
	ck_assert_ptr_nonnull(mkdtemp(root));
	put("env/lib/site/near-1.0.dist-info/RECORD",
	    "near/_C.so,sha256=a,1\nnear/__init__.py,,\nnear/api.h,,\nshared.py,,\nnear-1.0.dist-info/RECORD,,\n");
	put("env/lib/site/near-1.0.dist-info/INSTALLER", "pip\n");
	put("env/lib/far-2.0.dist-info/RECORD", "site/shared.py,,\nsite/far/x.so,,\n");
	put("env/conda-meta/cpkg-3.0-0.json",
	    "{\"name\": \"cpkg\", \"version\": \"3.0\", \"files\": [\"lib/libc.so\", \"include/c.h\"]}\n");
	put("env/lib/site/egg-4.0.egg-info/installed-files.txt", "../egg/e.so\n../egg/e.py\n");
	put("dpkg/info/libfoo1:amd64.list", "/usr/lib/x86_64-linux-gnu/libfoo.so.1\n/usr/share/foo/kernels.so\n"
					      "/usr/share/doc/libfoo1/README.md\n");
	put("dpkg/status", "Package: libfoo1\nStatus: install ok installed\nVersion: 1.2-3\n\n");
}

static struct kimg_owners *new_owners(void)
{
	char dpkg[1024];
	snprintf(dpkg, sizeof dpkg, "%s/dpkg", root);
	struct kimg_owners *o = kimg_owners_new(dpkg);
	ck_assert_ptr_nonnull(o);
	return o;
}

START_TEST(device_code_paths_are_found_in_each_kind_of_record)
{
	write_env();
	struct kimg_owners *o = new_owners();
	ck_assert_str_eq(owner(o, "env/lib/site/near/_C.so"), "near");
	ck_assert_str_eq(owner(o, "env/lib/site/far/x.so"), "far");
	ck_assert_str_eq(owner(o, "env/lib/libc.so"), "cpkg");
	ck_assert_str_eq(owner(o, "env/lib/site/egg/e.so"), "egg");
	ck_assert_ptr_null(owner(o, "env/lib/site/near/unlisted.so"));
	const struct kimg_pkg *p = kimg_owners_lookup(o, "/usr/lib/x86_64-linux-gnu/libfoo.so.1");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p->name, "libfoo1");
	ck_assert_str_eq(p->version, "1.2-3");
	ck_assert_str_eq(p->source, "dpkg");
	kimg_owners_free(o);
	remove_env();
}
END_TEST

/* The first lookup of a source file or of a path under /usr/share reads
 * the records again for such paths; every record read so far answers. */
START_TEST(rarely_asked_paths_are_found_when_asked)
{
	write_env();
	struct kimg_owners *o = new_owners();
	ck_assert_str_eq(owner(o, "env/lib/site/near/_C.so"), "near"); /* the records read, sources left out */
	ck_assert_str_eq(owner(o, "env/lib/site/near/__init__.py"), "near");
	ck_assert_str_eq(owner(o, "env/lib/site/near/api.h"), "near");
	ck_assert_str_eq(owner(o, "env/include/c.h"), "cpkg");
	ck_assert_str_eq(owner(o, "env/lib/site/egg/e.py"), "egg");
	ck_assert_str_eq(owner(o, "env/lib/site/near/_C.so"), "near");
	const struct kimg_pkg *p = kimg_owners_lookup(o, "/usr/share/foo/kernels.so");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p->name, "libfoo1");
	p = kimg_owners_lookup(o, "/usr/share/doc/libfoo1/README.md");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p->name, "libfoo1");
	kimg_owners_free(o);
	remove_env();
}
END_TEST

/* dpkg read first (a lookup no Python record answers), a source path
 * after: its list is read again too. */
START_TEST(dpkg_lists_read_before_the_first_source_lookup_are_read_again)
{
	write_env();
	struct kimg_owners *o = new_owners();
	ck_assert_str_eq(kimg_owners_lookup(o, "/usr/lib/x86_64-linux-gnu/libfoo.so.1")->name, "libfoo1");
	const struct kimg_pkg *p = kimg_owners_lookup(o, "/usr/share/foo/kernels.so");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p->name, "libfoo1");
	ck_assert_str_eq(p->version, "1.2-3");
	kimg_owners_free(o);
	remove_env();
}
END_TEST

/* shared.py is named by near (read first: its directory is nearer) and
 * by far. The second reading goes through the records in the order first
 * read, so near keeps it, as with every path indexed from the start. */
START_TEST(first_owner_still_wins_for_a_path_read_the_second_time)
{
	write_env();
	struct kimg_owners *o = new_owners();
	ck_assert_str_eq(owner(o, "env/lib/site/near/_C.so"), "near");
	ck_assert_str_eq(owner(o, "env/lib/site/far/x.so"), "far");
	ck_assert_str_eq(owner(o, "env/lib/site/shared.py"), "near");
	kimg_owners_free(o);
	/* the same when the source path is the first lookup of all */
	o = new_owners();
	ck_assert_str_eq(owner(o, "env/lib/site/shared.py"), "near");
	kimg_owners_free(o);
	remove_env();
}
END_TEST

/* Prepared (the probe's own thread reads the records ahead) or not, the
 * answers are the same. */
START_TEST(prepare_changes_no_answer)
{
	write_env();
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/env/lib/site", root);
	static const char *const asked[] = { "env/lib/site/near/_C.so", "env/lib/site/shared.py", "env/lib/site/far/x.so",
					     "env/lib/libc.so", "env/include/c.h", "env/lib/site/egg/e.py" };
	struct kimg_owners *a = new_owners(), *b = new_owners();
	kimg_owners_prepare(b, dir);
	for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
		const char *x = owner(a, asked[i]), *y = owner(b, asked[i]);
		ck_assert_msg(x && y && strcmp(x, y) == 0, "%s: %s / %s", asked[i], x ? x : "-", y ? y : "-");
	}
	kimg_owners_free(a);
	kimg_owners_free(b);
	remove_env();
}
END_TEST

/* The first dpkg lookups search the lists, later ones index them
 * (owners.c DPKG_SEARCHES): every answer is the list's package and
 * version either way, a path that is only a prefix of a listed line
 * (libz.so of libz.so.1) has no owner, and merged /usr finds /lib/...
 * for /usr/lib/.... Seven lookups: more than the searches. */
START_TEST(dpkg_answers_are_the_same_searched_or_indexed)
{
	write_env();
	put("dpkg/info/libz1:amd64.list", "/.\n/usr\n/usr/lib/x86_64-linux-gnu/libz.so.1\n");
	put("dpkg/info/libbar2.list", "/lib/x86_64-linux-gnu/libbar.so.2\r\n");
	put("dpkg/info/libbaz3:amd64.list", "/usr/lib/x86_64-linux-gnu/libbaz.so.3\n");
	put("dpkg/status", "Package: libfoo1\nStatus: install ok installed\nVersion: 1.2-3\n\n"
			   "Package: libz1\nStatus: install ok installed\nVersion: 1:1.3\n\n"
			   "Package: libbar2\nStatus: deinstall ok config-files\nVersion: 0.9\n\n"
			   "Package: libbar2\nStatus: install ok installed\nVersion: 2.0\n\n");
	static const struct {
		const char *path, *name, *version;
	} asked[] = {
		{ "/usr/lib/x86_64-linux-gnu/libz.so", NULL, NULL },
		{ "/usr/lib/x86_64-linux-gnu/libz.so.1", "libz1", "1:1.3" },
		{ "/usr/lib/x86_64-linux-gnu/libbar.so.2", "libbar2", "2.0" },
		{ "/usr/lib/x86_64-linux-gnu/libz.so.1", "libz1", "1:1.3" },
		{ "/usr/lib/x86_64-linux-gnu/libbaz.so.3", "libbaz3", "" },
		{ "/usr/lib/x86_64-linux-gnu/libfoo.so.1", "libfoo1", "1.2-3" },
		{ "/usr/lib/x86_64-linux-gnu/libbar.so.2", "libbar2", "2.0" },
	};
	for (int indexed = 1; indexed >= 0; indexed--) {
		struct kimg_owners *o = new_owners();
		/* first pass: eight lookups of a path no list names, then the lists are indexed */
		for (int i = 0; indexed && i < 8; i++)
			ck_assert_ptr_null(kimg_owners_lookup(o, "/usr/lib/x86_64-linux-gnu/nowhere.so"));
		for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
			const struct kimg_pkg *p = kimg_owners_lookup(o, asked[i].path);
			if (!asked[i].name) {
				ck_assert_msg(!p, "%s: owned by %s", asked[i].path, p ? p->name : "");
				continue;
			}
			ck_assert_msg(p != NULL, "%s: no owner", asked[i].path);
			ck_assert_str_eq(p->name, asked[i].name);
			ck_assert_str_eq(p->version, asked[i].version);
			ck_assert_str_eq(p->source, "dpkg");
		}
		kimg_owners_free(o);
	}
	remove_env();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("owners");
	TCase *tc = tcase_create("owners");
	tcase_add_test(tc, device_code_paths_are_found_in_each_kind_of_record);
	tcase_add_test(tc, rarely_asked_paths_are_found_when_asked);
	tcase_add_test(tc, dpkg_lists_read_before_the_first_source_lookup_are_read_again);
	tcase_add_test(tc, first_owner_still_wins_for_a_path_read_the_second_time);
	tcase_add_test(tc, dpkg_answers_are_the_same_searched_or_indexed);
	tcase_add_test(tc, prepare_changes_no_answer);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
