/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for core/cubin.c: parse, then walk the kernels and check
 * the two agree and every name is a C string of the reported length.
 * The core never prints, so nothing needs silencing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_name(void *ctx, const char *name, size_t len)
{
	if (strlen(name) != len)
		abort();
	(*(uint32_t *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kimg_span s = kimg_span_make(data, size);
	struct kimg_cubin_info info;
	struct kimg_error err = { 0 };
	uint32_t seen = 0;
	int rc = kimg_cubin_parse(s, &info, &err);
	int n = kimg_cubin_for_each_kernel(s, check_name, &seen, &err);
	if (rc == 0 && (n < 0 || (uint32_t)n != info.kernel_count || seen != info.kernel_count))
		abort(); /* parse and walk must agree */
	if (rc < 0 && n >= 0)
		abort();
	if (rc < 0 && err.code >= 0)
		abort(); /* every failure carries its code */
	return 0;
}
