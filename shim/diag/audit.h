/* SPDX-License-Identifier: Apache-2.0 */
/* KIMG_AUDIT (shim/diag/audit.c): report every module that cannot run on
 * the device, at its load, before any kernel runs. The module is read by
 * module_read.h (shim/diag/fallback.c reads it the same way). Nothing here
 * is exported. */
#ifndef KIMG_SHIM_AUDIT_H
#define KIMG_SHIM_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "device.h"
#include "image.h"
#include "diag.h"
#include "module_read.h"

/* KIMG_AUDIT for one module read at a load: reports it (audit mark, fix)
 * when the rules say it cannot run on d, counts it, applies KIMG_ON_ERROR.
 * Returns true when it cannot run. */
bool kimg_audit_check(const struct kimg_load_module *m, const struct kimg_device *d);

#endif
