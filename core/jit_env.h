/* SPDX-License-Identifier: Apache-2.0 */
/* The driver's JIT switches read from an environment given as
 * "NAME=value" entries (a container image's config Env), to judge the
 * image's files as its processes' driver would: the process in the
 * container gets the image's Env, not kimg-probe's.
 *
 * Rules (jit_switch_table in jit_env.c), from the CUDA Programming Guide,
 * "CUDA Environment Variables" (docs/loading.md section 9; docs/rules.md
 * P6):
 *  - CUDA_FORCE_PTX_JIT=1: the driver ignores every cubin and JIT-compiles
 *    the embedded PTX: a module with no PTX for the GPU fails (209), one
 *    with PTX is judged by the PTX rules (rules.md P6);
 *  - CUDA_DISABLE_PTX_JIT=1: no JIT of embedded PTX: only a compatible
 *    cubin loads (223 otherwise, P6);
 *  - CUDA_FORCE_JIT and CUDA_DISABLE_JIT are the generic names of the
 *    same switches; the specific name wins when both are set;
 *  - a switch is on when its value is a non-zero number ("=1" as the
 *    Guide documents it), as the shim reads it (shim/diag/options.c);
 *    the last entry of a name wins, as a process's getenv sees Env.
 * Pure. */
#ifndef KIMG_JIT_ENV_H
#define KIMG_JIT_ENV_H

#include <stdbool.h>

#include "device.h"

enum kimg_jit_switch {
	KIMG_JIT_FORCE_PTX = 0,        /* CUDA_FORCE_PTX_JIT / CUDA_FORCE_JIT */
	KIMG_JIT_DISABLE_PTX,          /* CUDA_DISABLE_PTX_JIT / CUDA_DISABLE_JIT */
	KIMG_JIT_SWITCH_COUNT
};

struct kimg_jit_env {
	bool on[KIMG_JIT_SWITCH_COUNT];
	const char *set_by[KIMG_JIT_SWITCH_COUNT]; /* the deciding entry ("CUDA_FORCE_JIT=1"), or NULL */
};

/* The switches of env[0..n). */
void kimg_jit_env_read(const char *const *env, unsigned n, struct kimg_jit_env *out);
/* The device as a process with that environment sees it: its switches
 * replace the device's (those of kimg-probe's own environment). */
void kimg_jit_env_apply(const struct kimg_jit_env *e, struct kimg_device *dev);
/* Any switch on? */
bool kimg_jit_env_any(const struct kimg_jit_env *e);
/* The names, for messages: "CUDA_FORCE_PTX_JIT". */
const char *kimg_jit_switch_name(enum kimg_jit_switch s);

#endif
