#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU-machine tests of KIMG_FALLBACK and KIMG_AUDIT (project issue 4).

Cases (all with CUDA_CACHE_DISABLE=1, so nothing passes from the JIT cache):
  - y = a*x + y on 1M floats from a program whose only image is compute_100 PTX, on the
    sm_90 GPU under KIMG_FALLBACK=ptx: static cudart, shared cudart, and cuModuleLoadData
    (driver API); results checked on the host; without kimg the same programs fail.
  - PTX whose .version (9.9) is above the driver's limit, through cuModuleLoadData.
  - an sm_80-only program: reported as not rescuable, keeps its original error (209).
  - force-ptx on a program with sm_90 SASS + compute_90 PTX: still correct.
  - KIMG_AUDIT=1 KIMG_ON_ERROR=exit:3: a Python process importing a PyTorch extension built
    for 8.0;8.6 exits with status 3 inside the import, with the report.
  - cost of KIMG_AUDIT=1 on `import torch` + first CUDA op (interleaved, median of 7),
    bounded: median with the audit / median without kimg <= KIMG_GPU_AUDIT_BOUND (1.10);
    the JIT time of each fallback case, printed as "measure:" lines.
The device's SM is read (nvidia-smi); arches are chosen against it. nvcc and
PyTorch are prerequisites (missing: a failure). Asserts it ran EXPECTED checks.
Usage: fallback_gpu.py BUILD_DIR WORK_DIR   (prints "N passed, N failed"; exit 1 on failure)
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpulib import Checks, device_sm, find_tool, has_module  # noqa: E402

SRC = os.path.join(HERE, "src")
LIB = os.path.join(BUILD, "libkimg.so")
C = Checks()
MAJOR, MINOR = device_sm(os.path.join(BUILD, "kimg-probe"))
DEV_SM = MAJOR * 10 + MINOR
WRONG = 80 if MAJOR != 8 else 90
TOO_NEW = next((t for t in (90, 100, 120, 121) if t > DEV_SM), 121)
AUDIT_BOUND = float(os.environ.get("KIMG_GPU_AUDIT_BOUND", "1.10"))
# 2 prerequisites + 2 x 5 (runtime fallback) + 1 (fb_drv) + 2 x 5 (driver fallback) + 2 (sm_WRONG)
# + 1 (force-ptx) + 5 (audit import) + 2 (audit cost)
EXPECTED = 33


# CUDA version the driver reports -> the highest PTX ISA it accepts:
# docs/rules.md §4 (NVIDIA's PTX ISA release
# history; 12.6 -> 8.5 from XLA-16504). Typed here, not read from kimg.
DRIVER_CUDA_TO_PTX_ISA = {
    (11, 8): "7.8", (12, 0): "8.0", (12, 1): "8.1", (12, 2): "8.2", (12, 3): "8.3", (12, 4): "8.4",
    (12, 5): "8.5", (12, 6): "8.5", (12, 7): "8.6", (12, 8): "8.7", (12, 9): "8.8", (13, 0): "9.0",
    (13, 1): "9.1", (13, 2): "9.2",
}


def driver_ptx_isa():
    """The driver's PTX ISA from nvidia-smi's "CUDA Version: X.Y" by the table above;
    a version outside it (or no nvidia-smi) raises: no guess."""
    r = subprocess.run(["nvidia-smi"], capture_output=True, text=True)
    m = re.search(r"CUDA Version: (\d+)\.(\d+)", r.stdout)
    if not m:
        raise RuntimeError("nvidia-smi printed no 'CUDA Version: X.Y' (rc %d)" % r.returncode)
    key = (int(m.group(1)), int(m.group(2)))
    if key not in DRIVER_CUDA_TO_PTX_ISA:
        raise RuntimeError("driver CUDA %d.%d is not in DRIVER_CUDA_TO_PTX_ISA: add its row" % key)
    return DRIVER_CUDA_TO_PTX_ISA[key]


def sh(cmd, timeout=120, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or "", (e.stderr or "") + "\n[timeout]")


check = C.check


def build(out, *args):
    path = os.path.join(WORK, out)
    if not os.path.exists(path):
        r = sh([find_tool("nvcc") or "nvcc", "-Wno-deprecated-gpu-targets", "-o", path, *args])
        if r.returncode:
            check(f"build {out}", False, r.stderr[-800:])
            return None
    return path


def run(name, cmd, env_extra=None, kimg=True, timeout=120):
    logf = os.path.join(WORK, f"{name}.jsonl")
    if os.path.exists(logf):
        os.unlink(logf)
    env = dict(os.environ, CUDA_CACHE_DISABLE="1")
    if kimg:
        env.update(LD_PRELOAD=LIB, KIMG_FORMAT="json", KIMG_LOG=logf)
    env.update(env_extra or {})
    r = sh(cmd, timeout=timeout, env=env)
    reps = []
    if os.path.exists(logf):
        with open(logf) as f:
            reps = [json.loads(line) for line in f if line.strip().startswith("{")]
    with open(os.path.join(WORK, f"{name}.out"), "w") as f:
        f.write(f"$ {' '.join(cmd)}\nrc={r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}\n--- reports\n")
        for rep in reps:
            f.write(json.dumps(rep, indent=1) + "\n")
    return r, reps


def fallback_case(name, cmd, ok_line, target=None, version=None, mode="ptx"):
    """Runs cmd without and with the fallback; asserts the numbers and the report."""
    r0, _ = run(name + "_plain", cmd, kimg=False)
    check(f"{name}: fails without kimg", r0.returncode != 0 and ok_line not in r0.stdout, r0.stdout + r0.stderr)
    r, reps = run(name, cmd, {"KIMG_FALLBACK": mode})
    check(f"{name}: runs under KIMG_FALLBACK={mode}, results correct", r.returncode == 0 and ok_line in r.stdout,
          r.stdout + r.stderr[-600:])
    fb = [x for x in reps if x.get("fallback", {}).get("applied")]
    check(f"{name}: fallback reported", len(fb) >= 1, json.dumps(reps)[:800])
    # without a report the checks that read it still count, as failures: the total stays fixed
    f = fb[0]["fallback"] if fb else {"rewritten": {}}
    if target:
        check(f"{name}: .target {target[0]} -> {target[1]}",
              f["rewritten"].get("target") == {"from": target[0], "to": target[1]}, json.dumps(f))
    if version:
        check(f"{name}: .version {version[0]} -> {version[1]}",
              f["rewritten"].get("version") == {"from": version[0], "to": version[1]}, json.dumps(f))
    check(f"{name}: warning present", "__CUDA_ARCH__" in (f.get("warning") or ""), json.dumps(f))
    if fb:
        print(f"measure: JIT {name}: {f['jit_ms']} ms (call {fb[0]['call']})", flush=True)


def median_time(cmd, env):
    t0 = time.monotonic()
    r = sh(cmd, timeout=120, env=env)
    return time.monotonic() - t0, r


def main():
    os.makedirs(WORK, exist_ok=True)
    print(f"device: SM {MAJOR}.{MINOR}; PTX target above it compute_{TOO_NEW}; wrong SASS sm_{WRONG}", flush=True)
    C.need("nvcc", find_tool("nvcc"), "not on PATH nor in /usr/local/cuda/bin")
    C.need("PyTorch", has_module("torch"), f"{sys.executable} cannot import torch")
    saxpy = os.path.join(SRC, "fb_saxpy.cu")
    ptx100 = ["-gencode", f"arch=compute_{TOO_NEW},code=compute_{TOO_NEW}"]
    lowered = (f"sm_{TOO_NEW}", f"sm_{DEV_SM}")
    # 1. compute_100 PTX only: static and shared cudart
    for kind, flags in (("static", []), ("shared", ["-cudart", "shared"])):
        exe = build(f"saxpy100_{kind}", *ptx100, *flags, saxpy)
        if exe:
            fallback_case(f"compute_{TOO_NEW}-only {kind} cudart", [exe], "saxpy: ok", target=lowered)
    # 2. driver API: compute_100 PTX, and compute_90 PTX with .version 9.9
    drv = os.path.join(WORK, "fb_drv")
    r = sh(["gcc", "-O2", "-o", drv, os.path.join(SRC, "fb_drv.c"), "-I/usr/local/cuda/include",
            "-L/usr/local/cuda/lib64/stubs", "-lcuda", "-lm"])
    check("build fb_drv", r.returncode == 0, r.stderr)
    p100 = build(f"saxpy{TOO_NEW}.ptx", "-ptx", *ptx100, saxpy)
    p80 = build("saxpy80.ptx", "-ptx", "-gencode", "arch=compute_80,code=compute_80", saxpy)
    if p100:
        fallback_case(f"cuModuleLoadData compute_{TOO_NEW} PTX", [drv, p100], "result: ok", target=lowered)
    if p80:
        p99 = os.path.join(WORK, "saxpy_isa99.ptx")
        with open(p80) as f, open(p99, "w") as g:
            g.write(f.read().replace(".version 9.0", ".version 9.9"))
        try:
            isa = driver_ptx_isa()
        except RuntimeError as e:
            isa = None
            check("the driver's PTX ISA known (DRIVER_CUDA_TO_PTX_ISA)", False, str(e))
        if isa:
            fallback_case("cuModuleLoadData .version 9.9", [drv, p99], "result: ok", version=("9.9", isa))
    # 3. SASS of another major only: not rescuable, original error kept
    exe80 = build(f"saxpy{WRONG}", "-gencode", f"arch=compute_{WRONG},code=sm_{WRONG}", saxpy)
    if exe80:
        r, reps = run("sm80_fallback", [exe80], {"KIMG_FALLBACK": "ptx"})
        check(f"sm_{WRONG}-only: program keeps its original error 209", "launch: 209" in r.stdout, r.stdout)
        nr = [x for x in reps if x.get("fallback") and not x["fallback"]["applied"]]
        check(f"sm_{WRONG}-only: reported as not rescuable, with the fix",
              nr and "not rescuable" in nr[0]["fallback"]["result"] and f"sm_{DEV_SM}" in json.dumps(nr[0].get("fix")),
              json.dumps(reps)[:800])
    # 4. force-ptx on a module with SASS for this GPU
    exe90 = build(f"saxpy{DEV_SM}", "-gencode", f"arch=compute_{DEV_SM},code=[sm_{DEV_SM},compute_{DEV_SM}]", saxpy)
    if exe90:
        r, reps = run("force90", [exe90], {"KIMG_FALLBACK": "force-ptx"})
        fb = [x for x in reps if x.get("fallback", {}).get("applied")]
        check("force-ptx: SASS ignored, PTX JIT-compiled, results correct",
              r.returncode == 0 and "saxpy: ok" in r.stdout and fb and fb[0]["fallback"]["mode"] == "force-ptx",
              r.stdout + json.dumps(reps)[:600])
        if fb:
            print(f"measure: JIT force-ptx compute_{DEV_SM}: {fb[0]['fallback']['jit_ms']} ms", flush=True)
    # 5. KIMG_AUDIT on a PyTorch extension built for arches without the device's
    arch_list = "8.0;8.6" if MAJOR != 8 else "9.0"
    ext_dir = os.path.join(WORK, "torch_ext")
    r = sh([sys.executable, os.path.join(SRC, "torch_ext.py"), ext_dir, "build-only"], timeout=240,
           env=dict(os.environ, TORCH_CUDA_ARCH_LIST=arch_list))
    check(f"build torch extension ({arch_list})", r.returncode == 0, r.stderr[-800:])
    # run even when the build failed: its checks then fail and the total stays fixed
    imp = [sys.executable, os.path.join(SRC, "audit_import.py"), ext_dir]
    r, reps = run("audit_import", imp, {"KIMG_AUDIT": "1", "KIMG_ON_ERROR": "exit:3"})
    check("audit: import of the wrong-arch extension exits with status 3", r.returncode == 3,
          f"rc={r.returncode} " + r.stdout + r.stderr[-600:])
    check("audit: it ended inside the import (nothing after it ran)", "imported" not in r.stdout, r.stdout)
    au = [x for x in reps if x.get("audit")]
    check("audit: report with the audit mark, the extension's module and the fix",
          au and "kimg_wrong_arch_ext" in (au[0]["module"].get("file") or "") and au[0].get("fix"),
          json.dumps(reps)[:800])
    if au:
        print(f"measure: audit report at {au[0]['call']}", flush=True)
    r, reps = run("audit_import_off", imp)
    check("audit off: the import succeeds", r.returncode == 0 and "imported" in r.stdout, r.stdout + r.stderr[-400:])
    # 6. cost of the audit: import torch + first CUDA op, interleaved, median of 7
    prog = [sys.executable, "-c", "import torch; t = torch.ones(1024, device='cuda'); t.add_(1); "
            "torch.cuda.synchronize(); print('ok', float(t.sum()))"]
    base = dict(os.environ, CUDA_CACHE_DISABLE="1")
    envs = {"no kimg": base, "kimg": dict(base, LD_PRELOAD=LIB),
            "kimg + KIMG_AUDIT=1": dict(base, LD_PRELOAD=LIB, KIMG_AUDIT="1")}
    times = {k: [] for k in envs}
    sh(prog, env=base)  # warm the page cache
    summary = ""
    for _ in range(7):
        if time.monotonic() - START > DEADLINE_S:
            print(f"measure: audit cost loop stopped at the {DEADLINE_S:.0f} s deadline", flush=True)
            break
        for k, env in envs.items():
            dt, r = median_time(prog, env)
            if r.returncode == 0 and "ok 2048.0" in r.stdout:
                times[k].append(dt)
            if k.endswith("AUDIT=1"):
                summary = "".join(l for l in r.stderr.splitlines(True) if "audit" in l)
    for k, v in times.items():
        if v:
            print(f"measure: import torch + first op, {k}: median {statistics.median(v):.3f} s "
                  f"(n={len(v)}, min {min(v):.3f}, max {max(v):.3f})", flush=True)
    print(f"measure: audit summary: {summary.strip()}", flush=True)
    n_runs = {k: len(v) for k, v in times.items()}
    check("audit cost: every run succeeded", len(set(n_runs.values())) == 1 and min(n_runs.values()) >= 3, n_runs)
    base_t, audit_t = times["no kimg"], times["kimg + KIMG_AUDIT=1"]
    ratio = statistics.median(audit_t) / statistics.median(base_t) if base_t and audit_t else float("inf")
    print(f"measure: audit cost ratio {ratio:.3f} (bound {AUDIT_BOUND:g})", flush=True)
    check(f"audit cost: median with KIMG_AUDIT=1 / without kimg = {ratio:.3f} <= {AUDIT_BOUND:g}",
          ratio <= AUDIT_BOUND, times)
    return C.finish(EXPECTED)


if __name__ == "__main__":
    sys.exit(main())
