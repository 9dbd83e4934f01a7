# SPDX-License-Identifier: Apache-2.0
# import torch + first CUDA op; prints the wall time of both in seconds.
import time
t0 = time.perf_counter()
import torch  # noqa: E402
x = torch.ones(16, device="cuda") * 2
torch.cuda.synchronize()
assert float(x.sum()) == 32.0
print(f"{time.perf_counter() - t0:.6f}")
