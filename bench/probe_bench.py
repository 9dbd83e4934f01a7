#!/usr/bin/env python3
"""Time `kimg-probe scan` against reading the file once and, where present,
against `cuobjdump --list-elf --list-ptx`, all in this one run.

Each command runs REPEAT times after one warm-up (page cache warm for all
three); the median wall time is reported, and ratios against the baselines.
Usage: probe_bench.py KIMG_PROBE FILE [REPEAT]
"""
import os
import shutil
import statistics
import subprocess
import sys
import time


def wall(cmd, repeat):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def read_once(path, repeat):
    def one():
        with open(path, "rb", buffering=0) as f:
            while f.read(1 << 20):
                pass
    one()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        one()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    probe, path = sys.argv[1], sys.argv[2]
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    size = os.path.getsize(path)
    t_scan = wall([probe, "scan", "--json", path], repeat)
    # `cat` is a process too: same start-up cost as the probe, so the ratio is fair.
    t_cat = wall(["cat", path], repeat) if shutil.which("cat") else None
    t_read = read_once(path, repeat)
    print(f"file: {path} ({size / 1e6:.1f} MB), median of {repeat}")
    print(f"kimg-probe scan --json : {t_scan * 1000:9.1f} ms")
    print(f"read once (in-process) : {t_read * 1000:9.1f} ms   scan/read = {t_scan / t_read:.3f} (goal <= 0.25)")
    if t_cat is not None:
        print(f"cat FILE > /dev/null   : {t_cat * 1000:9.1f} ms   scan/cat  = {t_scan / t_cat:.3f}")
    if shutil.which("cuobjdump"):
        t_cuo = wall(["cuobjdump", "--list-elf", "--list-ptx", path], max(1, min(repeat, 3)))
        print(f"cuobjdump --list-elf --list-ptx: {t_cuo * 1000:9.1f} ms   cuobjdump/scan = {t_cuo / t_scan:.1f}x (goal >= 20)")
    else:
        print("cuobjdump: not installed here (the GPU machine has it)")


if __name__ == "__main__":
    main()
