#!/usr/bin/env python3
"""GPU-machine tests of libkimg.so (issue: catch image-class errors and explain them).

Each case runs a real CUDA program with LD_PRELOAD=libkimg.so, KIMG_FORMAT=json and
KIMG_LOG=<file>, then asserts on the program's own error and on kimg's JSON report.
Usage: shim_gpu.py BUILD_DIR WORK_DIR   (prints "N passed, N failed"; exit 1 on failure)
"""
import json
import os
import subprocess
import sys

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src")
LIB = os.path.join(BUILD, "libkimg.so")
NVCC = "nvcc"
results = []


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


def check(name, cond, detail=""):
    results.append((name, bool(cond)))
    print(f"{'PASS' if cond else 'FAIL'} {name}{(': ' + detail) if detail and not cond else ''}")


def archs(rep):
    return sorted({i["arch"] for i in rep["module"]["images"]})


def expect_report(name, reports, code, call=None, kernel=None, file_part=None, arch=None):
    hits = [r for r in reports if r["error"]["code"] == code and (call is None or r["call"] == call)]
    check(f"{name}: report for error {code}" + (f" at {call}" if call else ""), hits,
          f"got {[(r['error']['code'], r['call']) for r in reports]}")
    if not hits:
        return None
    rep = hits[0]
    if kernel:
        check(f"{name}: kernel named", kernel in (rep["kernel"].get("name") or "") or
              kernel in (rep["kernel"].get("demangled") or ""), str(rep["kernel"]))
    if file_part:
        check(f"{name}: module file", file_part in (rep["module"].get("file") or ""), str(rep["module"].get("file")))
    if arch:
        check(f"{name}: images listed", arch in archs(rep), str(archs(rep)))
    check(f"{name}: device is 9.0", rep["device"]["sm"] == "9.0", str(rep["device"]))
    check(f"{name}: fix names sm_90", "sm_90" in json.dumps(rep.get("fix")), json.dumps(rep.get("fix")))
    return rep


def main():
    os.makedirs(WORK, exist_ok=True)
    cu = os.path.join(SRC, "wrong_arch.cu")
    g80 = ["-gencode", "arch=compute_80,code=sm_80"]
    # 1. static cudart (nvcc default) and shared cudart, built for sm_80 only
    for kind, flags in (("static", []), ("shared", ["-cudart", "shared"])):
        exe = build(f"wrong_{kind}", *g80, *flags, cu)
        r, reps = run_kimg(f"wrong_{kind}", [exe])
        check(f"{kind} cudart: program still sees 209", "launch: 209" in r.stdout, r.stdout)
        expect_report(f"{kind} cudart", reps, 209, kernel="add_one", file_part=f"wrong_{kind}", arch="sm_80")
    # 2. driver API: wrong-arch cubin, fatbin, PTX (target too new, ISA too new)
    drv = os.path.join(WORK, "drv_load")
    if not os.path.exists(drv):
        r = sh(["gcc", "-o", drv, os.path.join(SRC, "drv_load.c"), "-I/usr/local/cuda/include",
                "-L/usr/local/cuda/lib64/stubs", "-lcuda"])
        check("build drv_load", r.returncode == 0, r.stderr)
    kern = os.path.join(os.path.dirname(os.path.dirname(SRC)), "fixtures", "src", "kern.cu")
    cub = build("sm80.cubin", "-cubin", *g80, kern)
    fat = build("sm80.fatbin", "-fatbin", *g80, kern)
    ptx100 = build("compute100.ptx", "-ptx", "-gencode", "arch=compute_100,code=compute_100", kern)
    ptx99 = os.path.join(WORK, "isa99.ptx")
    with open(ptx99, "w") as f:
        f.write(open(build("compute90.ptx", "-ptx", "-gencode", "arch=compute_90,code=compute_90", kern))
                .read().replace(".version 9.0", ".version 9.9"))
    for name, path, code in (("cubin sm_80", cub, 209), ("fatbin sm_80", fat, 209),
                             ("ptx target sm_100", ptx100, 218), ("ptx isa 9.9", ptx99, 222)):
        r, reps = run_kimg("drv_" + name.replace(" ", "_"), [drv, path])
        check(f"driver API {name}: program sees {code}", f"cuModuleLoadData: {code}" in r.stdout, r.stdout)
        expect_report(f"driver API {name}", reps, code, call="cuModuleLoadData")
    # 3. PyTorch extension built for an arch list without 9.0
    ext_dir = os.path.join(WORK, "torch_ext")
    r = sh([sys.executable, os.path.join(SRC, "torch_ext.py"), ext_dir, "build-only"],
           env=dict(os.environ, TORCH_CUDA_ARCH_LIST="8.0;8.6"))
    check("build torch extension (8.0;8.6)", r.returncode == 0, r.stderr[-800:])
    r, reps = run_kimg("torch_ext", [sys.executable, os.path.join(SRC, "torch_ext.py"), ext_dir],
                       {"TORCH_CUDA_ARCH_LIST": "8.0;8.6"})
    check("torch extension: python sees the error", r.returncode == 3, r.stdout + r.stderr[-500:])
    rep = expect_report("torch extension", reps, 209, kernel="kimg_add_one_kernel",
                        file_part="kimg_wrong_arch_ext", arch="sm_86")
    if rep:
        py = rep.get("python_stack") or []
        check("torch extension: python stack names torch_ext.py",
              any("torch_ext.py" in fr.get("file", "") for fr in py), json.dumps(py)[:300])
    # 4. CuPy RawModule from a wrong-arch cubin
    r, reps = run_kimg("cupy", [sys.executable, os.path.join(SRC, "cupy_cubin.py"), cub])
    check("cupy: program sees the error", r.returncode == 3, r.stdout + r.stderr[-300:])
    expect_report("cupy", reps, 209, file_part="sm80.cubin", arch="sm_80")
    # 5. good programs: silence
    ok = build("right_static", "-gencode", "arch=compute_90,code=sm_90", os.path.join(SRC, "right_arch.cu"))
    r, reps = run_kimg("right_static", [ok])
    check("right-arch program: runs, no report", r.returncode == 0 and not reps and r.stderr == "",
          r.stdout + r.stderr)
    r, reps = run_kimg("train_step", [sys.executable, os.path.join(SRC, "train_step.py")],
                       {"KIMG_LOG": ""})
    check("pytorch training step: succeeds, kimg prints nothing",
          r.returncode == 0 and "loss" in r.stdout and "kimg" not in r.stderr, r.stdout + r.stderr[-800:])
    passed = sum(1 for _, ok in results if ok)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
