#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kimg-probe summarize and the multi-process story (project issue 5 item 3):
# ranks run under libkimg.so with KIMG_LOG=...-%h-%r.log write one file
# per rank, each report names its process (host, pid, rank, local_rank,
# world_size, program), and summarize merges files from many ranks and
# hosts into groups keyed by (module file, module offset, error code),
# skipping and counting lines that are not reports. Exit 0 without
# reports, 1 with reports, 2 on usage or I/O errors.
# Real ranks: the fake driver (tests/fake_cuda, no GPU) and drv_dl from
# make shim-tests; other hosts: report files written by hand.
. "$(dirname "$0")/../lib.bash" probe
LIB=$BUILD/libkimg.so
DRV=$BUILD/shim-tests/drv_dl
fake_standin "$FAKE/libcuda.so.1"
for f in "$LIB" "$DRV" "$FX/sm80.cubin"; do
	require "$f" "make BUILD=$BUILD all shim-tests fixtures"
done
host=$(uname -n)
logs=$TMP/logs
mkdir -p "$logs"

# rank NAME-VARS... -- ARGS: one "rank" of a job through the fake driver (SM 9.0)
rank() {
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" FAKE_CUDA_SM=90 KIMG_FORMAT=json \
		KIMG_LOG="$logs/kimg-%h-%r.log" "${envs[@]}" "$DRV" "$@" >/dev/null 2>&1
	local newest
	newest=$(ls -t "$logs"/* 2>/dev/null | head -n1)
	[ -z "$newest" ] || json_collect report-lines "$newest" "rank $*"
}

# ---- four torchrun-style ranks and one Slurm rank load an sm_80 cubin on SM 9.0 ----
for r in 0 1 2 3; do
	rank RANK=$r LOCAL_RANK=$r WORLD_SIZE=8 -- dlsym path "$FX/sm80.cubin"
done
rank SLURM_PROCID=7 SLURM_LOCALID=3 SLURM_NTASKS=8 -- dlsym path "$FX/sm80.cubin"
n=$(ls "$logs" | wc -l)
if [ "$n" -eq 5 ]; then ok "%h-%r: one log per rank (5 files)"; else fail "%h-%r: one log per rank: $n files: $(ls "$logs")"; fi
for r in 0 1 2 3 7; do
	if [ -s "$logs/kimg-$host-$r.log" ]; then ok "log of rank $r is kimg-$host-$r.log"; else fail "log of rank $r is kimg-$host-$r.log"; fi
done

# each report carries its process
run python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).readline())
p = d["process"]
assert p["host"] == sys.argv[2] and p["rank"] == 2 and p["local_rank"] == 2 and p["world_size"] == 8, p
assert p["program"] == "drv_dl" and isinstance(p["pid"], int) and p["pid"] > 0, p
d = json.loads(open(sys.argv[3]).readline())
assert d["process"]["rank"] == 7 and d["process"]["local_rank"] == 3 and d["process"]["world_size"] == 8, d["process"]
' "$logs/kimg-$host-2.log" "$host" "$logs/kimg-$host-7.log"
expect_rc 0 "report process object: host, pid, rank, local_rank, world_size, program (torchrun and Slurm variables)"

# ---- the same module from another host (written by hand), a second error, stray lines ----
line=$(head -n1 "$logs/kimg-$host-0.log")
python3 - "$line" "$logs/kimg-node9-4.log" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
d["process"].update(host="node9", rank=4, local_rank=0, pid=99)
d["device"]["name"] = "NVIDIA A100"; d["device"]["sm"] = "8.0"
e = json.loads(sys.argv[1])
e["process"].update(host="node9", rank=5, local_rank=1)
e["error"].update(code=218, name="CUDA_ERROR_INVALID_PTX")
e["kernel"] = {"name": "_Z4axpyfPfS_", "demangled": "axpy(float, float*, float*)"}
with open(sys.argv[2], "w") as f:
    f.write("kimg: warning: KIMG_FORMAT=xml: expected text or json; using the default\n")
    f.write(json.dumps(d) + "\n\n")
    f.write(json.dumps(e) + "\n")
    f.write("[1,2,3]\n")
    f.write(json.dumps(d)[:57])  # a rank killed mid-write: no newline, cut
PY

run "$PROBE" summarize --json "$logs"/*.log
expect_rc 2 "summarize --json with reports and a cut report (unreadable: exit 2)"
expect_json "two groups: (sm80.cubin@0, 209) and (sm80.cubin@0, 218)" \
	"[(g['module']['file'].endswith('/sm80.cubin'), g['module']['offset'], g['error']['code']) for g in d['groups']] == [(True, 0, 209), (True, 0, 218)]"
expect_json "209 group: 6 reports, ranks 0-4 and 7 sorted, both hosts" \
	"d['groups'][0]['reports'] == 6 and d['groups'][0]['ranks'] == [0, 1, 2, 3, 4, 7] and sorted(d['groups'][0]['hosts']) == sorted(['$host', 'node9'])"
expect_json "209 group: both GPUs, name and SM" \
	"sorted((x['name'], x['sm']) for x in d['groups'][0]['devices']) == [('Fake GPU', '9.0'), ('NVIDIA A100', '8.0')]"
expect_json "209 group: error name and the first fix (nvcc for sm_90)" \
	"d['groups'][0]['error']['name'] == 'CUDA_ERROR_NO_BINARY_FOR_GPU' and 'sm_90' in d['groups'][0]['fix']['nvcc']"
expect_json "218 group: one report, rank 5 on node9, demangled kernel" \
	"d['groups'][1]['reports'] == 1 and d['groups'][1]['ranks'] == [5] and d['groups'][1]['hosts'] == ['node9'] and d['groups'][1]['kernels'] == ['axpy(float, float*, float*)']"
expect_json "totals: 6 files, 7 reports, 3 skipped lines (stray text, [1,2,3], cut line; blank not counted)" \
	"(d['files'], d['reports'], d['skipped_lines']) == (6, 7, 3)"
expect_json "the cut line is the one unreadable report" "d['unreadable_reports'] == 1"
expect_grep "stderr names the unreadable report" "$TMP/err" \
	"kimg-probe: $logs/kimg-node9-4.log: 1 of them is a report that could not be read (first: line 6: "
expect_grep "stderr names the file, the count and the first bad line" "$TMP/err" \
	"kimg-probe: $logs/kimg-node9-4.log: skipped 3 lines that are not kimg reports (first: line 1: 'k' where a JSON value was expected)"
expect_eq "stderr: the five clean logs say nothing (one skip line, the node9-4 log's)" "1" \
	"$(grep -c 'skipped' "$TMP/err")"

run "$PROBE" summarize "$logs"/*.log
expect_rc 2 "summarize (text) with reports and an unreadable one"
expect_grep "text: the unreadable report is said, not hidden" "$TMP/out" "1 report could not be read: failures not shown above (exit 2)"
expect_grep "text: header row" "$TMP/out" "module"
if grep -E "^1 +[^ ]*/sm80\.cubin@0x0 +209 CUDA_ERROR_NO_BINARY_FOR_GPU +6 +.* +0-4,7 +.*Fake GPU \(SM 9\.0\)" "$TMP/out" >/dev/null; then
	ok "text: row 1 module@offset, error, count, ranks 0-4,7, GPUs"; else fail "text: row 1: $(cat "$TMP/out")"; fi
if grep -E "^2 +.*218 CUDA_ERROR_INVALID_PTX +1 +node9 +5 " "$TMP/out" >/dev/null; then
	ok "text: row 2 (218 on node9, rank 5)"; else fail "text: row 2: $(cat "$TMP/out")"; fi
expect_grep "text: fix of row 1" "$TMP/out" "fix 1: "
expect_grep "text: summary line" "$TMP/out" "7 reports in 2 groups from 6 files on 2 hosts; 3 lines skipped"

# ---- a text cell longer than its 512 bytes: cut at 511, nothing appended ----
# Five GPUs of 207-character names in one group: the GPUs cell is the first
# 511 characters of "NAME (SM 9.0), NAME (SM 9.0), ..." (its buffer's size
# less the NUL); the "+N more" that would follow has no room and is not
# written over the cut text.
python3 - "$logs/kimg-$host-0.log" "$TMP/long/long.log" "$TMP/long/cell" <<'PY'
import json, os, sys
r = json.loads(next(l for l in open(sys.argv[1]) if l.startswith("{")))
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
names = ["GPU-%d-" % i + "x" * 200 for i in range(5)]
with open(sys.argv[2], "w") as f:
    for n in names:
        r["device"]["name"] = n
        f.write(json.dumps(r) + "\n")
open(sys.argv[3], "w").write(", ".join("%s (SM %s)" % (n, r["device"]["sm"]) for n in names)[:511])
PY
run "$PROBE" summarize "$TMP/long/long.log"
expect_rc 1 "summarize: one group of five long-named GPUs"
expect_grep "the GPUs cell: the first 511 characters, nothing written over them" "$TMP/out" "$(cat "$TMP/long/cell") "

# ---- no reports: exit 0; unreadable file and usage errors: exit 2 ----
printf 'kimg: 2 kernels in 1 module failed to load (see above)\n' >"$TMP/empty.log"
: >"$TMP/zero.log"
run "$PROBE" summarize --json "$TMP/empty.log" "$TMP/zero.log"
expect_rc 0 "summarize: files without reports"
expect_json "no groups, 2 files, 1 skipped" "d == {'kimg_version': '$(cat "$ROOT/VERSION")', 'groups': [], 'files': 2, 'reports': 0, 'skipped_lines': 1, 'unreadable_reports': 0, 'inventory': None}"
run "$PROBE" summarize "$TMP/empty.log"
expect_grep "text: summary line without reports" "$TMP/out" "0 reports in 0 groups from 1 file on 0 hosts; 1 line skipped"
run "$PROBE" summarize --json "$logs/kimg-$host-0.log" "$TMP/missing.log"
expect_rc 2 "summarize: a missing file"
expect_grep "missing file named on stderr" "$TMP/err" "kimg-probe: $TMP/missing.log: "
expect_json "the readable file is still summarized" "d['reports'] == 1 and d['files'] == 1"
run "$PROBE" summarize
expect_rc 2 "summarize without FILE"
run "$PROBE" summarize --bogus x
expect_rc 2 "summarize --bogus"
run "$PROBE" summarize - <"$logs/kimg-$host-1.log"
expect_rc 1 "summarize - reads stdin"

# ---- JSON is UTF-8 whatever a path holds (issue 12 item 5) ----
# A module file whose name holds an encoded surrogate, an overlong form and
# a byte above U+10FFFF: the shim's report must still be strict JSON, so
# summarize reads it (a report it could not read would be a failure lost).
rm -f "$logs"/*
odd=$TMP/$(printf 'odd-\355\240\200-\300\257-\364\220\200\200').cubin
cp "$FX/sm80.cubin" "$odd"
rank RANK=0 -- dlsym path "$odd"
if python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1], encoding="utf-8", errors="strict")]' "$logs/kimg-$host-0.log"; then
	ok "report naming a non-UTF-8 path is strict UTF-8 JSON"; else fail "report naming a non-UTF-8 path: $(head -c 300 "$logs/kimg-$host-0.log" | od -c | head -5)"; fi
run "$PROBE" summarize --json "$logs/kimg-$host-0.log"
expect_rc 1 "summarize reads the report of the non-UTF-8 path"
expect_json "its module file keeps every byte, escaped" \
	"d['reports'] == 1 and d['unreadable_reports'] == 0 and d['groups'][0]['module']['file'].endswith('odd-\u00ed\u00a0\u0080-\u00c0\u00af-\u00f4\u0090\u0080\u0080.cubin')"
# A damaged report (raw invalid UTF-8, as an older writer produced): not "no failures".
printf '{"error":{"code":209},"module":{"file":"/x/\355\240\200.so"}}\n' >"$TMP/bad-utf8.log"
run "$PROBE" summarize "$TMP/bad-utf8.log"
expect_rc 2 "summarize: a report that is not UTF-8 is an error, not 'no failures'"
expect_grep "unreadable report counted" "$TMP/out" "1 report could not be read"

# ---- a lone process: rank unknown, shown as ? ----
rm -f "$logs"/*
env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" FAKE_CUDA_SM=90 KIMG_FORMAT=json KIMG_LOG="$logs/solo-%r.log" \
	"$DRV" dlsym path "$FX/sm80.cubin" >/dev/null 2>&1
run "$PROBE" summarize --json "$logs"/solo-0.log
expect_json "no launcher: %r is 0 in the file name, rank null in the report" \
	"d['groups'][0]['ranks'] == [] and d['groups'][0]['unknown_rank_reports'] == 1"
# ---- six GPUs in one group: the text names four and "+2 more" ----
mkdir -p "$TMP/six"
python3 - "$logs/solo-0.log" "$TMP/six/all.log" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
with open(sys.argv[2], "w") as f:
    for k, name in enumerate(["GPU A", "GPU B", "GPU C", "GPU D", "GPU E", "GPU F"]):
        d["device"]["name"] = name
        d["process"]["rank"] = k
        f.write(json.dumps(d) + "\n")
PY
run "$PROBE" summarize "$TMP/six/all.log"
expect_grep "text: four GPUs named, then +2 more" "$TMP/out" \
	"GPU A (SM 9.0), GPU B (SM 9.0), GPU C (SM 9.0), GPU D (SM 9.0) +2 more"
if grep -E " 0-5 +GPU A " "$TMP/out" >/dev/null; then ok "text: ranks 0 to 5 as one range, 0-5"; else fail "text: ranks 0-5: $(cat "$TMP/out")"; fi
run "$PROBE" summarize --json "$TMP/six/all.log"
expect_json "JSON: all six GPUs" "len(d['groups'][0]['devices']) == 6"
# ---- the other report kind: a driver_mismatch report is a report (issue 31 item 3) ----
# A runtime asking CUDA 13.0 of a 12.2 driver (tests/shim/driver_mismatch.sh):
# the log then holds a driver_mismatch object only, which has no module.
rm -f "$logs"/*
rank FAKE_CUDA_SM=80 FAKE_CUDA_DRIVER=12020 RANK=3 -- gpa load "$FX/sm80.cubin"
if grep -q '"report":"driver_mismatch"' "$logs/kimg-$host-3.log" 2>/dev/null; then
	ok "the shim wrote a driver_mismatch report"; else fail "no driver_mismatch report: $(cat "$logs"/* 2>&1 | head -c 300)"; fi
run "$PROBE" summarize --json "$logs/kimg-$host-3.log"
expect_rc 1 "summarize: a log holding only a driver_mismatch report has a report (exit 1, not 0)"
expect_json "one driver_mismatch group: error 35, no module, no line skipped" \
	"d['reports'] == 1 and d['skipped_lines'] == 0 and [(g['kind'], g['error']['code'], g['module']) for g in d['groups']] == [('driver_mismatch', 35, {'file': None, 'offset': None})]"
expect_json "its fix is the report's sentence, its rank 3" \
	"'580' in d['groups'][0]['fix'] and d['groups'][0]['ranks'] == [3]"
rank RANK=4 -- dlsym path "$FX/sm80.cubin"
run "$PROBE" summarize "$logs"/*.log
expect_rc 1 "summarize (text): a driver mismatch and an image report"
if grep -Eq '^1 +\(driver mismatch\) +35 cudaErrorInsufficientDriver +1 ' "$TMP/out"; then
	ok "text: the driver mismatch row"; else fail "text: the driver mismatch row: $(cat "$TMP/out")"; fi
expect_grep "text: its fix line" "$TMP/out" "fix 1: upgrade the driver to >= 580"
expect_eq "text: one nvcc line, the image report's (the driver mismatch's fix is a sentence)" "1" \
	"$(grep -c '^  nvcc: ' "$TMP/out")"
expect_grep "text: both reports in two groups" "$TMP/out" "2 reports in 2 groups from 2 files"
finish
