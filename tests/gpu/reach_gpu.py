#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU-machine tests of issue 11: libkimg.so reports what reaches the program.

Healthy workloads must print nothing (NCCL all-reduce in one process and in two torchrun
ranks, mixed fp32/fp16/bf16 work under CUDA_MODULE_LOADING=EAGER, JAX, CuPy, a training
step); KIMG_AUDIT=1 under CUDA_FORCE_PTX_JIT=1 gives one report per (file, cause), one for
libtorch_cuda.so with its module count; a stock PyTorch op failing under
CUDA_FORCE_PTX_JIT=1 has the script's file and line in python_stack (PyTorch releases the
GIL); the JIT linker through cuda.bindings gives the 218 and 222 reports.

Usage: reach_gpu.py BUILD_DIR WORK_DIR
Prints PASS/FAIL per check and "N passed, N failed[, N not run]" (gpulib.Checks); exit 1 on any failure.
A case whose prerequisite is missing (JAX, CuPy, cuda-python, a second GPU) is a FAIL
with the reason, except torchrun with two ranks on a one-GPU machine, which is counted
as "not run" and named (NCCL cannot put two ranks of one communicator on one GPU).
"""
import json
import os
import subprocess
import sys
import time

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src")
KERN = os.path.join(os.path.dirname(HERE), "fixtures", "src", "kern.cu")
LIB = os.path.join(BUILD, "libkimg.so")
sys.path.insert(0, HERE)
from gpulib import Checks, device_sm  # noqa: E402

C = Checks()
check = C.check

MAJOR, MINOR = device_sm(os.path.join(BUILD, "kimg-probe"))
DEV_CC = f"{MAJOR}.{MINOR}"
TOO_NEW = next((t for t in (90, 100, 120, 121) if t > MAJOR * 10 + MINOR), 121)  # a PTX target above the device


def run_kimg(name, cmd, extra_env=None, timeout=600):
    """Run under libkimg with JSON reports to a log; return (rc, stdout, stderr, reports)."""
    logf = os.path.join(WORK, f"{name}.jsonl")
    if os.path.exists(logf):
        os.unlink(logf)
    env = dict(os.environ, LD_PRELOAD=LIB, KIMG_FORMAT="json", KIMG_LOG=logf)
    env.update(extra_env or {})
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, str(e.stdout or ""), str(e.stderr or "") + "\n(timeout)"
    reports = []
    for path in [logf] + [os.path.join(WORK, f) for f in os.listdir(WORK) if f.startswith(name + ".r")]:
        if os.path.exists(path):
            with open(path) as f:
                reports += [json.loads(line) for line in f if line.lstrip().startswith("{")]
    with open(os.path.join(WORK, f"{name}.out"), "w") as f:
        f.write(f"$ {' '.join(cmd)}\nrc={rc}\n--- stdout\n{out}\n--- stderr\n{err}\n--- reports\n")
        for rep in reports:
            f.write(json.dumps(rep, indent=1) + "\n")
    return rc, out, err, reports


def kimg_lines(err):
    return [line for line in err.splitlines() if line.startswith("kimg")]


def timed(cmd, env):
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    return time.monotonic() - t, r.returncode


def silent(name, cmd, expect, extra_env=None, baseline=False):
    """A healthy workload: exit 0, its own success line, no report, no kimg line on stderr.
    baseline: also time it once without and once with libkimg (informative)."""
    rc, out, err, reps = run_kimg(name, cmd, extra_env)
    if baseline:
        env = dict(os.environ, **(extra_env or {}))
        without, _ = timed(cmd, env)
        with_kimg, _ = timed(cmd, dict(env, LD_PRELOAD=LIB, KIMG_LOG=os.path.join(WORK, name + ".timed.jsonl")))
        print(f"   ({name}: {without:.2f} s without libkimg, {with_kimg:.2f} s with, ratio {with_kimg / without:.2f})")
    check(f"{name}: runs (rc 0, '{expect}')", rc == 0 and expect in out, f"rc={rc} {out[-300:]} {err[-600:]}")
    check(f"{name}: kimg reports nothing", not reps and not kimg_lines(err),
          f"{len(reps)} reports {[(r['call'], r['error']['code'], r['module'].get('file')) for r in reps][:6]} "
          f"{kimg_lines(err)[:4]}")
    return rc, out, err, reps


def nvcc(out, *args):
    path = os.path.join(WORK, out)
    if not os.path.exists(path):
        r = subprocess.run(["nvcc", "-o", path, *args], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"nvcc {out}: {r.stderr[-600:]}")
    return path


def have(module):
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def gpu_count():
    """GPUs nvidia-smi lists (independent of torch, whose failure must not
    read as "one GPU"), and torch's view: (count, torch_error or None)."""
    smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    n = sum(1 for line in smi.stdout.splitlines() if line.startswith("GPU ")) if smi.returncode == 0 else 0
    r = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                       capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        return n, "torch cannot run: " + (r.stderr.strip().splitlines() or ["rc %d" % r.returncode])[-1]
    if int(r.stdout.strip()) != n:
        return n, f"torch sees {r.stdout.strip()} GPUs, nvidia-smi -L {n}"
    return n, None


# A case this machine cannot run is a failure unless the run says it may be
# partial (tests/gpu/run.sh: KIMG_GPU_ALLOW_PARTIAL=1): a one-GPU machine
# must not pass the suite without its two-rank case.
ALLOW_PARTIAL = os.environ.get("KIMG_GPU_ALLOW_PARTIAL", "0") == "1"


def main():
    os.makedirs(WORK, exist_ok=True)
    py = sys.executable
    # ---- 1. healthy workloads print nothing ----
    silent("nccl_one_process", [py, os.path.join(SRC, "nccl_allreduce.py")], "allreduce ok rank 0 of 1",
           baseline=True)
    rc, out, err, reps = run_kimg("nccl_one_process_verbose", [py, os.path.join(SRC, "nccl_allreduce.py")],
                                  {"KIMG_VERBOSE": "1", "KIMG_LOG": ""})
    disp = [line for line in err.splitlines() if line.startswith("kimg: dispatch: ")]
    check("nccl_one_process, KIMG_VERBOSE=1: at most one dispatch line per file, libnccl's among them if any",
          rc == 0 and len(disp) == len({line.split(":")[2] for line in disp})
          and (not disp or any("libnccl" in line.split(":")[2] for line in disp)), "\n".join(disp))
    print("   (dispatch lines: " + (" | ".join(disp) if disp else "none") + ")")
    n_gpus, torch_error = gpu_count()
    check("torch sees the GPUs nvidia-smi lists" + (f" ({n_gpus})" if not torch_error else ""),
          torch_error is None, torch_error or "")
    if n_gpus >= 2 and torch_error is None:
        silent("nccl_torchrun_two", ["torchrun", "--standalone", "--nproc-per-node", "2",
                                     os.path.join(SRC, "nccl_allreduce.py")], "allreduce ok rank 1 of 2",
               {"KIMG_LOG": os.path.join(WORK, "nccl_torchrun_two.r%r.jsonl")})
    else:
        why = torch_error or f"needs 2 GPUs, nvidia-smi -L lists {n_gpus} (NCCL puts one rank per GPU); run on nvidia-h200-x2"
        C.not_run("nccl_torchrun_two: " + why)
        if not ALLOW_PARTIAL:
            check("nccl_torchrun_two ran (KIMG_GPU_ALLOW_PARTIAL=1 accepts a partial run)", False, why)
    silent("mixed_eager", [py, os.path.join(SRC, "mixed_eager.py")], "mixed ok", {"CUDA_MODULE_LOADING": "EAGER"},
           baseline=True)
    silent("mixed_lazy", [py, os.path.join(SRC, "mixed_eager.py")], "mixed ok")
    if have("jax"):
        silent("jax", [py, os.path.join(SRC, "jax_ops.py")], "jax ok")
    else:
        check("jax: installed (pip install 'jax[cuda13]')", False)
    if have("cupy"):
        silent("cupy", [py, os.path.join(SRC, "cupy_ops.py")], "cupy ok")
    else:
        check("cupy: installed", False)
    silent("train_step", [py, os.path.join(SRC, "train_step.py")], "loss")

    # ---- 2. KIMG_AUDIT=1 under CUDA_FORCE_PTX_JIT=1: one report per (file, cause) ----
    rc, out, err, reps = run_kimg("audit_force_ptx", [py, "-c", "import torch; torch.ones(4, device='cuda')"],
                                  {"KIMG_AUDIT": "1", "CUDA_FORCE_PTX_JIT": "1"})
    audits = [r for r in reps if r.get("audit")]
    # modules in no file (JIT output, heap) are reported one by one: not grouped
    keys = [(r["module"].get("file"), r["verdict"]["reason"], r["error"]["code"]) for r in audits if r["module"].get("file")]
    torch_reps = [r for r in audits if (r["module"].get("file") or "").endswith("libtorch_cuda.so")]
    check("audit_force_ptx: one audit report per (file, cause)", keys and len(keys) == len(set(keys)),
          f"{len(audits)} audit reports, {len(set(keys))} groups")
    check("audit_force_ptx: exactly one report for libtorch_cuda.so, with its module count (> 100)",
          len(torch_reps) == 1 and torch_reps[0].get("audit_modules", 0) > 100,
          str([(r["module"].get("file"), r.get("audit_modules")) for r in torch_reps]))
    summary = [line for line in err.splitlines() if line.startswith("kimg: audit:")]
    check("audit_force_ptx: the summary and a line for libtorch_cuda.so's group",
          any("module loads checked" in s for s in summary) and any("libtorch_cuda.so:" in s for s in summary),
          "\n".join(summary[:6]))
    lines = len(err.splitlines())
    print(f"   (audit_force_ptx: {len(reps)} reports, {len(audits)} audit, stderr {lines} lines; "
          f"libtorch_cuda.so modules {torch_reps[0].get('audit_modules') if torch_reps else '?'})")

    # ---- 3. a stock op failing under CUDA_FORCE_PTX_JIT=1: the script in python_stack ----
    script = os.path.join(SRC, "torch_force_ptx.py")
    rc, out, err, reps = run_kimg("torch_force_ptx", [py, script], {"CUDA_FORCE_PTX_JIT": "1"})
    check("torch_force_ptx: the op fails (rc 3)", rc == 3, f"rc={rc} {out[-200:]} {err[-300:]}")
    hits = [r for r in reps if any(fr.get("file") == script and fr.get("line") == 8 for fr in r.get("python_stack", []))]
    check("torch_force_ptx: a report whose python_stack has torch_force_ptx.py:8 (GIL released by PyTorch)",
          hits, json.dumps([r.get("python_stack") for r in reps])[:600] +
          json.dumps([r.get("python_note") for r in reps])[:200])
    check("torch_force_ptx: reported at once (no module of libtorch_cuda runs under force-PTX), not as dispatched",
          reps and all("dispatch" not in r for r in reps), str([r.get("dispatch") for r in reps]))

    # ---- 4. the JIT linker through cuda.bindings: 218 and 222 ----
    if have("cuda.bindings") or have("cuda.cuda"):
        ptx100 = nvcc(f"link{TOO_NEW}.ptx", "-ptx", f"-arch=compute_{TOO_NEW}", KERN)
        ptx90 = nvcc("link80.ptx", "-ptx", "-arch=compute_80", KERN)
        ptx99 = os.path.join(WORK, "link99.ptx")
        with open(ptx90) as f, open(ptx99, "w") as g:
            g.write("".join(".version 9.9\n" if line.startswith(".version") else line for line in f))
        for name, path, code, rule, arch in (("link_218", ptx100, 218, "P3", f"compute_{TOO_NEW}"),
                                             ("link_222", ptx99, 222, "P4", "compute_80")):
            rc, out, err, reps = run_kimg(name, [py, os.path.join(SRC, "link_bindings.py"), path, name + ".ptx"])
            check(f"{name}: cuda.bindings gets {code} from cuLinkAddData", f"cuLinkAddData: {code}" in out,
                  out + err[-300:])
            hit = [r for r in reps if r["error"]["code"] == code and r["call"].startswith("cuLinkAddData")]
            check(f"{name}: one report naming the input, {arch}, rule {rule}, device {DEV_CC}, the link advice",
                  len(hit) == 1 and hit[0]["link"]["input"]["name"] == name + ".ptx"
                  and arch in [i["arch"] for i in hit[0]["module"]["images"]] and hit[0]["verdict"]["rule"] == rule
                  and hit[0]["device"]["sm"] == DEV_CC and hit[0]["link"]["advice"],
                  json.dumps(hit)[:800] if hit else str([(r["call"], r["error"]["code"]) for r in reps]))
        rc, out, err, reps = run_kimg("link_ok", [py, os.path.join(SRC, "link_bindings.py"), ptx90, "ok.ptx"])
        check("link_ok: a compute_80 PTX links, no report", "cuLinkAddData: 0" in out and not reps, out + err[-300:])
    else:
        check("cuda.bindings (cuda-python) installed: pip install cuda-python", False)

    # every case run, every prerequisite present: 25 checks, 27 with the two-rank case
    # (one more, failed, for a two-rank case not run without KIMG_GPU_ALLOW_PARTIAL=1)
    expected = 25 + (2 if not C.skipped else 0 if ALLOW_PARTIAL else 1)
    return C.finish(expected)


if __name__ == "__main__":
    sys.exit(main())
