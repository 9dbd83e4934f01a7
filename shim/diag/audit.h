/* SPDX-License-Identifier: Apache-2.0 */
/* Load-time checks of libkimg.so (shim/diag/audit.c): reading a module that is
 * about to be loaded (header walk only), the device facts the checks
 * need, and KIMG_AUDIT: report every module that cannot run on the
 * device, at its load, before any kernel runs. shim/diag/fallback.c builds on
 * the same reading. Nothing here is exported. */
#ifndef KIMG_SHIM_AUDIT_H
#define KIMG_SHIM_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "device.h"
#include "image.h"
#include "locate.h"
#include "diag.h"

/* Images kept per module; a module with more is judged unknown (never
 * wrongly: the rules need every image to say "cannot run"). */
#define KIMG_LOAD_MAX_IMAGES 128

/* A module about to be loaded. */
struct kimg_load_module {
	const char *call;            /* the load call */
	const void *image;           /* as the program passed it (wrapper, container, cubin, PTX), or NULL */
	const char *path;            /* cuModuleLoad / cuLibraryLoadFromFile file, or NULL */
	struct kimg_image imgs[KIMG_LOAD_MAX_IMAGES];
	size_t n;
	struct kimg_mapped_file file;/* path loads: the mapping the images point into */
};

/* Walk the module's headers into m (payloads stay where they are: in the
 * caller's memory or in m->file). Memory images are bounded by the loaded
 * object they lie in (program headers, cached), else by /proc/self/maps:
 * never a fault. Returns 0; -KIMG_ELIMIT with too many images; the
 * parsers' errors for code kimg cannot read (the driver then decides
 * alone). kimg_load_module_close must follow either way. */
int kimg_load_module_read(struct kimg_load_module *m, const char *call, const void *image, const char *path);
void kimg_load_module_close(struct kimg_load_module *m);

/* KIMG_AUDIT for one module read at a load: reports it (audit mark, fix)
 * when the rules say it cannot run on d, counts it, applies KIMG_ON_ERROR.
 * Returns true when it cannot run. */
bool kimg_audit_check(const struct kimg_load_module *m, const struct kimg_device *d);

#endif
