/* SPDX-License-Identifier: Apache-2.0 */
/* --sm @FILE (fleet.c). */
#ifndef KIMG_PROBE_FLEET_H
#define KIMG_PROBE_FLEET_H

#include "inventory.h"
#include "probe.h"

struct probe_fleet_gpu {
	struct kimg_inventory_gpu gpu;  /* one distinct GPU + driver */
	unsigned long gpus, hosts;      /* how many of it, on how many hosts */
	char first_host[128], last_host[128];
};

/* Distinct GPU + driver pairs of many device documents. */
struct probe_fleet {
	struct probe_fleet_gpu *v;
	size_t n, cap;
	unsigned long documents;
};

/* Add one device document (a line). arena: scratch for the JSON reader.
 * Returns the number of GPUs it named, or a negative error with err set
 * (-KIMG_EFORMAT: JSON, but no device document). */
int probe_fleet_add_document(struct probe_fleet *f, struct kimg_span line, void *arena, size_t arena_size,
			     struct kimg_error *err);

/* Read a fleet file. Returns the count of distinct GPU + driver pairs
 * (*out malloc'ed), or -1 with a one-line reason in err. */
int probe_fleet_read(const char *path, struct probe_fleet_gpu **out, char *err, size_t err_size);

/* The check target for one entry: its CC, Tegra, driver version, and a
 * name "NVIDIA H200, CUDA 12.2, 3 hosts". */
void probe_fleet_target(const struct probe_fleet_gpu *g, struct probe_target *t);

#endif
