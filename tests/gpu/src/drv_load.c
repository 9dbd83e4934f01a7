/* SPDX-License-Identifier: Apache-2.0 */
/* Driver-API program: loads an image file with cuModuleLoadData and looks up a kernel.
 * Usage: drv_load FILE [KERNEL]; prints the CUresult of each step, exits with the first error. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		return 2;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = calloc(1, (size_t)n + 1); /* +1: PTX must be NUL-terminated */
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		return 2;
	fclose(f);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	cuInit(0);
	cuDeviceGet(&dev, 0);
	cuDevicePrimaryCtxRetain(&ctx, dev);
	cuCtxSetCurrent(ctx);
	CUresult r = cuModuleLoadData(&mod, buf);
	printf("cuModuleLoadData: %d\n", (int)r);
	if (r != CUDA_SUCCESS)
		return (int)r;
	r = cuModuleGetFunction(&fn, mod, argc > 2 ? argv[2] : "axpy");
	printf("cuModuleGetFunction: %d\n", (int)r);
	return (int)r;
}
