/* SPDX-License-Identifier: Apache-2.0 */
/* Driver-API saxpy: cuModuleLoadData(FILE) (PTX text or a fatbin), then
 * y = a*x + y on 1M floats, checked on the host. Prints the result of each
 * step; exit 0 only when the numbers are right. For tests/gpu/fallback_gpu.py. */
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)
#define STEP(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { printf("%s: %d\n", #call, (int)r_); return 3; } } while (0)

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		return 2;
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *image = calloc(1, (size_t)size + 1); /* PTX must be NUL-terminated */
	if (fread(image, 1, (size_t)size, f) != (size_t)size)
		return 2;
	fclose(f);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	STEP(cuInit(0));
	STEP(cuDeviceGet(&dev, 0));
	STEP(cuDevicePrimaryCtxRetain(&ctx, dev));
	STEP(cuCtxSetCurrent(ctx));
	CUresult r = cuModuleLoadData(&mod, image);
	printf("cuModuleLoadData: %d\n", (int)r);
	if (r != CUDA_SUCCESS)
		return 3;
	STEP(cuModuleGetFunction(&fn, mod, "saxpy"));
	float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)), *out = malloc(N * sizeof(float));
	for (int i = 0; i < N; i++) {
		x[i] = 0.25f * (float)(i % 4000);
		y[i] = (float)(i % 11) - 5.0f;
	}
	CUdeviceptr dx, dy;
	STEP(cuMemAlloc(&dx, N * sizeof(float)));
	STEP(cuMemAlloc(&dy, N * sizeof(float)));
	STEP(cuMemcpyHtoD(dx, x, N * sizeof(float)));
	STEP(cuMemcpyHtoD(dy, y, N * sizeof(float)));
	float a = -1.5f;
	int n = N;
	void *params[] = { &a, &dx, &dy, &n };
	STEP(cuLaunchKernel(fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	STEP(cuCtxSynchronize());
	STEP(cuMemcpyDtoH(out, dy, N * sizeof(float)));
	for (int i = 0; i < N; i++) {
		float want = a * x[i] + y[i];
		if (fabsf(out[i] - want) > 1e-5f * (fabsf(want) + 1.0f)) {
			printf("result: mismatch at %d: %g != %g\n", i, out[i], want);
			return 4;
		}
	}
	printf("result: ok (%d values)\n", N);
	return 0;
}
