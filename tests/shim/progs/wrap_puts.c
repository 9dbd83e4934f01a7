/* SPDX-License-Identifier: Apache-2.0 */
/* A second interposer, preloaded after libkimg: wraps puts and finds the
 * next one with dlsym(RTLD_NEXT, "puts"), as many tracing libraries do.
 * If libkimg's dlsym answered RTLD_NEXT relative to itself, "next after
 * libkimg" would be this very puts, and the call would recurse until the
 * stack runs out. */
#include <dlfcn.h>
#include <stdio.h>

__attribute__((visibility("default"))) int puts(const char *s);
int puts(const char *s)
{
	static int (*next)(const char *);
	static int depth;
	if (!next)
		next = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
	if (!next || ++depth > 1) {
		fputs("[recursion]\n", stderr);
		depth = 0;
		return -1;
	}
	fputs("[wrapped] ", stdout);
	int r = next(s);
	depth--;
	return r;
}
