/* SPDX-License-Identifier: Apache-2.0 */
/* Driver-API program for tests/shim/diagnose.sh: loads images through
 * dlsym'ed driver entry points (the fake driver in tests/fake_cuda) and
 * makes the same failure several times, so the test can check that kimg
 * reports once per (module, error) and counts kernels and modules.
 *
 *   diagnose_prog IMAGE [IMAGE2]
 * Loads IMAGE as a library and asks for kernels "axpy", "axpy", "other";
 * then IMAGE2 (if given) and asks for "axpy". Prints each result. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "progs/progutil.h"

typedef int (*init_t)(unsigned);
typedef int (*lib_load_t)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
typedef int (*get_kernel_t)(void **, void *, const char *);

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h)
		return 2;
	init_t init = (init_t)dlsym(h, "cuInit");
	lib_load_t load = (lib_load_t)dlsym(h, "cuLibraryLoadData");
	get_kernel_t get = (get_kernel_t)dlsym(h, "cuLibraryGetKernel");
	if (!init || !load || !get || init(0) != 0)
		return 2;
	static const char *const names[] = { "axpy", "axpy", "other" };
	for (int i = 1; i < argc && i < 3; i++) {
		void *img = read_all(argv[i], NULL), *lib = NULL, *k = NULL; /* exits 2 if unreadable */
		printf("cuLibraryLoadData: %d\n", load(&lib, img, NULL, NULL, 0, NULL, NULL, 0));
		for (int j = 0; j < (i == 1 ? 3 : 1); j++)
			printf("cuLibraryGetKernel(%s): %d\n", names[j], get(&k, lib, names[j]));
	}
	fflush(stdout);
	return 0;
}
