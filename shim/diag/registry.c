/* SPDX-License-Identifier: Apache-2.0 */
/* Handle registry: where each CUmodule / CUlibrary / CUfunction / CUkernel
 * / registered fatbin / host stub came from, so the cold error path can
 * go from "cuLibraryGetKernel failed on this handle" to the image bytes.
 *
 * Constraints (docs/design.md section 8): inserts happen on every successful
 * load, from any thread, possibly while the loader lock is held, so there
 * is no malloc and no mutex. Each kind has a fixed open-addressing table;
 * a slot is claimed by CAS on its key and its fields are published under a
 * per-slot sequence counter (a seqlock), so a re-used handle (a module
 * unloaded and another loaded at the same address) can be overwritten while
 * a reader on another thread is looking. All fields are atomics: readers
 * may race writers by design and the counter tells them to retry.
 * Strings are copied into one static arena by an atomic bump pointer;
 * when a table or the arena is full the entry (or string) is dropped and
 * counted, never an error for the program. */
#include <stdatomic.h>
#include <string.h>

#include "diag_internal.h"
#include "seen.h"

struct slot {
	_Atomic uintptr_t key;  /* the handle; 0 = empty */
	_Atomic unsigned seq;   /* 0: claimed, never published; odd: being written; even > 0: stable */
	_Atomic uintptr_t image, path, parent, name;
};

/* Capacities are powers of two. Host stubs and functions are per kernel:
 * a PyTorch process registers tens of thousands of kernels. */
static const uint32_t capacity[KIMG_HANDLE_KIND_COUNT] = {
	[KIMG_HANDLE_MODULE] = 8192,     [KIMG_HANDLE_LIBRARY] = 8192,    [KIMG_HANDLE_FUNCTION] = 65536,
	[KIMG_HANDLE_KERNEL] = 65536,    [KIMG_HANDLE_FATBIN] = 8192,     [KIMG_HANDLE_HOST_STUB] = 131072,
};
#define TOTAL_SLOTS (8192u * 3 + 65536u * 2 + 131072u)
/* Bounded probing keeps a nearly full table from turning one insertion into
 * a scan of 100k slots; past it the entry is dropped. */
#define MAX_PROBES 512u
#define ARENA_SIZE KIMG_REGISTRY_ARENA_SIZE
#define MAX_STRING KIMG_REGISTRY_MAX_STRING
/* A reader gives up after this many torn reads (a writer preempted in the
 * middle of an update); the report then lacks one link, nothing worse. */
#define MAX_READ_RETRIES 1000

static struct slot slots[TOTAL_SLOTS];
static char arena[ARENA_SIZE];
static _Atomic size_t arena_used;
static _Atomic unsigned long stat_entries, stat_dropped, stat_strings_dropped;

static struct slot *table_of(enum kimg_handle_kind kind)
{
	size_t off = 0;
	for (unsigned k = 0; k < (unsigned)kind; k++)
		off += capacity[k];
	return slots + off;
}

/* Handles are aligned pointers: their low bits alone would cluster. */
static uint64_t hash_ptr(uintptr_t p)
{
	return kimg_fmix64((uint64_t)p);
}

/* Copy s into the arena; NULL (and counted) when it does not fit. Strings
 * longer than MAX_STRING are cut: a report needs the start of a name. */
static const char *arena_copy(const char *s)
{
	if (!s)
		return NULL;
	size_t len = strnlen(s, MAX_STRING - 1);
	size_t at = atomic_fetch_add_explicit(&arena_used, len + 1, memory_order_relaxed);
	if (at > ARENA_SIZE || len + 1 > ARENA_SIZE - at) {
		atomic_fetch_add_explicit(&stat_strings_dropped, 1, memory_order_relaxed);
		return NULL;
	}
	memcpy(arena + at, s, len);
	arena[at + len] = '\0';
	return arena + at;
}

/* A string already inside the arena (a name the registry handed out and a
 * hook passes back) needs no second copy. */
static const char *intern(const char *s)
{
	if (s && (uintptr_t)s >= (uintptr_t)arena && (uintptr_t)s < (uintptr_t)arena + ARENA_SIZE)
		return s;
	return arena_copy(s);
}

static struct slot *claim(enum kimg_handle_kind kind, uintptr_t key)
{
	struct slot *t = table_of(kind);
	uint32_t mask = capacity[kind] - 1;
	uint32_t i = (uint32_t)hash_ptr(key) & mask;
	for (uint32_t n = 0; n < MAX_PROBES && n <= mask; n++, i = (i + 1) & mask) {
		uintptr_t k = atomic_load_explicit(&t[i].key, memory_order_acquire);
		if (k == key)
			return &t[i];
		if (k == 0) {
			uintptr_t expected = 0;
			if (atomic_compare_exchange_strong_explicit(&t[i].key, &expected, key, memory_order_acq_rel,
								    memory_order_acquire)) {
				atomic_fetch_add_explicit(&stat_entries, 1, memory_order_relaxed);
				return &t[i];
			}
			if (expected == key)
				return &t[i];
		}
	}
	return NULL;
}

void kimg_registry_add(enum kimg_handle_kind kind, const void *handle, const struct kimg_origin *origin)
{
	if ((unsigned)kind >= KIMG_HANDLE_KIND_COUNT || !handle || !origin)
		return;
	struct slot *s = claim(kind, (uintptr_t)handle);
	if (!s) {
		atomic_fetch_add_explicit(&stat_dropped, 1, memory_order_relaxed);
		return;
	}
	const char *path = intern(origin->path);
	const char *name = intern(origin->name);

	/* take the slot's write side: seq even -> odd */
	unsigned seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
	for (;;) {
		if (seq & 1u) {
			seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(&s->seq, &seq, seq + 1, memory_order_acq_rel,
							  memory_order_relaxed))
			break;
	}
	/* release stores, not a fence (TSan does not model fences): a reader
	 * that sees any new field also sees the odd counter stored before it */
	atomic_store_explicit(&s->image, (uintptr_t)origin->image, memory_order_release);
	atomic_store_explicit(&s->path, (uintptr_t)path, memory_order_release);
	atomic_store_explicit(&s->parent, (uintptr_t)origin->parent, memory_order_release);
	atomic_store_explicit(&s->name, (uintptr_t)name, memory_order_release);
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

static bool read_slot(struct slot *s, struct kimg_origin *out)
{
	for (int tries = 0; tries < MAX_READ_RETRIES; tries++) {
		unsigned s1 = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (s1 == 0)
			return false; /* claimed, first write not published yet */
		if (s1 & 1u)
			continue;
		/* acquire loads keep the second counter read after them */
		out->image = (const void *)atomic_load_explicit(&s->image, memory_order_acquire);
		out->path = (const char *)atomic_load_explicit(&s->path, memory_order_acquire);
		out->parent = (const void *)atomic_load_explicit(&s->parent, memory_order_acquire);
		out->name = (const char *)atomic_load_explicit(&s->name, memory_order_acquire);
		if (atomic_load_explicit(&s->seq, memory_order_relaxed) == s1)
			return true;
	}
	return false;
}

bool kimg_registry_find(enum kimg_handle_kind kind, const void *handle, struct kimg_origin *out)
{
	if ((unsigned)kind >= KIMG_HANDLE_KIND_COUNT || !handle || !out)
		return false;
	struct slot *t = table_of(kind);
	uint32_t mask = capacity[kind] - 1;
	uint32_t i = (uint32_t)hash_ptr((uintptr_t)handle) & mask;
	for (uint32_t n = 0; n < MAX_PROBES && n <= mask; n++, i = (i + 1) & mask) {
		uintptr_t k = atomic_load_explicit(&t[i].key, memory_order_acquire);
		if (k == 0)
			return false;
		if (k == (uintptr_t)handle)
			return read_slot(&t[i], out);
	}
	return false;
}

void kimg_registry_get_stats(struct kimg_registry_stats *st)
{
	size_t used = atomic_load_explicit(&arena_used, memory_order_relaxed);
	st->entries = atomic_load_explicit(&stat_entries, memory_order_relaxed);
	st->dropped = atomic_load_explicit(&stat_dropped, memory_order_relaxed);
	st->strings_dropped = atomic_load_explicit(&stat_strings_dropped, memory_order_relaxed);
	st->arena_used = used < ARENA_SIZE ? used : ARENA_SIZE;
}

_Static_assert(TOTAL_SLOTS == 8192u + 8192u + 65536u + 65536u + 8192u + 131072u, "TOTAL_SLOTS matches capacity[]");
_Static_assert(KIMG_HANDLE_KIND_COUNT == 6, "a new handle kind needs a capacity row");
