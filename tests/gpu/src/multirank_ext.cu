/* SPDX-License-Identifier: Apache-2.0 */
// A shared library built for sm_80 only (no PTX), loaded with ctypes by
// every rank of tests/gpu/src/multirank.py: on a GPU of another major
// version the launch fails with 209 in each rank, and each rank's kimg
// report must name this library's module.
#include <cuda_runtime.h>

__global__ void multirank_add_one(int *v) { v[threadIdx.x] += 1; }

extern "C" int multirank_launch(void)
{
	int *d = nullptr;
	if (cudaMalloc(&d, 32 * sizeof(int)) != cudaSuccess)
		return -1;
	multirank_add_one<<<1, 32>>>(d);
	int e = (int)cudaGetLastError();
	cudaFree(d);
	return e;
}
