// The launch loop of issue 29's cost goal: N launches of an empty kernel
// through the runtime, timed on the host; prints "launches N seconds S".
// The driver-log callback must cost nothing here (<= 1.01x, median).
#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void empty() {}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	empty<<<1, 1>>>();
	cudaDeviceSynchronize();
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < n; i++)
		empty<<<1, 1>>>();
	cudaDeviceSynchronize();
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	cudaError_t e = cudaGetLastError();
	printf("launches %d seconds %.6f status %d\n", n, s, (int)e);
	return e == cudaSuccess ? 0 : 1;
}
