/* Is a module that cannot run here a failure, or code its library picks
 * for other GPUs? The per-module form of the file-level dispatch rules
 * (F0-F3, as `kimg-probe check` applies them to a whole file), for a
 * caller that meets one failing module at a time and can answer "does
 * this module's file have code that runs on the device" separately:
 * libkimg.so, which must not hold every module of a 700 MB library.
 * Pure: no state, no allocation, no I/O. */
#ifndef KIMG_DISPATCH_H
#define KIMG_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "device.h"
#include "image.h"

struct kimg_dispatch_verdict {
	bool dispatched;        /* code for other GPUs that its library selects: not a failure */
	const char *rule;       /* "F0": no module of the file runs; "F1": only a/f code for other
	                           GPUs; "F2": a library that selects modules per GPU; "F3": neither */
	const char *library;    /* F2: the library ("cuDNN"), else NULL */
};

/* One module of `file` (path or name; NULL: unknown) that cannot run on
 * dev, with its n images; file_runs_here: another module of the same file
 * runs on dev. Rows in order: F0 (!file_runs_here: fails), F1 (every
 * loadable image is arch- or family-specific and none fits: dispatched),
 * F2 (the file is a dispatching library: dispatched), F3 (fails). */
void kimg_dispatch_judge_module(const char *file, const struct kimg_image *imgs, size_t n,
				const struct kimg_device *dev, bool file_runs_here, struct kimg_dispatch_verdict *out);

/* The dispatching library a file belongs to ("cuBLASLt"), by the last
 * path component, or NULL. */
const char *kimg_dispatch_selecting_library(const char *file);

#endif
