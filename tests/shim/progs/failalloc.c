/* SPDX-License-Identifier: Apache-2.0 */
/* A failing allocator for tests/shim/driver_log.sh, preloaded with
 * libkimg: while armed (the fake driver arms it around every log callback
 * it calls, fake_cuda.c failalloc_arm), malloc and friends fail and are
 * counted. At exit it prints "failalloc: N refused" on stderr, so a test
 * sees any allocation made inside a log callback, kimg's included. The
 * real allocator is glibc's own __libc_* entry points. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);

static int armed;
static int refused;

__attribute__((visibility("default"))) void failalloc_arm(int on);
void failalloc_arm(int on)
{
	__atomic_store_n(&armed, on, __ATOMIC_SEQ_CST);
}

static int refuse(void)
{
	if (!__atomic_load_n(&armed, __ATOMIC_SEQ_CST))
		return 0;
	__atomic_fetch_add(&refused, 1, __ATOMIC_SEQ_CST);
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	return refuse() ? NULL : __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
	return refuse() ? NULL : __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
	return refuse() ? NULL : __libc_realloc(p, n);
}
void *memalign(size_t al, size_t n)
{
	return refuse() ? NULL : __libc_memalign(al, n);
}
void *aligned_alloc(size_t al, size_t n)
{
	return refuse() ? NULL : __libc_memalign(al, n);
}
int posix_memalign(void **out, size_t al, size_t n)
{
	if (refuse())
		return ENOMEM;
	void *p = __libc_memalign(al, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

__attribute__((destructor)) static void report_refused(void)
{
	char line[64];
	int n = snprintf(line, sizeof line, "failalloc: %d refused\n", __atomic_load_n(&refused, __ATOMIC_SEQ_CST));
	if (n > 0)
		(void)!write(2, line, (size_t)n);
}
