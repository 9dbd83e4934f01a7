/* SPDX-License-Identifier: Apache-2.0 */
/* What to change when the driver's JIT linker (cuLinkAddData and friends)
 * refuses PTX: the linker compiles for the one GPU it runs on, with the
 * driver's own JIT, so the useful advice names the PTX's producer and the
 * driver rather than a rebuild's -gencode list (core/fix.h). Pure. */
#ifndef KIMG_LINK_FIX_H
#define KIMG_LINK_FIX_H

#include <stddef.h>

#include "device.h"
#include "image.h"
#include "rules.h"

/* One paragraph for the module verdict of a refused link input into buf
 * (NUL-terminated, truncated to size). Returns its length, 0 when the
 * reason has no link-specific advice (the module fix then stands alone). */
size_t kimg_link_fix_for(const struct kimg_device *dev, const struct kimg_module_verdict *verdict,
			 const struct kimg_image *imgs, size_t n, char *buf, size_t size);

#endif
