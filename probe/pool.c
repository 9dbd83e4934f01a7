/* SPDX-License-Identifier: Apache-2.0 */
/* A small fixed pool of worker threads for independent inputs. Jobs run
 * in any order on the workers; their finish step runs on the submitting
 * thread in submission order, so whatever finish writes comes out as a
 * one-thread run would write it. At most `window` jobs are in flight:
 * submitting one more first finishes the oldest (memory stays bounded,
 * and a slow file holds up output, never correctness). A job that waits
 * for something still being found (probe_pool_wait_begin) lets another
 * worker run meanwhile: `threads` of them keep running; a closed gate
 * keeps the jobs marked held from starting (probe_pool_close_gate). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "glibc_pins.h"
#include "probe.h"
#include "thread.h"

struct probe_pool {
	pthread_mutex_t lock;
	pthread_cond_t work;             /* a job is pending, or stop */
	pthread_cond_t done;             /* some job ran to its end */
	struct probe_pool_job *pending, *pending_tail; /* not yet taken by a worker */
	struct probe_pool_job **ring;    /* in flight, in submission order */
	unsigned window, head, count;
	unsigned running;                /* workers inside a job */
	unsigned may_run;                /* threads asked + those waiting (probe_pool_wait_begin) */
	bool gate_closed;
	bool stop;
	struct probe_thread *threads;
	unsigned n_threads;
};

/* The pool whose worker this thread is (probe_pool_wait_begin). */
static _Thread_local struct probe_pool *my_pool;

/* The first pending job the gate lets through, taken off the list. */
static struct probe_pool_job *take_locked(struct probe_pool *p)
{
	for (struct probe_pool_job *prev = NULL, *j = p->pending; j; prev = j, j = j->next) {
		if (j->held && p->gate_closed)
			continue;
		if (prev)
			prev->next = j->next;
		else
			p->pending = j->next;
		if (p->pending_tail == j)
			p->pending_tail = prev;
		return j;
	}
	return NULL;
}

static void *worker(void *arg)
{
	struct probe_pool *p = arg;
	my_pool = p;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct probe_pool_job *job = NULL;
		while (!p->stop && (p->running >= p->may_run || !(job = take_locked(p))))
			pthread_cond_wait(&p->work, &p->lock);
		if (!job)
			break; /* stop: probe_pool_end has finished every job */
		p->running++;
		pthread_mutex_unlock(&p->lock);
		job->run(job);
		pthread_mutex_lock(&p->lock);
		p->running--;
		job->done = true;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void probe_pool_wait_begin(void)
{
	struct probe_pool *p = my_pool;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->may_run++;
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
	pthread_cond_broadcast(&p->work);
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
	struct probe_pool *p = calloc(1, sizeof *p);
	if (!p || threads == 0 || window == 0)
		goto fail;
	/* Twice the threads asked: the second half runs only while jobs of
	 * the first wait (probe_pool_wait_begin). */
	unsigned spawn = threads > PROBE_JOBS_MAX / 2 ? PROBE_JOBS_MAX : threads * 2;
	p->ring = calloc(window, sizeof *p->ring);
	p->threads = calloc(spawn, sizeof *p->threads);
	if (!p->ring || !p->threads)
		goto fail;
	p->window = window;
	p->may_run = threads;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned i = 0; i < spawn; i++) {
		if (!probe_thread_create(&p->threads[i], worker, p, PROBE_THREAD_INLINE_NEVER))
			break;
		p->n_threads++;
	}
	if (p->n_threads == 0) {
		pthread_cond_destroy(&p->done);
		pthread_cond_destroy(&p->work);
		pthread_mutex_destroy(&p->lock);
		goto fail;
	}
	return p;
fail:
	if (p) {
		free(p->ring);
		free(p->threads);
		free(p);
	}
	return NULL;
}

/* Wait for the oldest job in flight and run its finish step. */
static void finish_oldest(struct probe_pool *p)
{
	struct probe_pool_job *job = p->ring[p->head];
	pthread_mutex_lock(&p->lock);
	while (!job->done)
		pthread_cond_wait(&p->done, &p->lock);
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
	p->ring[(p->head + p->count) % p->window] = job;
	p->count++;
	pthread_mutex_lock(&p->lock);
	if (p->pending_tail)
		p->pending_tail->next = job;
	else
		p->pending = job;
	p->pending_tail = job;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
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
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->n_threads; i++)
		probe_thread_join(&p->threads[i]);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p->ring);
	free(p->threads);
	free(p);
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
