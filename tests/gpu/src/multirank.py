# SPDX-License-Identifier: Apache-2.0
# One rank of a torchrun job (tests/gpu/multirank_gpu.sh): set the device as
# a training script does (every rank on cuda:0, one GPU is enough), then call
# a kernel of a library built for the wrong architecture (argv[1]). Exits 0
# when the launch failed with 209, as it must on a GPU that is not SM 8.x.
import ctypes
import os
import sys

import torch

rank = int(os.environ.get("RANK", "-1"))
torch.cuda.set_device(0)
torch.zeros(1, device="cuda")  # the context torch would have anyway
lib = ctypes.CDLL(sys.argv[1])
rc = lib.multirank_launch()
print(f"rank {rank}: multirank_launch: {rc}", flush=True)
sys.exit(0 if rc == 209 else 1)
