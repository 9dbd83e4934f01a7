/* SPDX-License-Identifier: Apache-2.0 */
/* The walk's gate (gate.h): a mutex, a condition and a state that moves
 * once, from closed to open or called off. */
#include "glibc_pins.h"
#include "gate.h"
#include "probe.h"

void probe_gate_init(struct probe_gate *g, void (*begin_output)(void *ctx), void *ctx)
{
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->settled, NULL);
	g->state = PROBE_GATE_CLOSED;
	atomic_init(&g->called_off, false);
	g->on_settle = NULL;
	g->on_settle_arg = NULL;
	g->begin_output = begin_output;
	g->ctx = ctx;
	g->output_begun = false;
}

void probe_gate_destroy(struct probe_gate *g)
{
	pthread_cond_destroy(&g->settled);
	pthread_mutex_destroy(&g->lock);
}

void probe_gate_settle(struct probe_gate *g, bool open)
{
	pthread_mutex_lock(&g->lock);
	if (g->state == PROBE_GATE_CLOSED) {
		g->state = open ? PROBE_GATE_OPEN : PROBE_GATE_CALLED_OFF;
		atomic_store(&g->called_off, !open);
		if (g->on_settle)
			g->on_settle(g->on_settle_arg);
		pthread_cond_broadcast(&g->settled);
	}
	pthread_mutex_unlock(&g->lock);
}

bool probe_gate_wait(struct probe_gate *g)
{
	if (!g)
		return true;
	pthread_mutex_lock(&g->lock);
	bool waits = g->state == PROBE_GATE_CLOSED;
	pthread_mutex_unlock(&g->lock);
	if (waits)
		probe_pool_wait_begin(); /* another worker runs meanwhile */
	pthread_mutex_lock(&g->lock);
	while (g->state == PROBE_GATE_CLOSED)
		pthread_cond_wait(&g->settled, &g->lock);
	bool open = g->state == PROBE_GATE_OPEN;
	pthread_mutex_unlock(&g->lock);
	if (waits)
		probe_pool_wait_end();
	return open;
}

bool probe_gate_pass(struct probe_gate *g)
{
	if (!probe_gate_wait(g))
		return false;
	if (g && !g->output_begun) {
		g->output_begun = true;
		if (g->begin_output)
			g->begin_output(g->ctx);
	}
	return true;
}

bool probe_gate_called_off(struct probe_gate *g)
{
	return g && atomic_load(&g->called_off);
}

bool probe_gate_is_closed(struct probe_gate *g)
{
	if (!g)
		return false;
	pthread_mutex_lock(&g->lock);
	bool closed = g->state == PROBE_GATE_CLOSED;
	pthread_mutex_unlock(&g->lock);
	return closed;
}

void probe_gate_on_settle(struct probe_gate *g, void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&g->lock);
	if (g->state != PROBE_GATE_CLOSED) {
		fn(arg);
	} else {
		g->on_settle = fn;
		g->on_settle_arg = arg;
	}
	pthread_mutex_unlock(&g->lock);
}

void probe_wait_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_trylock(m) == 0)
		return;
	probe_pool_wait_begin(); /* another worker runs meanwhile */
	pthread_mutex_lock(m);
	probe_pool_wait_end();
}
