/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for core/ptx.c and core/ptx_rewrite.c: parse, walk the
 * entries, rewrite into a buffer of kimg_ptx_rewrite_bound() bytes, and
 * check the rewrite's promises: it fits, it is NUL-terminated, the result
 * parses, and nothing in it is higher than asked for. The first two input
 * bytes choose the new ISA and SM so the fuzzer explores both. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "ptx.h"
#include "ptx_rewrite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_name(void *ctx, const char *name, size_t len)
{
	if (strlen(name) != len || len == 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t new_isa = 0;
	unsigned new_sm = 0;
	if (size >= 2) {
		new_isa = data[0] < 0x80 ? 0 : KIMG_ISA(1 + data[0] % 12, data[0] % 10);
		new_sm = data[1] < 0x40 ? 0 : 10 + data[1] % 120;
		data += 2;
		size -= 2;
	}
	struct kimg_span s = kimg_span_make(data, size);
	struct kimg_ptx_info info, after;
	struct kimg_error err = { 0 };
	int rc = kimg_ptx_parse(s, &info, &err);
	int n = kimg_ptx_for_each_entry(s, check_name, NULL, &err);
	if (rc == 0 && (n < 0 || (uint32_t)n != info.entry_count))
		abort();

	size_t cap = kimg_ptx_rewrite_bound(size), len = 0;
	char *out = malloc(cap);
	struct kimg_ptx_rewrite_info ri;
	if (!out)
		return 0;
	int wr = kimg_ptx_rewrite(s, new_isa, new_sm, out, cap, &len, &ri, &err);
	if ((wr == 0) != (rc == 0))
		abort(); /* both fail on exactly the malformed texts */
	if (wr == 0) {
		if (len >= cap || out[len] != '\0' || strlen(out) != len)
			abort();
		if (kimg_ptx_parse(kimg_span_make(out, len), &after, &err) != 0)
			abort();
		if (after.entry_count != info.entry_count || after.isa != ri.new_isa ||
		    after.target.sm != ri.new_target.sm || after.target.variant != ri.new_target.variant)
			abort();
		if (new_isa && after.isa > new_isa)
			abort();
		if (new_sm && after.target.sm > new_sm)
			abort();
		if (!ri.changed && memcmp(out, data, len) != 0)
			abort();
	}
	free(out);
	return 0;
}
