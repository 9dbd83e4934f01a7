#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time `kimg-probe scan` against reading the file once and against
`cuobjdump --list-elf --list-ptx`, all in this one run, and judge each goal.

Each command runs REPEAT times after one warm-up (page cache warm for all);
the median wall time is compared. Every run's exit status is checked: a scan
or a cuobjdump that fails is an error, not a time. Each goal prints one line,
PASS or FAIL with its ratio, or NOT MEASURED with the reason where this
machine cannot measure it (no cuobjdump; a file so small that process
start-up is all that is timed). Exit status: 0 when no goal failed, 1 when
one did, 2 when a command failed.

With --baseline OLD_PROBE (bench/baseline_probe.sh builds the probe of
498579e, the last before the worker pool, from git in the same run) the two
probes' `scan --json FILE` run alternately, REPEAT*3 rounds (at least 15),
the order swapped every round, and their medians are compared: on a machine
that other work loads, alternation puts both under the same load. The load
average is printed with the figures.

Goals (bench/README.md's table), each can be tightened or loosened by environment:
  KIMG_BENCH_GOAL_SCAN_READ   scan / read once     <= 0.25
  KIMG_BENCH_GOAL_CUOBJDUMP   cuobjdump / scan     >= 1000 (issue 27; 20 before)
  KIMG_BENCH_GOAL_BASELINE    scan / OLD_PROBE's scan <= 0.7 (issue 27)
  KIMG_BENCH_MIN_MB           smallest file judged    64 (MB)
Usage: probe_bench.py KIMG_PROBE FILE [REPEAT] [--baseline OLD_PROBE LABEL | --baseline-missing WHY]
"""
import os
import shutil
import statistics
import subprocess
import sys
import time


class CommandFailed(Exception):
    pass


def run_checked(cmd):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise CommandFailed(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.decode(errors='replace')[:300]}")


def wall(cmd, repeat):
    run_checked(cmd)  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run_checked(cmd)
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


def find_cuobjdump():
    """On PATH, else in the toolkit ($CUDA_HOME, /usr/local/cuda)."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", "cuobjdump"), os.X_OK):
            return os.path.join(root, "bin", "cuobjdump")
    return None


def env_float(name, default):
    v = os.environ.get(name)
    return float(v) if v else default


def run_cpu(cmd):
    """Wall and CPU time (user + system, from wait4) of one checked run."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall_s = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise CommandFailed(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}")
    return wall_s, ru.ru_utime + ru.ru_stime


def alternated(cmd_a, cmd_b, rounds):
    """Medians (wall, CPU) of cmd_a and cmd_b run in turn, the order swapped
    each round."""
    run_checked(cmd_a)
    run_checked(cmd_b)
    ta, tb = [], []
    for i in range(rounds):
        for cmd, times in ((cmd_a, ta), (cmd_b, tb)) if i % 2 == 0 else ((cmd_b, tb), (cmd_a, ta)):
            times.append(run_cpu(cmd))
    med = lambda ts, k: statistics.median(t[k] for t in ts)
    return med(ta, 0), med(tb, 0), med(ta, 1), med(tb, 1)


def main():
    args = sys.argv[1:]
    baseline = baseline_missing = None
    if "--baseline" in args:
        k = args.index("--baseline")
        baseline = (args[k + 1], args[k + 2])
        del args[k:k + 3]
    if "--baseline-missing" in args:
        k = args.index("--baseline-missing")
        baseline_missing = args[k + 1]
        del args[k:k + 2]
    probe, path = args[0], args[1]
    repeat = int(args[2]) if len(args) > 2 else 5
    goal_read = env_float("KIMG_BENCH_GOAL_SCAN_READ", 0.25)
    goal_cuo = env_float("KIMG_BENCH_GOAL_CUOBJDUMP", 1000.0)
    goal_base = env_float("KIMG_BENCH_GOAL_BASELINE", 0.7)
    min_mb = env_float("KIMG_BENCH_MIN_MB", 64.0)
    size = os.path.getsize(path)
    verdicts = []

    def judge(name, ratio, goal, higher_is_better):
        ok = ratio >= goal if higher_is_better else ratio <= goal
        rel = ">=" if higher_is_better else "<="
        print(f"{'PASS' if ok else 'FAIL'} {name} = {ratio:.3f} (goal {rel} {goal:g})")
        verdicts.append(ok)

    def not_measured(name, why):
        print(f"NOT MEASURED {name}: {why}")

    try:
        t_scan = wall([probe, "scan", "--json", path], repeat)
        # `cat` is a process too: same start-up cost as the probe (shown, not judged).
        t_cat = wall(["cat", path], repeat) if shutil.which("cat") else None
        t_read = read_once(path, repeat)
        print(f"file: {path} ({size / 1e6:.1f} MB), median of {repeat}")
        print(f"kimg-probe scan --json : {t_scan * 1000:9.1f} ms")
        print(f"read once (in-process) : {t_read * 1000:9.1f} ms")
        if t_cat is not None:
            print(f"cat FILE > /dev/null   : {t_cat * 1000:9.1f} ms   scan/cat = {t_scan / t_cat:.3f}")
        small = size < min_mb * 1e6
        why_small = (f"{size / 1e6:.1f} MB file, below {min_mb:g} MB: process start-up, not the scan, is timed "
                     f"(set KIMG_BENCH_FILE to a large CUDA library)")
        if small:
            not_measured("scan/read", why_small)
        else:
            judge("scan/read", t_scan / t_read, goal_read, False)
        if baseline:
            rounds = max(15, repeat * 3)
            t_new, t_old, c_new, c_old = alternated([probe, "scan", "--json", path],
                                                    [baseline[0], "scan", "--json", path], rounds)
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"kimg-probe scan --json, {rounds} alternated rounds: this tree {t_new * 1000:.1f} ms, "
                  f"{baseline[1]} {t_old * 1000:.1f} ms (medians; load average {load}, {os.cpu_count()} cores)")
            # shown, not judged: where the load passes the cores, wall time is mostly the wait for one
            print(f"  CPU time (user + system): this tree {c_new * 1000:.1f} ms, {baseline[1]} {c_old * 1000:.1f} ms, "
                  f"ratio {c_new / c_old:.3f}")
            if small:
                not_measured(f"scan/{baseline[1]}", why_small)
            else:
                judge(f"scan/{baseline[1]}", t_new / t_old, goal_base, False)
        elif baseline_missing:
            not_measured("scan/baseline probe", baseline_missing)
        cuobjdump = find_cuobjdump()
        if not cuobjdump:
            not_measured("cuobjdump/scan", "cuobjdump not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin): "
                         "measured on the GPU machine (bench/gpu_bench.sh)")
        elif small:
            not_measured("cuobjdump/scan", why_small)
        else:
            t_cuo = wall([cuobjdump, "--list-elf", "--list-ptx", path], max(1, min(repeat, 3)))
            print(f"{cuobjdump} --list-elf --list-ptx: {t_cuo * 1000:9.1f} ms")
            judge("cuobjdump/scan", t_cuo / t_scan, goal_cuo, True)
    except CommandFailed as e:
        print(f"ERROR {e}")
        return 2
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
