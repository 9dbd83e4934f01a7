# SPDX-License-Identifier: Apache-2.0
# The driver's JIT linker through cuda.bindings (cuda-python), as numba-cuda
# and CuPy use it: link_bindings.py PTX NAME -> prints "cuLinkAddData: N".
import sys

try:
    from cuda.bindings import driver as cu
except ImportError:
    try:
        from cuda import cuda as cu  # cuda-python < 12.6
    except ImportError:
        print("cuda-python is not installed (pip install cuda-python)")
        raise SystemExit(4)


def check(res):
    err = res[0]
    if int(err) != 0:
        raise RuntimeError(f"{err}")
    return res[1:] if len(res) > 1 else None


check(cu.cuInit(0))
(dev,) = check(cu.cuDeviceGet(0))
(ctx,) = check(cu.cuDevicePrimaryCtxRetain(dev))
check(cu.cuCtxSetCurrent(ctx))
(state,) = check(cu.cuLinkCreate(0, [], []))
ptx = open(sys.argv[1], "rb").read() + b"\0"
res = cu.cuLinkAddData(state, cu.CUjitInputType.CU_JIT_INPUT_PTX, ptx, len(ptx), sys.argv[2].encode(), 0, [], [])
print("cuLinkAddData:", int(res[0]))
cu.cuLinkDestroy(state)
