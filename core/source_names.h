/* SPDX-License-Identifier: Apache-2.0 */
/* File names that say a file is Python, C/C++ source or documentation.
 *
 * Such a file cannot also be a loadable input: Python, C and
 * reStructuredText cannot begin with ELF, archive or fatbin magic or with a
 * PTX directive. Most of a Python environment is so named (on the H200's
 * site-packages, 62,000 of 69,000 files), so the probe's directory walk
 * leaves these files unopened and the owning-package index leaves them out
 * until a lookup asks for one. */
#ifndef KIMG_SOURCE_NAMES_H
#define KIMG_SOURCE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* True when the last component of `name` (a file name or a path; "" and a
 * path ending in '/' are not) ends in one of the source suffixes. len is
 * strlen(name). */
bool kimg_name_is_source(const char *name, size_t len);

#endif
