/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for core/cluster_k8s.c (core/cluster.h). Besides "no
 * crash, no read past the input" (ASan), it checks what the reader
 * promises each record: NUL-terminated names and reasons, at most
 * KIMG_CLUSTER_KINDS_MAX kinds, a known compute capability or a reason,
 * and a count of records that matches the callbacks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "gpus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_node(void *ctx, const struct kimg_cluster_node *n)
{
	unsigned long *count = ctx;
	(*count)++;
	if (n->n_gpus > KIMG_CLUSTER_KINDS_MAX || !memchr(n->name, 0, sizeof n->name) || !memchr(n->why, 0, sizeof n->why))
		abort();
	for (unsigned i = 0; i < n->n_gpus; i++) {
		const struct kimg_cluster_gpu *g = &n->gpus[i];
		if (!memchr(g->product, 0, sizeof g->product) || !memchr(g->model, 0, sizeof g->model) ||
		    !memchr(g->unknown, 0, sizeof g->unknown) || !memchr(g->release, 0, sizeof g->release))
			abort();
		if (g->sm ? !kimg_cc_is_known(g->sm) : !g->unknown[0] && !n->why[0])
			abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kimg_error err;
	unsigned long count = 0;
	static unsigned char *arena;
	if (!arena && !(arena = malloc(1 << 16)))
		return 0;
	int rc = kimg_k8s_nodes_parse(kimg_span_make(data, size), arena, 1 << 16, check_node, &count, &err);
	if (rc >= 0 && (unsigned long)rc != count)
		abort();
	if (rc < 0 && (!memchr(err.what, 0, sizeof err.what) || !err.what[0]))
		abort();
	return 0;
}
