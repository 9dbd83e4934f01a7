# SPDX-License-Identifier: Apache-2.0
# A PyTorch C++/CUDA extension built with TORCH_CUDA_ARCH_LIST excluding this GPU (set by the caller).
import os
import sys
import torch
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <c10/cuda/CUDAException.h>
__global__ void kimg_add_one_kernel(float *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1.0f;
}
torch::Tensor add_one(torch::Tensor t) {
    kimg_add_one_kernel<<<(t.numel() + 255) / 256, 256>>>(t.data_ptr<float>(), t.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return t;
}
"""
cpp_src = "torch::Tensor add_one(torch::Tensor t);"
build_dir = sys.argv[1]
os.makedirs(build_dir, exist_ok=True)
ext = load_inline(name="kimg_wrong_arch_ext", cpp_sources=cpp_src, cuda_sources=cuda_src,
                  functions=["add_one"], build_directory=build_dir, verbose=False)
if len(sys.argv) > 2 and sys.argv[2] == "build-only":
    sys.exit(0)
t = torch.zeros(1024, device="cuda")
try:
    ext.add_one(t)
    torch.cuda.synchronize()
    print("ran")
except RuntimeError as e:
    print("error:", str(e).splitlines()[0])
    sys.exit(3)
