# SPDX-License-Identifier: Apache-2.0
# NCCL all-reduce through torch.distributed: one process (no launcher), or
# each rank of torchrun (one GPU per rank). NCCL probes its kernels for
# other GPUs (sm_100f) and ignores the 209s: kimg must print nothing.
import os

import torch
import torch.distributed as dist

if "RANK" not in os.environ:
    os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29517")
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
dist.init_process_group("nccl")
t = torch.ones(1 << 20, device="cuda") * (rank + 1)
dist.all_reduce(t)
torch.cuda.synchronize()
want = world * (world + 1) / 2
assert float(t[0]) == want, (float(t[0]), want)
dist.destroy_process_group()
print(f"allreduce ok rank {rank} of {world}")
