#!/usr/bin/env python3
"""`kimg-probe device --json` must agree with nvidia-smi on name, CC and driver."""
import json
import subprocess
import sys

probe = sys.argv[1]
smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,compute_cap,driver_version",
                      "--format=csv,noheader"], capture_output=True, text=True, check=True)
rows = [[c.strip() for c in line.split(",")] for line in smi.stdout.strip().splitlines()]
out = subprocess.run([probe, "device", "--json"], capture_output=True, text=True)
print(out.stdout.strip())
doc = json.loads(out.stdout)
devs = doc["devices"]
bad = 0
if len(devs) != len(rows):
    print(f"count differs: kimg {len(devs)}, nvidia-smi {len(rows)}")
    bad += 1
for (idx, name, cap, drv), d in zip(rows, devs):
    for what, a, b in (("name", d["name"], name), ("cc", d["cc"], cap), ("driver", d["driver"], drv)):
        ok = a == b
        print(f"{'ok ' if ok else 'BAD'} gpu {idx} {what}: kimg {a!r} nvidia-smi {b!r}")
        bad += not ok
print(f"{0 if bad else 1} passed, {1 if bad else 0} failed")
sys.exit(1 if bad else 0)
