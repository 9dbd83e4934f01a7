/* SPDX-License-Identifier: Apache-2.0 */
/* Python frames of the calling thread read without the GIL, for a thread
 * that released it around a CUDA call (shim/diag/pyframes.c). Cold path only. */
#ifndef KIMG_SHIM_PYFRAMES_H
#define KIMG_SHIM_PYFRAMES_H

#include <stddef.h>

#include "report.h"

/* Innermost first, at most max; 0 when no interpreter runs in the process
 * or this thread never ran Python. When frames cannot be read (a CPython
 * version or build kimg does not know, a failed check) note says why
 * (NUL-terminated, "" otherwise). Takes no lock, writes nothing Python
 * owns, never the GIL. */
size_t kimg_python_frames_nogil(struct kimg_python_frame *frames, size_t max, char *note, size_t note_size);

#endif
