#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kimg-probe doctor and device on a GPU machine (issue 13), over the stock Python environment:
#   - device --json: every GPU's three compute-capability readings (driver attributes, NVML, GPU-name
#     table) present and agreeing, and its UUID equal to nvidia-smi's
#   - doctor exits 0; every distribution that installed a file with device code (an independent
#     oracle below: importlib.metadata's file lists + a small ELF section reader, not kimg's code) is
#     named in doctor's JSON with a verdict; no package fails
#   - time: cold (after dropping the page cache, when this user may) and warm (median of 5); warm < 2 s
# Writes the text page to $OUT/doctor.txt (for docs/probe.md §2), the JSON to $OUT/doctor.json. Prints
# "N passed, N failed" and exits non-zero on any failure.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${BUILD:-build}
OUTDIR=${OUT:-$BUILD/gpu}
mkdir -p "$OUTDIR"
PROBE=$BUILD/kimg-probe
# checks and totals: tests/lib.bash (finish fails a run of another number of
# checks: a case that ran fewer did not pass)
. "$(dirname "$0")/../lib.bash"
EXPECTED_CHECKS=7
[ -x "$PROBE" ] || make -j"$(nproc)" BUILD="$BUILD" all >"$OUTDIR/build-doctor.log" 2>&1 ||
	{ tail -n 30 "$OUTDIR/build-doctor.log"; fail "make all"; finish; }

# ---- device: three readings ----
"$PROBE" device --json >"$OUTDIR/device.json" 2>"$OUTDIR/device.err"; rc=$?
"$PROBE" device >"$OUTDIR/device.txt" 2>&1
cat "$OUTDIR/device.txt"
check "device --json exits 0" eval "[ $rc -eq 0 ]"
check "every GPU: driver, NVML and name-table readings all known and agreeing" eval \
	"python3 -c 'import json,sys; d=json.load(open(\"$OUTDIR/device.json\")); sys.exit(0 if d[\"devices\"] and all(g[\"cc_readings\"][\"agree\"] and None not in (g[\"cc_readings\"][\"driver\"], g[\"cc_readings\"][\"nvml\"], g[\"cc_readings\"][\"name_table\"]) for g in d[\"devices\"]) else 1)'"
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=uuid --format=csv,noheader >"$OUTDIR/smi-uuids.txt" 2>/dev/null
	check "device UUIDs are nvidia-smi's (CUDA_VISIBLE_DEVICES unset: all of them, in order)" eval \
		"python3 -c 'import json,sys; d=json.load(open(\"$OUTDIR/device.json\")); s=[l.strip() for l in open(\"$OUTDIR/smi-uuids.txt\") if l.strip()]; sys.exit(0 if [g[\"uuid\"] for g in d[\"devices\"]] == s else 1)'"
else
	check "nvidia-smi on PATH (a prerequisite on the GPU machine)" eval false
fi

# ---- doctor: cold, then warm ----
dropped=no
if [ "${KIMG_GPU_NO_DROP_CACHES:-0}" != 1 ] && sync && echo 3 2>/dev/null >/proc/sys/vm/drop_caches; then dropped=yes; fi
t0=$(date +%s.%N)
"$PROBE" doctor --json >"$OUTDIR/doctor.json" 2>"$OUTDIR/doctor.err"; rc=$?
t1=$(date +%s.%N)
cold=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
"$PROBE" doctor >"$OUTDIR/doctor.txt" 2>&1
cat "$OUTDIR/doctor.txt"
warm_runs=()
for i in 1 2 3 4 5; do
	t0=$(date +%s.%N)
	"$PROBE" doctor --json >/dev/null 2>&1
	t1=$(date +%s.%N)
	warm_runs+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
done
warm=$(printf '%s\n' "${warm_runs[@]}" | sort -n | sed -n 3p)
echo "doctor time: cold ${cold} s (page cache dropped: $dropped), warm median ${warm} s (runs: ${warm_runs[*]})"
echo "doctor JSON summary: $(python3 -c "import json; print(json.load(open('$OUTDIR/doctor.json'))['summary'])" 2>&1)"
check "doctor exits 0 (rc $rc; stderr: $(head -c 200 "$OUTDIR/doctor.err" | tr '\n' ' '))" eval "[ $rc -eq 0 ]"
check "doctor warm under 2 s (median ${warm} s)" eval "awk -v w='$warm' 'BEGIN { exit !(w < 2) }'"

# ---- the oracle: distributions owning files with device code ----
python3 - "$OUTDIR/doctor.json" >"$OUTDIR/doctor-oracle.txt" 2>&1 <<'PY'
import importlib.metadata as md, json, os, re, struct, sys

def norm(n):
    return re.sub(r"[-_.]+", "-", n).lower()

def has_device_code(path):
    """ELF with a .nv_fatbin / __nv_relfatbin section, a cubin (e_machine 190) or a fatbin file."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] == b"\x50\xed\x55\xba":  # fatbin magic 0xBA55ED50, little endian
                return True
            if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return False
            if struct.unpack_from("<H", head, 18)[0] == 190:
                return True
            shoff, = struct.unpack_from("<Q", head, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
            if not shoff or shentsize != 64 or not shnum or shstrndx >= shnum:
                return False
            f.seek(shoff)
            sh = f.read(64 * shnum)
            name_off, = struct.unpack_from("<Q", sh, shstrndx * 64 + 0x18)
            name_size, = struct.unpack_from("<Q", sh, shstrndx * 64 + 0x20)
            f.seek(name_off)
            names = f.read(name_size)
            for i in range(shnum):
                n, = struct.unpack_from("<I", sh, i * 64)
                s = names[n:names.index(b"\0", n)]
                if s in (b".nv_fatbin", b"__nv_relfatbin"):
                    size, = struct.unpack_from("<Q", sh, i * 64 + 0x20)
                    if size:
                        return True
    except (OSError, ValueError, struct.error, IndexError):
        return False
    return False

doc = json.load(open(sys.argv[1]))
named = {norm(p["package"]["name"]): p["verdict"] for p in doc["packages"] if p["package"] and p["modules"]}
want = {}
def dist_name(dist):
    n = dist.metadata["Name"] if dist.metadata else None
    if not n:  # no METADATA: the .dist-info directory's name part
        n = re.sub(r"-[^-]*\.(dist|egg)-info$", "", os.path.basename(str(getattr(dist, "_path", "?"))))
    return n

for dist in md.distributions():
    for f in dist.files or []:
        p = str(f.locate())
        if (p.endswith(".so") or ".so." in p or p.endswith((".cubin", ".fatbin"))) and has_device_code(p):
            want.setdefault(norm(dist_name(dist)), []).append(p)
            break
missing = sorted(set(want) - set(named))
print("distributions with device code (oracle):", len(want))
for n in sorted(want):
    print(f"  {n}: doctor verdict {named.get(n, 'MISSING')} (e.g. {want[n][0]})")
extra = sorted(set(named) - set(want))
if extra:
    print("named by doctor only (PTX or other device-code files the oracle does not look for):", extra)
bad = {n: v for n, v in named.items() if v not in ("ok", "cannot_run", "needs_newer_driver")}
print("missing:", missing, "bad verdicts:", bad)
sys.exit(0 if want and not missing and not bad else 1)
PY
orc=$?
cat "$OUTDIR/doctor-oracle.txt"
check "every distribution with device code (oracle) is named by doctor with a verdict" eval "[ $orc -eq 0 ]"
check "no package fails on this machine's GPUs" eval \
	"python3 -c 'import json,sys; d=json.load(open(\"$OUTDIR/doctor.json\")); sys.exit(0 if all(p[\"verdict\"] == \"ok\" for p in d[\"packages\"]) else 1)'"
finish
