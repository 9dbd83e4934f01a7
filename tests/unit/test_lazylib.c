/* SPDX-License-Identifier: Apache-2.0 */
/* sys/lazylib.c: the one loader of the optional libraries, against the C
 * library itself (always there: the oracle is libc's own functions and
 * names that no library defines). */
#include "testutil.h"

#include <dlfcn.h>
#include <pthread.h>

#include "lazylib.h"

static int (*f_atoi)(const char *);
static int (*f_absent)(void);
static int (*f_either)(int);

static void reset(void)
{
	f_atoi = NULL, f_absent = NULL, f_either = NULL;
}

START_TEST(loads_the_required_functions)
{
	reset();
	const struct kimg_lazy_fn fns[] = { KIMG_LAZY_FN("atoi", f_atoi) };
	struct kimg_lazylib lib = { .sonames = { "libc.so.6" }, .flags = RTLD_NOW, .fns = fns, .n_fns = 1,
				    .once = PTHREAD_ONCE_INIT };
	ck_assert(kimg_lazylib_load(&lib));
	ck_assert_int_eq(lib.state, 1);
	ck_assert_ptr_nonnull(f_atoi);
	ck_assert_int_eq(f_atoi("42"), 42);
	ck_assert(kimg_lazylib_load(&lib)); /* once: the same answer */
	ck_assert_str_eq(kimg_lazylib_name(&lib), "libc.so.6");
}
END_TEST

START_TEST(a_missing_required_function_leaves_every_pointer_null)
{
	reset();
	const struct kimg_lazy_fn fns[] = { KIMG_LAZY_FN("atoi", f_atoi), KIMG_LAZY_FN("kimg_no_such_function", f_absent) };
	struct kimg_lazylib lib = { .sonames = { "libc.so.6" }, .flags = RTLD_NOW, .fns = fns, .n_fns = 2,
				    .once = PTHREAD_ONCE_INIT };
	ck_assert(!kimg_lazylib_load(&lib));
	ck_assert_int_eq(lib.state, -2);
	ck_assert_ptr_null(f_atoi);
	ck_assert_ptr_null(f_absent);
	ck_assert_str_eq(lib.why, "libc.so.6 lacks kimg_no_such_function");
	reset();
	struct kimg_lazylib said = { .sonames = { "libc.so.6" }, .flags = RTLD_NOW, .fns = fns, .n_fns = 2,
				     .lacks = "the test functions", .once = PTHREAD_ONCE_INIT };
	ck_assert(!kimg_lazylib_load(&said));
	ck_assert_str_eq(said.why, "libc.so.6 lacks the test functions");
}
END_TEST

START_TEST(optional_and_alternative_functions)
{
	reset();
	const struct kimg_lazy_fn fns[] = {
		KIMG_LAZY_FN("atoi", f_atoi),
		KIMG_LAZY_FN_OPTIONAL("kimg_no_such_function", f_absent),
		/* alternatives: the first found wins (abs, not isdigit) */
		KIMG_LAZY_FN_OPTIONAL("kimg_no_such_function_v2", f_either),
		KIMG_LAZY_FN_OPTIONAL("abs", f_either),
		KIMG_LAZY_FN_OPTIONAL("isdigit", f_either),
	};
	struct kimg_lazylib lib = { .sonames = { "libc.so.6" }, .flags = RTLD_NOW, .fns = fns, .n_fns = 5,
				    .once = PTHREAD_ONCE_INIT };
	ck_assert(kimg_lazylib_load(&lib));
	ck_assert_ptr_null(f_absent);
	ck_assert_ptr_nonnull(f_either);
	ck_assert_int_eq(f_either(-7), 7);
	ck_assert_int_eq(f_atoi("-3"), -3);
}
END_TEST

START_TEST(sonames_in_order_and_the_override)
{
	reset();
	const struct kimg_lazy_fn fns[] = { KIMG_LAZY_FN("atoi", f_atoi) };
	struct kimg_lazylib none = { .sonames = { "libkimg-test-absent.so.1", "libkimg-test-absent.so.2" },
				     .flags = RTLD_NOW, .fns = fns, .n_fns = 1, .once = PTHREAD_ONCE_INIT };
	ck_assert(!kimg_lazylib_load(&none));
	ck_assert_int_eq(none.state, -1);
	ck_assert_str_eq(none.why, "libkimg-test-absent.so.1 not found");
	ck_assert_ptr_null(f_atoi);

	struct kimg_lazylib second = { .sonames = { "libkimg-test-absent.so.1", "libc.so.6" }, .flags = RTLD_NOW,
				       .fns = fns, .n_fns = 1, .once = PTHREAD_ONCE_INIT };
	ck_assert(kimg_lazylib_load(&second));
	ck_assert_int_eq(f_atoi("5"), 5);

	reset();
	struct kimg_lazylib over = { .sonames = { "libc.so.6" }, .flags = RTLD_NOW, .fns = fns, .n_fns = 1,
				     .once = PTHREAD_ONCE_INIT };
	kimg_lazylib_set_soname(&over, "");  /* empty: ignored */
	ck_assert_str_eq(kimg_lazylib_name(&over), "libc.so.6");
	kimg_lazylib_set_soname(&over, "libkimg-test-absent.so.3");
	ck_assert_str_eq(kimg_lazylib_name(&over), "libkimg-test-absent.so.3");
	ck_assert(!kimg_lazylib_load(&over)); /* only the override is tried */
	ck_assert_str_eq(over.why, "libkimg-test-absent.so.3 not found");
	kimg_lazylib_set_soname(&over, "libc.so.6"); /* after the attempt: ignored */
	ck_assert_str_eq(kimg_lazylib_name(&over), "libkimg-test-absent.so.3");
}
END_TEST

/* Many threads asking at once: one load, every caller sees it done. */
static int (*f_threads)(const char *);
static const struct kimg_lazy_fn thread_fns[] = { KIMG_LAZY_FN("atoi", f_threads) };
static struct kimg_lazylib thread_lib = { .sonames = { "libc.so.6" }, .flags = RTLD_NOW, .fns = thread_fns,
					  .n_fns = 1, .once = PTHREAD_ONCE_INIT };

static void *ask(void *arg)
{
	(void)arg;
	return kimg_lazylib_load(&thread_lib) && f_threads && f_threads("9") == 9 ? (void *)1 : NULL;
}

START_TEST(threads_share_one_load)
{
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, ask, NULL), 0);
	for (int i = 0; i < 8; i++) {
		void *r = NULL;
		pthread_join(t[i], &r);
		ck_assert_ptr_nonnull(r);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lazylib");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, loads_the_required_functions);
	tcase_add_test(tc, a_missing_required_function_leaves_every_pointer_null);
	tcase_add_test(tc, optional_and_alternative_functions);
	tcase_add_test(tc, sonames_in_order_and_the_override);
	tcase_add_test(tc, threads_share_one_load);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
