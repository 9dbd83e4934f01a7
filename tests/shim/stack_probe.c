/* SPDX-License-Identifier: Apache-2.0 */
/* Test driver for shim/diag/stack.c (run by tests/shim/stack.sh).
 * As a program: prints the host stack of a known call chain, with each
 * unwinder, and demangling before/after libstdc++ is loaded.
 * As a shared object (-DSTACK_PROBE_LIB): functions for Python's ctypes,
 * returning the Python and host stacks as text. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "stack.h"

#ifndef STACK_PROBE_LIB

static int print_host(enum kimg_unwinder how, bool skip_self)
{
	char frames[16][KIMG_FRAME_TEXT];
	size_t n = kimg_stack_host(frames, 16, skip_self, how);
	for (size_t i = 0; i < n; i++)
		printf("frame %s\n", frames[i]);
	return (int)n;
}


__attribute__((noinline)) static int probe_inner(enum kimg_unwinder how)
{
	return print_host(how, false) + 1;
}

__attribute__((noinline)) static int probe_middle(enum kimg_unwinder how)
{
	return probe_inner(how) + 1;
}

__attribute__((noinline)) static int probe_outer(enum kimg_unwinder how)
{
	return probe_middle(how) + 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "auto";
	if (strcmp(mode, "demangle") == 0) {
		char out[128];
		printf("before: %d\n", kimg_demangle("_ZN3foo3barEi", out, sizeof out));
		/* loaded locally, as Python loads extension modules: found through
		 * RTLD_NOLOAD, not through the global scope */
		if (!dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL))
			return 2;
		bool ok = kimg_demangle("_ZN3foo3barEi", out, sizeof out);
		printf("after: %d %s\n", ok, ok ? out : "");
		printf("plain: %d\n", kimg_demangle("add_one", out, sizeof out));
		printf("truncated: %d %s\n", kimg_demangle("_ZN3foo3barEi", out, 6), out);
		return 0;
	}
	enum kimg_unwinder how = strcmp(mode, "libunwind") == 0 ? KIMG_UNWIND_LIBUNWIND
				 : strcmp(mode, "backtrace") == 0 ? KIMG_UNWIND_BACKTRACE
								   : KIMG_UNWIND_AUTO;
	printf("unwinder %s\n", kimg_stack_unwinder_name());
	printf("python frames %zu\n", kimg_stack_python(NULL, 0));
	return probe_outer(how) > 3 ? 0 : 1;
}

#else

/* "file:line:function\n" per Python frame, innermost first */
int probe_python_stack(char *buf, int size);
int probe_python_stack(char *buf, int size)
{
	struct kimg_python_frame frames[KIMG_REPORT_MAX_FRAMES];
	size_t n = kimg_stack_python(frames, KIMG_REPORT_MAX_FRAMES);
	int used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++)
		used += snprintf(buf + used, (size_t)(size - used), "%s:%d:%s\n", frames[i].file, frames[i].line,
				 frames[i].function);
	return (int)n;
}

/* The same through kimg_stack_python_any: without the GIL, the frames
 * are read directly (shim/diag/pyframes.c); the note goes after the frames. */
int probe_python_stack_any(char *buf, int size);
int probe_python_stack_any(char *buf, int size)
{
	struct kimg_python_frame frames[KIMG_REPORT_MAX_FRAMES];
	char note[160];
	size_t n = kimg_stack_python_any(frames, KIMG_REPORT_MAX_FRAMES, note, sizeof note);
	int used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++)
		used += snprintf(buf + used, (size_t)(size - used), "%s:%d:%s\n", frames[i].file, frames[i].line,
				 frames[i].function);
	if (note[0] && used < size)
		snprintf(buf + used, (size_t)(size - used), "note: %s\n", note);
	return (int)n;
}

/* first host frame outside this object: the caller (libffi / _ctypes) */
int probe_host_first(char *buf, int size);
int probe_host_first(char *buf, int size)
{
	char frames[4][KIMG_FRAME_TEXT];
	size_t n = kimg_stack_host(frames, 4, true, KIMG_UNWIND_AUTO);
	snprintf(buf, (size_t)size, "%s", n ? frames[0] : "");
	return (int)n;
}

#endif
