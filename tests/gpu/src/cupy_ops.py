# SPDX-License-Identifier: Apache-2.0
# CuPy: an elementwise kernel, a reduction, a matmul and a RawKernel
# compiled by NVRTC: kimg must print nothing.
import cupy as cp

a = cp.arange(1 << 16, dtype=cp.float32)
assert float((a * 2).sum()) == float(a.sum()) * 2
m = cp.ones((256, 256), dtype=cp.float32)
assert float((m @ m)[0, 0]) == 256.0
k = cp.RawKernel(r'extern "C" __global__ void inc(float *x) { x[threadIdx.x] += 1.0f; }', "inc")
k((1,), (32,), (a,))
cp.cuda.Device().synchronize()
print("cupy ok")
