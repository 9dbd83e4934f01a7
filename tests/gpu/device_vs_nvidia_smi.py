#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`kimg-probe device --json` must agree with nvidia-smi on name, CC and driver.
GPUs are paired by UUID, never by position: CUDA numbers devices fastest
first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, nvidia-smi by PCI bus, so on a
mixed machine index 0 need not be the same GPU. One check per GPU and field,
plus the device count and one per UUID found on both sides; prints
"N passed, M failed" even when a tool fails (its failure is then the one
failed check)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpulib import Checks  # noqa: E402

probe = sys.argv[1]
C = Checks()

try:
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,name,compute_cap,driver_version",
                          "--format=csv,noheader"], capture_output=True, text=True, check=True)
    rows = [[c.strip() for c in line.split(",")] for line in smi.stdout.strip().splitlines()]
    out = subprocess.run([probe, "device", "--json"], capture_output=True, text=True)
    print(out.stdout.strip())
    devs = json.loads(out.stdout)["devices"]
except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as e:
    C.check(f"nvidia-smi or kimg-probe device failed: {e}", False)
    rows, devs = [], []
if rows or devs:
    C.check(f"device count: kimg {len(devs)}, nvidia-smi {len(rows)}", len(devs) == len(rows) and rows)
by_uuid = {d.get("uuid"): d for d in devs}
for idx, uuid, name, cap, drv in rows:
    d = by_uuid.get(uuid)
    C.check(f"gpu {idx} {uuid}: in kimg-probe device (uuids there: {sorted(map(str, by_uuid))})", d is not None)
    if d is None:
        continue
    for what, a, b in (("name", d["name"], name), ("cc", d["cc"], cap), ("driver", d["driver"], drv)):
        C.check(f"gpu {idx} ({uuid}) {what}: kimg {a!r} nvidia-smi {b!r}", a == b)
# as many checks as the two sides give (no fixed number: one per GPU and field)
sys.exit(C.finish(None))
