/* SPDX-License-Identifier: Apache-2.0 */
/* A second interposer that wraps a driver function, linked into next_cu
 * ahead of libcuda: it finds the next cuModuleLoadData with
 * dlsym(RTLD_NEXT, ...), as tracing and profiling libraries do. libkimg
 * hooks dlsym, but must pass RTLD_NEXT through untouched: answered from
 * libkimg's own place in the search order, "next" would be this library's
 * cuModuleLoadData again (or libkimg's wrapper around it), and the call
 * would recurse. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*load_fn)(void **, const void *);

__attribute__((visibility("default"))) int cuModuleLoadData(void **mod, const void *image);
__attribute__((visibility("default"))) void *wrap_cu_next(void);
__attribute__((visibility("default"))) int wrap_cu_load(void **mod, const void *image);

void *wrap_cu_next(void)
{
	return dlsym(RTLD_NEXT, "cuModuleLoadData");
}

static int depth;
int cuModuleLoadData(void **mod, const void *image)
{
	load_fn next = (load_fn)wrap_cu_next();
	if (!next || ++depth > 1) {
		fputs("[recursion]\n", stderr);
		depth = 0;
		return -1;
	}
	int rc = next(mod, image);
	depth--;
	return rc;
}

/* The program's way into this wrapper (its own cuModuleLoadData binds to
 * libkimg's export, which comes first). */
int wrap_cu_load(void **mod, const void *image)
{
	return cuModuleLoadData(mod, image);
}
