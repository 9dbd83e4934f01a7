/* SPDX-License-Identifier: Apache-2.0 */
/* Rendering of sys/gpu_readings.h for device and doctor (readings.c). */
#ifndef KIMG_PROBE_READINGS_H
#define KIMG_PROBE_READINGS_H

#include "gpu_readings.h"
#include "probe.h"

const struct kimg_gpu_reading *probe_device_reading(const struct kimg_gpu_inventory *inv, int ordinal);
/* "cc_readings": {driver, nvml, name_table, agree, used}, "mig_parent_uuid", "mig_mode" */
void probe_json_cc_readings(struct kimg_json *j, const struct kimg_gpu_reading *g);
void probe_text_reading(const struct kimg_gpu_reading *g);
/* "cuda_visible_devices", "nvml_gpus", "nvml_error", "not_visible": [...] */
void probe_json_not_visible(struct kimg_json *j, const struct kimg_gpu_inventory *inv);
void probe_text_not_visible(const struct kimg_gpu_inventory *inv);

#endif
