/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of probe/pool.c, the workers of kimg-probe -j N: how many
 * jobs run at once (exactly N, not N + 1, with twice N threads started),
 * finish steps in submission order whatever order the jobs end in, at
 * most `window` jobs in flight, the hand-off of a waiting job's place
 * (probe_pool_wait_begin/end) and the gate for held jobs. The oracle is
 * each case's own counters, taken inside the jobs; the timings only give
 * the workers room to misbehave, never decide a result. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "probe.h"
#include "thread.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

struct job {
	struct probe_pool_job base; /* first: the pool hands this back */
	int index;
	unsigned sleep_ms;
	int *finished;              /* order of finish steps */
	int *n_finished;
	_Atomic int *started;
};

static _Atomic int running, max_running, ran;

static void note_running(void)
{
	int now = atomic_fetch_add(&running, 1) + 1;
	int seen = atomic_load(&max_running);
	while (now > seen && !atomic_compare_exchange_weak(&max_running, &seen, now))
		;
}

static void job_run(struct probe_pool_job *pj)
{
	struct job *j = (struct job *)pj;
	note_running();
	if (j->started)
		atomic_fetch_add(j->started, 1);
	sleep_ms(j->sleep_ms);
	atomic_fetch_add(&ran, 1);
	atomic_fetch_sub(&running, 1);
}

static void job_finish(struct probe_pool_job *pj)
{
	struct job *j = (struct job *)pj;
	j->finished[(*j->n_finished)++] = j->index;
}

static void reset(void)
{
	atomic_store(&running, 0);
	atomic_store(&max_running, 0);
	atomic_store(&ran, 0);
}

/* -j 2, 12 jobs: two at a time exactly, whatever the 4 threads do. */
START_TEST(runs_threads_at_once)
{
	for (unsigned threads = 1; threads <= 3; threads++) {
		reset();
		struct probe_pool *p = probe_pool_start(threads, 16);
		ck_assert_ptr_nonnull(p);
		struct job jobs[12];
		int order[12], n = 0;
		for (int i = 0; i < 12; i++) {
			jobs[i] = (struct job){ { job_run, job_finish, NULL, false, false, false }, i, 40, order, &n, NULL };
			probe_pool_submit(p, &jobs[i].base);
		}
		probe_pool_end(p);
		ck_assert_int_eq(atomic_load(&ran), 12);
		ck_assert_int_eq(n, 12);
		ck_assert_msg(atomic_load(&max_running) == (int)threads, "-j %u: %d jobs ran at once", threads,
			      atomic_load(&max_running));
	}
}
END_TEST

/* Later jobs end first; their finish steps still come in submission order. */
START_TEST(finish_in_submission_order)
{
	reset();
	struct probe_pool *p = probe_pool_start(4, 8);
	ck_assert_ptr_nonnull(p);
	struct job jobs[8];
	int order[8], n = 0;
	for (int i = 0; i < 8; i++) {
		jobs[i] = (struct job){ { job_run, job_finish, NULL, false, false, false }, i, (unsigned)(8 - i) * 5, order, &n,
					NULL };
		probe_pool_submit(p, &jobs[i].base);
	}
	probe_pool_end(p);
	ck_assert_int_eq(n, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_msg(order[i] == i, "finish %d was job %d", i, order[i]);
}
END_TEST

/* Window 3: submitting the 4th job first finishes the 1st, so at most 3
 * are ever submitted and not finished. */
START_TEST(window_bounds_jobs_in_flight)
{
	reset();
	struct probe_pool *p = probe_pool_start(2, 3);
	ck_assert_ptr_nonnull(p);
	struct job jobs[10];
	int order[10], n = 0;
	for (int i = 0; i < 10; i++) {
		jobs[i] = (struct job){ { job_run, job_finish, NULL, false, false, false }, i, 5, order, &n, NULL };
		probe_pool_submit(p, &jobs[i].base);
		ck_assert_msg(i + 1 - n <= 3, "after job %d: %d in flight", i, i + 1 - n);
		ck_assert_msg(i + 1 - n == (i < 3 ? i + 1 : 3), "after job %d: %d in flight, want %d", i, i + 1 - n,
			      i < 3 ? i + 1 : 3);
	}
	probe_pool_end(p);
	ck_assert_int_eq(n, 10);
}
END_TEST

/* Hand-off, -j 1: job 0 waits (probe_pool_wait_begin) for job 1, which
 * then runs on the second thread; without the hand-off job 0 would wait
 * for ever (here: 5 s, then fail). While job 0 waits, still only one
 * other job runs at a time (jobs 1..3). */
static _Atomic int released, others_running, others_max;

static void waiter_run(struct probe_pool_job *pj)
{
	(void)pj;
	probe_pool_wait_begin();
	for (int i = 0; i < 500 && !atomic_load(&released); i++)
		sleep_ms(10);
	probe_pool_wait_end();
}

static void other_run(struct probe_pool_job *pj)
{
	struct job *j = (struct job *)pj;
	int now = atomic_fetch_add(&others_running, 1) + 1;
	int seen = atomic_load(&others_max);
	while (now > seen && !atomic_compare_exchange_weak(&others_max, &seen, now))
		;
	sleep_ms(20);
	if (j->index == 1)
		atomic_store(&released, 1);
	atomic_fetch_sub(&others_running, 1);
}

START_TEST(wait_hands_off_its_place)
{
	atomic_store(&released, 0);
	atomic_store(&others_running, 0);
	atomic_store(&others_max, 0);
	struct probe_pool *p = probe_pool_start(1, 8);
	ck_assert_ptr_nonnull(p);
	struct job jobs[4];
	int order[4], n = 0;
	jobs[0] = (struct job){ { waiter_run, job_finish, NULL, false, false, false }, 0, 0, order, &n, NULL };
	for (int i = 1; i < 4; i++)
		jobs[i] = (struct job){ { other_run, job_finish, NULL, false, false, false }, i, 0, order, &n, NULL };
	for (int i = 0; i < 4; i++)
		probe_pool_submit(p, &jobs[i].base);
	probe_pool_end(p);
	ck_assert_msg(atomic_load(&released), "the waiting job's place was not handed to another job");
	ck_assert_int_eq(atomic_load(&others_max), 1);
	ck_assert_int_eq(n, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(order[i], i);
	/* not a pool worker: no-ops */
	probe_pool_wait_begin();
	probe_pool_wait_end();
}
END_TEST

/* The gate: held jobs wait while it is closed, the others run; opened,
 * the held ones run too. */
START_TEST(gate_holds_held_jobs)
{
	reset();
	_Atomic int held_started = 0, free_started = 0;
	struct probe_pool *p = probe_pool_start(2, 8);
	ck_assert_ptr_nonnull(p);
	ck_assert(!probe_pool_gate_closed(p));
	probe_pool_close_gate(p);
	ck_assert(probe_pool_gate_closed(p));
	struct job jobs[4];
	int order[4], n = 0;
	for (int i = 0; i < 4; i++) {
		bool held = i % 2 == 0;
		jobs[i] = (struct job){ { job_run, job_finish, NULL, false, held, false }, i, 1, order, &n,
					held ? &held_started : &free_started };
		probe_pool_submit(p, &jobs[i].base);
	}
	for (int i = 0; i < 200 && atomic_load(&free_started) < 2; i++)
		sleep_ms(5);
	sleep_ms(50);
	ck_assert_int_eq(atomic_load(&free_started), 2);
	ck_assert_msg(atomic_load(&held_started) == 0, "%d held jobs ran behind a closed gate",
		      atomic_load(&held_started));
	probe_pool_open_gate(p);
	ck_assert(!probe_pool_gate_closed(p));
	probe_pool_end(p);
	ck_assert_int_eq(atomic_load(&held_started), 2);
	ck_assert_int_eq(n, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(order[i], i);
}
END_TEST

/* One job starts no worker: the submitter runs it when it comes to wait
 * for it, right before its finish step (in_order set). Fewer jobs than
 * threads start at most one worker per job. */
static _Atomic int ran_on_submitter;
static pthread_t submitter;

static void where_run(struct probe_pool_job *pj)
{
	if (pthread_equal(pthread_self(), submitter) && pj->in_order)
		atomic_fetch_add(&ran_on_submitter, 1);
	job_run(pj);
}

START_TEST(lone_job_starts_no_thread)
{
	reset();
	atomic_store(&ran_on_submitter, 0);
	submitter = pthread_self();
	struct probe_pool *p = probe_pool_start(8, 16);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(probe_pool_threads(p), 0);
	struct job jobs[3];
	int order[3], n = 0;
	jobs[0] = (struct job){ { where_run, job_finish, NULL, false, false, false }, 0, 1, order, &n, NULL };
	probe_pool_submit(p, &jobs[0].base);
	ck_assert_uint_eq(probe_pool_threads(p), 0);
	probe_pool_end(p);
	ck_assert_int_eq(atomic_load(&ran), 1);
	ck_assert_int_eq(atomic_load(&ran_on_submitter), 1);
	ck_assert_int_eq(n, 1);

	/* three jobs, -j 8: three workers at most, not sixteen */
	reset();
	p = probe_pool_start(8, 16);
	n = 0;
	for (int i = 0; i < 3; i++) {
		jobs[i] = (struct job){ { job_run, job_finish, NULL, false, false, false }, i, 30, order, &n, NULL };
		probe_pool_submit(p, &jobs[i].base);
	}
	unsigned started = probe_pool_threads(p);
	probe_pool_end(p);
	ck_assert_msg(started >= 1 && started <= 3, "3 jobs started %u workers", started);
	ck_assert_int_eq(atomic_load(&ran), 3);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(order[i], i);
}
END_TEST

/* No thread to be had: every job still runs, on the submitter, in order. */
START_TEST(no_thread_runs_on_submitter)
{
	reset();
	probe_thread_test_limit(0);
	struct probe_pool *p = probe_pool_start(4, 3);
	ck_assert_ptr_nonnull(p);
	struct job jobs[10];
	int order[10], n = 0;
	for (int i = 0; i < 10; i++) {
		jobs[i] = (struct job){ { job_run, job_finish, NULL, false, false, false }, i, 1, order, &n, NULL };
		probe_pool_submit(p, &jobs[i].base);
	}
	ck_assert_uint_eq(probe_pool_threads(p), 0);
	probe_pool_end(p);
	probe_thread_test_limit(-1);
	ck_assert_int_eq(atomic_load(&ran), 10);
	ck_assert_int_eq(atomic_load(&max_running), 1);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(order[i], i);
}
END_TEST

START_TEST(jobs_by_default)
{
	ck_assert_ptr_null(probe_pool_start(0, 4));
	ck_assert_ptr_null(probe_pool_start(2, 0));
	probe_pool_end(NULL);
	ck_assert_uint_eq(probe_jobs(5), 5);
	probe_set_default_jobs(3);
	ck_assert_uint_eq(probe_jobs(0), 3);
	ck_assert_uint_eq(probe_jobs(7), 7);
	probe_set_default_jobs(0);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want = cores < 1 ? 1 : cores > PROBE_JOBS_DEFAULT_MAX ? PROBE_JOBS_DEFAULT_MAX : (unsigned)cores;
	ck_assert_uint_eq(probe_jobs(0), want);
}
END_TEST

static Suite *pool_suite(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = tcase_create("pool");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, runs_threads_at_once);
	tcase_add_test(tc, finish_in_submission_order);
	tcase_add_test(tc, window_bounds_jobs_in_flight);
	tcase_add_test(tc, wait_hands_off_its_place);
	tcase_add_test(tc, gate_holds_held_jobs);
	tcase_add_test(tc, lone_job_starts_no_thread);
	tcase_add_test(tc, no_thread_runs_on_submitter);
	tcase_add_test(tc, jobs_by_default);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(pool_suite());
}
