/* SPDX-License-Identifier: Apache-2.0 */
/* One way for kimg-probe to start a thread (probe/thread.c), modelled on
 * SQLite's threads.c (sqlite3ThreadCreate, sqlite3ThreadJoin): when no
 * thread can be had, the task runs on the calling thread instead, at
 * create or at join as the caller chose, so a caller has one path, not a
 * threaded one and a fallback. The struct is the caller's (an array of
 * them for a set of helpers): nothing is allocated. */
#ifndef KIMG_PROBE_THREAD_H
#define KIMG_PROBE_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/* Where a task that got no thread runs. */
enum probe_thread_inline {
	PROBE_THREAD_INLINE_NOW,       /* in probe_thread_create: its result is wanted soon */
	PROBE_THREAD_INLINE_AT_JOIN,   /* in probe_thread_join: after the caller's own part */
	/* Not at all: a task that serves other threads (a pool's worker)
	 * would wait for ever on its caller, and one that only saves later
	 * work (a cache read ahead) is not needed. The caller learns it from
	 * create's answer; join does nothing. */
	PROBE_THREAD_INLINE_NEVER,
};

struct probe_thread {
	pthread_t tid;
	void *(*task)(void *arg);
	void *arg;
	void *result;
	bool on_thread;                /* tid is a thread to join */
	bool ran;                      /* the task ran inline; result holds its answer */
};

/* Runs task(arg) on a thread of its own, or inline as `when` says. True
 * when it got a thread: a caller that counts its helpers counts these. */
bool probe_thread_create(struct probe_thread *t, void *(*task)(void *arg), void *arg,
			 enum probe_thread_inline when);

/* Waits for the task (or runs it now, INLINE_AT_JOIN) and returns its
 * result. Each created thread is joined once. */
void *probe_thread_join(struct probe_thread *t);

/* For tests (tests/unit/test_thread.c): the next `grant` creates start a
 * thread and every one after fails, as when the process has no threads
 * left; a negative grant lifts the limit. */
void probe_thread_test_limit(int grant);

#endif
