/* SPDX-License-Identifier: Apache-2.0 */
/* A set of byte strings (name_set.h): open addressing on FNV-1a hashes,
 * the strings kept length-prefixed in one pool, so a lookup compares
 * bytes only on a hash match and 100,000 node names cost two allocations
 * and a pool. */
#include "name_set.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h ? h : 1;
}

void probe_name_set_free(struct probe_name_set *s)
{
	free(s->hash);
	free(s->off);
	free(s->pool);
	memset(s, 0, sizeof *s);
}

static int grow(struct probe_name_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024;
	uint64_t *h = calloc(cap, sizeof *h);
	uint32_t *o = calloc(cap, sizeof *o);
	if (!h || !o) {
		free(h);
		free(o);
		return -1;
	}
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->hash[i])
			continue;
		size_t j = s->hash[i] & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = s->hash[i];
		o[j] = s->off[i];
	}
	free(s->hash);
	free(s->off);
	s->hash = h;
	s->off = o;
	s->cap = cap;
	return 0;
}

/* 1 when added, 0 when it was there, -1 out of memory. Strings are kept
 * length-prefixed (4 bytes) in the pool. */
int probe_name_set_add(struct probe_name_set *s, const char *str, size_t len)
{
	if ((s->n + 1) * 2 > s->cap && grow(s) < 0)
		return -1;
	uint64_t h = hash_bytes(str, len);
	size_t j = h & (s->cap - 1);
	for (; s->hash[j]; j = (j + 1) & (s->cap - 1)) {
		if (s->hash[j] != h)
			continue;
		uint32_t klen;
		memcpy(&klen, s->pool + s->off[j], 4);
		if (klen == len && memcmp(s->pool + s->off[j] + 4, str, len) == 0)
			return 0;
	}
	if (s->pool_len + len + 4 > s->pool_cap) {
		size_t cap = (s->pool_cap ? s->pool_cap * 2 : 65536) + len + 4;
		char *p = cap <= UINT32_MAX ? realloc(s->pool, cap) : NULL;
		if (!p)
			return -1;
		s->pool = p;
		s->pool_cap = cap;
	}
	uint32_t l32 = (uint32_t)len;
	memcpy(s->pool + s->pool_len, &l32, 4);
	memcpy(s->pool + s->pool_len + 4, str, len);
	s->hash[j] = h;
	s->off[j] = (uint32_t)s->pool_len;
	s->pool_len += len + 4;
	s->n++;
	return 1;
}
