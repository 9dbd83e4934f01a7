/* SPDX-License-Identifier: Apache-2.0 */
/* A set of byte strings for the cluster readers (cluster_groups.c): node
 * names, dcgm host + UUID pairs. Linear in what is added. */
#ifndef KIMG_PROBE_NAME_SET_H
#define KIMG_PROBE_NAME_SET_H

#include <stddef.h>
#include <stdint.h>

struct probe_name_set {
	uint64_t *hash;                /* 0: empty slot */
	uint32_t *off;                 /* into pool */
	size_t cap, n;
	char *pool;
	size_t pool_len, pool_cap;
};

/* 1 when str (len bytes, NULs allowed) was added, 0 when it was there,
 * -1 out of memory. A zeroed set is empty. */
int probe_name_set_add(struct probe_name_set *s, const char *str, size_t len);
/* Free what the set took; it is empty (zeroed) afterwards. */
void probe_name_set_free(struct probe_name_set *s);

#endif
