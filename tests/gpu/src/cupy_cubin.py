# SPDX-License-Identifier: Apache-2.0
# CuPy loading a wrong-arch cubin (path in argv[1]) with RawModule; the lookup must fail with 209.
import sys
import cupy

mod = cupy.RawModule(path=sys.argv[1])
try:
    fn = mod.get_function("axpy")
    print("loaded", fn)
except Exception as e:  # cupy_backends.cuda.api.driver.CUDADriverError
    print("error:", e)
    sys.exit(3)
