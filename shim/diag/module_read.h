/* SPDX-License-Identifier: Apache-2.0 */
/* The facts of a module in this process (shim/diag/module_read.c): its
 * images, for a failure's report and for the load-time checks. Cold paths
 * and load paths only; nothing here is exported. */
#ifndef KIMG_SHIM_MODULE_READ_H
#define KIMG_SHIM_MODULE_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "device.h"
#include "image.h"
#include "locate.h"
#include "report.h"
#include "diag.h"

/* A failure's module into the report: r->module_file, module_offset, the
 * images (payload spans cleared once a file mapping is gone: the renderers
 * use values only) or, when they cannot be read, r->module_note. */
void kimg_report_read_module(struct kimg_report *r, const struct kimg_located *loc);

/* A failed JIT link into the report: the driver's log (no further than
 * its buffer, its first NUL and the readable memory), the refused input
 * and every input. */
void kimg_report_read_link(struct kimg_report *r, const struct kimg_link_facts *lf);

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

#endif
