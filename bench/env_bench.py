#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Environment benchmark: `kimg-probe check` of a whole directory tree
against reading every file of that tree once (`cat`), cold and warm, all in
this one run.

Cold: the page cache is dropped before each timed command, with
`echo 3 > /proc/sys/vm/drop_caches` where the machine allows it, otherwise
with posix_fadvise(POSIX_FADV_DONTNEED) on every file of the tree (needs no
privilege; pages that another process holds mapped stay cached). How much
of the tree was still cached after dropping is measured (mincore) and
printed, so a "cold" figure that was not cold shows as such.
Warm: after one untimed run, the median of REPEAT runs.

check runs once with -j 1 (the walk without threads) and once per thread
count asked (default: the probe's default, min(cores, 8)); the stdout of
every thread count must equal the -j 1 stdout (text and --json), else the
run fails. The largest thread count runs again with KIMG_READAHEAD=kernel
(the kernel's readahead around each header, kimg before issue 15) and
KIMG_READAHEAD=128K (128 KiB asked for ahead of each header), to compare the read policies
on this disk; the cold rows say how many bytes each run read.

Goals (issue 15, tightened by issue 27), judged for the largest thread count, each can be
tightened or loosened by environment as the other benchmarks' goals are:
  KIMG_BENCH_GOAL_TREE_COLD   cold check / cold read-all   <= 0.04 (0.1 before)
  KIMG_BENCH_GOAL_TREE_WARM   warm check / warm read-all   <= 0.03 (0.05 before)
A tree too small for the timings to mean anything (under MIN_BYTES, or a
cold read-all under MIN_SECONDS: process start-up dominates) gets
"NOT MEASURED" with the reason instead of PASS/FAIL.

Usage: env_bench.py KIMG_PROBE [TREE...] [--site-packages] [--sm LIST]
                    [--jobs N,N] [--repeat R] [--evict auto|fadvise]
Exit status: 0 when no goal failed and every run behaved (check exit 0 or
1, identical outputs); 1 when a goal failed; 2 when a run misbehaved.
"""
import argparse
import ctypes
import ctypes.util
import mmap
import os
import statistics
import subprocess
import sys
import time

MIN_BYTES = 1 << 30
MIN_SECONDS = 1.0


# check's default thread count on this machine (probe_jobs: the cores, at
# most PROBE_JOBS_DEFAULT_MAX = 8), unless $KIMG_JOBS sets it.
DEFAULT_JOBS = int(os.environ.get("KIMG_JOBS") or 0) or min(os.cpu_count() or 1, 8)


def env_goal(name, default):
    """A goal from the environment (a positive number), else the default."""
    v = os.environ.get(name)
    if not v:
        return default
    try:
        g = float(v)
    except ValueError:
        g = -1.0
    if not g > 0:
        sys.exit(f"env_bench: {name}={v!r}: expected a positive number")
    return g


GOAL_COLD = env_goal("KIMG_BENCH_GOAL_TREE_COLD", 0.04)
GOAL_WARM = env_goal("KIMG_BENCH_GOAL_TREE_WARM", 0.03)

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
PAGE = mmap.PAGESIZE


def tree_files(root):
    """Regular files as kimg-probe walks them: symlinked directories not
    followed, symlinked files followed."""
    out = []
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(dirpath, name)
            try:
                if os.path.isfile(p):
                    out.append(p)
            except OSError:
                pass
    return out


def resident_bytes(files):
    """Bytes of the files now in the page cache (mincore over a mapping)."""
    total = 0
    for p in files:
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError:
            continue
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                continue
            addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                continue
            pages = (size + PAGE - 1) // PAGE
            vec = (ctypes.c_ubyte * pages)()
            if libc.mincore(addr, size, vec) == 0:
                v = bytes(vec)  # bit 0 set: resident; the other bits are 0
                total += (len(v) - v.count(0)) * PAGE
            libc.munmap(addr, size)
        finally:
            os.close(fd)
    return total


def drop_cache(files, evict):
    """Returns how the cache was dropped."""
    os.sync()
    why = "asked for with --evict fadvise"
    if evict != "fadvise":
        try:
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
            return "echo 3 > /proc/sys/vm/drop_caches"
        except OSError as e:
            why = f"/proc/sys/vm/drop_caches not writable here: {e.strerror}"
    for p in files:
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return f"posix_fadvise(POSIX_FADV_DONTNEED) on every file ({why})"


def timed(cmd, stdin=None, stdout=subprocess.DEVNULL, env=None):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, input=stdin, stdout=stdout, stderr=subprocess.PIPE,
                       env=dict(os.environ, **env) if env else None)
    return time.perf_counter() - t0, r


def read_all_cmd(files):
    return ["xargs", "-0", "cat"], b"\0".join(os.fsencode(p) for p in files)


def pick_sm(probe, asked):
    if asked:
        return asked
    r = subprocess.run([probe, "device"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return "native" if r.returncode == 0 else "9.0"


TALLY = {"passed": 0, "failed": 0}


def tally(ok):
    TALLY["passed" if ok else "failed"] += 1


def bench_tree(probe, root, sm, jobs_list, repeat, evict):
    files = tree_files(root)
    size = 0
    for p in files:
        try:
            size += os.path.getsize(p)
        except OSError:
            pass
    print(f"tree: {root}: {len(files)} files, {size / 1e9:.2f} GB; check --sm {sm}")
    if not files:
        print("  no files: nothing to measure")
        return 0
    cat_cmd, cat_in = read_all_cmd(files)
    check = lambda j, *extra: [probe, "check", "--sm", sm, "-j", str(j), *extra, root]
    bad = 0

    # what runs: read-all, check per thread count, and the largest thread
    # count with the kernel's readahead left on (KIMG_READAHEAD=kernel)
    runs = [("read-all", cat_cmd, cat_in, None)] + [(f"check -j {j}", check(j), None, None) for j in jobs_list]
    for ra in ("kernel", "128K"):
        runs.append((f"  readahead={ra}", check(jobs_list[-1]), None, {"KIMG_READAHEAD": ra}))
    distinct = {os.path.realpath(p): p for p in files}.values()
    # cold: each timed command after dropping the cache
    how = None
    cold = {}
    leftover = {}
    fetched = {}
    for name, cmd, stdin, env in runs:
        how = drop_cache(files, evict)
        leftover[name] = resident_bytes(distinct)
        t, r = timed(cmd, stdin, env=env)
        fetched[name] = resident_bytes(distinct) - leftover[name]
        cold[name] = t
        if name.strip().startswith("check") or name.strip().startswith("readahead"):
            behaved = r.returncode in (0, 1)
            tally(behaved)
            if not behaved:
                print(f"  FAIL {name.strip()}: exit {r.returncode}: {r.stderr.decode(errors='replace')[:300]}")
                bad = 1
    print(f"  cold: cache dropped with {how}")
    print(f"  cold: still cached after dropping: " +
          ", ".join(f"{n} {leftover[n] / max(size, 1) * 100:.1f}%" for n in leftover))

    # warm: one untimed run each, then the median of `repeat`
    warm = {}
    outputs = {}
    for name, cmd, stdin, env in runs:
        timed(cmd, stdin, env=env)
        ts = []
        for _ in range(repeat):
            t, r = timed(cmd, stdin, env=env)
            ts.append(t)
        warm[name] = statistics.median(ts)
    for j in jobs_list:
        for extra in ([], ["--json"]):
            r = subprocess.run(check(j, *extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            outputs[(j, tuple(extra))] = (r.stdout, r.stderr, r.returncode)
    for extra in ([], ["--json"]):
        ref = outputs[(jobs_list[0], tuple(extra))]
        for j in jobs_list[1:]:
            same = outputs[(j, tuple(extra))] == ref
            print(f"  {'ok  ' if same else 'FAIL'} output of check {' '.join(extra) or '(text)'} -j {j} vs -j {jobs_list[0]}: "
                  f"{'identical' if same else 'DIFFERENT'} ({len(ref[0])} bytes stdout, exit {ref[2]})")
            tally(same)
            bad |= not same

    print(f"  {'':14s} {'cold s':>9s} {'/read-all':>10s} {'read MB':>9s} {'warm s':>9s} {'/read-all':>10s}")
    for name in cold:
        print(f"  {name:14s} {cold[name]:9.3f} {cold[name] / cold['read-all']:10.3f} {fetched[name] / 1e6:9.1f} "
              f"{warm[name]:9.3f} {warm[name] / warm['read-all']:10.3f}")
    print(f"  (read MB: bytes of the tree's distinct files brought into the page cache by the cold run;"
          f" readahead=X: check -j {jobs_list[-1]} with KIMG_READAHEAD=X: 'kernel' the kernel's readahead,"
          f" '128K' that much read ahead of each header; default: one page per header)")
    # The goal is check as a user runs it: without -j, the probe's default
    # (the cores, at most 8: probe/pool.c); the last -j listed otherwise.
    judged = DEFAULT_JOBS if DEFAULT_JOBS in jobs_list else jobs_list[-1]
    best = f"check -j {judged}"
    cr, wr = cold[best] / cold["read-all"], warm[best] / warm["read-all"]
    meaningful = size >= MIN_BYTES and cold["read-all"] >= MIN_SECONDS
    failed = 0
    for label, ratio, goal in (("cold", cr, GOAL_COLD), ("warm", wr, GOAL_WARM)):
        if not meaningful:
            verdict = (f"NOT MEASURED (tree of {size / 1e6:.1f} MB, cold read-all {cold['read-all']:.3f} s: "
                       f"too small to judge, needs >= {MIN_BYTES >> 30} GB and >= {MIN_SECONDS:.0f} s)")
        elif ratio <= goal:
            verdict = "PASS"
            tally(True)
        else:
            verdict = "FAIL"
            failed = 1
            tally(False)
        print(f"  goal {label}: {best}{' (the default -j here)' if judged == DEFAULT_JOBS else ''} / read-all = "
              f"{ratio:.3f} (goal <= {goal:g}): {verdict}")
    if len(jobs_list) > 1:
        one = f"check -j {jobs_list[0]}"
        print(f"  threads: {one} -> {best}: cold x{cold[one] / cold[best]:.2f}, warm x{warm[one] / warm[best]:.2f}")
    return 2 if bad else failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("probe")
    ap.add_argument("trees", nargs="*")
    ap.add_argument("--site-packages", action="store_true",
                    help="also python3's site-packages (site.getsitepackages()[0])")
    ap.add_argument("--sm", default=None, help="default: native where a GPU answers, else 9.0")
    ap.add_argument("--jobs", default=None, help="thread counts after -j 1, e.g. 4,8 (default: the probe's default)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--evict", choices=("auto", "fadvise"), default="auto",
                    help="auto: drop_caches where allowed, else fadvise; fadvise: per file only "
                         "(leaves the rest of a shared machine's cache alone)")
    a = ap.parse_args()
    trees = list(a.trees)
    if a.site_packages:
        r = subprocess.run(["python3", "-c", "import site; print(site.getsitepackages()[0])"],
                           stdout=subprocess.PIPE, text=True)
        sp = r.stdout.strip()
        if r.returncode == 0 and os.path.isdir(sp):
            trees.append(sp)
        else:
            print("NOT MEASURED site-packages: python3 has none here")
    if a.jobs:
        jobs = [int(x) for x in a.jobs.split(",")]
    else:
        jobs = [DEFAULT_JOBS]
    jobs_list = [1] + [j for j in jobs if j != 1]
    sm = pick_sm(a.probe, a.sm)
    status = 0
    for t in trees:
        status = max(status, bench_tree(a.probe, t, sm, jobs_list, a.repeat, a.evict))
    print(f"{TALLY['passed']} passed, {TALLY['failed']} failed")
    sys.exit(status)


if __name__ == "__main__":
    main()
