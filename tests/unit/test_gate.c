/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of probe/gate.c, the walk's gate for what is not known
 * yet (check's GPUs): it settles once, open or called off; waiters wait
 * for that and learn which; the writing thread's first pass through the
 * open gate begins the output once; the walk's on_settle call runs once,
 * before or after it is registered; and a pool worker that waits (at the
 * gate, or for a lock: probe_wait_lock) lets another worker run, so a
 * one-thread pool whose first job waits for its second finishes. The
 * oracle is the order of events each case makes, not the gate's own
 * state: a lost wake-up or a missing hand-off hangs, and Check's time
 * limit fails it. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "gate.h"
#include "probe.h"

static int begun;
static void count_begin(void *ctx)
{
	(void)ctx;
	begun++;
}

START_TEST(settle_open_then_waits_pass)
{
	struct probe_gate g;
	probe_gate_init(&g, NULL, NULL);
	ck_assert(probe_gate_is_closed(&g));
	ck_assert(!probe_gate_called_off(&g));
	probe_gate_settle(&g, true);
	ck_assert(!probe_gate_is_closed(&g));
	ck_assert(probe_gate_wait(&g));
	ck_assert(probe_gate_wait(&g));
	ck_assert(!probe_gate_called_off(&g));
	probe_gate_destroy(&g);
}
END_TEST

START_TEST(settle_off_calls_the_run_off)
{
	struct probe_gate g;
	begun = 0;
	probe_gate_init(&g, count_begin, NULL);
	probe_gate_settle(&g, false);
	ck_assert(probe_gate_called_off(&g));
	ck_assert(!probe_gate_wait(&g));
	ck_assert(!probe_gate_pass(&g));
	ck_assert_int_eq(begun, 0); /* nothing is written for a run called off */
	probe_gate_destroy(&g);
}
END_TEST

START_TEST(settles_once)
{
	struct probe_gate g;
	probe_gate_init(&g, NULL, NULL);
	probe_gate_settle(&g, true);
	probe_gate_settle(&g, false); /* too late: the output may be half written */
	ck_assert(probe_gate_wait(&g));
	ck_assert(!probe_gate_called_off(&g));
	probe_gate_destroy(&g);
	probe_gate_init(&g, NULL, NULL);
	probe_gate_settle(&g, false);
	probe_gate_settle(&g, true);
	ck_assert(!probe_gate_wait(&g));
	probe_gate_destroy(&g);
}
END_TEST

START_TEST(null_gate_is_open)
{
	ck_assert(probe_gate_wait(NULL));
	ck_assert(probe_gate_pass(NULL));
	ck_assert(!probe_gate_called_off(NULL));
	ck_assert(!probe_gate_is_closed(NULL));
}
END_TEST

START_TEST(output_begins_once_on_the_first_pass)
{
	struct probe_gate g;
	begun = 0;
	probe_gate_init(&g, count_begin, NULL);
	probe_gate_settle(&g, true);
	ck_assert_int_eq(begun, 0); /* settling writes nothing: the writer does */
	ck_assert(probe_gate_pass(&g));
	ck_assert(probe_gate_pass(&g));
	ck_assert(probe_gate_wait(&g));
	ck_assert_int_eq(begun, 1);
	probe_gate_destroy(&g);
}
END_TEST

struct waiter {
	struct probe_gate *g;
	atomic_bool returned;
	bool answer;
};

static void *wait_at(void *arg)
{
	struct waiter *w = arg;
	w->answer = probe_gate_wait(w->g);
	atomic_store(&w->returned, true);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

START_TEST(waiters_wait_until_settled)
{
	struct probe_gate g;
	probe_gate_init(&g, NULL, NULL);
	struct waiter w[3];
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		w[i] = (struct waiter){ &g, false, false };
		ck_assert_int_eq(pthread_create(&t[i], NULL, wait_at, &w[i]), 0);
	}
	sleep_ms(50);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(!atomic_load(&w[i].returned), "waiter %d passed a closed gate", i);
	probe_gate_settle(&g, _i == 0);
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		ck_assert(atomic_load(&w[i].returned));
		ck_assert(w[i].answer == (_i == 0));
	}
	probe_gate_destroy(&g);
}
END_TEST

static int settled_calls;
static void on_settled(void *arg)
{
	(void)arg;
	settled_calls++;
}

START_TEST(on_settle_before_and_after)
{
	struct probe_gate g;
	settled_calls = 0;
	probe_gate_init(&g, NULL, NULL);
	probe_gate_on_settle(&g, on_settled, NULL);
	ck_assert_int_eq(settled_calls, 0);
	probe_gate_settle(&g, true);
	ck_assert_int_eq(settled_calls, 1);
	probe_gate_settle(&g, true);
	ck_assert_int_eq(settled_calls, 1);
	probe_gate_destroy(&g);
	/* registered once it is settled: called at once */
	probe_gate_init(&g, NULL, NULL);
	probe_gate_settle(&g, false);
	probe_gate_on_settle(&g, on_settled, NULL);
	ck_assert_int_eq(settled_calls, 2);
	probe_gate_destroy(&g);
}
END_TEST

/* ---- the hand-off on a pool of one thread ---- */

struct gate_job {
	struct probe_pool_job base;
	struct probe_gate *g;
	bool opener;                   /* settles the gate instead of waiting */
	bool answer;
	atomic_int *order;             /* finish order, for the oracle */
	int finished_as;
};

static void gate_job_run(struct probe_pool_job *base)
{
	struct gate_job *j = (struct gate_job *)base;
	if (j->opener)
		probe_gate_settle(j->g, true);
	else
		j->answer = probe_gate_wait(j->g);
}

static void gate_job_finish(struct probe_pool_job *base)
{
	struct gate_job *j = (struct gate_job *)base;
	j->finished_as = atomic_fetch_add(j->order, 1);
}

/* -j 1: job 0 waits at the gate that job 1 opens. Without the pool's
 * hand-off (probe_pool_wait_begin in probe_gate_wait) job 1 never starts
 * and this hangs. */
START_TEST(waiting_worker_lets_another_run)
{
	struct probe_gate g;
	atomic_int order = 0;
	probe_gate_init(&g, NULL, NULL);
	struct probe_pool *p = probe_pool_start(1, 8);
	ck_assert(p != NULL);
	struct gate_job j[2] = { { .g = &g, .opener = false, .order = &order },
				 { .g = &g, .opener = true, .order = &order } };
	for (int i = 0; i < 2; i++) {
		j[i].base.run = gate_job_run;
		j[i].base.finish = gate_job_finish;
		probe_pool_submit(p, &j[i].base);
	}
	probe_pool_end(p);
	ck_assert(j[0].answer);
	ck_assert_int_eq(j[0].finished_as, 0); /* finish stays in submission order */
	ck_assert_int_eq(j[1].finished_as, 1);
	probe_gate_destroy(&g);
}
END_TEST

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool second_ran;

static void lock_job_run(struct probe_pool_job *base)
{
	(void)base;
	probe_wait_lock(&held);
	pthread_mutex_unlock(&held);
}

static void flag_job_run(struct probe_pool_job *base)
{
	(void)base;
	atomic_store(&second_ran, true);
}

static void no_finish(struct probe_pool_job *base)
{
	(void)base;
}

/* -j 1: job 0 waits for a lock this thread holds until job 1 has run. */
START_TEST(lock_wait_lets_another_run)
{
	atomic_store(&second_ran, false);
	pthread_mutex_lock(&held);
	struct probe_pool *p = probe_pool_start(1, 8);
	ck_assert(p != NULL);
	struct probe_pool_job a = { .run = lock_job_run, .finish = no_finish };
	struct probe_pool_job b = { .run = flag_job_run, .finish = no_finish };
	probe_pool_submit(p, &a);
	probe_pool_submit(p, &b);
	for (int i = 0; i < 200 && !atomic_load(&second_ran); i++)
		sleep_ms(10);
	bool ran = atomic_load(&second_ran);
	pthread_mutex_unlock(&held);
	probe_pool_end(p);
	ck_assert_msg(ran, "the second job waited behind a worker blocked on a lock");
}
END_TEST

/* Not a worker: probe_wait_lock is a plain lock. */
START_TEST(lock_wait_outside_a_pool)
{
	probe_wait_lock(&held);
	ck_assert_int_ne(pthread_mutex_trylock(&held), 0);
	pthread_mutex_unlock(&held);
}
END_TEST

static Suite *gate_suite(void)
{
	Suite *s = suite_create("gate");
	TCase *tc = tcase_create("gate");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, settle_open_then_waits_pass);
	tcase_add_test(tc, settle_off_calls_the_run_off);
	tcase_add_test(tc, settles_once);
	tcase_add_test(tc, null_gate_is_open);
	tcase_add_test(tc, output_begins_once_on_the_first_pass);
	tcase_add_loop_test(tc, waiters_wait_until_settled, 0, 2);
	tcase_add_test(tc, on_settle_before_and_after);
	tcase_add_test(tc, waiting_worker_lets_another_run);
	tcase_add_test(tc, lock_wait_lets_another_run);
	tcase_add_test(tc, lock_wait_outside_a_pool);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(gate_suite());
}
