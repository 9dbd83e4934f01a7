/* SPDX-License-Identifier: Apache-2.0 */
/* Rendering of the three compute-capability readings and the visibility
 * of GPUs (sys/gpu_readings.h), shared by device and doctor. */
#include "readings.h"

static void cc_text(unsigned sm, char *buf, size_t size)
{
	if (sm)
		snprintf(buf, size, "%u.%u", sm / 10, sm % 10);
	else
		snprintf(buf, size, "?");
}

const struct kimg_gpu_reading *probe_device_reading(const struct kimg_gpu_inventory *inv, int ordinal)
{
	for (int i = 0; i < inv->n; i++)
		if (inv->gpus[i].ordinal == ordinal)
			return &inv->gpus[i];
	return NULL;
}

void probe_json_cc_readings(struct kimg_json *j, const struct kimg_gpu_reading *g)
{
	char a[24], b[24], c[24];
	kimg_json_key(j, "cc_readings");
	if (!g) {
		/* no reading: every key still present (docs/json-probe.md) */
		kimg_json_null(j);
		kimg_json_kv_string(j, "mig_parent_uuid", NULL);
		kimg_json_key(j, "mig_mode");
		kimg_json_null(j);
		return;
	}
	cc_text(g->cc_driver, a, sizeof a);
	cc_text(g->cc_nvml, b, sizeof b);
	cc_text(g->cc_table, c, sizeof c);
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "driver", g->cc_driver ? a : NULL);
	kimg_json_kv_string(j, "nvml", g->cc_nvml ? b : NULL);
	kimg_json_kv_string(j, "name_table", g->cc_table ? c : NULL);
	kimg_json_kv_bool(j, "agree", !kimg_gpu_reading_disagrees(g));
	/* the driver selects images by its own attributes */
	kimg_json_kv_string(j, "used", g->cc_driver ? "driver" : NULL);
	kimg_json_end_object(j);
	kimg_json_kv_string(j, "mig_parent_uuid", g->parent_uuid[0] ? g->parent_uuid : NULL);
	kimg_json_key(j, "mig_mode");
	if (g->mig_mode >= 0)
		kimg_json_bool(j, g->mig_mode == 1);
	else
		kimg_json_null(j);
}

void probe_text_reading(const struct kimg_gpu_reading *g)
{
	char a[24], b[24], c[24];
	if (!g)
		return;
	cc_text(g->cc_driver, a, sizeof a);
	cc_text(g->cc_nvml, b, sizeof b);
	cc_text(g->cc_table, c, sizeof c);
	printf("  compute capability readings: driver %s, NVML %s, name table %s: %s\n", a, b, c,
	       kimg_gpu_reading_disagrees(g) ? "DISAGREE (the driver picks images by its own reading, the first)"
					     : "agree");
	printf("  uuid %s%s%s%s%s\n", g->uuid[0] ? g->uuid : "?", g->parent_uuid[0] ? " (MIG instance of " : "",
	       g->parent_uuid, g->parent_uuid[0] ? ")" : "",
	       g->mig_mode == 1 && !g->parent_uuid[0] ? ", MIG mode on" : "");
}

void probe_json_not_visible(struct kimg_json *j, const struct kimg_gpu_inventory *inv)
{
	kimg_json_kv_string(j, "cuda_visible_devices", inv->visible_set ? inv->visible_devices : NULL);
	kimg_json_key(j, "nvml_gpus");
	if (inv->nvml_count < 0)
		kimg_json_null(j);
	else
		kimg_json_int(j, inv->nvml_count);
	kimg_json_kv_string(j, "nvml_error", inv->nvml_count < 0 ? inv->nvml_error : NULL);
	kimg_json_key(j, "not_visible");
	kimg_json_begin_array(j);
	for (int i = 0; i < inv->n; i++) {
		const struct kimg_gpu_reading *g = &inv->gpus[i];
		if (g->ordinal >= 0)
			continue;
		kimg_json_begin_object(j);
		kimg_json_kv_int(j, "nvml_index", g->nvml_index);
		kimg_json_kv_string(j, "name", g->name);
		kimg_json_kv_string(j, "uuid", g->uuid[0] ? g->uuid : NULL);
		probe_json_cc_readings(j, g);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
}

void probe_text_not_visible(const struct kimg_gpu_inventory *inv)
{
	int hidden = 0;
	for (int i = 0; i < inv->n; i++) {
		const struct kimg_gpu_reading *g = &inv->gpus[i];
		if (g->ordinal >= 0)
			continue;
		hidden++;
		printf("not visible to CUDA: %s, uuid %s (NVML index %d)%s\n", g->name, g->uuid[0] ? g->uuid : "?",
		       g->nvml_index, g->mig_mode == 1 ? ", MIG mode on" : "");
	}
	if (inv->nvml_count < 0)
		printf("NVML: %s (no second reading)\n", inv->nvml_error);
	if (inv->visible_set || hidden)
		printf("CUDA_VISIBLE_DEVICES=%s: CUDA sees %d of the %d GPU%s NVML lists\n",
		       inv->visible_set ? inv->visible_devices : "(unset)", inv->cuda_count > 0 ? inv->cuda_count : 0,
		       inv->nvml_count > 0 ? inv->nvml_count : 0, inv->nvml_count == 1 ? "" : "s");
}
