/* SPDX-License-Identifier: Apache-2.0 */
/* The diagnosis layer's "seen" sets and keys (seen.c): lock-free,
 * fixed-size, allocation-free sets of 64-bit keys that de-duplicate reports
 * and count failures, and the one way to key a module, a (module, error)
 * report and a string. Used by diagnose.c, dispatch_track.c and audit.c;
 * registry.c takes only the mixer. */
#ifndef KIMG_SHIM_SEEN_H
#define KIMG_SHIM_SEEN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define KIMG_SEEN_SLOTS 4096u

struct kimg_seen_set {
	_Atomic uint64_t key[KIMG_SEEN_SLOTS]; /* 0 marks an empty slot */
};

/* MurmurHash3's 64-bit finaliser: handles are aligned pointers, so their
 * low bits alone would cluster. */
static inline uint64_t kimg_fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* A set key: mixed, never 0. */
static inline uint64_t kimg_seen_mix(uint64_t h)
{
	h = kimg_fmix64(h);
	return h ? h : 1;
}

/* FNV-1a of s ("" for NULL). */
uint64_t kimg_hash_str(const char *s);

/* A module: its image's address, else its file. */
uint64_t kimg_module_key(const void *image, const char *path);

/* A (module, error) report: the de-duplication key of every report. */
uint64_t kimg_report_key(uint64_t module_key, int error);

/* Insert key; true when it was not there yet. A full set answers true
 * (report again rather than stay silent). */
bool kimg_seen_insert(struct kimg_seen_set *set, uint64_t key);
bool kimg_seen_contains(struct kimg_seen_set *set, uint64_t key);

#endif
