/* SPDX-License-Identifier: Apache-2.0 */
/* A program that never uses CUDA but looks around the way libraries that
 * probe for CUDA do. Run with and without libkimg preloaded (and with no
 * libcuda to be found): stdout, stderr and exit status must be identical. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	printf("probe cuLaunchKernel: %s\n", dlsym(RTLD_DEFAULT, "cuLaunchKernel") ? "found" : "absent");
	printf("probe cuGetProcAddress_v2: %s\n", dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2") ? "found" : "absent");
	printf("probe cudaLaunchKernel: %s\n", dlsym(RTLD_DEFAULT, "cudaLaunchKernel") ? "found" : "absent");
	printf("probe __cudaRegisterFatBinary: %s\n", dlsym(RTLD_DEFAULT, "__cudaRegisterFatBinary") ? "found" : "absent");
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
