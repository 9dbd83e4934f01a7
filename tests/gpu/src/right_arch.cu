/* SPDX-License-Identifier: Apache-2.0 */
// Correct build: must run and print nothing from kimg.
#include <cstdio>
__global__ void add_one(int *v) { v[threadIdx.x] += 1; }
int main()
{
	int h[32] = {0}, *d = nullptr;
	cudaMalloc(&d, sizeof h);
	cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
	add_one<<<1, 32>>>(d);
	cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
	printf("ok %d\n", h[31]);
	return h[31] == 1 ? 0 : 1;
}
