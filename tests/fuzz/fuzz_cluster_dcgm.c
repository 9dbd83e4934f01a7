/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for core/cluster_dcgm.c (core/cluster.h). Besides "no
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
	int rc = kimg_dcgm_parse(kimg_span_make(data, size), check_node, &count, &err);
	check_parse_end(rc, count, &err);
	return 0;
}
