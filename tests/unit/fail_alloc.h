/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation failures on demand, for the unit tests of code whose error
 * paths run only when memory runs out: this program's malloc, calloc and
 * realloc (glibc's own __libc_* behind them; its strdup, scandir and
 * fopen allocate through them too) fail the Nth allocation after
 * fail_alloc_arm(N), once. A test arms it around the one call it
 * judges, for N = 1, 2, ... until the call no longer reaches an Nth
 * allocation (fail_alloc_hit() false): every allocation failing in turn,
 * as tests/probe/alloc_fail.sh does for a whole run.
 *
 * fail_alloc_own_only(true) limits the failures to allocations this
 * program's own code makes (kimg's, linked in), not a shared library's:
 * libarchive 3.6 dereferences a failed allocation of its own.
 *
 * Include it in one file of a test program only (it defines malloc,
 * exported: the build's -fvisibility=hidden would leave libc's own
 * calls, strdup's, to libc's malloc).
 * Under AddressSanitizer (make asan-test), whose allocator must see every
 * allocation, nothing is replaced and FAIL_ALLOC_WORKS is 0: the tests
 * then skip their failure loops. */
#ifndef KIMG_TEST_FAIL_ALLOC_H
#define KIMG_TEST_FAIL_ALLOC_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define FAIL_ALLOC_WORKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAIL_ALLOC_WORKS 0
#endif
#endif
#ifndef FAIL_ALLOC_WORKS
#define FAIL_ALLOC_WORKS 1
#endif

static long fail_alloc_countdown; /* 0: off */
static bool fail_alloc_failed, fail_alloc_own;

static inline void fail_alloc_own_only(bool own)
{
	fail_alloc_own = own;
}

static inline void fail_alloc_arm(long nth)
{
	fail_alloc_failed = false;
	fail_alloc_countdown = nth;
}

/* Disarm; did the armed allocation come (and fail)? */
static inline bool fail_alloc_hit(void)
{
	fail_alloc_countdown = 0;
	return fail_alloc_failed;
}

#if FAIL_ALLOC_WORKS
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);

/* The program's code, as the linker's default script bounds it. */
extern const char __executable_start[], etext[];

static bool fail_alloc_now(const void *caller)
{
	if (fail_alloc_own && !((const char *)caller >= __executable_start && (const char *)caller < etext))
		return false;
	if (fail_alloc_countdown > 0 && --fail_alloc_countdown == 0) {
		fail_alloc_failed = true;
		errno = ENOMEM;
		return true;
	}
	return false;
}

__attribute__((visibility("default"))) void *malloc(size_t n)
{
	return fail_alloc_now(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

__attribute__((visibility("default"))) void *calloc(size_t n, size_t size)
{
	return fail_alloc_now(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

__attribute__((visibility("default"))) void *realloc(void *p, size_t n)
{
	return fail_alloc_now(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}
#endif

#endif
