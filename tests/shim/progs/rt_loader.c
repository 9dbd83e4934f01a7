/* SPDX-License-Identifier: Apache-2.0 */
/* tests/shim/runtime.sh: loads an extension (rt.c built as a library with
 * its main renamed rt_main) with RTLD_LOCAL, as Python loads one, and runs
 * it: the extension's runtime is then reachable by no global lookup.
 * Usage: rt_loader EXTENSION ARGS... (the arguments of rt.c). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	int (*rt_main)(int, char **) = (int (*)(int, char **))dlsym(h, "rt_main");
	if (!rt_main) {
		printf("dlsym rt_main: %s\n", dlerror());
		return 2;
	}
	return rt_main(argc - 1, argv + 1);
}
