/* SPDX-License-Identifier: Apache-2.0 */
/* summarize: `kimg-probe device --json` documents beside the reports (a
 * fleet inventory, as `srun kimg-probe device --json` collects it), merged
 * into distinct GPU + driver rows with their GPU and host counts. */
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "inventory.h"
#include "summary.h"

bool probe_summary_add_inventory(struct probe_summary *s, const struct kimg_jval *root, struct kimg_span line)
{
	if (!kimg_inventory_is_document(root))
		return false;
	if (!s->inventory && !(s->inventory = calloc(1, sizeof *s->inventory)))
		return false;
	/* parsed again into the same arena: the caller's tree is not used after this */
	return probe_fleet_add_document(s->inventory, line, s->arena, LINE_ARENA, NULL) >= 0;
}

void probe_summary_print_inventory(const struct probe_summary *s)
{
	const struct probe_fleet *f = s->inventory;
	if (!f)
		return;
	printf("GPU inventory: %lu device document%s\n", f->documents, f->documents == 1 ? "" : "s");
	printf("  %-32s %-5s %-12s %6s %6s\n", "GPU", "CC", "driver CUDA", "GPUs", "hosts");
	for (size_t i = 0; i < f->n; i++) {
		const struct probe_fleet_gpu *g = &f->v[i];
		char drv[16] = "?";
		if (g->gpu.driver_version)
			snprintf(drv, sizeof drv, "%d.%d", g->gpu.driver_version / 1000, g->gpu.driver_version % 1000 / 10);
		printf("  %-32s %u.%-3u %-12s %6lu %6lu\n", g->gpu.name[0] ? g->gpu.name : "?", g->gpu.sm / 10,
		       g->gpu.sm % 10, drv, g->gpus, g->hosts);
	}
}

void probe_summary_json_inventory(const struct probe_summary *s, struct kimg_json *j)
{
	const struct probe_fleet *f = s->inventory;
	kimg_json_key(j, "inventory");
	if (!f) {
		kimg_json_null(j);
		return;
	}
	kimg_json_begin_object(j);
	kimg_json_kv_uint(j, "documents", f->documents);
	kimg_json_key(j, "gpus");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < f->n; i++) {
		const struct probe_fleet_gpu *g = &f->v[i];
		char cc[16], drv[16];
		snprintf(cc, sizeof cc, "%u.%u", g->gpu.sm / 10, g->gpu.sm % 10);
		snprintf(drv, sizeof drv, "%d.%d", g->gpu.driver_version / 1000, g->gpu.driver_version % 1000 / 10);
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "name", g->gpu.name[0] ? g->gpu.name : NULL);
		kimg_json_kv_string(j, "sm", cc);
		kimg_json_kv_bool(j, "tegra", g->gpu.tegra);
		kimg_json_kv_string(j, "driver_cuda_version", g->gpu.driver_version ? drv : NULL);
		kimg_json_kv_uint(j, "gpus", g->gpus);
		kimg_json_kv_uint(j, "hosts", g->hosts);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_end_object(j);
}

void probe_summary_free_inventory(struct probe_summary *s)
{
	if (s->inventory)
		free(s->inventory->v);
	free(s->inventory);
	s->inventory = NULL;
}
