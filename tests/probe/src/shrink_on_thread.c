/* SPDX-License-Identifier: Apache-2.0 */
/* LD_PRELOAD helper for tests/probe/jobs.sh: cuts the file named by
 * $SHRINK_PATH to $SHRINK_TO bytes (default 0) just before the process
 * creates its $SHRINK_AT_THREAD-th thread (counting from 1). kimg-probe
 * check -j N of K < N files starts its package-index thread and K walk
 * workers first (probe/pool.c starts one per job waiting), so thread K+2
 * is the first helper
 * that a worker starts inside one large input: the cut then lands after
 * the file's headers were read and before its helpers read payloads. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_int created;

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	const char *path = getenv("SHRINK_PATH"), *at = getenv("SHRINK_AT_THREAD");
	if (path && at && atomic_fetch_add(&created, 1) + 1 == atoi(at)) {
		const char *to = getenv("SHRINK_TO");
		if (truncate(path, to ? strtoll(to, NULL, 0) : 0) != 0)
			abort();
	}
	return real(t, attr, fn, arg);
}
