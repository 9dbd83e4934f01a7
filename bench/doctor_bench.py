#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time `kimg-probe doctor` (the first command a user runs): warm (median of
REPEAT runs after one untimed run) and cold (the page cache dropped before
each of REPEAT runs with `echo 3 > /proc/sys/vm/drop_caches`, which needs
root; elsewhere cold is NOT MEASURED, with the reason).

Goals (issue 27, for the H200 machine; judged where a GPU answers, since
without one doctor skips the driver and judges nothing):
  KIMG_BENCH_GOAL_DOCTOR_COLD   cold doctor  <= 2.0 s
  KIMG_BENCH_GOAL_DOCTOR_WARM   warm doctor  <= 0.5 s
Every run's exit status is checked: 0 or 1 (something cannot run), or 2
only where no GPU answers. The page each run printed is compared with the
first (its timing line aside): a run that prints another page fails.
Usage: doctor_bench.py KIMG_PROBE [--python PATH] [--repeat R]
Each run has KIMG_DOCTOR_TIMING=1: the line of the median cold and warm run
(where doctor's time went) is printed after the figures.
Exit: 0 no goal failed, 1 a goal failed, 2 a run misbehaved.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time


def have_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        return False


def drop_caches():
    """None when dropped, else why it could not be."""
    if os.geteuid() != 0:
        return f"not root (uid {os.geteuid()}): /proc/sys/vm/drop_caches needs it"
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return None
    except OSError as e:
        return f"/proc/sys/vm/drop_caches: {e.strerror}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("probe")
    ap.add_argument("--python", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    cmd = [a.probe, "doctor"] + (["--python", a.python] if a.python else [])
    gpu = have_gpu()
    ok_rc = (0, 1, 2) if not gpu else (0, 1)
    pages = []
    env = dict(os.environ, KIMG_DOCTOR_TIMING="1")
    traces = {}

    def run():
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        t = time.perf_counter() - t0
        m = re.search(rb"timing \(s\): ([^\n]*)", r.stderr)
        traces[t] = m.group(1).decode(errors="replace") if m else "(no timing line)"
        if r.returncode not in ok_rc:
            print(f"ERROR {' '.join(cmd)}: exit {r.returncode}: {r.stderr.decode(errors='replace')[:300]}")
            sys.exit(2)
        page = re.sub(rb"; [0-9.]+ s\s*$", b"", r.stdout)
        pages.append(page)
        if page != pages[0]:
            print(f"ERROR {' '.join(cmd)}: printed another page than its first run")
            sys.exit(2)
        return t

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    cold, why_not_cold = [], None
    for _ in range(a.repeat):
        why_not_cold = drop_caches()
        if why_not_cold:
            break
        cold.append(run())
    run()
    warm = [run() for _ in range(a.repeat)]
    print(f"{' '.join(cmd)}: warm median {statistics.median(warm):.3f} s (of {a.repeat}: "
          + ", ".join(f"{t:.3f}" for t in warm) + f"); load average {load}")
    if cold:
        print(f"  cold median {statistics.median(cold):.3f} s (of {len(cold)}, page cache dropped before each: "
              + ", ".join(f"{t:.3f}" for t in cold) + ")")
    for name, ts in (("warm", warm), ("cold", cold)):
        if ts:
            mid = sorted(ts)[len(ts) // 2]
            print(f"  {name} run of {mid:.3f} s: {traces.get(mid, '?')}")
    goals = (("cold", cold, float(os.environ.get("KIMG_BENCH_GOAL_DOCTOR_COLD") or 2.0)),
             ("warm", warm, float(os.environ.get("KIMG_BENCH_GOAL_DOCTOR_WARM") or 0.5)))
    failed = False
    for name, ts, goal in goals:
        if not ts:
            print(f"NOT MEASURED doctor {name}: cold could not be made: {why_not_cold}")
        elif not gpu:
            print(f"NOT MEASURED doctor {name} = {statistics.median(ts):.3f} s (goal <= {goal:g} s): no GPU here "
                  "(nvidia-smi -L fails), doctor skips the driver and judges nothing; the goal is the H200's")
        else:
            t = statistics.median(ts)
            print(f"{'PASS' if t <= goal else 'FAIL'} doctor {name} = {t:.3f} s (goal <= {goal:g} s)")
            failed |= t > goal
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
