/* SPDX-License-Identifier: Apache-2.0 */
/* The driver's JIT switches from "NAME=value" entries (jit_env.h). */
#include "jit_env.h"

#include <stddef.h>
#include <string.h>

/* Source: CUDA Programming Guide, "CUDA Environment Variables"
 * (https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html),
 * docs/loading.md section 9. */
static const struct {
	const char *specific, *generic;
} jit_switch_table[KIMG_JIT_SWITCH_COUNT] = {
	[KIMG_JIT_FORCE_PTX] = { "CUDA_FORCE_PTX_JIT", "CUDA_FORCE_JIT" },
	[KIMG_JIT_DISABLE_PTX] = { "CUDA_DISABLE_PTX_JIT", "CUDA_DISABLE_JIT" },
};

/* The value of the last entry named name, or NULL. */
static const char *entry_value(const char *const *env, unsigned n, const char *name, const char **entry)
{
	size_t len = strlen(name);
	const char *v = NULL;
	for (unsigned i = 0; i < n; i++)
		if (env[i] && strncmp(env[i], name, len) == 0 && env[i][len] == '=') {
			v = env[i] + len + 1;
			*entry = env[i];
		}
	return v;
}

/* A non-zero decimal number, nothing after it (the shim's parse_int). */
static bool value_on(const char *v)
{
	if (!v || !*v)
		return false;
	bool nonzero = false;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || p - v > 18)
			return false;
		nonzero |= *p != '0';
	}
	return nonzero;
}

void kimg_jit_env_read(const char *const *env, unsigned n, struct kimg_jit_env *out)
{
	memset(out, 0, sizeof *out);
	for (unsigned s = 0; s < KIMG_JIT_SWITCH_COUNT; s++) {
		const char *entry = NULL;
		const char *v = entry_value(env, n, jit_switch_table[s].specific, &entry);
		if (!v)
			v = entry_value(env, n, jit_switch_table[s].generic, &entry);
		out->on[s] = value_on(v);
		out->set_by[s] = v ? entry : NULL;
	}
}

void kimg_jit_env_apply(const struct kimg_jit_env *e, struct kimg_device *dev)
{
	dev->force_ptx_jit = e->on[KIMG_JIT_FORCE_PTX];
	dev->disable_ptx_jit = e->on[KIMG_JIT_DISABLE_PTX];
}

bool kimg_jit_env_any(const struct kimg_jit_env *e)
{
	for (unsigned s = 0; s < KIMG_JIT_SWITCH_COUNT; s++)
		if (e->on[s])
			return true;
	return false;
}

const char *kimg_jit_switch_name(enum kimg_jit_switch s)
{
	return (unsigned)s < KIMG_JIT_SWITCH_COUNT ? jit_switch_table[s].specific : "?";
}
