#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compare `kimg-probe scan --json` with `cuobjdump --list-elf --list-ptx` on real libraries.

Per-arch counts of SASS and PTX images must match exactly. cuobjdump prints an
sm_XYf cubin without its `f` (docs/format.md section 14), so SASS arches are
compared with the `f` removed; PTX keeps its suffix in both tools.
With --all, kimg-probe scan --all is compared with cuobjdump -all (the
relocatable __nv_relfatbin containers of -rdc executables and shared objects
too); without it, both list only what the driver loads (cuobjdump's default:
the executable .nv_fatbin when one exists). --jobs N runs N files at once.
Usage: compare_cuobjdump.py [--all] [--jobs N] KIMG_PROBE FILE...   (exit 1 on any mismatch)
"""
import concurrent.futures
import collections
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpulib import find_tool  # noqa: E402

CUOBJDUMP = find_tool("cuobjdump")

ELF_RE = re.compile(r"^ELF file\s+\d+:\s+(\S+)$")
PTX_RE = re.compile(r"^PTX file\s+\d+:\s+(\S+)$")
ARCH_RE = re.compile(r"\.(sm_\d+[af]?)\.(cubin|ptx)$")


def cuobjdump_counts(path, all_sections):
    t0 = time.perf_counter()
    out = subprocess.run([CUOBJDUMP or "cuobjdump"] + (["-all"] if all_sections else []) + ["--list-elf", "--list-ptx", path],
                         capture_output=True, text=True)
    dt = time.perf_counter() - t0
    counts = collections.Counter()
    for line in out.stdout.splitlines():
        line = line.strip()
        for regex, kind in ((ELF_RE, "sass"), (PTX_RE, "ptx")):
            m = regex.match(line)
            if m:
                a = ARCH_RE.search(m.group(1))
                arch = a.group(1) if a else "?"
                if kind == "sass":
                    arch = arch.rstrip("f")
                else:
                    arch = arch.replace("sm_", "compute_")
                counts[(kind, arch)] += 1
    return counts, dt, out.returncode, out.stderr.strip()


def kimg_counts(probe, path, all_sections):
    t0 = time.perf_counter()
    out = subprocess.run([probe, "scan", "--json"] + (["--all"] if all_sections else []) + [path],
                         capture_output=True, text=True)
    dt = time.perf_counter() - t0
    doc = json.loads(out.stdout)
    counts = collections.Counter()
    for f in doc["files"]:
        for mod in f.get("modules", []):
            for img in mod["images"]:
                if img["kind"] not in ("sass", "ptx"):
                    continue
                arch = img["arch"]
                if img["kind"] == "sass" and arch.endswith("f"):
                    arch = arch[:-1]
                counts[(img["kind"], arch)] += 1
    return counts, dt


def compare(probe, path, all_sections):
    kc, kt = kimg_counts(probe, path, all_sections)
    cc, ct, rc, err = cuobjdump_counts(path, all_sections)
    keys = sorted(set(kc) | set(cc))
    diff = [(k, kc[k], cc[k]) for k in keys if kc[k] != cc[k]]
    total_k, total_c = sum(kc.values()), sum(cc.values())
    status = "MATCH" if not diff and total_c > 0 else "MISMATCH"
    if total_c == 0 and total_k == 0 and "does not contain device code" in err:
        status = "MATCH"  # both agree: no device code in this file
    elif rc != 0 and total_c == 0:
        status = "CUOBJDUMP-FAILED"
    lines = [f"{status} {path}: kimg {total_k} images in {kt:.3f}s, cuobjdump {total_c} in {ct:.3f}s",
             "   " + ", ".join(f"{k[0]}:{k[1]}={kc[k]}" for k in keys)]
    lines += [f"   differs {k[0]} {k[1]}: kimg {a}, cuobjdump {b}" for k, a, b in diff]
    if status != "MATCH" and err:
        lines.append("   cuobjdump: " + err[:300])
    return status == "MATCH", "\n".join(lines)


def main():
    args = sys.argv[1:]
    all_sections = "--all" in args
    args = [a for a in args if a != "--all"]
    jobs = 1
    if args and args[0] == "--jobs":
        jobs, args = int(args[1]), args[2:]
    probe, files = args[0], args[1:]
    if not CUOBJDUMP or not files:
        print("FAIL " + ("cuobjdump not found (PATH, /usr/local/cuda/bin)" if not CUOBJDUMP else "no file to compare"))
        print("0 passed, 1 failed")
        return 1
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for good, text in pool.map(lambda p: compare(probe, p, all_sections), files):
            print(text)
            bad += not good
    print(f"{len(files) - bad} passed, {bad} failed" + (" (--all: cuobjdump -all)" if all_sections else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
