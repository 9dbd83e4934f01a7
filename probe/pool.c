/* SPDX-License-Identifier: Apache-2.0 */
/* A small pool of worker threads for independent inputs. Jobs run in any
 * order; their finish step runs on the submitting thread in submission
 * order, so whatever finish writes comes out as a one-thread run would
 * write it. At most `window` jobs are in flight: submitting one more
 * first finishes the oldest (memory stays bounded, and a slow file holds
 * up output, never correctness). A job that waits for something still
 * being found (probe_pool_wait_begin) lets another worker run meanwhile:
 * `threads` of them keep running; a closed gate keeps the jobs marked
 * held from starting (probe_pool_close_gate).
 *
 * Workers start when there is work for them, not at probe_pool_start: a
 * lone job waits for a second one or for the submitter, which runs it
 * itself when it comes to wait for it (as SQLite's threads.c runs a task
 * inline). So one input starts no thread at all (a scan of cuBLASLt
 * started four, whose malloc arenas grew by 498 mprotect calls: 32 ms
 * against 22 ms for the probe before the pool), and N inputs start at
 * most N. The submitter running a job counts among the `threads`. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "glibc_pins.h"
#include "probe.h"
#include "thread.h"

struct probe_pool {
	pthread_mutex_t lock;
	pthread_cond_t work;             /* a job is pending, or stop */
	pthread_cond_t done;             /* some job ran to its end, or the gate opened */
	struct probe_pool_job *pending, *pending_tail; /* not yet taken */
	unsigned n_pending, n_pending_held;
	struct probe_pool_job **ring;    /* in flight, in submission order */
	unsigned window, head, count;
	unsigned running;                /* threads inside a job, the submitter too */
	unsigned may_run;                /* threads asked + those waiting (probe_pool_wait_begin) */
	unsigned idle;                   /* workers started and not inside a job */
	bool gate_closed;
	bool stop;
	bool cannot_start;               /* a thread create failed: no more tries */
	struct probe_thread *threads;
	unsigned n_threads, max_threads;
};

/* The pool whose job this thread runs (probe_pool_wait_begin). */
static _Thread_local struct probe_pool *my_pool;

static bool may_take(const struct probe_pool *p, const struct probe_pool_job *j)
{
	return !(j->held && p->gate_closed);
}

static void unlink_locked(struct probe_pool *p, struct probe_pool_job *prev, struct probe_pool_job *j)
{
	if (prev)
		prev->next = j->next;
	else
		p->pending = j->next;
	if (p->pending_tail == j)
		p->pending_tail = prev;
	p->n_pending--;
	p->n_pending_held -= j->held;
	j->next = NULL;
}

/* The first pending job the gate lets through, taken off the list. */
static struct probe_pool_job *take_locked(struct probe_pool *p)
{
	for (struct probe_pool_job *prev = NULL, *j = p->pending; j; prev = j, j = j->next)
		if (may_take(p, j)) {
			unlink_locked(p, prev, j);
			return j;
		}
	return NULL;
}

/* job, if it is still pending and may start now, taken off the list. */
static bool take_this_locked(struct probe_pool *p, struct probe_pool_job *job)
{
	if (p->running >= p->may_run || !may_take(p, job))
		return false;
	for (struct probe_pool_job *prev = NULL, *j = p->pending; j; prev = j, j = j->next)
		if (j == job) {
			unlink_locked(p, prev, j);
			return true;
		}
	return false;
}

static void run_job(struct probe_pool *p, struct probe_pool_job *job)
{
	struct probe_pool *outer = my_pool;
	my_pool = p;
	job->run(job);
	my_pool = outer;
}

static void *worker(void *arg)
{
	struct probe_pool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct probe_pool_job *job = NULL;
		while (!p->stop && (p->running >= p->may_run || !(job = take_locked(p))))
			pthread_cond_wait(&p->work, &p->lock);
		if (!job)
			break; /* stop: probe_pool_end has finished every job */
		p->idle--;
		p->running++;
		pthread_mutex_unlock(&p->lock);
		run_job(p, job);
		pthread_mutex_lock(&p->lock);
		p->running--;
		p->idle++;
		job->done = true;
		pthread_cond_broadcast(&p->done);
	}
	p->idle--;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Start workers while pending jobs outnumber the idle ones and more may
 * run, under p->lock. With no worker yet one job is left for the
 * submitter: a run of one input stays on one thread. The new thread
 * waits for the lock we hold; probe_pool_end joins only after stop, set
 * under the lock, so every thread counted here is joined. */
static void start_workers_locked(struct probe_pool *p)
{
	unsigned takeable = p->n_pending - (p->gate_closed ? p->n_pending_held : 0);
	while (!p->stop && !p->cannot_start && p->n_threads < p->max_threads &&
	       takeable > p->idle + (p->n_threads == 0) && p->running + p->idle < p->may_run) {
		if (!probe_thread_create(&p->threads[p->n_threads], worker, p, PROBE_THREAD_INLINE_NEVER)) {
			p->cannot_start = true; /* the submitter runs what no worker takes */
			break;
		}
		p->n_threads++;
		p->idle++;
	}
	if (p->idle)
		pthread_cond_broadcast(&p->work);
}

void probe_pool_wait_begin(void)
{
	struct probe_pool *p = my_pool;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->may_run++;
	start_workers_locked(p);
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void probe_pool_wait_end(void)
{
	struct probe_pool *p = my_pool;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->may_run--;
	pthread_mutex_unlock(&p->lock);
}

void probe_pool_close_gate(struct probe_pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->gate_closed = true;
	pthread_mutex_unlock(&p->lock);
}

void probe_pool_open_gate(struct probe_pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->gate_closed = false;
	start_workers_locked(p);
	pthread_cond_broadcast(&p->work);
	pthread_cond_broadcast(&p->done); /* a submitter waiting for a held job takes it */
	pthread_mutex_unlock(&p->lock);
}

bool probe_pool_gate_closed(struct probe_pool *p)
{
	pthread_mutex_lock(&p->lock);
	bool closed = p->gate_closed;
	pthread_mutex_unlock(&p->lock);
	return closed;
}

struct probe_pool *probe_pool_start(unsigned threads, unsigned window)
{
	if (threads == 0 || window == 0)
		return NULL;
	struct probe_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	/* At most twice the threads asked: the second half runs only while
	 * jobs of the first wait (probe_pool_wait_begin). */
	p->max_threads = threads > PROBE_JOBS_MAX / 2 ? PROBE_JOBS_MAX : threads * 2;
	p->ring = calloc(window, sizeof *p->ring);
	p->threads = calloc(p->max_threads, sizeof *p->threads);
	if (!p->ring || !p->threads) {
		free(p->ring);
		free(p->threads);
		free(p);
		return NULL;
	}
	p->window = window;
	p->may_run = threads;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	return p;
}

/* Wait for the oldest job in flight and run its finish step. A job no
 * worker has taken yet is run here: waiting for it would only idle. */
static void finish_oldest(struct probe_pool *p)
{
	struct probe_pool_job *job = p->ring[p->head];
	pthread_mutex_lock(&p->lock);
	while (!job->done) {
		if (take_this_locked(p, job)) {
			p->running++;
			pthread_mutex_unlock(&p->lock);
			job->in_order = true;
			run_job(p, job);
			pthread_mutex_lock(&p->lock);
			p->running--;
			job->done = true;
			pthread_cond_broadcast(&p->work); /* a place to run is free */
			break;
		}
		pthread_cond_wait(&p->done, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	p->head = (p->head + 1) % p->window;
	p->count--;
	job->finish(job);
}

void probe_pool_submit(struct probe_pool *p, struct probe_pool_job *job)
{
	if (p->count == p->window)
		finish_oldest(p);
	job->next = NULL;
	job->done = false;
	job->in_order = false;
	p->ring[(p->head + p->count) % p->window] = job;
	p->count++;
	pthread_mutex_lock(&p->lock);
	if (p->pending_tail)
		p->pending_tail->next = job;
	else
		p->pending = job;
	p->pending_tail = job;
	p->n_pending++;
	p->n_pending_held += job->held;
	start_workers_locked(p);
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void probe_pool_help(struct probe_pool *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->count; i++) {
		struct probe_pool_job *job = p->ring[(p->head + i) % p->window];
		pthread_mutex_lock(&p->lock);
		bool mine = !job->done && take_this_locked(p, job);
		if (mine)
			p->running++;
		pthread_mutex_unlock(&p->lock);
		if (!mine)
			continue;
		run_job(p, job);
		pthread_mutex_lock(&p->lock);
		p->running--;
		job->done = true;
		pthread_cond_broadcast(&p->work);
		pthread_cond_broadcast(&p->done);
		pthread_mutex_unlock(&p->lock);
	}
}

void probe_pool_end(struct probe_pool *p)
{
	if (!p)
		return;
	while (p->count)
		finish_oldest(p);
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	unsigned n = p->n_threads;
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < n; i++)
		probe_thread_join(&p->threads[i]);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p->ring);
	free(p->threads);
	free(p);
}

/* For tests (tests/unit/test_pool.c): the workers started so far. */
unsigned probe_pool_threads(struct probe_pool *p)
{
	pthread_mutex_lock(&p->lock);
	unsigned n = p->n_threads;
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* ---- how many threads ---- */

static unsigned default_jobs;    /* $KIMG_JOBS (main), 0: by the machine */

void probe_set_default_jobs(unsigned n)
{
	default_jobs = n;
}

unsigned probe_jobs(unsigned asked)
{
	if (asked)
		return asked;
	if (default_jobs)
		return default_jobs;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > PROBE_JOBS_DEFAULT_MAX ? PROBE_JOBS_DEFAULT_MAX : (unsigned)n;
}
