/* SPDX-License-Identifier: Apache-2.0 */
/* The targets of node groups (cluster_groups.h): each group's label, and
 * the groups of --sm all, one per compute capability of the name table. */
#include <stdlib.h>
#include <string.h>

#include "cluster_groups.h"
#include "gpus.h"
#include "probe.h"

/* The group's target: its label "gpu-h1, gpu-h2: 16 × H100, driver CUDA
 * 12.4" cut to the device name's room, names first dropped. */
void probe_group_target(const struct probe_group *e, struct probe_target *t)
{
	char what[160] = "", drv[16], tail[200];
	size_t used = 0;
	for (unsigned i = 0; i < e->n_products && used < sizeof what; i++) {
		if (e->src->kind == PROBE_CLUSTER_ALL && used + strlen(e->products[i].name) > 70) {
			used += (size_t)snprintf(what + used, sizeof what - used, ", …");
			break;
		} else if (e->src->kind == PROBE_CLUSTER_ALL)
			used += (size_t)snprintf(what + used, sizeof what - used, "%s%s", i ? ", " : "", e->products[i].name);
		else if (e->products[i].gpus)
			used += (size_t)snprintf(what + used, sizeof what - used, "%s%lu × %s", i ? ", " : "", e->products[i].gpus,
						 e->products[i].name);
		else
			used += (size_t)snprintf(what + used, sizeof what - used, "%s%s", i ? ", " : "", e->products[i].name);
	}
	if (e->more_products && used < sizeof what && !strstr(what, "…"))
		snprintf(what + used, sizeof what - used, ", …");
	probe_format_cuda_version(e->driver_version, drv, sizeof drv);
	memset(t, 0, sizeof *t);
	t->dev.cc.sm = (uint16_t)e->sm;
	t->dev.cc.variant = KIMG_VARIANT_PLAIN;
	t->dev.tegra = e->tegra;
	t->dev.driver_version = e->driver_version;
	t->dev.ordinal = -1;
	t->named = true;
	t->group = e;
	if (e->src->kind == PROBE_CLUSTER_ALL) {
		snprintf(t->dev.name, sizeof t->dev.name, "%.95s", what);
		return;
	}
	if (drv[0])
		snprintf(tail, sizeof tail, ": %.150s, driver CUDA %s", what, drv);
	else
		snprintf(tail, sizeof tail, ": %.150s", what);
	/* as many names as fit, then "and N more" */
	char names[96] = "";
	size_t room = sizeof t->dev.name - 1 > strlen(tail) ? sizeof t->dev.name - 1 - strlen(tail) : 0;
	unsigned shown = 0;
	for (unsigned i = 0; i < e->n_names; i++) {
		char more[40] = "";
		unsigned long rest = e->nodes - i - 1;
		if (rest)
			snprintf(more, sizeof more, " and %lu more", rest);
		size_t need = strlen(names) + (i ? 2 : 0) + strlen(e->names[i]) + strlen(more);
		if (need > room)
			break;
		size_t l = strlen(names), len = strlen(e->names[i]);
		if (i) {
			memcpy(names + l, ", ", 2);
			l += 2;
		}
		memcpy(names + l, e->names[i], len); /* need <= room < sizeof names */
		names[l + len] = '\0';
		shown++;
	}
	if (shown < e->nodes) {
		size_t l = strlen(names);
		if (shown)
			snprintf(names + l, sizeof names - l, " and %lu more", e->nodes - shown);
		else
			snprintf(names, sizeof names, "%lu node%s", e->nodes, e->nodes == 1 ? "" : "s");
	}
	snprintf(t->dev.name, sizeof t->dev.name, "%s%s", names, tail);
}

/* --sm all: every GPU of the name table, one group per compute capability. */
int probe_cluster_read_all(struct probe_cluster *c)
{
	for (size_t i = 0; kimg_gpu_at(i); i++) {
		const struct kimg_gpu *g = kimg_gpu_at(i);
		struct probe_group *e = NULL;
		for (size_t k = 0; k < c->n_groups; k++)
			if (c->groups[k].sm == g->sm && c->groups[k].tegra == g->tegra)
				e = &c->groups[k];
		if (!e) {
			if (!c->groups && !(c->groups = calloc(PROBE_CLUSTER_GROUPS_MAX, sizeof *c->groups)))
				return -1;
			e = &c->groups[c->n_groups++];
			e->src = c;
			e->sm = g->sm;
			e->tegra = g->tegra;
		}
		e->gpus++;
		if (e->n_products < PROBE_GROUP_PRODUCTS)
			snprintf(e->products[e->n_products++].name, sizeof e->products[0].name, "%s", g->name);
		else
			e->more_products = true;
		if (e->n_names < PROBE_GROUP_NAMES)
			e->names[e->n_names++] = strdup(g->name);
		e->nodes++;
	}
	c->nodes = c->records = c->n_groups;
	return 0;
}
