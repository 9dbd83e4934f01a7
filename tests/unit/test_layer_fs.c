/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the final file system of image layers (core/layer_fs.c):
 * the OCI image-spec's layer.md rules, case by case, each with the file
 * system a layer-by-layer extraction (overlayfs) would leave as the oracle:
 * replacement, whiteouts of files and directories (lower layers only),
 * opaque directories, non-directories replacing directories, members under
 * symlinked directories, hard links outliving their target's name, names
 * that leave the image, symlink loops, the entry limit. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "layer_fs.h"
#include "testutil.h"

static struct kimg_layer_fs *fs_of(unsigned layers)
{
	struct kimg_layer_fs *fs = kimg_layer_fs_new(layers, 1000);
	ck_assert_ptr_nonnull(fs);
	return fs;
}

static int add(struct kimg_layer_fs *fs, unsigned l, uint32_t o, const char *name, enum kimg_fs_kind k,
	       const char *link)
{
	struct kimg_error err = { 0, 0, "" };
	return kimg_layer_fs_add(fs, l, o, name, k, link, &err);
}

START_TEST(later_layers_replace_and_whiteouts_delete_below_only)
{
	struct kimg_layer_fs *fs = fs_of(3);
	ck_assert_int_eq(add(fs, 0, 0, "./usr/lib/a.so", KIMG_FS_FILE, NULL), 0);
	ck_assert_int_eq(add(fs, 0, 1, "usr/lib/b.so", KIMG_FS_FILE, NULL), 0);
	ck_assert_int_eq(add(fs, 1, 0, "usr/lib/a.so", KIMG_FS_FILE, NULL), 0);      /* replaces */
	ck_assert_int_eq(add(fs, 1, 1, "usr/lib/.wh.b.so", KIMG_FS_FILE, NULL), 0);  /* deletes below */
	ck_assert_int_eq(add(fs, 1, 2, "usr/lib/c.so", KIMG_FS_FILE, NULL), 0);
	ck_assert_int_eq(add(fs, 1, 3, "usr/lib/.wh.c.so", KIMG_FS_FILE, NULL), 0);  /* same layer: not hidden */
	ck_assert_int_eq(kimg_layer_fs_finish(fs), 0);
	ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 0, 0));
	ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 0, 1));
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 1, 0), "/usr/lib/a.so");
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 1, 2), "/usr/lib/c.so");
	ck_assert_uint_eq(kimg_layer_fs_layer_files(fs, 0), 0);
	ck_assert_uint_eq(kimg_layer_fs_layer_files(fs, 1), 2);
	kimg_layer_fs_free(fs);
}
END_TEST

START_TEST(directory_whiteouts_and_opaque_directories)
{
	struct kimg_layer_fs *fs = fs_of(3);
	add(fs, 0, 0, "opt/x/a.so", KIMG_FS_FILE, NULL);
	add(fs, 0, 1, "opt/x/sub/b.so", KIMG_FS_FILE, NULL);
	add(fs, 0, 2, "opt/y/c.so", KIMG_FS_FILE, NULL);
	add(fs, 0, 3, "opt/z/d.so", KIMG_FS_FILE, NULL);
	add(fs, 1, 0, "opt/x/.wh..wh..opq", KIMG_FS_FILE, NULL);
	add(fs, 1, 1, "opt/x/e.so", KIMG_FS_FILE, NULL);
	add(fs, 1, 2, "opt/.wh.y", KIMG_FS_FILE, NULL);
	add(fs, 1, 3, "opt/z", KIMG_FS_FILE, NULL);          /* a file replaces the directory */
	add(fs, 2, 0, "opt/y/f.so", KIMG_FS_FILE, NULL);     /* made again above the whiteout */
	kimg_layer_fs_finish(fs);
	ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 0, 0));
	ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 0, 1));
	ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 0, 2));
	ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 0, 3));
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 1, 1), "/opt/x/e.so");
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 1, 3), "/opt/z");
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 2, 0), "/opt/y/f.so");
	unsigned layer;
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "/opt/x/sub/b.so", NULL), -1);
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "/opt/z", &layer), KIMG_FS_FILE);
	ck_assert_uint_eq(layer, 1);
	kimg_layer_fs_free(fs);
}
END_TEST

START_TEST(symlinked_directories_and_hard_links)
{
	struct kimg_layer_fs *fs = fs_of(3);
	add(fs, 0, 0, "usr/local/cuda-13.0", KIMG_FS_DIR, NULL);
	add(fs, 0, 1, "usr/local/cuda", KIMG_FS_SYMLINK, "cuda-13.0");
	add(fs, 0, 2, "a/lib.so", KIMG_FS_FILE, NULL);
	ck_assert_int_eq(add(fs, 0, 3, "b/lib.so", KIMG_FS_HARDLINK, "a/lib.so"), 0);
	add(fs, 0, 4, "up", KIMG_FS_SYMLINK, "../../../usr");  /* ".." stops at the root */
	add(fs, 1, 0, "usr/local/cuda/compat/libcuda.so.1", KIMG_FS_FILE, NULL);
	add(fs, 1, 1, "up/x.so", KIMG_FS_FILE, NULL);
	add(fs, 2, 0, "a/.wh.lib.so", KIMG_FS_FILE, NULL);
	kimg_layer_fs_finish(fs);
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 1, 0), "/usr/local/cuda-13.0/compat/libcuda.so.1");
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 1, 1), "/usr/x.so");
	/* the bytes of a/lib.so live on under the hard link's name */
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 0, 2), "/b/lib.so");
	ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 0, 3));
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "/usr/local/cuda/compat/libcuda.so.1", NULL), KIMG_FS_FILE);
	kimg_layer_fs_free(fs);
}
END_TEST

START_TEST(hostile_names_loops_and_limits_are_refused)
{
	struct kimg_layer_fs *fs = kimg_layer_fs_new(1, 8);
	ck_assert_int_eq(add(fs, 0, 0, "../etc/passwd", KIMG_FS_FILE, NULL), -KIMG_EFORMAT);
	ck_assert_int_eq(add(fs, 0, 1, "a/../../x", KIMG_FS_FILE, NULL), -KIMG_EFORMAT);
	ck_assert_int_eq(add(fs, 0, 2, "/etc/x", KIMG_FS_FILE, NULL), -KIMG_EFORMAT);
	ck_assert_int_eq(add(fs, 0, 3, "l1", KIMG_FS_SYMLINK, "l2"), 0);
	ck_assert_int_eq(add(fs, 0, 4, "l2", KIMG_FS_SYMLINK, "l1"), 0);
	ck_assert_int_eq(add(fs, 0, 5, "l1/x.so", KIMG_FS_FILE, NULL), -ELOOP);
	ck_assert_int_eq(add(fs, 0, 6, "h", KIMG_FS_HARDLINK, "nowhere"), -KIMG_EFORMAT);
	ck_assert_int_eq(add(fs, 0, 7, "d/.wh.", KIMG_FS_FILE, NULL), -KIMG_EFORMAT);
	ck_assert_int_eq(add(fs, 0, 8, "one/too/many", KIMG_FS_FILE, NULL), -KIMG_ELIMIT);
	ck_assert_int_eq(add(fs, 0, 9, "x", KIMG_FS_FILE, NULL), -KIMG_ELIMIT);
	ck_assert_int_eq(kimg_layer_fs_finish(fs), 0);
	char out[16];
	ck_assert_int_eq(kimg_layer_fs_normalize("./a//b/./", true, true, out, sizeof out), 4);
	ck_assert_str_eq(out, "/a/b");
	ck_assert_int_eq(kimg_layer_fs_normalize("aaaaaaaa/bbbbbbbbbb", true, true, out, sizeof out), -KIMG_ELIMIT);
	kimg_layer_fs_free(fs);
}
END_TEST

/* Thousands of paths: each is found again as it was added, whatever the
 * size the table grew to (it starts at 1024 slots and doubles when half
 * full; the nodes start at 256), the oracle being the list added. */
START_TEST(many_paths_are_each_found_again)
{
	enum { N = 3000 };
	struct kimg_layer_fs *fs = kimg_layer_fs_new(2, 2 * N);
	ck_assert_ptr_nonnull(fs);
	char name[64], want[64];
	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof name, "d%u/f%u.so", i % 37, i);
		ck_assert_int_eq(add(fs, 0, i, name, KIMG_FS_FILE, NULL), 0);
	}
	/* the second layer deletes every third file */
	for (unsigned i = 0; i < N; i += 3) {
		snprintf(name, sizeof name, "d%u/.wh.f%u.so", i % 37, i);
		ck_assert_int_eq(add(fs, 1, i / 3, name, KIMG_FS_FILE, NULL), 0);
	}
	ck_assert_int_eq(kimg_layer_fs_finish(fs), 0);
	ck_assert_uint_eq(kimg_layer_fs_layer_files(fs, 0), N - N / 3);
	ck_assert_uint_eq(kimg_layer_fs_layer_files(fs, 1), 0);
	ck_assert_uint_eq(kimg_layer_fs_layer_files(fs, 2), 0); /* no such layer */
	for (unsigned i = 0; i < N; i++) {
		snprintf(want, sizeof want, "/d%u/f%u.so", i % 37, i);
		unsigned layer = 9;
		if (i % 3 == 0) {
			ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 0, i));
			ck_assert_int_eq(kimg_layer_fs_lookup(fs, want, &layer), -1);
			continue;
		}
		ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 0, i), want);
		ck_assert_int_eq(kimg_layer_fs_lookup(fs, want, &layer), KIMG_FS_FILE);
		ck_assert_uint_eq(layer, 0);
	}
	ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 0, N));
	ck_assert_ptr_null(kimg_layer_fs_judged_as(fs, 2, 0));
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "/d0/f3000.so", NULL), -1);
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "/", NULL), -1);
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "d1/f1.so", NULL), KIMG_FS_FILE);
	kimg_layer_fs_free(fs);
}
END_TEST

/* Each refusal names its cause (layer.md's rules as kimg applies them). */
START_TEST(refusals_say_why)
{
	struct kimg_layer_fs *fs = kimg_layer_fs_new(2, 100);
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_layer_fs_add(fs, 2, 0, "a", KIMG_FS_FILE, NULL, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "layer 3 out of range");
	ck_assert_uint_eq(err.offset, 0);
	static char longname[KIMG_LAYER_FS_PATH_MAX + 8];
	memset(longname, 'n', sizeof longname - 1);
	ck_assert_int_eq(kimg_layer_fs_add(fs, 0, 0, longname, KIMG_FS_FILE, NULL, &err), -KIMG_ELIMIT);
	ck_assert_str_eq(err.what, "member name longer than 4096 bytes");
	ck_assert_int_eq(kimg_layer_fs_add(fs, 0, 1, "/abs", KIMG_FS_FILE, NULL, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "absolute member name '/abs': not applied");
	ck_assert_int_eq(kimg_layer_fs_add(fs, 0, 2, "../up", KIMG_FS_FILE, NULL, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "member name '../up' leaves the image root: not applied");
	ck_assert_int_eq(kimg_layer_fs_add(fs, 0, 3, "./", KIMG_FS_DIR, NULL, &err), 0); /* the root itself */
	/* a symlinked directory whose target makes the name too long */
	static char target[3001], member[2101];
	memset(target, 't', sizeof target - 1);
	memcpy(member, "s/", 2);
	memset(member + 2, 'm', sizeof member - 3);
	ck_assert_int_eq(kimg_layer_fs_add(fs, 0, 4, "s", KIMG_FS_SYMLINK, target, &err), 0);
	ck_assert_int_eq(kimg_layer_fs_add(fs, 0, 5, member, KIMG_FS_FILE, NULL, &err), -KIMG_ELIMIT);
	ck_assert_int_eq(strncmp(err.what, "'s/mmm", 6), 0); /* the name, cut to the message's room */
	/* the same name under a short link is read */
	ck_assert_int_eq(kimg_layer_fs_add(fs, 0, 6, "s", KIMG_FS_SYMLINK, "t", &err), 0);
	ck_assert_int_eq(kimg_layer_fs_add(fs, 0, 7, member, KIMG_FS_FILE, NULL, &err), 0);
	ck_assert_int_eq(kimg_layer_fs_add(fs, 1, 0, "d/.wh..", KIMG_FS_FILE, NULL, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "whiteout 'd/.wh..' names nothing: not applied");
	ck_assert_int_eq(kimg_layer_fs_add(fs, 1, 1, "h", KIMG_FS_HARDLINK, NULL, &err), -KIMG_EFORMAT);
	ck_assert_str_eq(err.what, "hard link 'h' to '': no such file in the image");
	/* a hard link to a directory is no link to a file */
	ck_assert_int_eq(kimg_layer_fs_add(fs, 1, 2, "dir", KIMG_FS_DIR, NULL, &err), 0);
	ck_assert_int_eq(kimg_layer_fs_add(fs, 1, 3, "h", KIMG_FS_HARDLINK, "dir", &err), -KIMG_EFORMAT);
	ck_assert_int_eq(kimg_layer_fs_finish(fs), 0);
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "t/mmm", NULL), -1);
	unsigned layer = 9;
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, member + 2 - 2, &layer), KIMG_FS_FILE);
	ck_assert_uint_eq(layer, 0);
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "dir", &layer), KIMG_FS_DIR);
	ck_assert_uint_eq(layer, 1);
	kimg_layer_fs_free(fs);
}
END_TEST

/* A symlink's target longer than a string block (64 KiB) is kept whole. */
START_TEST(long_link_targets_are_kept)
{
	struct kimg_layer_fs *fs = kimg_layer_fs_new(1, 10);
	static char target[70001];
	memset(target, 'x', sizeof target - 1);
	target[0] = '/';
	target[1] = 'y';
	target[2] = '/';
	ck_assert_int_eq(add(fs, 0, 0, "big", KIMG_FS_SYMLINK, target), 0);
	ck_assert_int_eq(add(fs, 0, 1, "y/f.so", KIMG_FS_FILE, NULL), 0);
	ck_assert_int_eq(add(fs, 0, 2, "small", KIMG_FS_SYMLINK, "/y"), 0);
	/* a target that with the rest of the name passes twice the path limit */
	static char far[9001];
	memset(far, 'f', sizeof far - 1);
	ck_assert_int_eq(add(fs, 0, 4, "far", KIMG_FS_SYMLINK, far), 0);
	ck_assert_int_eq(add(fs, 0, 5, "far/x.so", KIMG_FS_FILE, NULL), -KIMG_ELIMIT);
	ck_assert_int_eq(add(fs, 0, 3, "small/g.so", KIMG_FS_FILE, NULL), 0);
	ck_assert_int_eq(kimg_layer_fs_finish(fs), 0);
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "big", NULL), KIMG_FS_SYMLINK);
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 0, 3), "/y/g.so");
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "small/f.so", NULL), KIMG_FS_FILE);
	kimg_layer_fs_free(fs);
}
END_TEST

/* A hard link to the very first path added (the table's first node). */
START_TEST(a_hard_link_to_the_first_path)
{
	struct kimg_layer_fs *fs = fs_of(2);
	ck_assert_int_eq(add(fs, 0, 0, "lib.so", KIMG_FS_FILE, NULL), 0);
	ck_assert_int_eq(add(fs, 1, 0, "link.so", KIMG_FS_HARDLINK, "lib.so"), 0);
	ck_assert_int_eq(add(fs, 1, 1, ".wh.lib.so", KIMG_FS_FILE, NULL), 0);
	ck_assert_int_eq(kimg_layer_fs_finish(fs), 0);
	/* the bytes are layer 0's entry 0, judged under the link's name */
	ck_assert_str_eq(kimg_layer_fs_judged_as(fs, 0, 0), "/link.so");
	ck_assert_int_eq(kimg_layer_fs_lookup(fs, "link.so", NULL), KIMG_FS_HARDLINK);
	kimg_layer_fs_free(fs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("layer_fs");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, later_layers_replace_and_whiteouts_delete_below_only);
	tcase_add_test(tc, directory_whiteouts_and_opaque_directories);
	tcase_add_test(tc, symlinked_directories_and_hard_links);
	tcase_add_test(tc, hostile_names_loops_and_limits_are_refused);
	tcase_add_test(tc, many_paths_are_each_found_again);
	tcase_add_test(tc, refusals_say_why);
	tcase_add_test(tc, long_link_targets_are_kept);
	tcase_add_test(tc, a_hard_link_to_the_first_path);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
