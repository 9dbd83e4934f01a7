/* SPDX-License-Identifier: Apache-2.0 */
/* --sm @FILE: the GPUs of many hosts, from `kimg-probe device --json`
 * documents one per line (as `srun kimg-probe device --json > fleet.jsonl`
 * collects them). Each distinct GPU + driver becomes one target, named
 * with the number of hosts that have it. */
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "fleet.h"
#include "inventory.h"

#define FLEET_LINE_MAX (1u << 20)

static int add_gpu(void *ctx, const char *host, const struct kimg_inventory_gpu *g)
{
	struct probe_fleet *c = ctx;
	for (size_t i = 0; i < c->n; i++) {
		struct probe_fleet_gpu *e = &c->v[i];
		if (e->gpu.sm == g->sm && e->gpu.tegra == g->tegra && e->gpu.driver_version == g->driver_version &&
		    strcmp(e->gpu.name, g->name) == 0) {
			e->gpus++;
			/* hosts counted once per document line, however many GPUs it has */
			if (strcmp(e->last_host, host) != 0 || !host[0]) {
				e->hosts++;
				snprintf(e->last_host, sizeof e->last_host, "%s", host);
			}
			return 0;
		}
	}
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 8;
		struct probe_fleet_gpu *p = realloc(c->v, nc * sizeof *p);
		if (!p)
			return -1;
		c->v = p;
		c->cap = nc;
	}
	struct probe_fleet_gpu *e = &c->v[c->n++];
	memset(e, 0, sizeof *e);
	e->gpu = *g;
	e->gpus = 1;
	e->hosts = 1;
	snprintf(e->last_host, sizeof e->last_host, "%s", host);
	snprintf(e->first_host, sizeof e->first_host, "%s", host);
	return 0;
}

int probe_fleet_add_document(struct probe_fleet *f, struct kimg_span line, void *arena, size_t arena_size,
			     struct kimg_error *err)
{
	int rc = kimg_inventory_parse(line, arena, arena_size, add_gpu, f, err);
	if (rc >= 0)
		f->documents++;
	return rc;
}

int probe_fleet_read(const char *path, struct probe_fleet_gpu **out, char *err, size_t err_size)
{
	struct kimg_file f;
	struct kimg_error e = { 0, 0, "" };
	struct probe_fleet c;
	memset(&c, 0, sizeof c);
	if (kimg_file_open(path, &f, &e) < 0) {
		snprintf(err, err_size, "%s: %s", path, e.what);
		return -1;
	}
	void *arena = malloc(FLEET_LINE_MAX * 4);
	unsigned long line_no = 0, docs = 0;
	uint64_t pos = 0;
	int status = 0;
	while (arena && pos < f.bytes.size) {
		const uint8_t *s = f.bytes.data + pos;
		const uint8_t *nl = memchr(s, '\n', (size_t)(f.bytes.size - pos));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(f.bytes.size - pos);
		pos += len + (nl ? 1 : 0);
		line_no++;
		size_t k = 0;
		while (k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
			k++;
		if (k == len)
			continue;
		if (len > FLEET_LINE_MAX) {
			snprintf(err, err_size, "%s:%lu: line longer than %u bytes", path, line_no, FLEET_LINE_MAX);
			status = -1;
			break;
		}
		if (probe_fleet_add_document(&c, kimg_span_make(s, len), arena, FLEET_LINE_MAX * 4, &e) < 0) {
			snprintf(err, err_size, "%s:%lu: %s", path, line_no, e.what[0] ? e.what : "not a device document");
			status = -1;
			break;
		}
		docs++;
	}
	if (!arena) {
		snprintf(err, err_size, "out of memory");
		status = -1;
	}
	free(arena);
	kimg_file_close(&f);
	if (status == 0 && c.n == 0) {
		snprintf(err, err_size, "%s: no GPUs in %lu device document%s", path, docs, docs == 1 ? "" : "s");
		status = -1;
	}
	if (status < 0) {
		free(c.v);
		return -1;
	}
	*out = c.v;
	return (int)c.n;
}

void probe_fleet_target(const struct probe_fleet_gpu *g, struct probe_target *t)
{
	char drv[16];
	memset(t, 0, sizeof *t);
	t->dev.cc.sm = (uint16_t)g->gpu.sm;
	t->dev.cc.variant = KIMG_VARIANT_PLAIN;
	t->dev.tegra = g->gpu.tegra;
	t->dev.driver_version = g->gpu.driver_version;
	t->dev.ordinal = -1;
	t->named = true;
	probe_format_cuda_version(g->gpu.driver_version, drv, sizeof drv);
	snprintf(t->dev.name, sizeof t->dev.name, "%.48s, CUDA %s, %lu host%s", g->gpu.name[0] ? g->gpu.name : "GPU",
		 drv[0] ? drv : "?", g->hosts, g->hosts == 1 ? "" : "s");
}
