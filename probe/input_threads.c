/* SPDX-License-Identifier: Apache-2.0 */
/* Helper threads inside one large input (probe_input_parallel,
 * probe_input_beside), each under a SIGBUS guard of the file this thread
 * walks (walk_current_file). */
#include <stdatomic.h>

#include "glibc_pins.h"
#include "file.h"
#include "probe.h"
#include "thread.h"
#include "walk.h"

struct parallel {
	const struct kimg_file *f;
	size_t n;
	atomic_size_t next;
	atomic_bool changed;           /* some helper's guard tripped */
	void (*fn)(void *ctx, size_t i);
	void *ctx;
};

/* fn(ctx) under a SIGBUS guard of f (none when f is NULL): false when the
 * file changed under it. */
static bool run_guarded(const struct kimg_file *f, void (*fn)(void *ctx), void *ctx)
{
	struct kimg_error err = { 0, 0, "" };
	if (!f) {
		fn(ctx);
		return true;
	}
	return kimg_file_guard(f, fn, ctx, &err) == 0;
}

static void parallel_loop(void *arg)
{
	struct parallel *p = arg;
	for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;)
		p->fn(p->ctx, i);
}

static void *parallel_helper(void *arg)
{
	struct parallel *p = arg;
	if (!run_guarded(p->f, parallel_loop, p)) {
		atomic_store(&p->changed, true);
		atomic_store(&p->next, p->n); /* the others stop early */
	}
	return NULL;
}

void probe_input_parallel(size_t n, unsigned threads, void (*fn)(void *ctx, size_t i), void *ctx)
{
	struct parallel p = { walk_current_file(), n, 0, false, fn, ctx };
	struct probe_thread t[PROBE_JOBS_MAX];
	unsigned started = 0;
	if (threads > PROBE_JOBS_MAX)
		threads = PROBE_JOBS_MAX;
	if (threads > n)
		threads = (unsigned)n;
	if (threads <= 1) {
		parallel_loop(&p);
		return;
	}
	/* This thread takes part too, under a guard of its own, so that a
	 * change it meets does not unwind its stack under the helpers. A
	 * helper that gets no thread runs at join and finds nothing left. */
	for (; started + 1 < threads; started++)
		probe_thread_create(&t[started], parallel_helper, &p, PROBE_THREAD_INLINE_AT_JOIN);
	parallel_helper(&p);
	for (unsigned i = 0; i < started; i++)
		probe_thread_join(&t[i]);
	if (atomic_load(&p.changed))
		kimg_file_guard_fail();
}

/* ---- one task beside this thread's own (probe_input_beside) ---- */

struct beside {
	const struct kimg_file *f;
	void (*fn)(void *ctx);
	void *ctx;
	bool changed;                  /* its guard tripped */
};

static void *beside_run(void *arg)
{
	struct beside *b = arg;
	b->changed = !run_guarded(b->f, b->fn, b->ctx);
	return NULL;
}

void probe_input_beside(void (*here)(void *ctx), void *here_ctx, void (*aside)(void *ctx), void *aside_ctx)
{
	const struct kimg_file *f = walk_current_file();
	struct beside mine = { f, here, here_ctx, false }, other = { f, aside, aside_ctx, false };
	struct probe_thread t;
	/* Without a thread the other part runs at join, after this one. */
	probe_thread_create(&t, beside_run, &other, PROBE_THREAD_INLINE_AT_JOIN);
	/* This thread's part under a guard of its own too: a change it meets
	 * must not unwind its stack while the helper still uses it. */
	beside_run(&mine);
	probe_thread_join(&t);
	if (mine.changed || other.changed)
		kimg_file_guard_fail();
}
