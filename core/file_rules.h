/* SPDX-License-Identifier: Apache-2.0 */
/* File-level verdicts: a file's modules judged together on one device.
 *
 * kimg_rules_check_module (rules.h) says whether one module can run. Real
 * libraries carry modules for other GPUs on purpose: cuBLASLt, cuDNN or
 * NCCL hold code for sm_100, sm_120 ... next to the code for this GPU and
 * pick at run time which module to load. And in a file linked with
 * `-rdc=true`, the driver can JIT-link the relocatable PTX that the
 * `__nv_relfatbin` containers keep when the linked module has no image for
 * the GPU. kimg_rules_judge_file applies those file-level rules on top of
 * the per-module verdicts. It is pure (no I/O, no allocation, no state),
 * so the probe and libkimg.so share it. */
#ifndef KIMG_FILE_RULES_H
#define KIMG_FILE_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "device.h"
#include "image.h"
#include "rules.h"

/* What a module is in its file. */
enum kimg_module_role {
	KIMG_ROLE_LOADED = 0,  /* the driver loads it (.nv_fatbin, a raw input, ...) */
	KIMG_ROLE_LINK_INPUT,  /* relocatable device code of a linked executable or
	                          shared object (__nv_relfatbin): never loaded on
	                          its own, only JIT-linked (R1) */
	KIMG_ROLE_SKIP,        /* not judged: device-link stub, empty or unreadable */
	KIMG_ROLE_COUNT
};

/* One module as the caller summarises it: its images and its role. */
struct kimg_file_module {
	const struct kimg_image *imgs;
	size_t n_imgs;
	enum kimg_module_role role;
};

/* What becomes of a module on the device. */
enum kimg_module_fate {
	KIMG_FATE_RUNS = 0,     /* its verdict runs (SASS, PTX JIT, or after a JIT link) */
	KIMG_FATE_DISPATCHED,   /* cannot run here, but is code for other GPUs that
	                           its library selects per GPU: not a failure */
	KIMG_FATE_FAILS,        /* a real failure */
	KIMG_FATE_NOT_JUDGED,   /* ROLE_LINK_INPUT or ROLE_SKIP */
	KIMG_FATE_COUNT
};

struct kimg_module_judgement {
	struct kimg_module_verdict verdict; /* kimg_rules_check_module's, changed by
	                                       R1/R2 for the linked module of -rdc files */
	enum kimg_module_fate fate;
	const char *rule;      /* file-level row that decided: "F1".."F4", "R1", "R2";
	                          NULL when the module verdict alone decided */
	const char *library;   /* F2: the library row's name ("cuBLAS"), else NULL */
};

/* Flags for kimg_rules_judge_file. */
enum kimg_file_flag {
	/* Every module must run: no module is excused as dispatched (F1, F2
	 * off). For builders who want each module of their own library to
	 * carry code for every listed GPU. */
	KIMG_FILE_STRICT = 1u << 0,
};

/* Judge the n modules of one file on dev, in order, into out[n].
 * `file` is the file's path or name, used only for its last component
 * (after the last '/'), matched against the dispatching-library table
 * (F2); NULL matches no row. The rows, in order:
 *   R1  a loaded module of a file with link inputs cannot run, but every
 *       link input carries PTX this device can JIT: the driver JIT-links
 *       them; outcome KIMG_OUTCOME_JIT_LINK, expected error 0, runs.
 *   F1  a module that cannot run while others of the file can, and every
 *       loadable image in it is arch- or family-specific (sm_100a,
 *       sm_120f, ...): code its library selects for other GPUs; dispatched.
 *   F2  such a module in a library known to select modules per GPU
 *       (table in file_rules.c, each row with its source); dispatched.
 *   R2  otherwise, in a file with link inputs: fails, expected error 500
 *       (what the launch returned on an H200, CUDA 13.0, driver 580).
 *   F0  otherwise, when no loaded module of the file runs: fails.
 *   F3  otherwise: fails.
 * KIMG_FILE_STRICT turns F1 and F2 off.
 * Returns the number of modules that fail, or -EINVAL for bad arguments
 * (out or dev NULL, mods NULL with n > 0, unknown flag bits). */
int kimg_rules_judge_file(const char *file, const struct kimg_file_module *mods, size_t n,
			  const struct kimg_device *dev, unsigned flags, struct kimg_module_judgement *out);

/* "runs", "dispatched", "fails", "not_judged" (JSON "fate"). */
const char *kimg_fate_id(enum kimg_module_fate fate);

/* The dispatching library a file name belongs to ("cuBLASLt"), or NULL. */
const char *kimg_dispatch_library(const char *file);

/* ---- one module at a time (libkimg.so) ----
 * The same F0-F3 rows for a caller that meets one failing module at a time
 * and can answer "does another module of this file run on dev" by itself:
 * libkimg.so, which must not hold every module of a 700 MB library. */
struct kimg_dispatch_verdict {
	bool dispatched;        /* code for other GPUs that its library selects: not a failure */
	const char *rule;       /* "F0": no module of the file runs; "F1": only a/f code for other
	                           GPUs; "F2": a library that selects modules per GPU; "F3": neither */
	const char *library;    /* F2: the library ("cuDNN"), else NULL */
};

/* One module of `file` (path or name; NULL: unknown) that cannot run on
 * dev, with its n images; file_runs_here: another module of the same file
 * runs on dev. Rows as kimg_rules_judge_file applies them: F0
 * (!file_runs_here: fails), F1 (every loadable image is arch- or
 * family-specific: dispatched), F2 (the file is a dispatching library:
 * dispatched), F3 (fails). */
void kimg_dispatch_judge_module(const char *file, const struct kimg_image *imgs, size_t n,
				const struct kimg_device *dev, bool file_runs_here, struct kimg_dispatch_verdict *out);

#endif
