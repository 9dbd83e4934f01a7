/* SPDX-License-Identifier: Apache-2.0 */
/* A program that never uses CUDA but looks around the way libraries that
 * probe for CUDA do. Run with and without libkimg preloaded (and with no
 * libcuda to be found): stdout, stderr and exit status must be identical. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A lookup that fails leaves dlerror() naming the symbol (dlsym(3));
 * Python's ctypes reads it after a NULL and crashed on none. */
static void lookup(const char *what, void *handle, const char *name)
{
	(void)dlerror();
	void *p = dlsym(handle, name);
	const char *e = dlerror();
	char want[80];
	snprintf(want, sizeof want, "undefined symbol: %s", name);
	printf("%s %s: %s, dlerror %s\n", what, name, p ? "found" : "absent",
	       e ? (strstr(e, want) ? "names it" : "other") : "none");
}

int main(void)
{
	printf("probe cuLaunchKernel: %s\n", dlsym(RTLD_DEFAULT, "cuLaunchKernel") ? "found" : "absent");
	printf("probe cuGetProcAddress_v2: %s\n", dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2") ? "found" : "absent");
	printf("probe cudaLaunchKernel: %s\n", dlsym(RTLD_DEFAULT, "cudaLaunchKernel") ? "found" : "absent");
	printf("probe __cudaRegisterFatBinary: %s\n", dlsym(RTLD_DEFAULT, "__cudaRegisterFatBinary") ? "found" : "absent");
	lookup("default", RTLD_DEFAULT, "cuInit");
	lookup("self", dlopen(NULL, RTLD_NOW), "cuLaunchKernel");
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	printf("dlopen libcuda.so.1: %s\n", h ? "loaded" : "failed");
	printf("next printf: %s\n", dlsym(RTLD_NEXT, "printf") ? "found" : "absent");
	printf("default strlen: %s\n", dlsym(RTLD_DEFAULT, "strlen") ? "found" : "absent");
	printf("missing symbol: %s\n", dlsym(RTLD_DEFAULT, "no_such_symbol_kimg") ? "found" : "absent");
	fprintf(stderr, "stderr line\n");
	void *p = malloc(100);
	free(p);
	return 7;
}
