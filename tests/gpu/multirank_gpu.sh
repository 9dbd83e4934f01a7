#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU machine: the multi-process story end to end (project issue 5 item 3).
# Two torchrun ranks on one GPU each call a kernel of a library built for
# sm_80 only, under libkimg.so with KIMG_FORMAT=json and
# KIMG_LOG=kimg-%h-%r.log; each rank must write its own log whose report
# names its process (rank, local_rank, world_size), and
# `kimg-probe summarize` must merge them into one group with ranks 0-1.
# Needs nvcc, torchrun (PyTorch) and a GPU (its SM is read from nvidia-smi: the
# library is built for another major). Prints ok/FAIL per check and
# "N passed, N failed, N skipped" (tests/lib.bash); fails unless all 12
# checks ran and passed.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${BUILD:-build}
WORK=${WORK:-$BUILD/gpu-multirank}
# checks and totals: tests/lib.bash (finish fails a run of another number of checks)
. "$(dirname "$0")/../lib.bash"
EXPECTED_CHECKS=12

for tool in nvcc torchrun python3; do
	command -v "$tool" >/dev/null || { fail "$tool not on PATH"; finish; }
done
if [ ! -f "$BUILD/libkimg.so" ] || [ ! -x "$BUILD/kimg-probe" ]; then
	make -j"$(nproc)" BUILD="$BUILD" all >/dev/null 2>&1 || { fail "make all"; finish; }
fi
LIB=$(cd "$BUILD" && pwd)/libkimg.so
PROBE=$BUILD/kimg-probe
rm -rf "$WORK" && mkdir -p "$WORK/logs"
logs=$(cd "$WORK/logs" && pwd)
host=$(uname -n)

# SASS of another major only, no PTX: nothing this GPU can run
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -n 1 | tr -d ' ')
wrong=80; [ "${cc%%.*}" = 8 ] && wrong=90
echo "device: SM ${cc:-unknown}; library built for sm_$wrong"
ext=$(cd "$WORK" && pwd)/multirank_sm80.so
check "nvcc builds the sm_$wrong-only library" \
	nvcc -shared -Xcompiler -fPIC -gencode arch=compute_$wrong,code=sm_$wrong -o "$ext" tests/gpu/src/multirank_ext.cu

env LD_PRELOAD="$LIB" KIMG_FORMAT=json KIMG_LOG="$logs/kimg-%h-%r.log" \
	timeout 240 torchrun --standalone --nproc-per-node 2 tests/gpu/src/multirank.py "$ext" >"$WORK/torchrun.out" 2>&1
rc=$?
sed 's/^/  | /' "$WORK/torchrun.out" | grep -v '^  | *$' | tail -n 20
check "torchrun: both ranks got 209 from the launch (status $rc)" [ "$rc" -eq 0 ]
check "rank 0 printed its 209" grep -q "rank 0: multirank_launch: 209" "$WORK/torchrun.out"
check "rank 1 printed its 209" grep -q "rank 1: multirank_launch: 209" "$WORK/torchrun.out"
ls -l "$logs" | sed 's/^/  | /'
check "KIMG_LOG %h-%r: kimg-$host-0.log written" test -s "$logs/kimg-$host-0.log"
check "KIMG_LOG %h-%r: kimg-$host-1.log written" test -s "$logs/kimg-$host-1.log"

report_ok() { # RANK: its log's first report names its process and the library
	python3 - "$logs/kimg-$host-$1.log" "$1" "$host" "$ext" <<'PY'
import json, sys
path, rank, host, ext = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
R = [json.loads(l) for l in open(path) if l.startswith("{")]
ok = len(R) >= 1
r = R[0] if R else {}
p = r.get("process") or {}
ok = ok and r["error"]["code"] == 209 and p.get("rank") == rank and p.get("local_rank") == rank
ok = ok and p.get("world_size") == 2 and p.get("host") == host and p.get("pid", 0) > 0
ok = ok and (r["module"]["file"] or "").endswith("multirank_sm80.so")
ok = ok and len(r["module"]["images"]) == 1 and r["module"]["images"][0]["arch"] in ("sm_80", "sm_90")
if not ok:
    print("   report:", json.dumps(r)[:1200])
sys.exit(0 if ok else 1)
PY
}
check "rank 0 report: 209, process rank 0 of 2 on $host, module multirank_sm80.so (sm_80)" report_ok 0
check "rank 1 report: 209, process rank 1 of 2 on $host, module multirank_sm80.so (sm_80)" report_ok 1

"$PROBE" summarize --json "$logs"/*.log >"$WORK/summary.json" 2>"$WORK/summary.err"
rc=$?
check "summarize --json exits 1 (reports found; status $rc)" [ "$rc" -eq 1 ]
check "summarize: one group, 209, ranks [0, 1], one host, the library, 2 reports, device $cc" python3 - "$WORK/summary.json" "$host" "$cc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["groups"]
ok = len(g) == 1 and g[0]["error"]["code"] == 209 and g[0]["ranks"] == [0, 1] and g[0]["hosts"] == [sys.argv[2]]
ok = ok and g[0]["reports"] == 2 and (g[0]["module"]["file"] or "").endswith("multirank_sm80.so")
ok = ok and len(g[0]["devices"]) == 1 and g[0]["devices"][0]["sm"] == sys.argv[3]
ok = ok and g[0]["fix"] is not None and "sm_" in (g[0]["fix"]["nvcc"] or "") and d["skipped_lines"] == 0
if not ok:
    print("   summary:", json.dumps(d)[:1500])
sys.exit(0 if ok else 1)
PY
"$PROBE" summarize "$logs"/*.log >"$WORK/summary.txt" 2>&1
sed 's/^/  | /' "$WORK/summary.txt"
check "summarize (text): one row with ranks 0-1" grep -qE "^1 +.*multirank_sm80\.so@0x[0-9a-f]+ +209 CUDA_ERROR_NO_BINARY_FOR_GPU +2 +.* 0-1 " "$WORK/summary.txt"
check "summarize (text): summary line" grep -qx "2 reports in 1 group from 2 files on 1 host; 0 lines skipped" "$WORK/summary.txt"
finish
