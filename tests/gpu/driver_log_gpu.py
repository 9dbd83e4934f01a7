#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU-machine tests of issue 29: the symbol lookups, the driver's error log, the safety
net and ptxas's reason, with the real driver (12.9 or newer: the error log API).

  1. A symbol-first program (src/symbol_first.cu: its __constant__ table filled with
     cudaMemcpyToSymbol before the first launch), built for sm_80 only (or another major
     than the device's), static and shared cudart: exit status 1 unchanged, one report
     from cuLibraryGetGlobal naming the symbol, this file and its image, with the driver's
     "Returning 209 ... from cuLibraryGetGlobal" in driver_log.
  2. driver_log on a real 209 launch (src/wrong_arch.cu): the driver's three lines.
  3. ptxas's reason on a real 222 (PTX with .version 9.9) and a real 218 (PTX for a target
     above the device), loaded with cuModuleLoadData and no JIT log buffer: jit_log from
     kimg's re-compile; KIMG_PTXAS_REASON=0 leaves it out.
  4. The safety net on an unhooked call (src/unhooked.c: cuLibraryGetKernelCount and the
     others kimg does not hook, on a library with no fitting code): one report at the
     failing exit, safety_net set.
  5. Healthy workloads silent, with the callback registered and a failing exit status
     (PyTorch, NCCL, EAGER loading, JAX, CuPy from tests/gpu/src): no report, nothing of the
     driver's log on stderr.
  6. The callback's cost: the launch loop (bench/shim/launch_loop.cu) and `import torch` + a first
     CUDA op, KIMG_DRIVER_LOG=1 against KIMG_DRIVER_LOG=0 in the same run, medians of 7:
     goals <= 1.01x and <= 1.02x. The figures are printed.

Usage: driver_log_gpu.py BUILD_DIR WORK_DIR
Prints PASS/FAIL per check and "N passed, M failed" (gpulib.Checks); exit 1 on any failure.
A missing prerequisite (nvcc, PyTorch, JAX, CuPy, a 12.9+ driver) is a FAIL, said.
"""
import json
import os
import re
import statistics
import subprocess
import sys

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src")
KERN = os.path.join(os.path.dirname(HERE), "fixtures", "src", "kern.cu")
CONSTTAB = os.path.join(os.path.dirname(HERE), "fixtures", "src", "consttab.cu")
LIB = os.path.join(BUILD, "libkimg.so")
sys.path.insert(0, HERE)
from gpulib import Checks, device_sm, find_tool, has_module  # noqa: E402

C = Checks()
os.makedirs(WORK, exist_ok=True)
MAJOR, MINOR = device_sm(os.path.join(BUILD, "kimg-probe"))
DEV = MAJOR * 10 + MINOR
WRONG = 80 if MAJOR != 8 else 90                      # a cubin of another major
TOO_NEW = next((t for t in (90, 100, 120, 121) if t > DEV), 121)  # a PTX target above the device
NVCC = find_tool("nvcc") or "nvcc"
EXPECTED = 44


def sh(cmd, env=None, timeout=900):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def build(out, *args):
    rc, _, err = sh([NVCC, "-Wno-deprecated-gpu-targets", "-o", os.path.join(WORK, out), *args])
    return C.check(f"build {out}", rc == 0, err[-400:])


def run_kimg(name, cmd, extra=None, timeout=900):
    """Under libkimg with JSON reports to WORK/name.jsonl: (rc, out, err, reports)."""
    logf = os.path.join(WORK, f"{name}.jsonl")
    if os.path.exists(logf):
        os.unlink(logf)
    env = dict(os.environ, LD_PRELOAD=LIB, KIMG_FORMAT="json", KIMG_LOG=logf)
    env.update(extra or {})
    try:
        rc, out, err = sh(cmd, env, timeout)
    except subprocess.TimeoutExpired:
        rc, out, err = 124, "", "(timeout)"
    reports = []
    if os.path.exists(logf):
        with open(logf) as f:
            reports = [json.loads(line) for line in f if line.lstrip().startswith("{")]
    with open(os.path.join(WORK, f"{name}.out"), "w") as f:
        f.write(f"$ {' '.join(cmd)}\nrc={rc}\n--- stdout\n{out}\n--- stderr\n{err}\n--- reports\n")
        for r in reports:
            f.write(json.dumps(r) + "\n")
    return rc, out, err, reports


def show(r):
    """The report's lines that matter here, for the note."""
    keys = ("call", "symbol", "driver_log", "jit_log", "jit_log_from", "safety_net")
    return json.dumps({k: r.get(k) for k in keys if k in r} | {"error": r["error"]["code"]})


def plain(cmd, extra=None):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update(extra or {})
    return sh(cmd, env)


C.need("nvcc", find_tool("nvcc"), "not on PATH nor in /usr/local/cuda/bin")
C.need("libkimg.so", os.path.isfile(LIB), f"{LIB} not built")
rc, out, _ = sh([os.path.join(BUILD, "kimg-probe"), "device", "--json"])
try:
    drv = json.loads(out)["driver"]["cuda_version"]
    drv_ok = tuple(int(x) for x in drv.split(".")[:2]) >= (12, 9)
except (ValueError, KeyError, AttributeError):
    drv, drv_ok = "?", False
C.need("a driver with the error log API (CUDA 12.9+)", drv_ok, f"driver CUDA version {drv}")

# ---- 1. the symbol-first program ----
gen_wrong = f"-gencode=arch=compute_{WRONG},code=sm_{WRONG}"
for cudart in ("static", "shared"):
    exe = f"symfirst_{cudart}"
    if not build(exe, gen_wrong, f"-cudart={cudart}", os.path.join(SRC, "symbol_first.cu")):
        continue
    prc, pout, _ = plain([os.path.join(WORK, exe)])
    rc, out, err, R = run_kimg(exe, [os.path.join(WORK, exe)])
    C.check(f"symbol-first ({cudart} cudart): 209 at cudaMemcpyToSymbol, exit 1, as without kimg",
            rc == prc == 1 and "cudaMemcpyToSymbol: 209" in out and out == pout, out + pout)
    g = [r for r in R if r.get("symbol")]
    C.check(f"symbol-first ({cudart}): one report from cuLibraryGetGlobal naming coeffs, this file, sm_{WRONG}",
            len(R) == 1 and g and g[0]["call"] == "cuLibraryGetGlobal" and g[0]["symbol"]["name"] == "coeffs"
            and (g[0]["module"]["file"] or "").endswith(exe)
            and [i["arch"] for i in g[0]["module"]["images"]] == [f"sm_{WRONG}"], json.dumps(R)[:800])
    C.check(f"symbol-first ({cudart}): driver_log ends with the driver's Returning 209 from cuLibraryGetGlobal",
            g and (g[0].get("driver_log") or [""])[-1] == "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetGlobal",
            json.dumps(R)[:800])
    if g:
        print("   report:", show(g[0]))
# the same program with code for the device: silent
if build("symfirst_native", "-arch=native", os.path.join(SRC, "symbol_first.cu")):
    rc, out, err, R = run_kimg("symfirst_native", [os.path.join(WORK, "symfirst_native")])
    C.check("symbol-first with native code: runs (exit 0), no report", rc == 0 and R == [], out + json.dumps(R)[:300])

# ---- 2. driver_log on a real 209 launch ----
if build("wrong_launch", gen_wrong, os.path.join(SRC, "wrong_arch.cu")):
    rc, out, err, R = run_kimg("wrong_launch", [os.path.join(WORK, "wrong_launch")])
    k = [r for r in R if r["call"] == "cuLibraryGetKernel"]
    dl = k[0].get("driver_log", []) if k else []
    C.check("real 209: the report's driver_log has the driver's three lines",
            len(dl) >= 3 and dl[-1] == "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel"
            and any(l.startswith("No device code available for GPU ISA") for l in dl)
            and any("cannot be found in library due to compilation error" in l for l in dl), json.dumps(R)[:800])
    C.check("real 209: no noise line (201 from cuCtxGetDevice) in driver_log", dl and not any(" 201 " in l for l in dl), dl)
    if k:
        print("   report:", show(k[0]))
    r0, o0, _, R0 = run_kimg("wrong_launch_nolog", [os.path.join(WORK, "wrong_launch")], {"KIMG_DRIVER_LOG": "0"})
    C.check("KIMG_DRIVER_LOG=0: the same report without driver_log",
            R0 and len(R0) == len(R) and all("driver_log" not in r for r in R0), json.dumps(R0)[:300])
    # text: "driver said:"
    env = dict(os.environ, LD_PRELOAD=LIB, KIMG_LOG="")
    rc, _, err = sh([os.path.join(WORK, "wrong_launch")], env)
    C.check("real 209, text report: 'driver said:' lines", "kimg:   driver said: Returning 209" in err, err[-600:])

# ---- 3. ptxas's reason on a real 222 and 218 ----
ok_ptx = build("native.ptx", "-ptx", "-arch=native", KERN)
ok_new = build("too_new.ptx", "-ptx", f"-arch=compute_{TOO_NEW}", KERN)
cc = find_tool("gcc") or "gcc"
rc, _, err = sh([cc, "-o", os.path.join(WORK, "drv_load"), os.path.join(SRC, "drv_load.c"),
                 "-I/usr/local/cuda/include", "-L/usr/local/cuda/lib64/stubs", "-lcuda", "-ldl"])
C.check("build drv_load", rc == 0, err[-300:])
if ok_ptx:
    with open(os.path.join(WORK, "native.ptx")) as f:
        text = f.read()
    with open(os.path.join(WORK, "v99.ptx"), "w") as f:
        f.write(re.sub(r"^\.version\s+\S+", ".version 9.9", text, count=1, flags=re.M))
for name, ptx, code, words in (("p222", "v99.ptx", 222, "Unsupported .version"),
                               ("p218", "too_new.ptx", 218, "SM version specified by .target is higher")):
    path = os.path.join(WORK, ptx)
    rc, out, err, R = run_kimg(name, [os.path.join(WORK, "drv_load"), path])
    r = next((x for x in R if x["error"]["code"] == code), None)
    C.check(f"real {code}: cuModuleLoadData gives {code}, unchanged", f"cuModuleLoadData: {code}" in out, out)
    C.check(f"real {code}: jit_log from kimg's re-compile quotes ptxas ({words})",
            r is not None and r.get("jit_log_from") == "kimg" and words in (r.get("jit_log") or ""), json.dumps(R)[:800])
    C.check(f"real {code}: driver_log has the load's own lines only (no second compile's)",
            r is not None and (r.get("driver_log") or [""])[-1].endswith("from cuModuleLoadData")
            and not any("cuModuleLoadDataEx" in l for l in r.get("driver_log", [])), json.dumps(R)[:800])
    if r:
        print("   report:", show(r))
    rc, out, err, R = run_kimg(name + "_off", [os.path.join(WORK, "drv_load"), path], {"KIMG_PTXAS_REASON": "0"})
    C.check(f"real {code}, KIMG_PTXAS_REASON=0: no jit_log", R and all("jit_log" not in x for x in R), json.dumps(R)[:300])

# ---- 4. the safety net on an unhooked call ----
if build("consttab_wrong.fatbin", "-fatbin", gen_wrong, CONSTTAB):
    rc, _, err = sh([cc, "-o", os.path.join(WORK, "unhooked"), os.path.join(SRC, "unhooked.c"),
                     "-I/usr/local/cuda/include", "-L/usr/local/cuda/lib64/stubs", "-lcuda", "-ldl"])
    C.check("build unhooked", rc == 0, err[-300:])
    rc, out, err, R = run_kimg("unhooked", [os.path.join(WORK, "unhooked"), os.path.join(WORK, "consttab_wrong.fatbin")])
    print("   unhooked calls:", "; ".join(out.splitlines()))
    failing = [l.split(":")[0] for l in out.splitlines() if re.match(r"\w+: (200|209|218|222|300)$", l)]
    C.check("an unhooked entry point fails with an image-class code on this driver", failing, out)
    net = [r for r in R if r.get("safety_net")]
    C.check("the safety net reports it at the failing exit, once, with the driver's line",
            len(net) == 1 and failing and net[0]["call"] == failing[0]
            and net[0]["safety_net"]["exit_status"] == 1 and net[0].get("driver_log"), json.dumps(R)[:800])
    if net:
        print("   report:", show(net[0]))

# ---- 5. healthy workloads silent, with a failing exit ----
C.need("PyTorch", has_module("torch"), "python3 cannot import torch")
healthy = [
    ("torch", [sys.executable, "-c", "import torch, sys; x = torch.randn(256, 256, device='cuda'); "
               "(x @ x).sum().item(); sys.exit(3)"], {}),
    ("eager", [sys.executable, os.path.join(SRC, "mixed_eager.py")], {"CUDA_MODULE_LOADING": "EAGER"}),
    ("nccl", [sys.executable, os.path.join(SRC, "nccl_allreduce.py")], {}),
    ("jax", [sys.executable, os.path.join(SRC, "jax_ops.py")], {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}),
    ("cupy", [sys.executable, os.path.join(SRC, "cupy_ops.py")], {}),
]
for name, cmd, extra in healthy:
    if name in ("jax", "cupy") and not C.need(name, has_module(name), f"python3 cannot import {name}"):
        continue
    rc, out, err, R = run_kimg("healthy_" + name, cmd, extra)
    want_rc = 3 if name == "torch" else 0
    C.check(f"healthy {name}: exit {want_rc}, no report, nothing of the driver's log on stderr",
            rc == want_rc and R == [] and "Returning" not in err and "driver said" not in err,
            f"rc={rc} {json.dumps(R)[:400]} {err[-300:]}")

# ---- 6. the callback's cost ----
def medians(cmd, n, parse):
    on, off = [], []
    for i in range(n):
        for flag, acc in (("1", on), ("0", off)) if i % 2 == 0 else (("0", off), ("1", on)):
            env = dict(os.environ, LD_PRELOAD=LIB, KIMG_DRIVER_LOG=flag, KIMG_LOG=os.devnull)
            acc.append(parse(*sh(cmd, env)))
    return statistics.median(on), statistics.median(off)


def last_number(rc, out, err):
    try:
        return float(out.strip().splitlines()[-1]) if rc == 0 else float("nan")
    except (IndexError, ValueError):
        return float("nan")


LOOP = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench", "shim", "launch_loop.cu")
if build("launch_loop", "-O2", "-arch=native", LOOP):
    on, off = medians([os.path.join(WORK, "launch_loop"), "200000"], 7, last_number)
    ratio = on / off if off else float("nan")
    print(f"   launch loop, 200000 launches, seconds per launch, median of 7: KIMG_DRIVER_LOG=1 {on:.3e}, "
          f"=0 {off:.3e}, ratio {ratio:.4f}")
    C.check("callback cost on the launch loop <= 1.01x (median)", ratio <= 1.01, f"{ratio:.4f}")
torch_cmd = [sys.executable, "-c", "import time; t = time.perf_counter(); import torch; torch.zeros(1, device='cuda'); "
             "torch.cuda.synchronize(); print(time.perf_counter() - t)"]
on, off = medians(torch_cmd, 7, last_number)
ratio = on / off if off else float("nan")
print(f"   import torch + first op, median of 7: KIMG_DRIVER_LOG=1 {on:.4f} s, =0 {off:.4f} s, ratio {ratio:.4f}")
C.check("callback cost on import torch <= 1.02x (median)", ratio <= 1.02, f"{ratio:.4f}")

sys.exit(C.finish(EXPECTED))
