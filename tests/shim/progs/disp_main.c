/* SPDX-License-Identifier: Apache-2.0 */
/* Driver for the dispatch tests: dlopen a library built from disp.c and
 * run it, then end as asked.
 *
 *   disp_main LIB OP [END]
 * OP: probe | launch (disp.c), or program: the program itself looks up
 *     axpy in the library's module B (its own driver call), or runtime:
 *     module B registered with the shared runtime (libcudart.so.13, the
 *     stand-in), whose cudaFuncGetAttributes makes the lookup from inside
 *     libcudart (the runtime's call, not the program's).
 * END: ok (exit 0, default) | fail (exit 3) | abort (SIGABRT) | segv (SIGSEGV raised) */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	int (*run)(const char *) = (int (*)(const char *))dlsym(h, "disp_run");
	const void *(*wrapper)(int) = (const void *(*)(int))dlsym(h, "disp_wrapper");
	int own = !strcmp(argv[2], "program") || !strcmp(argv[2], "runtime");
	int r = run(own ? "probe" : argv[2]);
	printf("disp_run: %d\n", r);
	if (!strcmp(argv[2], "program")) {
		void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		int (*lib_load)(void **, const void *, void *, void *, unsigned, void *, void *, unsigned) =
			(int (*)(void **, const void *, void *, void *, unsigned, void *, void *, unsigned))dlsym(
				cuda, "cuLibraryLoadData");
		int (*get_kernel)(void **, void *, const char *) =
			(int (*)(void **, void *, const char *))dlsym(cuda, "cuLibraryGetKernel");
		void *lib = NULL, *k = NULL;
		lib_load(&lib, wrapper(1), NULL, NULL, 0, NULL, NULL, 0);
		printf("program's own lookup in B: %d\n", get_kernel(&k, lib, "axpy"));
	}
	if (!strcmp(argv[2], "runtime")) {
		void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
		void **(*reg_fatbin)(const void *) = rt ? (void **(*)(const void *))dlsym(rt, "__cudaRegisterFatBinary") : NULL;
		void (*reg_fn)(void **, const char *, char *, const char *, int, void *, void *, void *, void *, int *) =
			rt ? (void (*)(void **, const char *, char *, const char *, int, void *, void *, void *, void *,
				       int *))dlsym(rt, "__cudaRegisterFunction")
			   : NULL;
		int (*attrs)(void *, const void *) = rt ? (int (*)(void *, const void *))dlsym(rt, "cudaFuncGetAttributes")
						       : NULL;
		if (!reg_fatbin || !reg_fn || !attrs) {
			printf("runtime: %s\n", rt ? "symbols missing" : dlerror());
			return 2;
		}
		static const char stub = 0;
		static char axpy[] = "axpy";
		void **handle = reg_fatbin(wrapper(1));
		reg_fn(handle, &stub, axpy, axpy, -1, NULL, NULL, NULL, NULL, NULL);
		char attr[256];
		printf("runtime's lookup in B: %d\n", attrs(attr, &stub));
	}
	fflush(stdout);
	const char *end = argc > 3 ? argv[3] : "ok";
	if (!strcmp(end, "abort"))
		abort();
	if (!strcmp(end, "segv"))
		raise(SIGSEGV);
	return !strcmp(end, "fail") ? 3 : 0;
}
