/* SPDX-License-Identifier: Apache-2.0 */
/* Driver-API test program, built twice: drv_direct (-DDIRECT, linked
 * against the fake libcuda.so.1, so its calls bind to libkimg's exported
 * symbols) and drv_dl (no libcuda at link time, like static cudart).
 *
 *   drv ACCESS OP FILE [KERNEL]
 * ACCESS: how the driver functions are obtained
 *   direct   the linked symbols (drv_direct only)
 *   dlsym    dlopen("libcuda.so.1") + dlsym(handle, "cuX")
 *   default  dlopen(RTLD_GLOBAL) + dlsym(RTLD_DEFAULT, "cuX")
 *   gpa      dlsym(handle, "cuGetProcAddress_v2"), then everything through
 *            cuGetProcAddress("cuGetProcAddress", 12000), as static cudart 13
 *   gpa4     dlsym(handle, "cuGetProcAddress"), 4 arguments, version 11030
 *   ptsz     like gpa but flag 2 (per-thread default stream)
 * OP: load | loadex | fatbin | path | lib | libfile | libmod | lazy
 *   (see run_op). Prints "call: code" per call and "fn: owner" per pointer. */
#include "progutil.h"

typedef int CUresult;
typedef CUresult (*gpa5_t)(const char *, void **, int, unsigned long long, int *);
typedef CUresult (*gpa4_t)(const char *, void **, int, unsigned long long);

struct api {
	CUresult (*init)(unsigned);
	CUresult (*load)(void **, const char *);
	CUresult (*load_data)(void **, const void *);
	CUresult (*load_data_ex)(void **, const void *, unsigned, int *, void **);
	CUresult (*load_fatbin)(void **, const void *);
	CUresult (*get_function)(void **, void *, const char *);
	CUresult (*lib_load)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
	CUresult (*lib_file)(void **, const char *, int *, void **, unsigned, int *, void **, unsigned);
	CUresult (*get_kernel)(void **, void *, const char *);
	CUresult (*get_module)(void **, void *);
	CUresult (*kernel_function)(void **, void *);
	CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			   void **, void **);
	CUresult (*launch_ex)(const void *, void *, void **, void **);
	CUresult (*launch_coop)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
				void **);
};

#ifdef DIRECT
CUresult cuInit(unsigned);
CUresult cuModuleLoad(void **, const char *);
CUresult cuModuleLoadData(void **, const void *);
CUresult cuModuleLoadDataEx(void **, const void *, unsigned, int *, void **);
CUresult cuModuleLoadFatBinary(void **, const void *);
CUresult cuModuleGetFunction(void **, void *, const char *);
CUresult cuLibraryLoadData(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
CUresult cuLibraryLoadFromFile(void **, const char *, int *, void **, unsigned, int *, void **, unsigned);
CUresult cuLibraryGetKernel(void **, void *, const char *);
CUresult cuLibraryGetModule(void **, void *);
CUresult cuKernelGetFunction(void **, void *);
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
			void **);
CUresult cuLaunchKernelEx(const void *, void *, void **, void **);
CUresult cuLaunchCooperativeKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				   void *, void **);
static void get_direct(struct api *a)
{
	a->init = cuInit;
	a->load = cuModuleLoad;
	a->load_data = cuModuleLoadData;
	a->load_data_ex = cuModuleLoadDataEx;
	a->load_fatbin = cuModuleLoadFatBinary;
	a->get_function = cuModuleGetFunction;
	a->lib_load = cuLibraryLoadData;
	a->lib_file = cuLibraryLoadFromFile;
	a->get_kernel = cuLibraryGetKernel;
	a->get_module = cuLibraryGetModule;
	a->kernel_function = cuKernelGetFunction;
	a->launch = cuLaunchKernel;
	a->launch_ex = cuLaunchKernelEx;
	a->launch_coop = cuLaunchCooperativeKernel;
}
#endif

static const char *const names[] = {
	"cuInit", "cuModuleLoad", "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary",
	"cuModuleGetFunction", "cuLibraryLoadData", "cuLibraryLoadFromFile", "cuLibraryGetKernel",
	"cuLibraryGetModule", "cuKernelGetFunction", "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel",
};
#define N_NAMES (sizeof names / sizeof names[0])

static void get_dlsym(struct api *a, void *h)
{
	void **slots = (void **)a;
	for (size_t i = 0; i < N_NAMES; i++)
		slots[i] = dlsym(h, names[i]);
}

static void get_gpa(struct api *a, void *h, int version, unsigned long long flags, int four)
{
	void **slots = (void **)a;
	void *p = NULL;
	int status = -1;
	if (four) {
		gpa4_t g4 = (gpa4_t)dlsym(h, "cuGetProcAddress");
		printf("cuGetProcAddress owner: %s\n", owner_of((void *)g4));
		for (size_t i = 0; i < N_NAMES; i++)
			slots[i] = g4(names[i], &slots[i], version, flags) == 0 ? slots[i] : NULL;
		/* Asked through the 4-argument function for the 12000 ABI, the
		 * answer is the 5-argument _v2: call it with 5 arguments. */
		if (g4("cuGetProcAddress", &p, 12000, 0) == 0) {
			gpa5_t g5 = (gpa5_t)p;
			void *q = NULL;
			CUresult r = g5("cuInit", &q, 2000, 0, &status);
			printf("v2 via 4-arg: %d status %d owner %s\n", r, status, owner_of(p));
		}
		return;
	}
	gpa5_t boot = (gpa5_t)dlsym(h, "cuGetProcAddress_v2");
	printf("cuGetProcAddress_v2 owner: %s\n", owner_of((void *)boot));
	/* static cudart 13 re-fetches cuGetProcAddress itself ([V] section 2) */
	CUresult r = boot("cuGetProcAddress", &p, 12000, 0, &status);
	printf("refetch: %d status %d owner %s\n", r, status, owner_of(p));
	gpa5_t g5 = (gpa5_t)p;
	for (size_t i = 0; i < N_NAMES; i++)
		slots[i] = g5(names[i], &slots[i], version, flags, &status) == 0 ? slots[i] : NULL;
}

static const char *(*last_call)(void);

static void report(const char *call, CUresult r)
{
	printf("%s: %d\n", call, r);
}

static int run_op(struct api *a, const char *op, const char *file, const char *kernel)
{
	void *mod = NULL, *lib = NULL, *fn = NULL, *k = NULL;
	CUresult r = 0;
	size_t size = 0;
	void *bytes = strcmp(op, "path") && strcmp(op, "libfile") ? read_all(file, &size) : NULL;
	struct fatbin_wrapper w = make_wrapper(bytes);
	/* a container goes in a registration wrapper, as cudart passes it */
	const void *code = bytes && *(uint32_t *)bytes == 0xBA55ED50u ? (const void *)&w : bytes;

	if (!strcmp(op, "load"))
		report("cuModuleLoadData", r = a->load_data(&mod, bytes));
	else if (!strcmp(op, "loadex"))
		report("cuModuleLoadDataEx", r = a->load_data_ex(&mod, bytes, 0, NULL, NULL));
	else if (!strcmp(op, "fatbin"))
		report("cuModuleLoadFatBinary", r = a->load_fatbin(&mod, code));
	else if (!strcmp(op, "path"))
		report("cuModuleLoad", r = a->load(&mod, file));
	if (mod && kernel) {
		report("cuModuleGetFunction", r = a->get_function(&fn, mod, kernel));
		if (r == 0)
			report("cuLaunchKernel", r = a->launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
	}
	if (!strcmp(op, "lib") || !strcmp(op, "libmod") || !strcmp(op, "lazy"))
		report("cuLibraryLoadData", r = a->lib_load(&lib, code, NULL, NULL, 0, NULL, NULL, 0));
	else if (!strcmp(op, "libfile"))
		report("cuLibraryLoadFromFile", r = a->lib_file(&lib, file, NULL, NULL, 0, NULL, NULL, 0));
	if (lib && !strcmp(op, "libmod")) {
		report("cuLibraryGetModule", r = a->get_module(&mod, lib));
		if (r == 0)
			report("cuModuleGetFunction", r = a->get_function(&fn, mod, kernel));
	} else if (lib && kernel) {
		report("cuLibraryGetKernel", r = a->get_kernel(&k, lib, kernel));
		if (r == 0)
			report("cuKernelGetFunction", r = a->kernel_function(&fn, k));
		/* lazy: a launch of the kernel handle itself, as after a failed
		 * cuKernelGetFunction the runtime still tries the launch */
		if (!strcmp(op, "lazy") || r == 0) {
			void *f = fn ? fn : k;
			report("cuLaunchKernel", a->launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
			if (last_call)
				printf("last: %s\n", last_call());
			report("cuLaunchKernelEx", a->launch_ex(NULL, f, NULL, NULL));
			if (last_call)
				printf("last: %s\n", last_call());
			report("cuLaunchCooperativeKernel", a->launch_coop(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL));
			if (last_call)
				printf("last: %s\n", last_call());
		}
	}
	return r;
}

int main(int argc, char **argv)
{
	struct api a;
	memset(&a, 0, sizeof a);
	if (argc < 4) {
		fprintf(stderr, "usage: %s ACCESS OP FILE [KERNEL]\n", argv[0]);
		return 2;
	}
	const char *access = argv[1];
	int global = !strcmp(access, "default");
	void *h = dlopen("libcuda.so.1", RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	last_call = (const char *(*)(void))dlsym(h, "fake_cuda_last_call");
	if (!strcmp(access, "dlsym"))
		get_dlsym(&a, h);
	else if (global)
		get_dlsym(&a, RTLD_DEFAULT);
	else if (!strcmp(access, "gpa"))
		get_gpa(&a, h, 13000, 0, 0);
	else if (!strcmp(access, "ptsz"))
		get_gpa(&a, h, 13000, 2, 0);
	else if (!strcmp(access, "gpa4"))
		get_gpa(&a, h, 11030, 0, 1);
#ifdef DIRECT
	else if (!strcmp(access, "direct"))
		get_direct(&a);
#endif
	else
		return 2;
	for (size_t i = 0; i < N_NAMES; i++)
		printf("%s owner: %s\n", names[i], owner_of(((void **)&a)[i]));
	if (!a.init || a.init(0) != 0) {
		printf("cuInit failed\n");
		return 2;
	}
	return run_op(&a, argv[2], argv[3], argc > 4 ? argv[4] : NULL) == 0 ? 0 : 1;
}
