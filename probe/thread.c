/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe's one thread primitive (thread.h). SQLite's threads.c does
 * the same for its sorter: a task that cannot have a thread is run by the
 * caller, so that running out of threads costs speed, never output. */
#include <stdatomic.h>

#include "glibc_pins.h"
#include "thread.h"

/* probe_thread_test_limit: creates left before they fail, -1 for none. */
static atomic_int test_grant = -1;

void probe_thread_test_limit(int grant)
{
	atomic_store(&test_grant, grant < 0 ? -1 : grant);
}

/* False when the test limit says this create fails. */
static bool test_allows(void)
{
	int g = atomic_load(&test_grant);
	while (g >= 0) {
		if (g == 0)
			return false;
		if (atomic_compare_exchange_weak(&test_grant, &g, g - 1))
			return true;
	}
	return true;
}

bool probe_thread_create(struct probe_thread *t, void *(*task)(void *arg), void *arg,
			 enum probe_thread_inline when)
{
	*t = (struct probe_thread){ .task = task, .arg = arg };
	t->on_thread = test_allows() && pthread_create(&t->tid, NULL, task, arg) == 0;
	if (!t->on_thread && when == PROBE_THREAD_INLINE_NOW)
		t->result = task(arg);
	t->ran = !t->on_thread && when != PROBE_THREAD_INLINE_AT_JOIN;
	return t->on_thread;
}

void *probe_thread_join(struct probe_thread *t)
{
	if (t->on_thread) {
		pthread_join(t->tid, &t->result);
		t->on_thread = false;
	} else if (!t->ran) {
		t->result = t->task(t->arg);
	}
	t->ran = true;
	return t->result;
}
