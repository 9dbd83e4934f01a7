/* SPDX-License-Identifier: Apache-2.0 */
/* Internal contract between the input walkers (input.c, input_elf.c,
 * archive.c) and their shared helpers (input_walk.c). Not part of the API: names keep the kimg_ prefix but are
 * hidden by -fvisibility=hidden like everything not marked for export. */
#ifndef KIMG_INPUT_INTERNAL_H
#define KIMG_INPUT_INTERNAL_H

#include <stdbool.h>

#include "input.h"

/* What one kimg_input_for_each_module call shares across the inputs it
 * walks (the outermost one and, for an archive, each member). */
struct kimg_walk_call {
	kimg_module_fn fn;
	void *ctx;
	struct kimg_error *err; /* first problem; may be NULL */
	unsigned flags;         /* enum kimg_input_flag */
	int count;              /* modules yielded */
	int stop;               /* non-zero: the callback's return, stop now */
	const struct kimg_zero_ranges *zeros; /* known zero bytes, or NULL */
};

/* Where a walk is: the outermost input, or one archive member of it. Set
 * once when the input is entered and never rewritten (a member gets a
 * walk of its own), so every module and every error offset is relative to
 * the outermost input. */
struct kimg_walk {
	struct kimg_walk_call *call;
	const char *member;     /* the archive member's name, or NULL */
	uint64_t base;          /* offset of this input in the outermost */
};

/* Known zeros: where the zero run holding `off` (relative to the current
 * input) ends, or off when off is in none; the start of the next known
 * zero run at or after off, or UINT64_MAX. */
uint64_t kimg_walk_zero_end(const struct kimg_walk *w, uint64_t off);
uint64_t kimg_walk_next_zero(const struct kimg_walk *w, uint64_t off);

/* Yield one module; `off` is relative to the current input. */
void kimg_walk_emit(struct kimg_walk *w, enum kimg_input_kind kind, enum kimg_module_origin origin,
		    struct kimg_span bytes, uint64_t off, const char *section);

/* Record a problem unless one is already recorded; returns code. */
int kimg_walk_fail(struct kimg_walk *w, int code, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Record an error returned by a parser that worked on a sub-span starting
 * at `off` of the current input; returns its code. */
int kimg_walk_take(struct kimg_walk *w, const struct kimg_error *e, uint64_t off);

/* Containers back to back in `sec` (which starts at `off` in the current
 * input), zero padding between them. A bad container stops the run and is
 * recorded; if it is the first one and first_fatal is set, its code is
 * returned (a raw .fatbin file that is not one), else 0. */
int kimg_walk_containers(struct kimg_walk *w, struct kimg_span sec, uint64_t off,
			 enum kimg_module_origin origin, const char *section, bool first_fatal);

int kimg_walk_host_elf(struct kimg_walk *w, struct kimg_span in);

/* Strict check used when a magic is found outside the known sections:
 * a standard 16-byte header and every entry header valid (§9). */
bool kimg_container_is_plausible(struct kimg_span in, uint64_t off, uint64_t *size);

#endif
