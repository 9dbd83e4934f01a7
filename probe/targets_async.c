/* SPDX-License-Identifier: Apache-2.0 */
/* The --sm lists parsed on a thread of their own (probe.h): for lists
 * that name `native`, whose GPU query is most of a warm check's start. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "glibc_pins.h"
#include "probe.h"
#include "thread.h"

struct probe_targets_async {
	char *const *lists;
	int n_lists, driver_version;
	struct probe_thread thread;
	pthread_mutex_t lock;
	pthread_cond_t known;
	bool done;                     /* under lock */
	atomic_bool failed;
	int n;                         /* probe_parse_targets' answer */
	void (*on_done)(void *arg);    /* under lock */
	void *on_done_arg;
	struct probe_target *targets;
};

bool probe_targets_async_needed(char *const *lists, int n_lists)
{
	for (int i = 0; i < n_lists; i++) {
		const char *l = lists[i] ? lists[i] : "";
		for (const char *p = l; (p = strstr(p, "native")) != NULL; p += 6)
			if ((p == l || p[-1] == ',') && (p[6] == '\0' || p[6] == ','))
				return true;
	}
	return false;
}

static void *parse(void *arg)
{
	struct probe_targets_async *a = arg;
	struct probe_target *t = NULL;
	int n = probe_parse_targets(a->lists, a->n_lists, a->driver_version, &t);
	pthread_mutex_lock(&a->lock);
	a->n = n;
	a->targets = n > 0 ? t : NULL;
	a->done = true;
	atomic_store(&a->failed, n <= 0);
	if (a->on_done)
		a->on_done(a->on_done_arg);
	pthread_cond_broadcast(&a->known);
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

struct probe_targets_async *probe_targets_async_start(char *const *lists, int n_lists, int driver_version)
{
	struct probe_targets_async *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->lists = lists;
	a->n_lists = n_lists;
	a->driver_version = driver_version;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->known, NULL);
	atomic_init(&a->failed, false);
	/* Without a thread the lists are parsed here, now: the caller finds
	 * them done. */
	probe_thread_create(&a->thread, parse, a, PROBE_THREAD_INLINE_NOW);
	return a;
}

int probe_targets_async_wait(struct probe_targets_async *a, struct probe_target **targets)
{
	pthread_mutex_lock(&a->lock);
	while (!a->done)
		pthread_cond_wait(&a->known, &a->lock);
	int n = a->n;
	*targets = a->targets;
	pthread_mutex_unlock(&a->lock);
	return n > 0 ? n : -1;
}

void probe_targets_async_on_done(struct probe_targets_async *a, void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&a->lock);
	if (a->done) {
		fn(arg);
	} else {
		a->on_done = fn;
		a->on_done_arg = arg;
	}
	pthread_mutex_unlock(&a->lock);
}

bool probe_targets_async_failed(const struct probe_targets_async *a)
{
	return atomic_load(&a->failed);
}

int probe_targets_async_end(struct probe_targets_async *a, struct probe_target **targets)
{
	probe_thread_join(&a->thread);
	int n = a->n > 0 ? a->n : -1;
	*targets = a->targets;
	pthread_cond_destroy(&a->known);
	pthread_mutex_destroy(&a->lock);
	free(a);
	return n;
}
