# SPDX-License-Identifier: Apache-2.0
# matmul, conv2d, SDPA and Linear in fp32, fp16 and bf16 (run with
# CUDA_MODULE_LOADING=EAGER: every module of cuDNN and cuBLAS is loaded,
# those for other GPUs fail inside the libraries): kimg must print nothing.
import torch
import torch.nn.functional as F

torch.manual_seed(0)
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    a = torch.randn(256, 256, device="cuda", dtype=dtype)
    (a @ a).sum().item()
    x = torch.randn(8, 16, 32, 32, device="cuda", dtype=dtype)
    w = torch.randn(32, 16, 3, 3, device="cuda", dtype=dtype)
    F.conv2d(x, w, padding=1).sum().item()
    q = torch.randn(2, 4, 128, 64, device="cuda", dtype=dtype)
    F.scaled_dot_product_attention(q, q, q).sum().item()
    lin = torch.nn.Linear(256, 128, device="cuda", dtype=dtype)
    lin(a).sum().item()
torch.cuda.synchronize()
print("mixed ok")
