/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the final file system of image layers (core/layer_fs.c):
 * the OCI image-spec's layer.md rules, case by case, each with the file
 * system a layer-by-layer extraction (overlayfs) would leave as the oracle:
 * replacement, whiteouts of files and directories (lower layers only),
 * opaque directories, non-directories replacing directories, members under
 * symlinked directories, hard links outliving their target's name, names
 * that leave the image, symlink loops, the entry limit. */
#include <errno.h>
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

int main(void)
{
	Suite *s = suite_create("layer_fs");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, later_layers_replace_and_whiteouts_delete_below_only);
	tcase_add_test(tc, directory_whiteouts_and_opaque_directories);
	tcase_add_test(tc, symlinked_directories_and_hard_links);
	tcase_add_test(tc, hostile_names_loops_and_limits_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
