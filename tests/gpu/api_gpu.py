#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The can-it-run API on the GPU machine (issue 26), with sm="native":

1. kimg.can_run on PyTorch's own libtorch_cuda.so: runs, no error; the same
   verdicts as `kimg-probe check --sm native --json` of that file; and
   kimg.can_run_module(torch._C) answers without error.
2. A wrong-arch extension (tests/gpu/src/wrong_arch.cu as a shared object
   with an extern "C" launcher, built for an SM of another major than the
   device): can_run says runs=False with error 209, and the driver agrees:
   loading it with ctypes and launching gives 209 (cudaErrorNoKernelImageForDevice
   is runtime error 209). The right-arch build of the same source runs and
   can_run says so.
3. The C API (build/tests/api_ask) on libtorch_cuda.so and the wrong-arch
   extension: the Python answers.
4. doctor on the stock environment: still exits 0 with the new sections
   (toolchains, jit_caches, cuda_environment) present, every Triton ptxas
   found judged, no stale cache; no slower than doctor_gpu.sh's 2 s warm goal.

Run: python3 tests/gpu/api_gpu.py BUILD WORKDIR (from the repository root,
after make all and make wheel is not needed: KIMG_API_LIB points at BUILD).
Prints "N passed, M failed".
"""
import ctypes
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpulib import Checks, device_sm, find_tool, has_module  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
WORK = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(BUILD, "gpu-work"))
PROBE = os.path.join(BUILD, "kimg-probe")
os.environ["KIMG_API_LIB"] = os.path.join(BUILD, "libkimgapi.so")
os.environ["KIMG_PROBE"] = PROBE
sys.path.insert(0, os.path.join(ROOT, "packaging", "python"))
import kimg  # noqa: E402

C = Checks()
MAJOR, MINOR = device_sm(PROBE)
WRONG = 80 if MAJOR != 8 else 90
RIGHT = MAJOR * 10 + MINOR

EXT_SRC = r"""
#include <cstdio>
__global__ void add_one(int *v) { v[threadIdx.x] += 1; }
extern "C" int kimg_launch(void)
{
	int *d = nullptr;
	cudaMalloc(&d, 32 * sizeof(int));
	add_one<<<1, 32>>>(d);
	cudaError_t e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	cudaFree(d);
	return (int)e;
}
"""


def build_ext(name, sm):
    os.makedirs(WORK, exist_ok=True)
    src = os.path.join(WORK, "api_ext.cu")
    with open(src, "w") as f:
        f.write(EXT_SRC)
    out = os.path.join(WORK, name)
    r = subprocess.run([find_tool("nvcc"), "-shared", "-Xcompiler", "-fPIC",
                        "-gencode", f"arch=compute_{sm},code=sm_{sm}", "-o", out, src],
                       capture_output=True, text=True)
    C.check(f"nvcc builds {name} (sm_{sm})", r.returncode == 0, r.stderr[-400:])
    return out


def launch_in_child(path):
    """The driver's answer, in a fresh process: the extension's launch status."""
    code = ("import ctypes, sys; l = ctypes.CDLL(sys.argv[1]); print(l.kimg_launch())")
    r = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=120)
    try:
        return int(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def verdicts(doc_modules):
    return [[(v["sm"], v["outcome"], v["image"], v["rule"], v["expected_error"], v["fate"]) for v in m["verdicts"]]
            for m in doc_modules]


def main():
    print(f"device: SM {MAJOR}.{MINOR}; wrong-arch build sm_{WRONG}")
    C.need("nvcc", find_tool("nvcc"), "not on PATH nor in /usr/local/cuda/bin")
    C.need("PyTorch", has_module("torch"), f"{sys.executable} cannot import torch")
    import torch
    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so")
    C.need("libtorch_cuda.so", os.path.isfile(lib), lib)
    # 1. PyTorch's own library
    t0 = time.monotonic()
    a = kimg.can_run(lib)
    dt = time.monotonic() - t0
    print(f"can_run(libtorch_cuda.so): runs={a.runs} error={a.error} in {dt:.3f} s: {a.reason}")
    C.check("can_run(libtorch_cuda.so) on this GPU: runs, no error", a.runs and a.error is None, a.reason)
    r = subprocess.run([PROBE, "check", "--sm", "native", "--json", lib], capture_output=True, text=True)
    p = json.loads(r.stdout)
    C.check("its verdicts are kimg-probe check --sm native's", verdicts(a.modules) == verdicts(p["files"][0]["modules"]),
            "differ")
    C.check("its targets are this machine's GPUs (index, driver version)",
            [(t["sm"], t["index"], t["driver_cuda_version"]) for t in a.targets] ==
            [(t["sm"], t["index"], t["driver_cuda_version"]) for t in p["targets"]], a.targets)
    try:
        m = kimg.can_run_module(torch._C)
        C.check("can_run_module(torch._C) answers (runs)", m.runs, m.reason)
    except kimg.KimgError as e:
        C.check("can_run_module(torch._C) answers", False, e)
    # 2. a wrong-arch extension, and the driver's own answer
    wrong = build_ext(f"api_wrong_sm{WRONG}.so", WRONG)
    right = build_ext(f"api_right_sm{RIGHT}.so", RIGHT)
    aw, ar = kimg.can_run(wrong), kimg.can_run(right)
    print(f"wrong: {aw.reason}\n  fix: {aw.fix}\nright: {ar.reason}")
    C.check("can_run(wrong-arch extension): runs=False, error 209", not aw.runs and aw.error == 209, aw.reason)
    C.check("the driver agrees: its launch gives 209", launch_in_child(wrong) == 209, "launch status")
    C.check("can_run(right-arch extension): runs", ar.runs and ar.error is None, ar.reason)
    C.check("the driver agrees: its launch succeeds", launch_in_child(right) == 0, "launch status")
    handle = ctypes.CDLL(wrong)
    mod = kimg.can_run_module(handle)
    C.check("can_run_module(ctypes.CDLL(wrong)) is can_run(wrong)", (mod.runs, mod.error) == (False, 209), mod.reason)
    # 3. the C API
    ask = os.path.join(BUILD, "tests", "api_ask")
    if not os.path.exists(ask):
        subprocess.run(["make", f"BUILD={BUILD}", ask], cwd=ROOT, capture_output=True)
    for path, want in ((lib, "0 1 0"), (wrong, "0 0 209")):
        r = subprocess.run([ask, path, "native"], capture_output=True, text=True)
        C.check(f"C API on {os.path.basename(path)}: {want}", r.stdout.splitlines()[:1] == [want], r.stdout[:300])
    # 4. doctor on the stock environment
    r = subprocess.run([PROBE, "doctor", "--json"], capture_output=True, text=True)
    d = json.loads(r.stdout) if r.stdout.strip() else {}
    C.check("doctor on the stock environment: exit 0, ok", r.returncode == 0 and d.get("ok") is True,
            r.stderr[-300:] + json.dumps(d.get("summary")))
    C.check("doctor --json has toolchains, jit_caches, cuda_environment",
            all(k in d for k in ("toolchains", "jit_caches", "cuda_environment")), sorted(d))
    tr = [t for t in d.get("toolchains", []) if t["kind"] == "triton_ptxas"]
    print("toolchains:", [(t["kind"], t["release"], t["cannot_target"], t["path"]) for t in d.get("toolchains", [])])
    print("jit caches:", [(c["name"], c["exists"], c["files_checked"], c["stale_count"]) for c in d.get("jit_caches", [])])
    C.check("Triton's ptxas found (torch ships Triton) and judged with its release",
            not has_module("triton") or (tr and all(t["release"] for t in tr)), tr)
    warm = []
    for _ in range(3):
        t0 = time.monotonic()
        subprocess.run([PROBE, "doctor", "--json"], capture_output=True)
        warm.append(time.monotonic() - t0)
    warm.sort()
    print(f"doctor warm: {warm[1]:.3f} s (median of 3)")
    C.check("doctor warm median under 2 s (doctor_gpu.sh's goal) with the new sections", warm[1] < 2.0, warm)
    return C.finish(20)


if __name__ == "__main__":
    sys.exit(main())
