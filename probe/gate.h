/* SPDX-License-Identifier: Apache-2.0 */
/* A gate for a walk whose output needs something still being found when
 * the walk begins (check's GPUs with --sm native: targets_async.c). It is
 * closed until whoever finds it settles it: open (go on) or called off
 * (nothing more is written). Workers wait at it before they render; the
 * thread that writes the output passes it once, and the output's first
 * words (check's JSON header, which names the GPUs) are written then.
 * The gate does the pool's scheduling around a wait (a waiting worker
 * lets another run), so a command never does. */
#ifndef KIMG_PROBE_GATE_H
#define KIMG_PROBE_GATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

enum probe_gate_state { PROBE_GATE_CLOSED, PROBE_GATE_OPEN, PROBE_GATE_CALLED_OFF };

struct probe_gate {
	pthread_mutex_t lock;
	pthread_cond_t settled;
	enum probe_gate_state state;     /* under lock */
	atomic_bool called_off;          /* state == CALLED_OFF, read without the lock */
	/* The walk's: fn(arg) once at settling (probe_gate_on_settle). */
	void (*on_settle)(void *arg);
	void *on_settle_arg;
	/* The command's: once, on the writing thread, when it first passes
	 * the open gate (probe_gate_pass). */
	void (*begin_output)(void *ctx);
	void *ctx;
	bool output_begun;               /* the writing thread's */
};

/* A closed gate; begin_output may be NULL. */
void probe_gate_init(struct probe_gate *g, void (*begin_output)(void *ctx), void *ctx);
void probe_gate_destroy(struct probe_gate *g);
/* Once, from any thread: open (true) or call the run off (false). A
 * second call changes nothing. */
void probe_gate_settle(struct probe_gate *g, bool open);
/* Any thread: waits until the gate is settled; true when it is open. A
 * pool worker that waits lets another worker run meanwhile
 * (probe_pool_wait_begin). g NULL: true. */
bool probe_gate_wait(struct probe_gate *g);
/* The writing thread, before it writes the walk's output: probe_gate_wait,
 * and begin_output the first time it says open. */
bool probe_gate_pass(struct probe_gate *g);
/* Any thread, without waiting: true once called off. g NULL: false. */
bool probe_gate_called_off(struct probe_gate *g);
/* Without waiting: still closed. g NULL: false. */
bool probe_gate_is_closed(struct probe_gate *g);
/* fn(arg) once when the gate is settled, at once if it is, on the thread
 * that settles it (under the gate's lock: once probe_gate_wait has
 * returned, the call is over). One at a time: a second replaces the first. */
void probe_gate_on_settle(struct probe_gate *g, void (*fn)(void *arg), void *arg);

/* pthread_mutex_lock(m) for a lock another thread may hold for long
 * (check's owners index, read ahead): a pool worker that must wait for it
 * lets another worker run meanwhile, as at a closed gate. */
void probe_wait_lock(pthread_mutex_t *m);

#endif
