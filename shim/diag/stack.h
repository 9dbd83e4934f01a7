/* SPDX-License-Identifier: Apache-2.0 */
/* Where the program was when a CUDA call failed: host frames and, in a
 * Python process, the Python frames of the calling thread.
 *
 * Everything is found at run time: libunwind is dlopen'ed (absent on many
 * GPU machines: glibc backtrace() is the fallback), Python's C API is looked
 * up with dlsym(RTLD_DEFAULT) so libkimg links against neither. Cold path
 * only: these functions may allocate (dladdr, __cxa_demangle, Python). */
#ifndef KIMG_SHIM_STACK_H
#define KIMG_SHIM_STACK_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

#define KIMG_FRAME_TEXT 256

enum kimg_unwinder {
	KIMG_UNWIND_AUTO = 0,   /* libunwind when it loads, else backtrace() */
	KIMG_UNWIND_LIBUNWIND,  /* libunwind only (0 frames when absent) */
	KIMG_UNWIND_BACKTRACE,  /* glibc backtrace() only */
};

/* Host frames of the calling thread, innermost first, as text
 * "symbol+0xOFF (object+0xREL)" (symbol "??" when unknown). With skip_self,
 * the innermost frames that lie in the object containing this code
 * (libkimg.so itself) are left out, so the first frame is the caller of the
 * hooked CUDA function. Returns the number of frames written (<= max). */
size_t kimg_stack_host(char (*frames)[KIMG_FRAME_TEXT], size_t max, bool skip_self, enum kimg_unwinder how);

/* Raw return addresses of the calling thread, innermost first, libkimg's
 * own frames left out (glibc backtrace(): cheap, no names yet), for a
 * failure whose report may come later (shim/diag/dispatch_track.c). */
size_t kimg_stack_capture(void **ips, size_t max);

/* Name captured addresses as kimg_stack_host does. */
size_t kimg_stack_format(void *const *ips, size_t n, char (*frames)[KIMG_FRAME_TEXT], size_t max);

/* Which unwinder kimg_stack_host(.., KIMG_UNWIND_AUTO) uses: "libunwind"
 * or "backtrace". */
const char *kimg_stack_unwinder_name(void);

/* Python frames of the calling thread, innermost first (at most max), when
 * a Python interpreter is in the process and this thread holds the GIL,
 * through the C API; 0 otherwise. Never takes the GIL: a thread that
 * released it may be waiting on a lock that the GIL holder needs. */
size_t kimg_stack_python(struct kimg_python_frame *frames, size_t max);

/* The same, and when this thread does not hold the GIL (PyTorch and most
 * bindings release it around CUDA calls), its frames read without it
 * (pyframes.h); note (may be NULL) says why there are none when Python
 * runs but its frames could not be read. */
size_t kimg_stack_python_any(struct kimg_python_frame *frames, size_t max, char *note, size_t note_size);

/* Demangle a C++ name through __cxa_demangle found at run time. Returns
 * true and fills out (truncated to size) on success; false when the name is
 * not a mangled C++ name or no demangler is loaded. */
bool kimg_demangle(const char *mangled, char *out, size_t size);

#endif
