/* SPDX-License-Identifier: Apache-2.0 */
/* Shared-cudart test program: linked against the fake libcudart.so, it
 * registers a fatbin at run time the way nvcc's generated constructor
 * does (__cudaRegisterFatBinary with the wrapper, then
 * __cudaRegisterFunction per kernel), then uses the kernel through the
 * runtime API.
 *
 *   rt FILE KERNEL [launch-first]
 *   FILE: a container (multi.fatbin, ...) or a cubin; launch-first: launch
 *   before asking for attributes (so the launch is the first failure)
 * Prints "call: code" per call, the owner of the driver entry point
 * cudaGetDriverEntryPoint hands out, and what libkimg's versioned exports
 * answer for a runtime that lacks the function (dlvsym). Built as a shared
 * object with -Dmain=rt_main, it is the "extension" a loader dlopens. */
#include "progutil.h"

struct dim3 { unsigned x, y, z; };
void **__cudaRegisterFatBinary(void *wrapper);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
			    int thread_limit, void *tid, void *bid, void *bdim, void *gdim, int *wsize);
int cudaLaunchKernel(const void *func, struct dim3 g, struct dim3 b, void **args, size_t shmem, void *stream);
int cudaFuncGetAttributes(void *attr, const void *func);
int cudaGetFuncBySymbol(void **fn, const void *symbol);
int cudaRuntimeGetVersion(int *version);
int cudaGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long flags, int *status);
int cudaGetDriverEntryPointByVersion(const char *sym, void **pfn, unsigned version, unsigned long long flags,
				     int *status);
int cudaGetDriverEntryPoint_ptsz(const char *sym, void **pfn, unsigned long long flags, int *status);
typedef int (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
			void **);
typedef int (*gpa5_t)(const char *, void **, int, unsigned long long, int *);

/* The host stub: its address is what the runtime API receives. */
static void kernel_stub(void) {}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE KERNEL\n", argv[0]);
		return 2;
	}
	void *container = read_all(argv[1], NULL);
	static struct fatbin_wrapper w;
	w = make_wrapper(container);
	void **handle = __cudaRegisterFatBinary(&w);
	printf("registered: %s\n", handle ? "yes" : "no");
	__cudaRegisterFunction(handle, (const char *)(void *)kernel_stub, argv[2], argv[2], -1, NULL, NULL, NULL, NULL,
			       NULL);

	/* after registration, as programs ask (the runtime has loaded the driver) */
	int rtv = 0;
	int r0 = cudaRuntimeGetVersion(&rtv);
	printf("cudaRuntimeGetVersion: %d %d\n", r0, rtv);

	char attr[256];
	int launch_first = argc > 3 && strcmp(argv[3], "launch-first") == 0;
	struct dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	int r2 = 0;
	if (launch_first) {
		r2 = cudaLaunchKernel((const void *)kernel_stub, g, b, NULL, 0, NULL);
		printf("cudaLaunchKernel: %d\n", r2);
	}
	int r1 = cudaFuncGetAttributes(attr, (const void *)kernel_stub);
	printf("cudaFuncGetAttributes: %d\n", r1);
	if (!launch_first) {
		r2 = cudaLaunchKernel((const void *)kernel_stub, g, b, NULL, 0, NULL);
		printf("cudaLaunchKernel: %d\n", r2);
	}
	void *fn = NULL;
	int r3 = cudaGetFuncBySymbol(&fn, (const void *)kernel_stub);
	printf("cudaGetFuncBySymbol: %d\n", r3);

	void *entry = NULL;
	int status = -1;
	int r4 = cudaGetDriverEntryPoint("cuLaunchKernel", &entry, 0, &status);
	printf("cudaGetDriverEntryPoint: %d owner %s\n", r4, owner_of(entry));
	entry = NULL;
	r4 = cudaGetDriverEntryPoint("cuDeviceGet", &entry, 0, &status);
	printf("cudaGetDriverEntryPoint cuDeviceGet: %d owner %s\n", r4, owner_of(entry));
	/* by version: "cuGetProcAddress" at 12000 is the 5-argument _v2 */
	entry = NULL;
	r4 = cudaGetDriverEntryPointByVersion("cuGetProcAddress", &entry, 12000, 0, &status);
	printf("cudaGetDriverEntryPointByVersion cuGetProcAddress 12000: %d owner %s\n", r4, owner_of(entry));
	if (r4 == 0 && entry) {
		void *launch = NULL;
		int st = -1;
		int r5 = ((gpa5_t)entry)("cuLaunchKernel", &launch, 13000, 2, &st);
		printf("via it, cuLaunchKernel flag 2: %d status %d owner %s\n", r5, st, owner_of(launch));
	}
	/* _ptsz with flags 0: per-thread default stream, so the pointer must
	 * reach the driver's cuLaunchKernel_ptsz (the fake driver names the
	 * last function entered). */
	entry = NULL;
	r4 = cudaGetDriverEntryPoint_ptsz("cuLaunchKernel", &entry, 0, &status);
	printf("cudaGetDriverEntryPoint_ptsz: %d owner %s\n", r4, owner_of(entry));
	void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	const char *(*last_call)(void) = drv ? (const char *(*)(void))dlsym(drv, "fake_cuda_last_call") : NULL;
	if (r4 == 0 && entry && last_call) {
		((launch_t)entry)(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		printf("via it, launch reaches: %s\n", last_call());
	}
	/* The first definition of a versioned name (libkimg's, when preloaded)
	 * for a function the fake runtime lacks, and for a version it is not. */
	typedef int (*ex_t)(const void *, const void *, void **);
	ex_t ex = (ex_t)dlvsym(RTLD_DEFAULT, "cudaLaunchKernelExC", "libcudart.so.13");
	printf("cudaLaunchKernelExC@libcudart.so.13: %d\n", ex ? ex(NULL, (const void *)kernel_stub, NULL) : -1);
	typedef int (*attr_t)(void *, const void *);
	attr_t a12 = (attr_t)dlvsym(RTLD_DEFAULT, "cudaFuncGetAttributes", "libcudart.so.12");
	printf("cudaFuncGetAttributes@libcudart.so.12: %d\n", a12 ? a12(attr, (const void *)kernel_stub) : -1);
	return r2 == 0 ? 0 : 1;
}
