/* SPDX-License-Identifier: Apache-2.0 */
/* GPU inventories: the `kimg-probe device --json` document (docs/json-probe.md),
 * one per host, read back for `check --sm @FILE` and `summarize`. Pure:
 * parses one document from a span (core/json_read.h). */
#ifndef KIMG_INVENTORY_H
#define KIMG_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "span.h"

struct kimg_inventory_gpu {
	char name[96];          /* "NVIDIA H200" */
	unsigned sm;            /* 90 */
	bool tegra;
	int driver_version;     /* 12020 from "cuda_driver": "12.2"; 0 unknown */
	char release[32];       /* "580.159.04" or "" */
	char uuid[80];          /* or "" */
};

/* Is this parsed JSON object a device document (has "devices" and
 * "driver")? Lets summarize tell inventories from shim reports. */
struct kimg_jval;
bool kimg_inventory_is_document(const struct kimg_jval *root);

/* Parse one device document. fn(ctx, host, gpu) per device with a valid
 * "cc"; host is "" when the document has none. arena: scratch for the JSON
 * tree (4x the line is plenty). Returns the number of devices, or a
 * negative error with err set: -KIMG_EFORMAT when it is JSON but not a
 * device document, the JSON reader's codes otherwise. */
int kimg_inventory_parse(struct kimg_span line, void *arena, size_t arena_size,
			 int (*fn)(void *ctx, const char *host, const struct kimg_inventory_gpu *gpu), void *ctx,
			 struct kimg_error *err);

#endif
