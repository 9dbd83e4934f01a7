/* SPDX-License-Identifier: Apache-2.0 */
/* core/source_names.c: which names say "source or documentation". The
 * expectations are the rule of source_names.h applied by hand. */
#include "testutil.h"

#include "source_names.h"

static bool is_source(const char *name)
{
	return kimg_name_is_source(name, strlen(name));
}

START_TEST(each_suffix_of_the_list_and_nothing_else)
{
	static const char *const yes[] = { "a.py", "x.pyc", "t.pyi", "m.pyx", "m.pxd", "m.pxi", "k.h", "k.hh", "k.hpp",
					   "k.hxx", "k.cuh", "k.inl", "k.c", "k.cc", "k.cpp", "k.cxx", "README.rst",
					   "README.md", "Config.cmake", "torch/include/ATen/core/Tensor.h",
					   "/abs/dir.so/x.py", "a.b.py" };
	static const char *const no[] = { "libfoo.so", "libcudart.so.13", "x.cu", "x.ptx", "x.cubin", "RECORD",
					  "CMakeLists.txt", "x.PY", "a.py.gz", "a.pyd", "dir.py/lib.so", "x.py/", "",
					  "c", "a.h5", "model.onnx", "kernels.fatbin" };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		ck_assert_msg(is_source(yes[i]), "%s should be a source name", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		ck_assert_msg(!is_source(no[i]), "%s should not be a source name", no[i]);
}
END_TEST

/* A name that is a suffix alone is a hidden file, not source ("~/.py"). */
START_TEST(a_name_that_is_only_a_suffix_is_not_source)
{
	ck_assert(!is_source(".py"));
	ck_assert(!is_source("dir/.h"));
	ck_assert(!is_source("/x/.cmake"));
	ck_assert(is_source("dir/a.h"));
}
END_TEST

/* len, not the terminator, bounds the name. */
START_TEST(length_bounds_the_name)
{
	ck_assert(kimg_name_is_source("a.pyXXXX", 4));
	ck_assert(!kimg_name_is_source("a.py", 3));
	ck_assert(!kimg_name_is_source("a.py", 0));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("source_names");
	TCase *tc = tcase_create("source_names");
	tcase_add_test(tc, each_suffix_of_the_list_and_nothing_else);
	tcase_add_test(tc, a_name_that_is_only_a_suffix_is_not_source);
	tcase_add_test(tc, length_bounds_the_name);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
