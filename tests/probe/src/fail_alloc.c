/* SPDX-License-Identifier: Apache-2.0 */
/* LD_PRELOAD for tests/probe/alloc_fail.sh: the FAIL_ALLOC_AT'th call of
 * malloc, calloc or realloc in the process (counted from 1, all threads)
 * returns NULL with errno ENOMEM, once; every other call is glibc's. With
 * FAIL_ALLOC_COUNT set to a path, the number of calls made is written
 * there at exit, so the script knows how many there are to fail (the
 * calls after the program's exit handlers are neither failed nor counted). glibc
 * lets a program replace malloc (its manual, "Replacing malloc"), and its
 * own calls (stdio, opendir) then go through these too: a failure there
 * is one the probe must survive as well. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

static atomic_long calls;
static long fail_at = -2; /* -2: not read yet; -1: none */
static atomic_int exiting; /* the program's exit handlers have run */

static int fail_now(void)
{
	if (fail_at == -2) {
		const char *s = getenv("FAIL_ALLOC_AT"); /* getenv allocates nothing */
		fail_at = s ? strtol(s, NULL, 10) : -1;
	}
	if (atomic_load(&exiting))
		return 0;
	long n = atomic_fetch_add(&calls, 1) + 1;
	if (n == fail_at) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

/* Default visibility: the build's CFLAGS hide symbols. */
#define EXPORT __attribute__((visibility("default")))
EXPORT void *malloc(size_t size);
EXPORT void *calloc(size_t n, size_t size);
EXPORT void *realloc(void *p, size_t size);

void *malloc(size_t size)
{
	return fail_now() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return fail_now() ? NULL : __libc_realloc(p, size);
}

/* Registered first, so run last of the exit handlers: what runs after it
 * (the objects' destructors, gcov's dump in the coverage build) is not
 * the program's and is neither failed nor counted. */
static void at_exit(void)
{
	atomic_store(&exiting, 1);
	const char *path = getenv("FAIL_ALLOC_COUNT");
	if (!path)
		return;
	char line[32];
	int n = snprintf(line, sizeof line, "%ld\n", atomic_load(&calls));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, line, (size_t)n) < 0) {
		}
		close(fd);
	}
}

__attribute__((constructor)) static void watch_exit(void)
{
	atexit(at_exit);
}
