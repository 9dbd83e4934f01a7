#!/usr/bin/env python3
"""Shim overhead, with and without libkimg.so, measured in this one run.

Runs are interleaved (with, without, with, ...) so drift hits both sides. Both
the median and the minimum of each side are reported: on a shared machine the
spread between runs is larger than the effect measured, and the minimum (the
run least disturbed by anything else) is the steadier estimate of a fixed cost.
Each process is pinned to one CPU when taskset exists.
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


def one(cmd, preload):
    cmd = PIN + cmd
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = LIB
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return float(r.stdout.strip().splitlines()[-1])


def compare(label, cmd, unit, scale, goal):
    base, kimg = [], []
    one(cmd, False)
    one(cmd, True)  # warm-up both
    for _ in range(ROUNDS):
        base.append(one(cmd, False))
        kimg.append(one(cmd, True))
    b, k = statistics.median(base), statistics.median(kimg)
    bmin, kmin = min(base), min(kimg)
    print(f"{label:40s} median: without {b * scale:8.3f} {unit}, with {k * scale:8.3f} {unit}, ratio {k / b:.4f}; "
          f"min: without {bmin * scale:8.3f}, with {kmin * scale:8.3f}, ratio {kmin / bmin:.4f} (goal <= {goal}); "
          f"spread without {bmin * scale:.3f}-{max(base) * scale:.3f}, with {kmin * scale:.3f}-{max(kimg) * scale:.3f}")
    return kmin / bmin


static = build("launch_static")
shared = build("launch_shared", "-cudart", "shared")
print(f"median of {ROUNDS} interleaved runs each")
compare("launch loop, static cudart (per launch)", [static, "200000"], "us", 1e6, 1.01)
compare("launch loop, shared cudart (per launch)", [shared, "200000"], "us", 1e6, 1.01)
if os.environ.get("KIMG_BENCH_SKIP_TORCH") != "1":
    compare("import torch + first CUDA op", [sys.executable, os.path.join(HERE, "torch_first_op.py")], "s", 1, 1.02)
