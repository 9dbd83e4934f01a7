/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for core/cluster_slurm.c (core/cluster.h). Besides "no
 * crash, no read past the input" (ASan), it checks what the reader
 * promises each record and its count of records (cluster_check.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kimg_error err;
	unsigned long count = 0;
	/* the first line is a GRES map when it starts with "map:" */
	struct kimg_gres_map map;
	const struct kimg_gres_map *use = NULL;
	if (size > 4 && memcmp(data, "map:", 4) == 0) {
		const uint8_t *nl = memchr(data, '\n', size);
		size_t len = nl ? (size_t)(nl - data) : size;
		if (kimg_gres_map_parse(kimg_span_make(data + 4, len - 4), &map, &err) >= 0)
			use = &map;
		data += len;
		size -= len;
	}
	int rc = kimg_slurm_nodes_parse(kimg_span_make(data, size), use, check_node, &count, &err);
	check_parse_end(rc, count, &err);
	return 0;
}
