/* SPDX-License-Identifier: Apache-2.0 */
// y = a*x + y on 1M floats through the runtime API (static or shared cudart),
// checked on the host. tests/gpu/fallback_gpu.py builds it for one arch list
// (compute_100 PTX only, sm_80 SASS only, ...) and runs it under libkimg.
#include <cmath>
#include <cstdio>
#include <vector>

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

int main()
{
	const int n = 1 << 20;
	const float a = 2.5f;
	std::vector<float> x(n), y(n), out(n);
	for (int i = 0; i < n; i++) {
		x[i] = 0.5f * (float)(i % 1000);
		y[i] = 1.0f + (float)(i % 7);
	}
	float *dx = nullptr, *dy = nullptr;
	cudaMalloc(&dx, n * sizeof(float));
	cudaMalloc(&dy, n * sizeof(float));
	cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
	cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
	saxpy<<<(n + 255) / 256, 256>>>(a, dx, dy, n);
	cudaError_t e = cudaGetLastError();
	printf("launch: %d %s\n", (int)e, cudaGetErrorName(e));
	if (e != cudaSuccess)
		return 3;
	e = cudaMemcpy(out.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
	if (e != cudaSuccess) {
		printf("copy: %d %s\n", (int)e, cudaGetErrorName(e));
		return 3;
	}
	for (int i = 0; i < n; i++) {
		float want = a * x[i] + y[i];
		if (std::fabs(out[i] - want) > 1e-5f * std::fabs(want)) {
			printf("saxpy: mismatch at %d: %g != %g\n", i, out[i], want);
			return 4;
		}
	}
	printf("saxpy: ok (%d values)\n", n);
	return 0;
}
