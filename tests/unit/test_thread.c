/* SPDX-License-Identifier: Apache-2.0 */
/* probe/thread.c: kimg-probe's one way to start a thread. The oracle is
 * the task itself: which thread ran it (pthread_self), how often, and
 * whether it had run when create returned; creation is made to fail with
 * probe_thread_test_limit, as when a process has no threads left. */
#include <pthread.h>
#include <stdatomic.h>

#include "testutil.h"
#include "thread.h"

struct task {
	pthread_t caller;
	atomic_int runs;
	atomic_bool on_caller;         /* ran on the thread that created it */
	atomic_bool release;           /* wait_for_release: the caller lets it end */
};

static void *note(void *arg)
{
	struct task *k = arg;
	atomic_store(&k->on_caller, pthread_equal(pthread_self(), k->caller) != 0);
	atomic_fetch_add(&k->runs, 1);
	return k;
}

/* Ends only once the caller, back from create, says so: a task run inline
 * at create would wait for ever (Check's timeout fails the test). */
static void *wait_for_release(void *arg)
{
	struct task *k = arg;
	while (!atomic_load(&k->release))
		sched_yield();
	return note(arg);
}

static void task_init(struct task *k)
{
	k->caller = pthread_self();
	atomic_init(&k->runs, 0);
	atomic_init(&k->on_caller, false);
	atomic_init(&k->release, false);
}

START_TEST(a_task_runs_on_a_thread_of_its_own)
{
	for (int when = PROBE_THREAD_INLINE_NOW; when <= PROBE_THREAD_INLINE_NEVER; when++) {
		struct task k;
		task_init(&k);
		struct probe_thread t;
		ck_assert(probe_thread_create(&t, wait_for_release, &k, when));
		atomic_store(&k.release, true);
		ck_assert_ptr_eq(probe_thread_join(&t), &k);
		ck_assert_int_eq(atomic_load(&k.runs), 1);
		ck_assert(!atomic_load(&k.on_caller));
	}
}
END_TEST

START_TEST(without_a_thread_inline_now_runs_in_create)
{
	probe_thread_test_limit(0);
	struct task k;
	task_init(&k);
	struct probe_thread t;
	ck_assert(!probe_thread_create(&t, note, &k, PROBE_THREAD_INLINE_NOW));
	ck_assert_int_eq(atomic_load(&k.runs), 1);
	ck_assert(atomic_load(&k.on_caller));
	ck_assert_ptr_eq(probe_thread_join(&t), &k);
	ck_assert_int_eq(atomic_load(&k.runs), 1); /* join does not run it again */
	probe_thread_test_limit(-1);
}
END_TEST

START_TEST(without_a_thread_inline_at_join_runs_in_join)
{
	probe_thread_test_limit(0);
	struct task k;
	task_init(&k);
	struct probe_thread t;
	ck_assert(!probe_thread_create(&t, note, &k, PROBE_THREAD_INLINE_AT_JOIN));
	ck_assert_int_eq(atomic_load(&k.runs), 0);
	ck_assert_ptr_eq(probe_thread_join(&t), &k);
	ck_assert_int_eq(atomic_load(&k.runs), 1);
	ck_assert(atomic_load(&k.on_caller));
	ck_assert_ptr_eq(probe_thread_join(&t), &k); /* a second join: the same answer, no second run */
	ck_assert_int_eq(atomic_load(&k.runs), 1);
	probe_thread_test_limit(-1);
}
END_TEST

START_TEST(without_a_thread_inline_never_does_not_run)
{
	probe_thread_test_limit(0);
	struct task k;
	task_init(&k);
	struct probe_thread t;
	ck_assert(!probe_thread_create(&t, note, &k, PROBE_THREAD_INLINE_NEVER));
	ck_assert_ptr_null(probe_thread_join(&t));
	ck_assert_int_eq(atomic_load(&k.runs), 0);
	probe_thread_test_limit(-1);
}
END_TEST

/* A set of helpers where the process runs out part way: those granted a
 * thread run on it, the rest on the caller, each exactly once. */
START_TEST(the_limit_counts_creates_then_lifts)
{
	enum { N = 4 };
	struct task k[N];
	struct probe_thread t[N];
	probe_thread_test_limit(2);
	for (int i = 0; i < N; i++) {
		task_init(&k[i]);
		ck_assert(probe_thread_create(&t[i], note, &k[i], PROBE_THREAD_INLINE_AT_JOIN) == (i < 2));
	}
	for (int i = 0; i < N; i++) {
		ck_assert_ptr_eq(probe_thread_join(&t[i]), &k[i]);
		ck_assert_int_eq(atomic_load(&k[i].runs), 1);
		ck_assert(atomic_load(&k[i].on_caller) == (i >= 2));
	}
	probe_thread_test_limit(-1);
	struct task again;
	task_init(&again);
	struct probe_thread ta;
	ck_assert(probe_thread_create(&ta, note, &again, PROBE_THREAD_INLINE_NOW));
	probe_thread_join(&ta);
	ck_assert(!atomic_load(&again.on_caller));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("thread");
	TCase *tc = tcase_create("create_join");
	tcase_add_test(tc, a_task_runs_on_a_thread_of_its_own);
	tcase_add_test(tc, without_a_thread_inline_now_runs_in_create);
	tcase_add_test(tc, without_a_thread_inline_at_join_runs_in_join);
	tcase_add_test(tc, without_a_thread_inline_never_does_not_run);
	tcase_add_test(tc, the_limit_counts_creates_then_lifts);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
