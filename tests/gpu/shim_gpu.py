#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU-machine tests of libkimg.so (issue: catch image-class errors and explain them).

Each case runs a real CUDA program with LD_PRELOAD=libkimg.so, KIMG_FORMAT=json and
KIMG_LOG=<file>, then asserts on the program's own error and on kimg's JSON report.
The device's compute capability is read (nvidia-smi, gpulib.device_sm); "wrong"
and "too new" arches are chosen against it. nvcc, PyTorch and CuPy are
prerequisites: missing is a failure. Asserts that it ran EXPECTED checks.
Usage: shim_gpu.py BUILD_DIR WORK_DIR   (prints "N passed, N failed"; exit 1 on failure)
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpulib import Checks, device_sm, find_tool, has_module  # noqa: E402

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src")
LIB = os.path.join(BUILD, "libkimg.so")
NVCC = find_tool("nvcc") or "nvcc"
C = Checks()
check = C.check
MAJOR, MINOR = device_sm(os.path.join(BUILD, "kimg-probe"))
DEV_CC, DEV_SM = f"{MAJOR}.{MINOR}", MAJOR * 10 + MINOR
WRONG = 80 if MAJOR != 8 else 90  # SASS of another major: cannot run here
TOO_NEW = next((t for t in (90, 100, 120, 121) if t > DEV_SM), None)  # a PTX target above the device
# 3 prerequisites + 2 x 7 (cudart) + 1 (drv_load) + 4 x 4 (driver API) + 9 (torch) + 6 (cupy) + 2 (silence)
EXPECTED = 51


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def build(out, *args):
    path = os.path.join(WORK, out)
    if not os.path.exists(path):
        r = sh([NVCC, "-o", path, *args])
        if r.returncode:
            raise RuntimeError(f"build {out} failed: {r.stderr[-800:]}")
    return path


def run_kimg(name, cmd, extra_env=None, log=True):
    logf = os.path.join(WORK, f"{name}.jsonl")
    if os.path.exists(logf):
        os.unlink(logf)
    env = dict(os.environ, LD_PRELOAD=LIB, KIMG_FORMAT="json", KIMG_LOG=logf, CUDA_CACHE_DISABLE="1")
    env.update(extra_env or {})
    r = sh(cmd, env=env)
    reports = []
    if os.path.exists(logf):
        with open(logf) as f:
            reports = [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(WORK, f"{name}.out"), "w") as f:
        f.write(f"$ {' '.join(cmd)}\nrc={r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}\n--- reports\n")
        for rep in reports:
            f.write(json.dumps(rep, indent=1) + "\n")
    return r, reports


def archs(rep):
    return sorted({i["arch"] for i in rep["module"]["images"]})


def expect_report(name, reports, code, call=None, kernel=None, file_part=None, arch=None):
    hits = [r for r in reports if r["error"]["code"] == code and (call is None or r["call"] == call)]
    check(f"{name}: report for error {code}" + (f" at {call}" if call else ""), hits,
          f"got {[(r['error']['code'], r['call']) for r in reports]}")
    # without a report the checks that read it still count, as failures: the total stays fixed
    rep = hits[0] if hits else {"kernel": {}, "module": {"images": []}, "device": {"sm": None}, "fix": None}
    if kernel:
        check(f"{name}: kernel named", kernel in (rep["kernel"].get("name") or "") or
              kernel in (rep["kernel"].get("demangled") or ""), str(rep["kernel"]))
    if file_part:
        check(f"{name}: module file", file_part in (rep["module"].get("file") or ""), str(rep["module"].get("file")))
    if arch:
        check(f"{name}: images listed", arch in archs(rep), str(archs(rep)))
    check(f"{name}: device is {DEV_CC} (nvidia-smi)", rep["device"]["sm"] == DEV_CC, str(rep["device"]))
    check(f"{name}: fix names sm_{DEV_SM}", f"sm_{DEV_SM}" in json.dumps(rep.get("fix")), json.dumps(rep.get("fix")))
    return rep if hits else None


def main():
    os.makedirs(WORK, exist_ok=True)
    print(f"device: SM {DEV_CC}; wrong SASS sm_{WRONG}; too-new PTX target {TOO_NEW}")
    C.need("nvcc", find_tool("nvcc"), "not on PATH nor in /usr/local/cuda/bin")
    C.need("PyTorch", has_module("torch"), f"{sys.executable} cannot import torch")
    C.need("CuPy", has_module("cupy"), f"{sys.executable} cannot import cupy")
    cu = os.path.join(SRC, "wrong_arch.cu")
    g80 = ["-gencode", f"arch=compute_{WRONG},code=sm_{WRONG}"]
    # 1. static cudart (nvcc default) and shared cudart, built for sm_WRONG only
    for kind, flags in (("static", []), ("shared", ["-cudart", "shared"])):
        exe = build(f"wrong_{kind}", *g80, *flags, cu)
        r, reps = run_kimg(f"wrong_{kind}", [exe])
        check(f"{kind} cudart: program still sees 209", "launch: 209" in r.stdout, r.stdout)
        expect_report(f"{kind} cudart", reps, 209, kernel="add_one", file_part=f"wrong_{kind}", arch=f"sm_{WRONG}")
    # 2. driver API: wrong-arch cubin, fatbin, PTX (target too new, ISA too new)
    drv = os.path.join(WORK, "drv_load")
    r = sh(["gcc", "-o", drv, os.path.join(SRC, "drv_load.c"), "-I/usr/local/cuda/include",
            "-L/usr/local/cuda/lib64/stubs", "-lcuda"])
    check("build drv_load", r.returncode == 0, r.stderr)
    kern = os.path.join(os.path.dirname(os.path.dirname(SRC)), "fixtures", "src", "kern.cu")
    cub = build("sm80.cubin", "-cubin", *g80, kern)
    fat = build("sm80.fatbin", "-fatbin", *g80, kern)
    t = TOO_NEW or 121  # none above 12.1: the check below fails, saying so
    ptx100 = build(f"compute{t}.ptx", "-ptx", "-gencode", f"arch=compute_{t},code=compute_{t}", kern)
    ptx99 = os.path.join(WORK, "isa99.ptx")
    with open(ptx99, "w") as f:
        f.write(open(build("compute80.ptx", "-ptx", "-gencode", "arch=compute_80,code=compute_80", kern))
                .read().replace(".version 9.0", ".version 9.9"))
    for name, path, code in ((f"cubin sm_{WRONG}", cub, 209), (f"fatbin sm_{WRONG}", fat, 209),
                             (f"ptx target sm_{t}", ptx100, 218 if TOO_NEW else -1), ("ptx isa 9.9", ptx99, 222)):
        r, reps = run_kimg("drv_" + name.replace(" ", "_"), [drv, path])
        check(f"driver API {name}: program sees {code}", f"cuModuleLoadData: {code}" in r.stdout, r.stdout)
        expect_report(f"driver API {name}", reps, code, call="cuModuleLoadData")
    # 3. PyTorch extension built for an arch list without the device's
    ext_dir = os.path.join(WORK, "torch_ext")
    arch_list, ext_arch = ("8.0;8.6", "sm_86") if MAJOR != 8 else ("9.0", "sm_90")
    r = sh([sys.executable, os.path.join(SRC, "torch_ext.py"), ext_dir, "build-only"],
           env=dict(os.environ, TORCH_CUDA_ARCH_LIST=arch_list))
    check(f"build torch extension ({arch_list})", r.returncode == 0, r.stderr[-800:])
    r, reps = run_kimg("torch_ext", [sys.executable, os.path.join(SRC, "torch_ext.py"), ext_dir],
                       {"TORCH_CUDA_ARCH_LIST": arch_list})
    check("torch extension: python sees the error", r.returncode == 3, r.stdout + r.stderr[-500:])
    rep = expect_report("torch extension", reps, 209, kernel="kimg_add_one_kernel",
                        file_part="kimg_wrong_arch_ext", arch=ext_arch)
    py = (rep or {}).get("python_stack") or []
    check("torch extension: python stack names torch_ext.py",
          any("torch_ext.py" in fr.get("file", "") for fr in py), json.dumps(py)[:300])
    # 4. CuPy RawModule from a wrong-arch cubin
    r, reps = run_kimg("cupy", [sys.executable, os.path.join(SRC, "cupy_cubin.py"), cub])
    check("cupy: program sees the error", r.returncode == 3, r.stdout + r.stderr[-300:])
    expect_report("cupy", reps, 209, file_part="sm80.cubin", arch=f"sm_{WRONG}")
    # 5. good programs: silence
    ok = build("right_static", "-gencode", f"arch=compute_{DEV_SM},code=sm_{DEV_SM}", os.path.join(SRC, "right_arch.cu"))
    r, reps = run_kimg("right_static", [ok])
    check("right-arch program: runs, no report", r.returncode == 0 and not reps and r.stderr == "",
          r.stdout + r.stderr)
    r, reps = run_kimg("train_step", [sys.executable, os.path.join(SRC, "train_step.py")],
                       {"KIMG_LOG": ""})
    check("pytorch training step: succeeds, kimg prints nothing",
          r.returncode == 0 and "loss" in r.stdout and "kimg" not in r.stderr, r.stdout + r.stderr[-800:])
    return C.finish(EXPECTED)


if __name__ == "__main__":
    sys.exit(main())
