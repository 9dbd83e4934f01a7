/* SPDX-License-Identifier: Apache-2.0 */
/* The safety net on the GPU (issue 29): a library whose code fits nothing
 * (an sm_80-only fatbin on a newer major) loads under CUDA 13, and its
 * first use is an entry point libkimg does not hook. Candidates are tried
 * in order until one returns an error; the program then exits 1 (a failing
 * exit is when the safety net reports). Which of them the driver fails
 * with an image-class code was not known when this was written: the
 * output says, one line each.
 *
 * [V] driver 580.159.04: cuLibraryLoadData, cuLibraryGetKernelCount
 * (count 0) and cuLibraryEnumerateKernels all succeed on such a library,
 * and every entry point after them that fails is one kimg hooks. So the
 * last candidate is a hooked name reached in a way kimg never sees:
 * libcuda's own symbol table, read from its file (the path and load
 * address from dl_iterate_phdr): cuLibraryGetGlobal of the fatbin's
 * __constant__ table, which fails with 209. ([V] dlvsym on driver 580's
 * libcuda.so.1 found nothing.)
 *
 *   unhooked FATBIN
 * Prints "NAME: CODE" per call. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

static void *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *buf = calloc(1, (size_t)n + 16);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

struct found { const char *name; void *addr; };

/* The address of f->name in the loaded libcuda.so.1, from its file's
 * .dynsym: a way to the driver's function that no dlsym sees. */
static int find_in_libcuda(struct dl_phdr_info *info, size_t size, void *data)
{
	struct found *f = data;
	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libcuda.so"))
		return 0;
	FILE *fp = fopen(info->dlpi_name, "rb");
	if (!fp)
		return 0;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *str = NULL;
	Elf64_Sym *sym = NULL;
	if (fread(&eh, sizeof eh, 1, fp) != 1 || eh.e_shentsize != sizeof(Elf64_Shdr))
		goto out;
	sh = calloc(eh.e_shnum, sizeof *sh);
	if (!sh || fseek(fp, (long)eh.e_shoff, SEEK_SET) || fread(sh, sizeof *sh, eh.e_shnum, fp) != eh.e_shnum)
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && !f->addr; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh.e_shnum)
			continue;
		Elf64_Shdr *ss = &sh[sh[i].sh_link];
		size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
		sym = calloc(n, sizeof *sym);
		str = calloc(1, ss->sh_size + 1);
		if (!sym || !str || fseek(fp, (long)sh[i].sh_offset, SEEK_SET) || fread(sym, sizeof *sym, n, fp) != n ||
		    fseek(fp, (long)ss->sh_offset, SEEK_SET) || fread(str, 1, ss->sh_size, fp) != ss->sh_size)
			goto out;
		for (size_t k = 0; k < n; k++)
			if (sym[k].st_name < ss->sh_size && sym[k].st_value && !strcmp(str + sym[k].st_name, f->name))
				f->addr = (void *)(info->dlpi_addr + sym[k].st_value);
	}
out:
	free(sym);
	free(str);
	free(sh);
	fclose(fp);
	return f->addr != NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *image = read_all(argv[1]);
	if (!image)
		return 2;
	CUdevice dev;
	CUcontext ctx;
	CUlibrary lib;
	printf("cuInit: %d\n", (int)cuInit(0));
	cuDeviceGet(&dev, 0);
	cuDevicePrimaryCtxRetain(&ctx, dev);
	cuCtxSetCurrent(ctx);
	CUresult r = cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
	printf("cuLibraryLoadData: %d\n", (int)r);
	if (r != CUDA_SUCCESS)
		return 1;
	unsigned count = 0;
	r = cuLibraryGetKernelCount(&count, lib);
	printf("cuLibraryGetKernelCount: %d\n", (int)r);
	printf("kernel count %u\n", count);
	if (r != CUDA_SUCCESS)
		return 1;
	CUkernel kernels[8];
	r = cuLibraryEnumerateKernels(kernels, count < 8 ? count : 8, lib);
	printf("cuLibraryEnumerateKernels: %d\n", (int)r);
	if (r != CUDA_SUCCESS)
		return 1;
	if (count == 0) {
		typedef CUresult (*get_global_fn)(CUdeviceptr *, size_t *, CUlibrary, const char *);
		struct found f = { "cuLibraryGetGlobal", NULL };
		dl_iterate_phdr(find_in_libcuda, &f);
		get_global_fn get_global = (get_global_fn)f.addr;
		printf("libcuda's own cuLibraryGetGlobal: %s\n", get_global ? "found" : "not found");
		if (!get_global)
			return 0;
		CUdeviceptr dptr = 0;
		size_t bytes = 0;
		r = get_global(&dptr, &bytes, lib, "coeffs");
		printf("cuLibraryGetGlobal: %d\n", (int)r);
		return r == CUDA_SUCCESS ? 0 : 1;
	}
	if (count > 0) {
		int regs = 0;
		r = cuKernelGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, kernels[0], dev);
		printf("cuKernelGetAttribute: %d\n", (int)r);
		if (r != CUDA_SUCCESS)
			return 1;
		const char *name = NULL;
		r = cuKernelGetName(&name, kernels[0]);
		printf("cuKernelGetName: %d\n", (int)r);
		CUfunction fn;
		/* cuKernelGetFunction is hooked: reached only when all above succeeded */
		r = cuKernelGetFunction(&fn, kernels[0]);
		printf("cuKernelGetFunction: %d\n", (int)r);
		if (r != CUDA_SUCCESS)
			return 1;
	}
	return 0;
}
