/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in "interpreter" for tests/shim/stack.sh: just the symbols
 * kimg looks up, claiming to be CPython FAKE_PY_VERSION (a hex version)
 * with the GIL released, so the report's python note can be checked for
 * versions this machine does not have. Linked with -rdynamic so
 * dlsym(RTLD_DEFAULT) finds them. */
#include <stdio.h>

#include "stack.h"

#ifndef FAKE_PY_VERSION
#define FAKE_PY_VERSION 0x030f00f0
#endif

const unsigned long Py_Version = FAKE_PY_VERSION;
static int tstate;
int Py_IsInitialized(void) { return 1; }
int PyGILState_Check(void) { return 0; }
void *PyGILState_GetThisThreadState(void) { return &tstate; }
void *PyThreadState_GetUnchecked(void) { return NULL; }
void *PyThreadState_GetFrame(void *t) { return NULL; }
void *PyFrame_GetCode(void *f) { return NULL; }
int PyFrame_GetLineNumber(void *f) { return 0; }
void *PyFrame_GetBack(void *f) { return NULL; }
const char *PyUnicode_AsUTF8(void *o) { return NULL; }
void *PyObject_GetAttrString(void *o, const char *n) { return NULL; }
void Py_DecRef(void *o) {}
void PyErr_Fetch(void **a, void **b, void **c) {}
void PyErr_Restore(void *a, void *b, void *c) {}
void PyErr_Clear(void) {}

int main(void)
{
	struct kimg_python_frame frames[4];
	char note[160];
	size_t n = kimg_stack_python_any(frames, 4, note, sizeof note);
	printf("frames %zu\nnote %s\n", n, note);
	return 0;
}
