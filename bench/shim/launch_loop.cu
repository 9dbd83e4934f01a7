/* SPDX-License-Identifier: Apache-2.0 */
// Launch-bound loop: N empty kernel launches; prints launches per second.
#include <chrono>
#include <cstdio>
#include <cstdlib>
__global__ void empty_kernel() {}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	empty_kernel<<<1, 1>>>();
	cudaDeviceSynchronize();
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < n; i++)
		empty_kernel<<<1, 1>>>();
	cudaDeviceSynchronize();
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	if (cudaGetLastError() != cudaSuccess)
		return 1;
	printf("%.9f\n", s / n);
	return 0;
}
