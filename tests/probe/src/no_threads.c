/* SPDX-License-Identifier: Apache-2.0 */
/* LD_PRELOAD for tests/probe/jobs.sh: pthread_create grants
 * $NO_THREADS_GRANT threads (default 0), then fails with EAGAIN, as in a
 * process at its thread limit; each refusal adds a line to
 * $NO_THREADS_LOG when set, so the test knows the refusal happened. The
 * probe's one thread primitive (probe/thread.c) must then run the work on
 * the calling thread, and the output stay -j 1's byte for byte. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static atomic_int grant = -1; /* -1: not read yet */

/* Default visibility: the build's CFLAGS hide symbols. */
__attribute__((visibility("default"))) int pthread_create(pthread_t *t, const pthread_attr_t *attr,
							  void *(*fn)(void *), void *arg);
int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int unread = -1;
	const char *g = getenv("NO_THREADS_GRANT");
	atomic_compare_exchange_strong(&grant, &unread, g ? atoi(g) : 0);
	if (atomic_fetch_sub(&grant, 1) <= 0) {
		const char *log = getenv("NO_THREADS_LOG");
		FILE *f = log ? fopen(log, "a") : NULL;
		if (f) {
			fputs("refused\n", f);
			fclose(f);
		}
		return EAGAIN;
	}
	create_fn *real = (create_fn *)dlsym(RTLD_NEXT, "pthread_create");
	return real ? real(t, attr, fn, arg) : EAGAIN;
}
