/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for libkimg's KIMG_* parser (shim/diag/options.c): the input
 * is an environment, entries separated by NUL bytes; the first byte picks
 * whether the process is in secure-execution mode. Checks the contracts:
 * the warnings stay NUL-terminated inside their buffer, secure mode reads
 * nothing, a parsed KIMG_LOG expands again for another pid without
 * overflowing, and a force-ptx glob that was taken is well formed.
 * Linked with shim/diag/options.c and log.c (the Makefile). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[4096 + 1];
	char *envp[65];
	size_t n_env = 0;
	if (size == 0)
		return 0;
	bool secure = data[0] & 1;
	data++, size--;
	if (size > sizeof text - 1)
		size = sizeof text - 1;
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *p = text; p < text + size && n_env < 64; p += strlen(p) + 1)
		envp[n_env++] = p;
	envp[n_env] = NULL;

	struct kimg_options o;
	struct kimg_env_snapshot env;
	char warn[512];
	struct kimg_options_ctx ctx = { "prog", "prog", "host", 4242, secure };
	int w = kimg_options_parse(envp, &ctx, &o, &env, warn, sizeof warn);
	if (w < 0 || strnlen(warn, sizeof warn) == sizeof warn)
		abort();
	if (secure && (w != 0 || !o.disabled || o.log_path[0] || o.fallback != KIMG_FALLBACK_NONE || o.audit))
		abort();
	if (o.log_path[0]) {
		char again[sizeof o.log_path];
		if (!kimg_log_path_expand(env.log_spec, 2147483647L, &env, again, sizeof again) && !env.log_per_process)
			abort(); /* without %p the same spec expanded before */
	}
	if (o.fallback_glob[0] && !kimg_options_glob_well_formed(o.fallback_glob))
		abort();
	char banner[1024];
	if (kimg_options_banner(&o, &env, banner, sizeof banner) >= sizeof banner)
		abort();
	return 0;
}
