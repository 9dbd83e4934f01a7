/* SPDX-License-Identifier: Apache-2.0 */
/* More than one copy of libkimg.so in a process (copies.c). */
#ifndef KIMG_SHIM_COPIES_H
#define KIMG_SHIM_COPIES_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>

#include "hook.h"

/* Does this loaded object carry kimg's note (is it a copy of libkimg)? */
KIMG_HIDDEN bool kimg_copies_is_kimg(const struct dl_phdr_info *info);

/* Is the address inside a copy of libkimg (this one or another)? Another
 * copy exports the same hook names, so a lookup "after this copy" can land
 * on its wrapper: never a real function. Cold: walks the loaded objects. */
KIMG_HIDDEN bool kimg_copies_address_is_kimg(const void *address);

/* Is this copy the first in load order, the one that acts? When not, the
 * acting copy's file name is written to first. Cold: walks the loaded
 * objects' program headers. */
KIMG_HIDDEN bool kimg_copies_this_one_acts(char *first, size_t size);

#endif
