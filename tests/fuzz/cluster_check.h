/* SPDX-License-Identifier: Apache-2.0 */
/* The node checker of the three cluster fuzz targets (fuzz_cluster_k8s.c,
 * fuzz_cluster_slurm.c, fuzz_cluster_dcgm.c): what every reader of
 * core/cluster.h promises each record it hands out: NUL-terminated names
 * and reasons, at most KIMG_CLUSTER_KINDS_MAX kinds, a known compute
 * capability or a reason. ctx counts the records (unsigned long), so that
 * the target can check the reader's return value against the callbacks.
 * Included by one target each, so a static function. */
#ifndef KIMG_FUZZ_CLUSTER_CHECK_H
#define KIMG_FUZZ_CLUSTER_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "gpus.h"

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

/* The reader's end: its count matches the callbacks; an error names itself. */
static void check_parse_end(int rc, unsigned long count, const struct kimg_error *err)
{
	if (rc >= 0 && (unsigned long)rc != count)
		abort();
	if (rc < 0 && (!memchr(err->what, 0, sizeof err->what) || !err->what[0]))
		abort();
}

#endif
