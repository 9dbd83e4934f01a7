/* SPDX-License-Identifier: Apache-2.0 */
/* A library with two modules, as NCCL or cuDNN ship them: module A with
 * code for the device (CONT_A), module B with code for other GPUs only
 * (CONT_B). Both containers are embedded with .incbin and reached through
 * registration wrappers in .nvFatBinSegment, so kimg finds them in the
 * file as it finds nvcc's. Its own "runtime" (disp_run) reaches the
 * driver as static cudart does (dlopen + cuGetProcAddress_v2) and probes
 * module B the way NCCL probes its kernels: the failure is ignored.
 *
 *   disp_run("probe")   load A and B as libraries, look up axpy in both
 *                       (B fails, ignored), launch A's: returns 0
 *   disp_run("launch")  the same, then also launches B's kernel handle
 *                       (run with FAKE_CUDA_LAZY=1: the lookup succeeds,
 *                       cuKernelGetFunction and the launch fail)
 * disp_wrapper(1) hands out B's wrapper for a program's own calls.
 * Build: gcc -shared -fPIC -DCONT_A='"a.fatbin"' -DCONT_B='"b.fatbin"'. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define STR2(x) #x
#define INCBIN(sym, path)                                                                   \
	__asm__(".section .rodata\n.balign 16\n.globl " #sym "\n.hidden " #sym "\n" #sym ":\n" \
		".incbin \"" path "\"\n.previous\n")
INCBIN(disp_cont_a, CONT_A);
INCBIN(disp_cont_b, CONT_B);
extern const unsigned char disp_cont_a[], disp_cont_b[];

struct fatbin_wrapper {
	unsigned magic, version;
	const void *data;
	const void *filename_or_fatbins;
};
/* aligned(8), as nvcc's wrappers: the section is then the array of 24-byte
 * wrappers a reader walks (GCC would align each to 16 and leave a gap) */
#define WRAPPER __attribute__((section(".nvFatBinSegment"), used, aligned(8))) static const struct fatbin_wrapper
WRAPPER wrap_a = { 0x466243B1u, 1, disp_cont_a, 0 };
WRAPPER wrap_b = { 0x466243B1u, 1, disp_cont_b, 0 };

typedef int (*gpa_t)(const char *, void **, int, unsigned long long, int *);
typedef int (*lib_load_t)(void **, const void *, void *, void *, unsigned, void *, void *, unsigned);
typedef int (*get_kernel_t)(void **, void *, const char *);
typedef int (*kernel_fn_t)(void **, void *);
typedef int (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
			void **);

const void *disp_wrapper(int which);
const void *disp_wrapper(int which)
{
	return which ? (const void *)&wrap_b : (const void *)&wrap_a;
}

int disp_run(const char *op);
int disp_run(const char *op)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	gpa_t gpa = h ? (gpa_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
	if (!gpa)
		return 2;
	int st;
	int (*init)(unsigned) = NULL;
	lib_load_t lib_load = NULL;
	get_kernel_t get_kernel = NULL;
	kernel_fn_t kernel_fn = NULL;
	launch_t launch = NULL;
	gpa("cuInit", (void **)&init, 13000, 0, &st);
	gpa("cuLibraryLoadData", (void **)&lib_load, 13000, 0, &st);
	gpa("cuLibraryGetKernel", (void **)&get_kernel, 13000, 0, &st);
	gpa("cuKernelGetFunction", (void **)&kernel_fn, 13000, 0, &st);
	gpa("cuLaunchKernel", (void **)&launch, 13000, 0, &st);
	if (!init || init(0) != 0 || !lib_load || !get_kernel || !kernel_fn || !launch)
		return 2;
	void *lib_a = NULL, *lib_b = NULL, *k_a = NULL, *k_b = NULL, *f_a = NULL, *f_b = NULL;
	lib_load(&lib_a, &wrap_a, NULL, NULL, 0, NULL, NULL, 0);
	lib_load(&lib_b, &wrap_b, NULL, NULL, 0, NULL, NULL, 0);
	/* the probe: which modules have code here? B's answer is ignored */
	printf("probe B: %d\n", get_kernel(&k_b, lib_b, "axpy"));
	if (k_b)
		printf("probe B function: %d\n", kernel_fn(&f_b, k_b));
	int r = get_kernel(&k_a, lib_a, "axpy");
	if (r == 0)
		r = kernel_fn(&f_a, k_a);
	if (r == 0)
		r = launch(f_a, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	printf("module A launch: %d\n", r);
	if (!strcmp(op, "launch") && k_b)
		printf("module B launch: %d\n", r = launch(f_b ? f_b : k_b, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
	return r;
}
