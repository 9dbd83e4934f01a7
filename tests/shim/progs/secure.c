/* SPDX-License-Identifier: Apache-2.0 */
/* secure FILE KERNEL: the stand-in for a setuid program that uses CUDA.
 * Prints "secure: N" (getauxval(AT_SECURE): 1 when the exec changed its
 * credentials) and "euid: N", then loads FILE with cuLibraryLoadData and
 * looks KERNEL up; "cuLibraryGetKernel: CODE". Exit status 1 when the
 * lookup failed, 0 when it worked, 2 on a setup problem. */
#include <sys/auxv.h>
#include <unistd.h>

#include "progutil.h"

typedef int CUresult;

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE KERNEL\n", argv[0]);
		return 2;
	}
	printf("secure: %lu\neuid: %lu\n", getauxval(AT_SECURE), (unsigned long)geteuid());
	fflush(stdout);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
	CUresult (*lib_load)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned) =
		(CUresult(*)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned))dlsym(
			h, "cuLibraryLoadData");
	CUresult (*get_kernel)(void **, void *, const char *) =
		(CUresult(*)(void **, void *, const char *))dlsym(h, "cuLibraryGetKernel");
	if (!init || !lib_load || !get_kernel || init(0) != 0)
		return 2;
	void *lib = NULL, *k = NULL;
	if (lib_load(&lib, read_all(argv[1], NULL), NULL, NULL, 0, NULL, NULL, 0) != 0)
		return 2;
	CUresult r = get_kernel(&k, lib, argv[2]);
	printf("cuLibraryGetKernel: %d\n", r);
	return r == 0 ? 0 : 1;
}
