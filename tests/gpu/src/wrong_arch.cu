/* SPDX-License-Identifier: Apache-2.0 */
// Built for sm_80 only and run on a newer-major GPU: the launch must fail with 209
// and kimg must name this file's module, its sm_80 image and the fix.
#include <cstdio>
__global__ void add_one(int *v) { v[threadIdx.x] += 1; }
int main()
{
	int *d = nullptr;
	cudaMalloc(&d, 32 * sizeof(int));
	add_one<<<1, 32>>>(d);
	cudaError_t e = cudaGetLastError();
	printf("launch: %d %s\n", (int)e, cudaGetErrorName(e));
	return (int)e;
}
