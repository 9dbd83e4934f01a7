/* SPDX-License-Identifier: Apache-2.0 */
/* Seen sets and keys (seen.h): open addressing with linear probing over a
 * fixed table, insertion by compare-and-swap from 0. */
#include "seen.h"

uint64_t kimg_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

uint64_t kimg_module_key(const void *image, const char *path)
{
	return kimg_seen_mix(image ? (uint64_t)(uintptr_t)image : kimg_hash_str(path));
}

uint64_t kimg_report_key(uint64_t module_key, int error)
{
	return kimg_seen_mix(module_key ^ (uint64_t)error * 0x9e3779b97f4a7c15ULL);
}

bool kimg_seen_insert(struct kimg_seen_set *set, uint64_t key)
{
	uint32_t i = (uint32_t)key & (KIMG_SEEN_SLOTS - 1);
	for (uint32_t n = 0; n < KIMG_SEEN_SLOTS; n++, i = (i + 1) & (KIMG_SEEN_SLOTS - 1)) {
		uint64_t k = atomic_load_explicit(&set->key[i], memory_order_acquire);
		if (k == key)
			return false;
		if (k == 0) {
			uint64_t expected = 0;
			if (atomic_compare_exchange_strong(&set->key[i], &expected, key))
				return true;
			if (expected == key)
				return false;
		}
	}
	return true;
}

bool kimg_seen_contains(struct kimg_seen_set *set, uint64_t key)
{
	uint32_t i = (uint32_t)key & (KIMG_SEEN_SLOTS - 1);
	for (uint32_t n = 0; n < KIMG_SEEN_SLOTS; n++, i = (i + 1) & (KIMG_SEEN_SLOTS - 1)) {
		uint64_t k = atomic_load_explicit(&set->key[i], memory_order_acquire);
		if (k == key)
			return true;
		if (k == 0)
			return false;
	}
	return false;
}
