#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Shim overhead, with and without libkimg.so, measured in this one run.

Runs are interleaved (with, without, with, ...) so drift hits both sides. Both
the median and the minimum of each side are printed, with the spread; each
goal is judged on the ratio of the medians, as issue 27 states the goals (the
minimum is one run, the least disturbed, and on a shared machine one lucky
run of either side decides it; the median weighs every round).
Each process is pinned to one CPU when taskset exists. Every run's exit
status is checked; each goal's verdict is printed
PASS or FAIL (NOT MEASURED, with the reason, where PyTorch is missing). Exit
status: 0 when no goal failed, 1 when one did, 2 when a run failed.
Goals (environment overrides): KIMG_BENCH_GOAL_LAUNCH 1.01 (each launch loop),
KIMG_BENCH_GOAL_TORCH 1.02 (import torch + first op), KIMG_BENCH_GOAL_AUDIT
1.05 (the same with KIMG_AUDIT=1: the audit checks every module load).
Usage: bench.py BUILD_DIR WORK_DIR [ROUNDS]
"""
import os
import shutil
import statistics
import subprocess
import sys

BUILD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 9
HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(BUILD, "libkimg.so")
os.makedirs(WORK, exist_ok=True)


def build(name, *flags):
    out = os.path.join(WORK, name)
    subprocess.run(["nvcc", "-O2", "-gencode", "arch=compute_90,code=sm_90", *flags, "-o", out,
                    os.path.join(HERE, "launch_loop.cu")], check=True)
    return out


PIN = ["taskset", "-c", "3"] if shutil.which("taskset") else []


class RunFailed(Exception):
    pass


def one(cmd, preload, extra_env=None):
    cmd = PIN + cmd
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = LIB
        env.update(extra_env or {})
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RunFailed(f"{' '.join(cmd)} ({'with' if preload else 'without'} kimg): exit {r.returncode}: "
                        f"{(r.stderr or r.stdout)[-300:]}")
    try:
        return float(r.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise RunFailed(f"{' '.join(cmd)}: no timing on the last line of its output: {r.stdout[-200:]!r}")


VERDICTS = []


def compare(label, cmd, unit, scale, goal, extra_env=None):
    base, kimg = [], []
    one(cmd, False)
    one(cmd, True, extra_env)  # warm-up both
    for _ in range(ROUNDS):
        base.append(one(cmd, False))
        kimg.append(one(cmd, True, extra_env))
    b, k = statistics.median(base), statistics.median(kimg)
    bmin, kmin = min(base), min(kimg)
    print(f"{label:40s} median: without {b * scale:8.3f} {unit}, with {k * scale:8.3f} {unit}, ratio {k / b:.4f}; "
          f"min: without {bmin * scale:8.3f}, with {kmin * scale:8.3f}, ratio {kmin / bmin:.4f} (goal <= {goal}); "
          f"spread without {bmin * scale:.3f}-{max(base) * scale:.3f}, with {kmin * scale:.3f}-{max(kimg) * scale:.3f}")
    ratio = k / b
    ok = ratio <= goal
    print(f"{'PASS' if ok else 'FAIL'} {label}: median ratio = {ratio:.4f} (goal <= {goal:g}; "
          f"min ratio {kmin / bmin:.4f}, not judged)")
    VERDICTS.append(ok)
    return ratio


def goal(name, default):
    v = os.environ.get(name)
    return float(v) if v else default


def main():
    try:
        static = build("launch_static")
        shared = build("launch_shared", "-cudart", "shared")
    except subprocess.CalledProcessError as e:
        print(f"ERROR nvcc failed: {e}")
        return 2
    print(f"median of {ROUNDS} interleaved runs each")
    try:
        compare("launch loop, static cudart (per launch)", [static, "200000"], "us", 1e6,
                goal("KIMG_BENCH_GOAL_LAUNCH", 1.01))
        compare("launch loop, shared cudart (per launch)", [shared, "200000"], "us", 1e6,
                goal("KIMG_BENCH_GOAL_LAUNCH", 1.01))
        torch_ok = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0
        first_op = [sys.executable, os.path.join(HERE, "torch_first_op.py")]
        if os.environ.get("KIMG_BENCH_SKIP_TORCH") == "1":
            print("NOT MEASURED import torch + first CUDA op: KIMG_BENCH_SKIP_TORCH=1")
        elif not torch_ok:
            print(f"NOT MEASURED import torch + first CUDA op: {sys.executable} cannot import torch")
        else:
            compare("import torch + first CUDA op", first_op, "s", 1, goal("KIMG_BENCH_GOAL_TORCH", 1.02))
            compare("import torch + first CUDA op, KIMG_AUDIT=1", first_op, "s", 1,
                    goal("KIMG_BENCH_GOAL_AUDIT", 1.05), {"KIMG_AUDIT": "1"})
    except RunFailed as e:
        print(f"ERROR {e}")
        return 2
    return 0 if all(VERDICTS) else 1


if __name__ == "__main__":
    sys.exit(main())
