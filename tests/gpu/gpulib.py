# SPDX-License-Identifier: Apache-2.0
"""Shared by the tests/gpu Python scripts: the device's compute capability
as the driver reports it (never assumed), prerequisites that are failures
when missing (this suite runs only on the GPU machine, where each is
installed), and a check counter that asserts how many checks ran.
"""
import os
import shutil
import subprocess
import sys


def device_sm(probe=None):
    """(major, minor) of GPU 0: nvidia-smi --query-gpu=compute_cap, else
    `kimg-probe device --json`. Exits with a FAIL line when neither answers."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader", "-i", "0"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0 and r.stdout.strip():
            major, minor = r.stdout.strip().splitlines()[0].strip().split(".")
            return int(major), int(minor)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    if probe:
        import json
        r = subprocess.run([probe, "device", "--json"], capture_output=True, text=True)
        try:
            major, minor = json.loads(r.stdout)["devices"][0]["cc"].split(".")
            return int(major), int(minor)
        except (ValueError, KeyError, IndexError):
            pass
    print("FAIL the device's compute capability: nvidia-smi --query-gpu=compute_cap and kimg-probe device both failed")
    print("0 passed, 1 failed")
    sys.exit(1)


def find_tool(name):
    """On PATH, else in the toolkit ($CUDA_HOME/bin, /usr/local/cuda/bin)."""
    found = shutil.which(name)
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", name), os.X_OK):
            return os.path.join(root, "bin", name)
    return None


def has_module(mod):
    return subprocess.run([sys.executable, "-c", f"import {mod}"], capture_output=True).returncode == 0


class Checks:
    """check() prints PASS/FAIL lines; finish(expected) prints
    "N passed, M failed" and fails when any failed or when the number of
    checks run is not the expected one (a case that silently ran fewer
    checks must not pass; None: a number the data decides, as one check
    per GPU found). not_run(why) names a case this machine cannot
    run by its nature (not a missing package): printed "NOT RUN why",
    counted apart (", N not run" and the names after the totals), not a
    failure."""

    def __init__(self):
        self.results = []
        self.skipped = []

    def not_run(self, why):
        self.skipped.append(why)
        print("NOT RUN " + why, flush=True)

    def check(self, name, cond, detail=""):
        self.results.append((name, bool(cond)))
        print(f"{'PASS' if cond else 'FAIL'} {name}{(': ' + str(detail)[:600]) if detail and not cond else ''}",
              flush=True)
        return bool(cond)

    def need(self, what, present, why):
        """A prerequisite of this GPU suite: missing is a failure, said."""
        return self.check(f"prerequisite {what}", present, why)

    def finish(self, expected):
        passed = sum(1 for _, ok in self.results if ok)
        failed = len(self.results) - passed
        if expected is not None and len(self.results) != expected:
            print(f"FAIL ran {len(self.results)} checks, expected {expected}")
            failed += 1
        print(f"{passed} passed, {failed} failed" + (f", {len(self.skipped)} not run" if self.skipped else ""))
        for why in self.skipped:
            print("   not run: " + why)
        return 0 if failed == 0 and passed > 0 else 1
