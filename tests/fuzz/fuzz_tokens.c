/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the small text parsers of the core: user arch tokens
 * (kimg_arch_parse, as `kimg-probe check --sm` takes them) and GPU names
 * (kimg_gpu_lookup). Checks the contracts too: a parsed arch formats back to
 * a token that parses to the same arch, and a found GPU's own name finds it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "gpus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[256];
	if (size >= sizeof text)
		size = sizeof text - 1;
	memcpy(text, data, size);
	text[size] = '\0';

	struct kimg_arch a, back;
	bool virt;
	if (kimg_arch_parse(text, &a, &virt) == 0) {
		char name[64];
		int n = kimg_arch_format(a, virt, name, sizeof name);
		if (n <= 0 || (size_t)n >= sizeof name)
			abort();
		bool virt2;
		if (kimg_arch_parse(name, &back, &virt2) != 0 || back.sm != a.sm || back.variant != a.variant ||
		    virt2 != virt)
			abort(); /* format and parse must round-trip */
	}
	const struct kimg_gpu *g = kimg_gpu_lookup(text);
	if (g && (g->sm == 0 || !g->name || kimg_gpu_lookup(g->name) != g))
		abort();
	return 0;
}
