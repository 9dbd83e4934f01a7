/* SPDX-License-Identifier: Apache-2.0 */
/* Failures the program does not meet (shim/diag/dispatch_track.c): a module
 * for other GPUs, in a file that has code for this one, fails where its
 * runtime or library looks it up (NCCL probing its sm_100f kernels, cuDNN
 * loading every engine eagerly). Such an arch-dispatched failure
 * (core/file_rules.h) is recorded, not printed, and reported in full only
 * once it reaches the program: a launch of that module fails, the call
 * was the program's own, or the process exits with a failure status (or
 * dies of a fatal signal: then one line per file, all a handler may do).
 * Everything here runs on the cold path, under diagnose.c's report lock
 * unless said otherwise. This unit records and answers; it never reports
 * (diagnose.c calls it, not the reverse). */
#ifndef KIMG_SHIM_DISPATCH_TRACK_H
#define KIMG_SHIM_DISPATCH_TRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"
#include "file_rules.h"
#include "report.h"
#include "diag.h"

/* What a later report of a recorded failure needs beyond kimg_failure:
 * the stacks at the time it happened, and why it is reported now. */
struct kimg_replay {
	enum kimg_escalation escalation;
	int exit_status;
	void *const *ips;          /* host return addresses at the failure */
	size_t n_ips;
	const struct kimg_python_frame *python;
	size_t n_python;
	unsigned modules;          /* modules of the file recorded */
};

/* Has the loaded file at path a module that runs on d? Mapped and walked
 * once per (file, device CC), headers only, stopping at the first module
 * that runs; cached. False when the file cannot be read. */
bool kimg_dispatch_file_runs_here(const char *path, const struct kimg_device *d);

/* Did the failing call come from the program, rather than from a CUDA
 * runtime (libcudart*), the module's own object (its runtime, static or
 * not) or a library of the dispatch table (cuDNN's parts load each
 * other's modules)? caller: the hook's return address; image: the
 * module's code in memory, or NULL with path. Unknown callers count as
 * not the program's. */
bool kimg_dispatch_call_is_programs(const void *caller, const void *image, const char *module_file);

/* Record one arch-dispatched failure of module_key (r: its report so
 * far, with module file, images and device). The first of each file keeps
 * its facts and stacks for a later report. Arms the exit-status and
 * fatal-signal watch on the first record of the process. */
void kimg_dispatch_record(const struct kimg_failure *f, uint64_t module_key, const struct kimg_report *r,
			  const struct kimg_dispatch_verdict *v);

/* Was (module_key, error) recorded already? Counts the repeat. */
bool kimg_dispatch_repeat(uint64_t module_key, int error);

/* A failure of module_key (in module_file) is being reported in full
 * now: true when that module had been recorded (the report says why it
 * comes after all). Either way the file's records are not reported again
 * at exit. */
bool kimg_dispatch_escalate(uint64_t module_key, const char *module_file);

/* At a failing exit (deferred.c's on_exit handler): the next file whose
 * records were never reported in full, now marked reported; *f is its
 * first failure with *rp (the stacks then, the exit status) as its replay.
 * False when none is left. Each file's line of the exit summary
 * (KIMG_VERBOSE) is kept in stats.c as its records change. */
bool kimg_dispatch_take_unreported(int status, struct kimg_failure *f, struct kimg_replay *rp);

#endif
