/* SPDX-License-Identifier: Apache-2.0 */
/* A program built with weak references to the CUDA driver and runtime and
 * linked against neither, the way optional GPU support is linked: each
 * name is NULL unless something in the process defines it. Under libkimg
 * with no driver and no runtime, the references bind to libkimg's exports,
 * which have nothing behind them and must say so without calling through
 * NULL (shim/hook/hook.h): the driver's cuInit 3
 * (CUDA_ERROR_NOT_INITIALIZED), each runtime call 35
 * (cudaErrorInsufficientDriver, "no driver"), a registration NULL or
 * nothing. Prints "NAME: RESULT" per call ("NAME: absent" when unbound). */
#include <stddef.h>
#include <stdio.h>

struct dim3 {
	unsigned x, y, z;
};

#define WEAK __attribute__((weak))
WEAK int cuInit(unsigned flags);
WEAK int cudaLaunchKernel(const void *f, struct dim3 g, struct dim3 b, void **a, size_t sh, void *st);
WEAK int cudaLaunchKernel_ptsz(const void *f, struct dim3 g, struct dim3 b, void **a, size_t sh, void *st);
WEAK int cudaLaunchCooperativeKernel(const void *f, struct dim3 g, struct dim3 b, void **a, size_t sh, void *st);
WEAK int cudaLaunchCooperativeKernel_ptsz(const void *f, struct dim3 g, struct dim3 b, void **a, size_t sh,
					  void *st);
WEAK int cudaLaunchKernelExC(const void *config, const void *f, void **a);
WEAK int cudaLaunchKernelExC_ptsz(const void *config, const void *f, void **a);
WEAK int cudaFuncGetAttributes(void *attr, const void *f);
WEAK int cudaGetFuncBySymbol(void **fn, const void *sym);
WEAK int cudaGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long flags, int *status);
WEAK int cudaGetDriverEntryPoint_ptsz(const char *sym, void **pfn, unsigned long long flags, int *status);
WEAK int cudaGetDriverEntryPointByVersion(const char *sym, void **pfn, unsigned v, unsigned long long flags,
					  int *status);
WEAK int cudaGetDriverEntryPointByVersion_ptsz(const char *sym, void **pfn, unsigned v, unsigned long long flags,
					       int *status);
WEAK int cudaMemcpyToSymbol(const void *sym, const void *src, size_t n, size_t off, int kind);
WEAK int cudaMemcpyToSymbol_ptds(const void *sym, const void *src, size_t n, size_t off, int kind);
WEAK int cudaMemcpyFromSymbol(void *dst, const void *sym, size_t n, size_t off, int kind);
WEAK int cudaMemcpyFromSymbol_ptds(void *dst, const void *sym, size_t n, size_t off, int kind);
WEAK int cudaMemcpyToSymbolAsync(const void *sym, const void *src, size_t n, size_t off, int kind, void *st);
WEAK int cudaMemcpyToSymbolAsync_ptsz(const void *sym, const void *src, size_t n, size_t off, int kind, void *st);
WEAK int cudaMemcpyFromSymbolAsync(void *dst, const void *sym, size_t n, size_t off, int kind, void *st);
WEAK int cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *sym, size_t n, size_t off, int kind, void *st);
WEAK int cudaGetSymbolAddress(void **p, const void *sym);
WEAK int cudaGetSymbolSize(size_t *n, const void *sym);
WEAK int cudaRuntimeGetVersion(int *v);
WEAK void **__cudaRegisterFatBinary(void *fat);
WEAK void __cudaRegisterFunction(void **h, const char *hf, char *df, const char *dn, int tl, void *tid, void *bid,
				 void *bd, void *gd, int *ws);
WEAK void __cudaRegisterVar(void **h, char *hv, char *da, const char *dn, int ext, size_t size, int c, int g);
WEAK void __cudaRegisterManagedVar(void **h, void **hv, char *da, const char *dn, int ext, size_t size, int c,
				   int g);

#define SAY(name, call) \
	(name ? printf("%s: %d\n", #name, (int)(call)) : printf("%s: absent\n", #name))
#define SAY_VOID(name, call) (name ? ((call), printf("%s: returned\n", #name)) : printf("%s: absent\n", #name))

int main(void)
{
	struct dim3 one = { 1, 1, 1 };
	char var[8] = "", buf[8];
	void *p = NULL;
	size_t n = 0;
	int v = 0, st = 0;
	SAY(cuInit, cuInit(0));
	SAY(cudaLaunchKernel, cudaLaunchKernel(main, one, one, NULL, 0, NULL));
	SAY(cudaLaunchKernel_ptsz, cudaLaunchKernel_ptsz(main, one, one, NULL, 0, NULL));
	SAY(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel(main, one, one, NULL, 0, NULL));
	SAY(cudaLaunchCooperativeKernel_ptsz, cudaLaunchCooperativeKernel_ptsz(main, one, one, NULL, 0, NULL));
	SAY(cudaLaunchKernelExC, cudaLaunchKernelExC(NULL, main, NULL));
	SAY(cudaLaunchKernelExC_ptsz, cudaLaunchKernelExC_ptsz(NULL, main, NULL));
	SAY(cudaFuncGetAttributes, cudaFuncGetAttributes(buf, main));
	SAY(cudaGetFuncBySymbol, cudaGetFuncBySymbol(&p, main));
	SAY(cudaGetDriverEntryPoint, cudaGetDriverEntryPoint("cuInit", &p, 0, &st));
	SAY(cudaGetDriverEntryPoint_ptsz, cudaGetDriverEntryPoint_ptsz("cuInit", &p, 0, &st));
	SAY(cudaGetDriverEntryPointByVersion, cudaGetDriverEntryPointByVersion("cuInit", &p, 12000, 0, &st));
	SAY(cudaGetDriverEntryPointByVersion_ptsz, cudaGetDriverEntryPointByVersion_ptsz("cuInit", &p, 12000, 0, &st));
	SAY(cudaMemcpyToSymbol, cudaMemcpyToSymbol(var, buf, 1, 0, 1));
	SAY(cudaMemcpyToSymbol_ptds, cudaMemcpyToSymbol_ptds(var, buf, 1, 0, 1));
	SAY(cudaMemcpyFromSymbol, cudaMemcpyFromSymbol(buf, var, 1, 0, 2));
	SAY(cudaMemcpyFromSymbol_ptds, cudaMemcpyFromSymbol_ptds(buf, var, 1, 0, 2));
	SAY(cudaMemcpyToSymbolAsync, cudaMemcpyToSymbolAsync(var, buf, 1, 0, 1, NULL));
	SAY(cudaMemcpyToSymbolAsync_ptsz, cudaMemcpyToSymbolAsync_ptsz(var, buf, 1, 0, 1, NULL));
	SAY(cudaMemcpyFromSymbolAsync, cudaMemcpyFromSymbolAsync(buf, var, 1, 0, 2, NULL));
	SAY(cudaMemcpyFromSymbolAsync_ptsz, cudaMemcpyFromSymbolAsync_ptsz(buf, var, 1, 0, 2, NULL));
	SAY(cudaGetSymbolAddress, cudaGetSymbolAddress(&p, var));
	SAY(cudaGetSymbolSize, cudaGetSymbolSize(&n, var));
	SAY(cudaRuntimeGetVersion, cudaRuntimeGetVersion(&v));
	if (__cudaRegisterFatBinary)
		printf("__cudaRegisterFatBinary: %s\n", __cudaRegisterFatBinary(buf) ? "a handle" : "NULL");
	else
		printf("__cudaRegisterFatBinary: absent\n");
	SAY_VOID(__cudaRegisterFunction, __cudaRegisterFunction(NULL, (const char *)main, var, var, -1, NULL, NULL,
								 NULL, NULL, NULL));
	SAY_VOID(__cudaRegisterVar, __cudaRegisterVar(NULL, var, var, var, 0, 1, 0, 0));
	SAY_VOID(__cudaRegisterManagedVar, __cudaRegisterManagedVar(NULL, &p, var, var, 0, 1, 0, 0));
	return 0;
}
