/* SPDX-License-Identifier: Apache-2.0 */
/* Bounding memory before reading it (bound.c). Cold paths only. */
#ifndef KIMG_SHIM_BOUND_H
#define KIMG_SHIM_BOUND_H

#include <stdint.h>

#include "error.h"

/* Bytes readable from p, up to limit, per /proc/self/maps (adjacent
 * readable mappings join); 0 when p is not mapped readable. */
uint64_t kimg_readable_run(const void *p, uint64_t limit);

/* kimg_memory_image_extent, but first bounding p (and a wrapper's target)
 * by the readable mapping it lies in, so hostile or stale pointers yield
 * an error, not a fault. */
int kimg_image_bound(const void *p, uint64_t limit, const void **target, uint64_t *size, struct kimg_error *err);

/* kimg_image_bound through the loaded object's segments first (cached per
 * thread: a library's registrations are visited back and forth); the
 * slower /proc/self/maps path only for memory outside loaded objects. */
int kimg_loaded_image_bound(const void *p, uint64_t limit, const void **target, uint64_t *size,
			    struct kimg_error *err);

#endif
