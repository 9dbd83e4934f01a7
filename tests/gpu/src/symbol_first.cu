/* SPDX-License-Identifier: Apache-2.0 */
// A symbol-first program (issue 29): its __constant__ table is filled with
// cudaMemcpyToSymbol before the first launch, the usual way to set up
// coefficient tables. Built for sm_80 only and run on a newer major, its
// first lookup of the module is cuLibraryGetGlobal, which fails with 209
// ([V] H200: and before the symbol hooks, kimg printed nothing).
#include <cstdio>

__constant__ float coeffs[16];

__global__ void scale(float *x) { x[threadIdx.x] *= coeffs[threadIdx.x % 16]; }

int main()
{
	float table[16];
	for (int i = 0; i < 16; i++)
		table[i] = 1.0f + i;
	cudaError_t e = cudaMemcpyToSymbol(coeffs, table, sizeof table);
	printf("cudaMemcpyToSymbol: %d %s\n", (int)e, cudaGetErrorName(e));
	if (e != cudaSuccess)
		return 1;
	float *d = nullptr;
	cudaMalloc(&d, 16 * sizeof(float));
	scale<<<1, 16>>>(d);
	e = cudaDeviceSynchronize();
	printf("launch: %d %s\n", (int)e, cudaGetErrorName(e));
	return e == cudaSuccess ? 0 : 1;
}
