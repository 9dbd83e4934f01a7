/* SPDX-License-Identifier: Apache-2.0 */
/* The driver's error log (CUDA 12.9+): kimg's callback, the per-thread
 * rings it fills, the lines a report takes, and the safety net for
 * failures of entry points kimg does not hook.
 *
 * The callback runs inside the driver, synchronously on the failing
 * thread ([V] driver 580.159.04), possibly with the driver's locks held.
 * So it allocates nothing, takes no lock, uses no thread-local storage (a
 * dlopen'ed library's TLS is allocated on first use in each thread) and
 * calls nothing but memcpy, the pure parser (core/driver_log.c) and
 * gettid / tgkill: a thread claims one ring of a static table by its
 * thread id, with a compare-and-swap; a ring of a thread that has ended is
 * taken over. Only the owner writes its ring; a report reads the ring of
 * its own thread. The exit check reads every ring, each entry guarded by
 * a generation count (odd while written), so a line being written is
 * skipped rather than read torn.
 *
 * Nothing here prints a line of the log or reports: lines only join a
 * report (docs/json-shim-report.md `driver_log`), and the safety net
 * (safety_net.c) reads the lines no report took. The driver keeps calling the
 * application's own callbacks and writing CUDA_LOG_FILE: registering one
 * more callback changes neither ([V] two callbacks coexist). */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cuda_errors.h"
#include "diag_internal.h"
#include "driver_log.h"
#include "report.h"

#define RINGS 64
#define RING_LINES 16
#define FN_MAX 64

struct entry {
	_Atomic unsigned gen;  /* odd while the owner writes the entry */
	bool taken;            /* joined a report, or written during one */
	bool image_words;      /* names an image problem (kimg_driver_log_names_image_problem) */
	int code;              /* a "Returning N ... from FN" line: N; else 0 */
	char fn[FN_MAX];       /* ... and FN */
	char text[KIMG_DRIVER_LINE];
};

struct ring {
	_Atomic long owner;    /* thread id; 0 free */
	_Atomic long pid;      /* the process of owner: a forked child's copy of its parent's rings is not its own */
	_Atomic unsigned head; /* lines written; the next goes to head % RING_LINES */
	struct entry e[RING_LINES];
};

static struct ring rings[RINGS];

static long thread_id(void)
{
	return syscall(SYS_gettid);
}

static bool thread_gone(long tid)
{
	return syscall(SYS_tgkill, (long)getpid(), tid, 0) < 0 && errno == ESRCH;
}

/* This thread's ring; with claim, a free one (or one of an ended thread)
 * is taken when it has none. NULL when none is left. Probing is linear
 * from the thread id's slot, and a slot never becomes free again, so the
 * first slot in probe order that is this thread's or free is the one. */
static struct ring *ring_of_thread(bool claim)
{
	long tid = thread_id();
	if (tid <= 0)
		return NULL;
	size_t start = (size_t)tid % RINGS;
	for (size_t i = 0; i < RINGS; i++) {
		struct ring *r = &rings[(start + i) % RINGS];
		long owner = atomic_load_explicit(&r->owner, memory_order_acquire);
		if (owner == tid)
			return r;
		if (owner == 0) {
			if (!claim)
				return NULL;
			long expected = 0;
			if (atomic_compare_exchange_strong(&r->owner, &expected, tid)) {
				atomic_store_explicit(&r->pid, (long)getpid(), memory_order_release);
				return r;
			}
			if (expected == tid)
				return r;
		}
	}
	if (!claim)
		return NULL;
	for (size_t i = 0; i < RINGS; i++) {
		struct ring *r = &rings[(start + i) % RINGS];
		long owner = atomic_load_explicit(&r->owner, memory_order_acquire);
		bool stale = atomic_load_explicit(&r->pid, memory_order_acquire) != (long)getpid() || thread_gone(owner);
		if (owner > 0 && stale && atomic_compare_exchange_strong(&r->owner, &owner, tid)) {
			atomic_store_explicit(&r->pid, (long)getpid(), memory_order_release);
			return r;
		}
	}
	return NULL;
}

void kimg_driver_log_callback(void *data, int level, char *message, size_t length)
{
	(void)data;
	(void)level;
	int saved = errno;
	struct ring *r = ring_of_thread(true);
	if (!r) {
		errno = saved; /* every ring held by a live thread: the line is not kept */
		return;
	}
	unsigned head = atomic_load_explicit(&r->head, memory_order_relaxed);
	struct entry *e = &r->e[head % RING_LINES];
	unsigned gen = atomic_load_explicit(&e->gen, memory_order_relaxed);
	atomic_store_explicit(&e->gen, gen | 1u, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	size_t n = message ? length : 0;
	if (n > KIMG_DRIVER_LINE - 1)
		n = KIMG_DRIVER_LINE - 1;
	if (n)
		memcpy(e->text, message, n);
	/* the length may count a terminator or a newline */
	while (n > 0 && (e->text[n - 1] == '\0' || e->text[n - 1] == '\n' || e->text[n - 1] == '\r'))
		n--;
	e->text[n] = '\0';
	e->code = 0;
	e->fn[0] = '\0';
	int code = 0;
	if (kimg_driver_log_parse_return(e->text, n, &code, e->fn, sizeof e->fn))
		e->code = code;
	e->image_words = kimg_driver_log_names_image_problem(e->text, n);
	e->taken = false;
	atomic_store_explicit(&e->gen, (gen | 1u) + 1u, memory_order_release);
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
	errno = saved;
}

/* ---- a report's lines (diag_internal.h) ---- */

/* A noise line: the end of a call that failed with a code of no interest
 * ([V] "Returning 201 (CUDA_ERROR_INVALID_CONTEXT) from cuCtxGetDevice_v2",
 * six of them in a healthy PyTorch run). */
static bool is_noise(const struct entry *e)
{
	return e->code != 0 && !kimg_cuda_error_is_image_class(e->code);
}

unsigned kimg_driver_log_take(struct kimg_driver_lines *out)
{
	out->n = 0;
	struct ring *r = ring_of_thread(false);
	if (!r)
		return 0;
	unsigned head = atomic_load_explicit(&r->head, memory_order_acquire);
	unsigned first = head;
	bool in_call = false;
	/* newest first: noise after the call is passed over, then the call's
	 * lines back to the end of the call before it */
	for (unsigned k = 0; k < RING_LINES && k < head; k++) {
		const struct entry *e = &r->e[(head - 1 - k) % RING_LINES];
		if (e->taken)
			break;
		if (!in_call && is_noise(e)) {
			first = head - 1 - k;
			continue;
		}
		if (in_call && e->code != 0)
			break;
		in_call = true;
		first = head - 1 - k;
	}
	for (unsigned i = first; i < head; i++) {
		struct entry *e = &r->e[i % RING_LINES];
		if (!is_noise(e) && out->n < KIMG_DRIVER_LINES)
			memcpy(out->line[out->n++], e->text, KIMG_DRIVER_LINE);
		e->taken = true;
	}
	return head;
}

unsigned kimg_driver_log_mark(void)
{
	struct ring *r = ring_of_thread(false);
	return r ? atomic_load_explicit(&r->head, memory_order_acquire) : 0;
}

void kimg_driver_log_settle(unsigned mark)
{
	struct ring *r = ring_of_thread(false);
	if (!r)
		return;
	unsigned head = atomic_load_explicit(&r->head, memory_order_acquire);
	if (head - mark > RING_LINES)
		mark = head - RING_LINES;
	for (unsigned i = mark; i != head; i++)
		r->e[i % RING_LINES].taken = true;
}

void kimg_driver_lines_to_report(struct kimg_report *r, const struct kimg_driver_lines *dl)
{
	_Static_assert(KIMG_REPORT_DRIVER_LINE == KIMG_DRIVER_LINE, "one line length");
	_Static_assert(KIMG_REPORT_MAX_DRIVER_LINES == KIMG_DRIVER_LINES, "one line count");
	for (size_t i = 0; dl && i < dl->n && r->driver_log_count < KIMG_REPORT_MAX_DRIVER_LINES; i++) {
		memcpy(r->driver_log[r->driver_log_count], dl->line[i], KIMG_REPORT_DRIVER_LINE);
		r->driver_log[r->driver_log_count++][KIMG_REPORT_DRIVER_LINE - 1] = '\0';
	}
}

const char *kimg_driver_lines_kernel(const struct kimg_driver_lines *dl)
{
	static char name[KIMG_DRIVER_LINE];
	for (size_t i = 0; dl && i < dl->n; i++)
		if (kimg_driver_log_kernel(dl->line[i], strnlen(dl->line[i], KIMG_DRIVER_LINE), name, sizeof name))
			return name;
	return NULL;
}

/* ---- failures no report took (the safety net, safety_net.c) ----
 * A "Returning N" line for an image-class N that no report took came from
 * an entry point kimg does not hook (or a variant it could not wrap). */

struct snapshot {
	struct entry e;
	bool ok;
};

/* Copy entry i of r unless it is being written. */
static void read_entry(struct ring *r, unsigned i, struct snapshot *s)
{
	struct entry *e = &r->e[i % RING_LINES];
	unsigned g1 = atomic_load_explicit(&e->gen, memory_order_acquire);
	memcpy(&s->e, e, sizeof s->e);
	atomic_thread_fence(memory_order_acquire);
	unsigned g2 = atomic_load_explicit(&e->gen, memory_order_relaxed);
	s->ok = !(g1 & 1u) && g1 == g2;
	s->e.text[KIMG_DRIVER_LINE - 1] = '\0';
	s->e.fn[FN_MAX - 1] = '\0';
}

static void untaken_of(struct ring *r, kimg_driver_untaken_fn fn, void *ctx)
{
	unsigned head = atomic_load_explicit(&r->head, memory_order_acquire);
	unsigned lo = head > RING_LINES ? head - RING_LINES : 0;
	for (unsigned i = lo; i < head; i++) {
		struct snapshot s;
		read_entry(r, i, &s);
		if (!s.ok || s.e.taken || s.e.code == 0 || !kimg_cuda_error_is_image_class(s.e.code))
			continue;
		/* the call's lines: back to the end of the call before it */
		struct kimg_driver_lines lines = { 0 };
		unsigned first = i;
		bool image_words = false;
		while (first > lo && i - first + 1 < KIMG_DRIVER_LINES) {
			struct snapshot p;
			read_entry(r, first - 1, &p);
			if (!p.ok || p.e.taken || p.e.code != 0)
				break;
			first--;
		}
		for (unsigned k = first; k <= i; k++) {
			struct snapshot p;
			read_entry(r, k, &p);
			if (!p.ok)
				continue;
			image_words |= p.e.image_words;
			memcpy(lines.line[lines.n++], p.e.text, KIMG_DRIVER_LINE);
			r->e[k % RING_LINES].taken = true;
		}
		fn(ctx, s.e.fn, s.e.code, image_words, &lines);
	}
}

void kimg_driver_log_for_each_untaken(kimg_driver_untaken_fn fn, void *ctx)
{
	long pid = (long)getpid();
	for (size_t i = 0; i < RINGS; i++)
		if (atomic_load_explicit(&rings[i].owner, memory_order_acquire) != 0 &&
		    atomic_load_explicit(&rings[i].pid, memory_order_acquire) == pid)
			untaken_of(&rings[i], fn, ctx); /* a parent's lines are the parent's to report */
}
