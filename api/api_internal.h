/* SPDX-License-Identifier: Apache-2.0 */
/* libkimgapi.so internals: the answer model (can_run.c fills it,
 * answer.c reads it out), and the --sm string (targets.c). */
#ifndef KIMG_API_INTERNAL_H
#define KIMG_API_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "cuda_libs.h"
#include "cuda_versions.h"
#include "device.h"
#include "file_rules.h"
#include "fix.h"
#include "image.h"
#include "input.h"

#define KIMG_API __attribute__((visibility("default")))

/* Targets one string names at most (native GPUs included). */
#define API_TARGETS_MAX 64

struct api_target {
	struct kimg_device dev;
	char sm[16];                    /* "9.0" */
};

/* Parse `sm` (NULL: "native") as `check --sm` does, with `driver`
 * (NULL: none) for the targets given by number or name. Returns the count
 * (> 0), or a negative error with why filled in. Prints nothing. */
int api_parse_targets(const char *sm, const char *driver, struct api_target *out, size_t cap, char *why,
		      size_t why_size);

struct api_module {
	enum kimg_input_kind kind;
	enum kimg_module_origin origin;
	uint64_t offset, size;
	char section[64], member[128];
	struct kimg_image *imgs;        /* payload and identifier spans cleared: the bytes are gone */
	size_t n_imgs;
	bool link_input, link_stub;
	char error[160];
};

struct api_verdict {                    /* one module on one target */
	struct kimg_module_judgement j;
	struct kimg_fix fix;
	bool have_fix;
	char image[32];
};

struct kimg_answer {
	char *path;
	struct api_target targets[API_TARGETS_MAX];
	size_t n_targets;
	struct api_module *mods;
	size_t n_mods;
	struct api_verdict *verdicts;   /* [module * n_targets + target] */
	/* A CUDA runtime or library (libcudart.so.N, NVRTC, cuBLAS ...):
	 * judged against each target's driver as check judges it. */
	bool is_lib;
	struct kimg_cuda_lib lib;
	struct kimg_runtime_verdict lib_verdicts[API_TARGETS_MAX];
	char problem[200];              /* "" or why the walk stopped early (modules before it kept) */
	bool runs;
	int error;
	char reason[768];
	char fix[2048];
	char *json;                     /* made once, when the answer is complete */
};

/* Fill a->reason, a->fix, a->runs, a->error and a->json from the
 * verdicts. Returns 0 or -ENOMEM. */
int api_answer_finish(struct kimg_answer *a);
void api_answer_destroy(struct kimg_answer *a);

/* snprintf into why (may be NULL); returns code. */
int api_fail(char *why, size_t why_size, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
