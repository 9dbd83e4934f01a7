/* SPDX-License-Identifier: Apache-2.0 */
/* Program for tests/shim/stack.sh: fails cuLibraryGetKernel (through the
 * fake driver) from a static function, built without -rdynamic, so
 * neither that function nor main is a dynamic symbol: only .symtab names
 * them (core/elf_symbols.h), as on the H200 machine, which has no
 * libunwind.
 *
 *   stack_static_prog IMAGE     exit 0 when the call failed as expected */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "progs/progutil.h"

typedef int (*init_t)(unsigned);
typedef int (*lib_load_t)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
typedef int (*get_kernel_t)(void **, void *, const char *);

/* noinline: its own frame, between the driver call and main */
__attribute__((noinline)) static int static_get_kernel(get_kernel_t get, void *lib)
{
	void *k = NULL;
	int rc = get(&k, lib, "axpy");
	__asm__ volatile("" ::: "memory"); /* keep the call from becoming a tail call */
	return rc;
}

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
	void *img = read_all(argv[1], NULL), *lib = NULL;
	if (!init || !load || !get || !img || init(0) != 0)
		return 2;
	int rc = load(&lib, img, NULL, NULL, 0, NULL, NULL, 0);
	if (rc == 0)
		rc = static_get_kernel(get, lib);
	printf("rc %d\n", rc);
	return rc != 0 ? 0 : 1;
}
