/* KIMG_FALLBACK=ptx / force-ptx[:GLOB] in libkimg.so (shim/diag/fallback.c):
 * at a load, hand the driver rewritten PTX instead of a module it cannot
 * use (or, force-ptx, instead of its SASS), and report it. The load hooks
 * (hook/hook_driver.c) call kimg_load_intercept (shim/diag.h) first when
 * fallback or audit is on; the decision itself is core/fallback_plan.c.
 * Nothing here is exported. */
#ifndef KIMG_SHIM_FALLBACK_H
#define KIMG_SHIM_FALLBACK_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

/* "kimg: fallback: 2 modules run rewritten PTX (JIT 35.124 ms in all); ...\n"
 * when any fallback was applied; 0 otherwise. */
size_t kimg_fallback_summary_line(char *buf, size_t size);

#endif
