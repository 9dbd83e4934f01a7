# SPDX-License-Identifier: Apache-2.0
# A stock PyTorch op under CUDA_FORCE_PTX_JIT=1: libtorch_cuda has no PTX
# for this GPU, so the op fails (PyTorch releases the GIL around it). The
# report's python_stack must name this file and the line below.
import torch


def make():
    return torch.ones(4, device="cuda")  # line 8


try:
    make()
    torch.cuda.synchronize()
    print("no error")
except Exception as e:  # noqa: BLE001
    print("error:", str(e).splitlines()[0])
    raise SystemExit(3)
