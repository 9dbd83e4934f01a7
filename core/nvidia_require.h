/* SPDX-License-Identifier: Apache-2.0 */
/* NVIDIA_REQUIRE_CUDA and the image's other NVIDIA_REQUIRE_* variables,
 * judged as the NVIDIA container toolkit judges them before it starts a
 * container (it refuses the container when they fail).
 *
 * Semantics, from libnvidia-container (src/cli/dsl.c dsl_evaluate and
 * dsl_compare_version, src/cli/configure.c rules) and the toolkit's
 * documentation ("Specialized Configurations with Docker", environment
 * variables; nvidia-container-runtime-hook getRequirements):
 *  - constraints separated by spaces are ORed, by commas ANDed;
 *    each is NAME OP VALUE with OP one of = != < <= > >= and NAME one of
 *    cuda (the driver's CUDA version, cuDriverGetVersion), driver (the
 *    kernel driver's version, "550.54.14"), arch (the GPU's compute
 *    capability, "9.0"), brand (the GPU's brand: tesla, geforce ...,
 *    compared without case);
 *  - versions compare number by number, trailing ".0" parts ignored;
 *  - an unknown NAME or a malformed constraint makes the whole
 *    expression invalid: the container is refused;
 *  - every NVIDIA_REQUIRE_* variable must hold (ANDed), except
 *    NVIDIA_REQUIRE_JETPACK* (ignored since toolkit 1.10);
 *    NVIDIA_DISABLE_REQUIRE=true turns the check off;
 *  - an image with CUDA_VERSION and no NVIDIA_REQUIRE_CUDA (a "legacy"
 *    image) requires cuda>=MAJOR.MINOR of CUDA_VERSION.
 * Where the toolkit counts a fact it cannot read as satisfied, kimg says
 * "unknown": a target given as a bare compute capability has no driver,
 * and no target here has a brand. The driver's branch is known from its
 * CUDA version (CUDA 12.4 ships with R550, CUDA Toolkit release notes,
 * table 3), so "driver>=535" is judged; "driver>=550.54" within the same
 * branch stays unknown. Pure. */
#ifndef KIMG_NVIDIA_REQUIRE_H
#define KIMG_NVIDIA_REQUIRE_H

#include <stdbool.h>

#include "error.h"

enum kimg_tri { KIMG_TRI_NO = 0, KIMG_TRI_YES, KIMG_TRI_UNKNOWN };

/* What a target says of itself; "" / 0 for what is not known. */
struct kimg_require_facts {
	int cuda_version;          /* 12040 for 12.4; 0 unknown */
	char driver[32];           /* kernel driver version "550.54.14", "" unknown */
	char arch[8];              /* compute capability "9.0", "" unknown */
	char brand[32];            /* "tesla", "" unknown */
};

struct kimg_require_verdict {
	enum kimg_tri satisfied;
	/* The constraint that decided: the first false one of the first
	 * alternative for NO, the first unknown one for UNKNOWN ("" for YES). */
	char decided_by[128];
};

/* Judge one expression. Returns 0, or -KIMG_EFORMAT with err set for an
 * invalid expression (then v->satisfied is NO: the toolkit refuses it). */
int kimg_require_judge(const char *expr, const struct kimg_require_facts *f, struct kimg_require_verdict *v,
		       struct kimg_error *err);

/* dsl_compare_version's answer for a known version, op one of the six
 * operators ("<="), or -1 when either side is not digits and dots. */
int kimg_require_compare_version(const char *have, const char *op, const char *want);

/* The driver branch (major version: 550) a driver of this CUDA version
 * (12040) belongs to, or 0 when not in the table. */
int kimg_require_driver_branch(int cuda_version);
/* The other way: the CUDA version (13000) a driver branch (580) reports,
 * 0 when not in the table. */
int kimg_require_branch_cuda(int branch);

#endif
