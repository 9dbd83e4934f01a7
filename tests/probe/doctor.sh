#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 13: CUDA runtimes against the driver, the owning package of each
# file, fleets (--sm @FILE), the three readings of `device`, and `doctor`.
# Oracles: a real libcudart.so.13 of the toolkit (its soname says 13; NVIDIA's
# minor-version table says 13.x needs >= 580), package records written
# here, and the stand-in driver and NVML of tests/fake_cuda.
. "$(dirname "$0")/../lib.bash" probe
# doctor also reads the JIT caches under $HOME and the variables that move
# them (tests/probe/doctor_tools.sh tests those): none of this machine's
mkdir -p "$TMP/home" && export HOME=$TMP/home
unset CUPY_CACHE_DIR TORCH_EXTENSIONS_DIR TRITON_CACHE_DIR FLASHINFER_WORKSPACE_BASE CUDA_CACHE_PATH TRITON_PTXAS_PATH XDG_CACHE_HOME

# ---- 1. the toolkit's real CUDA runtime against a driver one major older ----
# The fixtures are built with this toolkit (CUDA 13: libcudart.so.13; a 12.9 toolkit: .so.12), so its
# runtime is here wherever they are. Oracle: NVIDIA's minor-version table, 13.x >= 580, 12.x >= 525.60.13.
nvcc_bin=$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
cuda_root=$(dirname "$(dirname "$(readlink -f "$nvcc_bin")")")
cudart=$(ls "$cuda_root"/lib64/libcudart.so.[0-9]* "$cuda_root"/targets/*/lib/libcudart.so.[0-9]* 2>/dev/null | head -n 1)
if [ -z "$cudart" ]; then
	fail "no libcudart.so.N next to $nvcc_bin (the toolkit the fixtures are built with)"
else
	N=$(basename "$cudart" | sed 's/^libcudart\.so\.\([0-9]*\).*/\1/')
	case $N in 13) old=12.2 floor=580 ;; 12) old=11.8 floor=525.60.13 ;; *) old="" ;; esac
	[ -n "$old" ] || fail "toolkit runtime $cudart: CUDA $N is outside this test's table"
	mkdir -p "$TMP/rt"
	cp -L "$cudart" "$TMP/rt/libcudart.so.$N"
	run "$PROBE" check --sm 9.0 --driver "$old" --json "$TMP/rt"
	expect_rc 1 "real libcudart.so.$N checked with --driver $old"
	expect_json "recognised: cudart, soname libcudart.so.$N, CUDA $N.x, minimum driver $floor" \
		'(lambda l: (l["library"], l["soname"], l["cuda_version"], l["min_driver"]))(d["files"][0]["cuda_library"])
		 == ("cudart", "libcudart.so.'"$N"'", "'"$N"'.x", "'"$floor"'")'
	expect_json "driver $old: needs_newer_driver, error 35 cudaErrorInsufficientDriver, fix >= $floor and cuda-compat-$N-0" \
		'(lambda v: (v["driver_cuda_version"], v["outcome"], v["expected_error"], v["error_name"], v["fix"]["min_driver"],
		   v["fix"]["cuda_compat_package"]))(d["files"][0]["cuda_library"]["verdicts"][0])
		 == ("'"$old"'", "needs_newer_driver", 35, "cudaErrorInsufficientDriver", "'"$floor"'", "cuda-compat-'"$N"'-0")'
	expect_json "summary: one CUDA library, one needing a newer driver, ok false" \
		'd["summary"]["cuda_libraries"] == 1 and d["summary"]["needs_newer_driver"] == 1 and d["ok"] is False'
	run "$PROBE" check --sm 9.0 --driver "$old" "$TMP/rt"
	expect_grep "text: the 35 verdict" "$TMP/out" "driver CUDA $old: NEEDS A NEWER DRIVER"
	expect_grep "text: the driver fix" "$TMP/out" "fix: upgrade the driver to >= $floor"
	run "$PROBE" check --sm 9.0 --driver "$N.0" "$TMP/rt"
	expect_rc 0 "the same runtime with --driver $N.0"
	run "$PROBE" check --sm 9.0 "$TMP/rt"
	expect_rc 0 "no driver given: the runtime is described, not failed"
	expect_grep "no driver: says what it needs" "$TMP/out" "needs a driver >= $floor"
	# doctor's exit status counts it too (issue 23: only check's was tested)
	run "$PROBE" doctor --sm 9.0 --driver "$old" "$TMP/rt"
	expect_rc 1 "doctor: the same runtime with --driver $old fails (1 CUDA library needs a newer driver)"
	expect_grep "doctor: says so in its closing line" "$TMP/out" "1 CUDA library needs a newer driver"
	run "$PROBE" doctor --json --sm 9.0 --driver "$old" "$TMP/rt"
	expect_json "doctor --json: its package group counts it, verdict needs_newer_driver, the file among the failures" \
		'[(p["files"], p["cannot_run"], p["needs_newer_driver"], p["verdict"], [(f["path"].endswith("/libcudart.so.'"$N"'"), f["needs_newer_driver"]) for f in p["failures"]]) for p in d["packages"]]
		 == [(1, 0, 1, "needs_newer_driver", [(True, True)])] and d["ok"] is False'
	run "$PROBE" doctor --sm 9.0 --driver "$N.0" "$TMP/rt"
	expect_rc 0 "doctor: with --driver $N.0 it passes"
	# a pip-style name carrying the full version: a newer minor on an older one of the same major
	rm "$TMP/rt/libcudart.so.$N"
	cp -L "$cudart" "$TMP/rt/libcudart.so.$N.4.127"
	run "$PROBE" check --sm 9.0 --driver "$N.2" --json "$TMP/rt"
	expect_json "libcudart.so.$N.4.127 (file name wins): CUDA $N.4 on $N.2 runs under minor-version compatibility" \
		'(lambda l: (l["cuda_version"], l["version_source"], l["verdicts"][0]["outcome"]))(d["files"][0]["cuda_library"])
		 == ("'"$N"'.4", "file name", "minor_version_compat")'
fi

# ---- 2. the owning package ----
sp=$TMP/env/lib/python3.11/site-packages
mkdir -p "$sp/foo" "$sp/foo-1.2.3.dist-info" "$TMP/env/conda-meta" "$TMP/env/lib/bar"
cp "$FX/libtwo.so" "$sp/foo/_C.so"
printf 'foo/__init__.py,sha256=abc,0\nfoo/_C.so,sha256=def,123\n"foo/odd,name.txt",,\nfoo-1.2.3.dist-info/RECORD,,\n' \
	>"$sp/foo-1.2.3.dist-info/RECORD"
echo pip >"$sp/foo-1.2.3.dist-info/INSTALLER"
cp "$FX/sm80_exe" "$TMP/env/lib/bar/libbar.so"
cat >"$TMP/env/conda-meta/bar-4.5-h123_0.json" <<'JSON'
{"name": "bar", "version": "4.5", "build": "h123_0", "files": ["lib/bar/libbar.so", "lib/bar/README"]}
JSON
cp "$FX/sm80_exe" "$TMP/env/unowned_exe"
run "$PROBE" check --sm 9.0 --json "$sp"
expect_rc 1 "check of a fake site-packages on 9.0"
expect_json "foo/_C.so: package foo 1.2.3, installer pip, from its dist-info RECORD" \
	'[(f["path"].endswith("foo/_C.so"), f["package"]["name"], f["package"]["version"], f["package"]["installer"], f["package"]["source"])
	  for f in d["files"]] == [(True, "foo", "1.2.3", "pip", "dist-info")]'
run "$PROBE" check --sm 9.0 --json "$TMP/env"
expect_json "the conda environment: libbar.so is bar 4.5 (conda), the unrecorded file has package null" \
	'sorted((f["path"].rsplit("/", 1)[1], (f["package"] or {}).get("name"), (f["package"] or {}).get("version"),
	  (f["package"] or {}).get("installer")) for f in d["files"])
	 == [("_C.so", "foo", "1.2.3", "pip"), ("libbar.so", "bar", "4.5", "conda"), ("unowned_exe", None, None, None)]'
run "$PROBE" check --sm 9.0 "$TMP/env"
expect_grep "text: the package under its file" "$TMP/out" "  package: foo 1.2.3 (pip)"
expect_grep "text: the by-package table" "$TMP/out" "by package:"
if python3 - "$TMP/out" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]).read().split("by package:\n")[1].splitlines()[1:] if l.startswith("  ") and not l.startswith("    ")]
names = [r[0] for r in rows]
# failing packages (both) first, by name, then files without a package record
sys.exit(0 if names[:2] == ["bar", "foo"] and rows[2][0] == "(no" else 1)
PY
then ok "text groups by package: bar, foo, then the unrecorded file"; else fail "by-package table order: $(sed -n '/by package/,$p' "$TMP/out")"; fi
expect_grep "text: advice for the package" "$TMP/out" "fix for foo: rebuild foo for sm_90"
# dpkg: a stand-in dpkg directory naming the absolute path
mkdir -p "$TMP/dpkg/info"
echo "$TMP/env/unowned_exe" >"$TMP/dpkg/info/libunowned1:amd64.list"
printf 'Package: libunowned1\nStatus: install ok installed\nVersion: 7.8-1\n\n' >"$TMP/dpkg/status"
KIMG_DPKG_DIR=$TMP/dpkg run "$PROBE" check --sm 9.0 --json "$TMP/env/unowned_exe"
expect_json "dpkg: the file's package from info/*.list, its version from status" \
	'(lambda p: (p["name"], p["version"], p["installer"], p["source"]))(d["files"][0]["package"]) == ("libunowned1", "7.8-1", "dpkg", "dpkg")'
# a wheel member is owned by the wheel named by its file name
(cd "$sp" && python3 -c 'import zipfile,sys; z=zipfile.ZipFile(sys.argv[1],"w"); z.write("foo/_C.so"); z.close()' "$TMP/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl")
run "$PROBE" check --sm 9.0 --json "$TMP/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl"
expect_json "wheel member: package flash_attn 2.8.3 from the wheel name" \
	'(d["files"][0]["package"]["name"], d["files"][0]["package"]["version"], d["files"][0]["package"]["source"]) == ("flash_attn", "2.8.3", "wheel")'
run "$PROBE" check --sm 9.0 "$TMP/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl"
expect_grep "PyTorch extension advice for flash_attn: TORCH_CUDA_ARCH_LIST" "$TMP/out" \
	'fix for flash_attn: reinstall flash_attn built for sm_90: TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"'

# ---- the stand-in driver and NVML ----
# built by make (tests/fake_cuda/fake.mk), the NVML in a folder of its own
fake_standin "$FAKE/libcuda.so.1"
fake_standin "$FAKE_NVML/libnvidia-ml.so.1"
fake=$FAKE:$FAKE_NVML
# prefix assignments stay exported while the function (run) runs
h200() { FAKE_CUDA_SM=90 FAKE_CUDA_NAME="NVIDIA H200" FAKE_CUDA_DRIVER=13000 LD_LIBRARY_PATH="$fake" "$@"; }

# ---- 4. three readings ----
h200 run "$PROBE" device --json
expect_rc 0 "device with the stand-in driver and NVML"
expect_json "driver, NVML and name table agree on 9.0; the driver's reading is the one used" \
	'[(g["cc_readings"]["driver"], g["cc_readings"]["nvml"], g["cc_readings"]["name_table"], g["cc_readings"]["agree"], g["cc_readings"]["used"])
	  for g in d["devices"]] == [("9.0", "9.0", "9.0", True, "driver")]'
expect_json "matched by UUID, host named" \
	'd["devices"][0]["uuid"] == "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadae00" and d["host"] and d["not_visible"] == []'
# NVML is started once: its readings and the driver's release in one session (each start
# is a real driver's device open; it was started twice, and doctor's targets a third time)
h200 run env FAKE_NVML_LOG="$TMP/nvml.log" "$PROBE" device --json
expect_json "device: the release from NVML" 'd["driver"]["release"] == "580.00.00-fake"'
expect_eq "device: NVML started once" 1 "$(wc -l <"$TMP/nvml.log")"
h200 run env FAKE_NVML_SM=80 FAKE_NVML_COUNT=2 "$PROBE" device
expect_grep "NVML saying 8.0 for a 9.0 device: shown as a disagreement" "$TMP/out" \
	"compute capability readings: driver 9.0, NVML 8.0, name table 9.0: DISAGREE"
expect_grep "a second GPU NVML lists but CUDA does not see, by UUID" "$TMP/out" \
	"not visible to CUDA: NVIDIA H200, uuid GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadae01"
h200 run env FAKE_NVML_FAIL=1 "$PROBE" device --json
expect_json "NVML failing: no second reading, the error said" \
	'd["devices"][0]["cc_readings"]["nvml"] is None and "nvmlInit" in d["nvml_error"]'
proc_release=$(sed -n 's/.*Kernel Module *\([0-9][0-9.]*\).*/\1/p' /proc/driver/nvidia/version 2>/dev/null | head -n 1)
expect_json "NVML failing: the release from procfs (here: '${proc_release:-none}'), not NVML's" \
	"d['driver']['release'] == ('$proc_release' or None)"
h200 run env FAKE_NVML_FAIL=2 "$PROBE" device --json
expect_json "NVML's device count failing: no second reading, that call and its error named" \
	'd["devices"][0]["cc_readings"]["nvml"] is None and d["nvml_error"] == "nvmlDeviceGetCount failed (NVML error 999)"'

# ---- 5. fleets ----
h200 run "$PROBE" device --json
cp "$TMP/out" "$TMP/fleet.jsonl"
env FAKE_CUDA_SM=80 FAKE_CUDA_NAME="NVIDIA A100-SXM4-80GB" FAKE_CUDA_DRIVER=12020 LD_LIBRARY_PATH="$fake" \
	"$PROBE" device --json | python3 -c 'import json,sys; d=json.load(sys.stdin); d["host"]="node2"; print(json.dumps(d))' >>"$TMP/fleet.jsonl"
h200 "$PROBE" device --json | python3 -c 'import json,sys; d=json.load(sys.stdin); d["host"]="node3"; print(json.dumps(d))' >>"$TMP/fleet.jsonl"
run "$PROBE" check --sm "@$TMP/fleet.jsonl" --json "$FX/sm80_exe"
expect_rc 1 "check --sm @FILE over three hosts' documents"
expect_json "two distinct GPU + driver targets: H200/13.0 on 2 hosts, A100/12.2 on 1" \
	'[(t["sm"], t["driver_cuda_version"], t["device"]) for t in d["targets"]]
	 == [("9.0", "13.0", "NVIDIA H200, CUDA 13.0, 2 hosts"), ("8.0", "12.2", "NVIDIA A100-SXM4-80GB, CUDA 12.2, 1 host")]'
expect_json "sm80_exe: cannot run on the H200s, runs on the A100" \
	'[v["outcome"] for v in d["files"][0]["modules"][-1]["verdicts"]] == ["cannot_run", "sass"]'
echo '{"not": "a device document"}' >"$TMP/bad.jsonl"
run "$PROBE" check --sm "@$TMP/bad.jsonl" "$FX/sm80_exe"
expect_rc 2 "--sm @FILE with a line that is no device document"
expect_grep "names the file and line" "$TMP/err" "bad.jsonl:1: not a 'kimg-probe device --json' document"

# documents with no GPU in them: an error naming the file and the count, not an empty target list
python3 - "$TMP/fleet.jsonl" "$TMP/nogpu.jsonl" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
d["devices"] = []
with open(sys.argv[2], "w") as f:
    f.write(json.dumps(d) + "\n" + json.dumps(d) + "\n")
PY
run "$PROBE" check --sm "@$TMP/nogpu.jsonl" "$FX/sm80_exe"
expect_rc 2 "--sm @FILE whose documents list no GPU"
expect_grep "names the file and the documents" "$TMP/err" "nogpu.jsonl: no GPUs in 2 device documents"
# a document line of exactly 1 MiB (FLEET_LINE_MAX) is read; one byte more is refused, named
python3 - "$TMP/fleet.jsonl" "$TMP/max.jsonl" "$TMP/over.jsonl" <<'PY'
import sys
line = open(sys.argv[1]).readline().rstrip("\n")
for path, size in ((sys.argv[2], 1 << 20), (sys.argv[3], (1 << 20) + 1)):
    with open(path, "w") as f:
        f.write(line + " " * (size - len(line)) + "\n")
PY
run "$PROBE" check --sm "@$TMP/max.jsonl" "$FX/sm80_exe"
expect_rc 1 "--sm @FILE: a document line of exactly 1 MiB is read (sm80_exe cannot run on its H200)"
run "$PROBE" check --sm "@$TMP/over.jsonl" "$FX/sm80_exe"
expect_rc 2 "--sm @FILE: a line of 1 MiB + 1 byte is refused"
expect_grep "names the file, the line and the limit" "$TMP/err" "over.jsonl:1: line longer than 1048576 bytes"

# summarize: inventories beside reports
cp "$TMP/fleet.jsonl" "$TMP/mixed.jsonl"
echo '{"error":{"code":209,"name":"CUDA_ERROR_NO_BINARY_FOR_GPU"},"call":"cuLibraryGetKernel","module":{"file":"/app","offset":4096},"device":{"name":"NVIDIA H200","sm":"9.0"},"process":{"host":"node3","rank":0}}' >>"$TMP/mixed.jsonl"
run "$PROBE" summarize --json "$TMP/mixed.jsonl"
expect_rc 1 "summarize reports and device documents together (a report: exit 1)"
expect_json "the report is one group, the three documents an inventory of two GPU + driver rows, no line skipped" \
	'd["reports"] == 1 and d["skipped_lines"] == 0 and d["inventory"]["documents"] == 3
	 and [(g["name"], g["sm"], g["driver_cuda_version"], g["gpus"], g["hosts"]) for g in d["inventory"]["gpus"]]
	 == [("NVIDIA H200", "9.0", "13.0", 2, 2), ("NVIDIA A100-SXM4-80GB", "8.0", "12.2", 1, 1)]'
# a document of a host with no GPU is a document all the same
head -n 1 "$TMP/nogpu.jsonl" >>"$TMP/mixed.jsonl"
run "$PROBE" summarize --json "$TMP/mixed.jsonl"
expect_json "a host's document listing no GPU counts among the documents, adds no row" \
	'd["inventory"]["documents"] == 4 and len(d["inventory"]["gpus"]) == 2'
sed -i '$d' "$TMP/mixed.jsonl"
run "$PROBE" summarize "$TMP/mixed.jsonl"
expect_grep "text: the inventory table" "$TMP/out" "GPU inventory: 3 device documents"
expect_eq "text: the table's header and rows (the JSON's values, in columns)" \
	"$(printf '  %-32s %-5s %-12s %6s %6s\n' GPU CC "driver CUDA" GPUs hosts "NVIDIA H200" 9.0 13.0 2 2 "NVIDIA A100-SXM4-80GB" 8.0 12.2 1 1)" \
	"$(sed -n '/^GPU inventory:/{n;p;n;p;n;p}' "$TMP/out")"

# ---- 3. doctor ----
h200 run "$PROBE" doctor --json "$TMP/env"
expect_rc 1 "doctor over the fake environment on the stand-in H200"
cp "$TMP/out" "$TMP/doctor-page.json"
# The walk waits for the driver's devices only, not for NVML's start (the page's readings,
# on a thread of their own): with NVML taking 1.5 s, the wait is the stand-in's cuInit.
rm -f "$TMP/nvml.log"
h200 run env FAKE_NVML_INIT_MS=1500 FAKE_NVML_LOG="$TMP/nvml.log" KIMG_DOCTOR_TIMING=1 "$PROBE" doctor --json "$TMP/env"
waited=$(sed -n 's/.*waiting for the GPUs \([0-9.]*\)).*/\1/p' "$TMP/err")
expect_eq "doctor with a slow NVML: the same page (seconds aside)" \
	"$(sed 's/"seconds":[0-9.e+-]*//' "$TMP/doctor-page.json")" "$(sed 's/"seconds":[0-9.e+-]*//' "$TMP/out")"
expect_eq "doctor with a slow NVML (1.5 s): the walk waited under 1 s for the GPUs (waited ${waited:-?} s)" \
	1 "$(awk -v w="${waited:-9}" 'BEGIN { print (w < 1.0) ? 1 : 0 }')"
expect_eq "doctor: NVML started once" 1 "$(wc -l <"$TMP/nvml.log")"
expect_json "doctor: packages failures first, foo and bar failing, each with a fix" \
	'[(p["package"]["name"] if p["package"] else None, p["verdict"], bool(p["fix"])) for p in d["packages"]]
	 == [("bar", "cannot_run", True), ("foo", "cannot_run", True), (None, "cannot_run", True)]'
expect_json "doctor: GPU readings agree, target is GPU 0" \
	'd["gpus"][0]["cc_readings"]["agree"] is True and d["targets"][0]["label"] == "GPU 0 (NVIDIA H200, 9.0)"'
# files named like data or source inside a directory are left unopened, even when they hold
# device code (an sm_80 cubin saved as weights.pt, kernels.py, a.npz); the same cubin as .so is read
mkdir -p "$TMP/named"
for n in weights.pt kernels.py a.npz; do cp "$FX/sm80.cubin" "$TMP/named/$n"; done
h200 run "$PROBE" doctor --json "$TMP/named"
expect_rc 0 "doctor: a directory of an sm_80 cubin named weights.pt, kernels.py, a.npz: nothing read"
expect_json "doctor: no package with device code" 'd["packages"] == []'
cp "$FX/sm80.cubin" "$TMP/named/libk.so"
h200 run "$PROBE" doctor --json "$TMP/named"
expect_rc 1 "doctor: the same cubin as libk.so is read and cannot run on 9.0"
# a library that selects per-GPU modules at run time: its sm_80-only module, next to one that runs
# on 9.0, is code for other GPUs (not a failure); with no module that runs, the file still fails
mkdir -p "$TMP/libs/ok" "$TMP/libs/bad"
cp "$FX/libtwo.so" "$TMP/libs/ok/libcublasLt.so.13"
cp "$FX/sm80_exe" "$TMP/libs/bad/libcublasLt.so.13"
h200 run "$PROBE" doctor --json "$TMP/libs/ok"
expect_json "libcublasLt with an sm_90 module: the sm_80-only module is dispatched, nothing fails" \
	'[(p["verdict"], p["dispatched"], p["cannot_run"]) for p in d["packages"]] == [("ok", 1, 0)]'
h200 run "$PROBE" doctor --json "$TMP/libs/bad"
expect_json "libcublasLt with no module for 9.0: still cannot run" \
	'[(p["verdict"], p["dispatched"]) for p in d["packages"]] == [("cannot_run", 0)]'
# a CUDA library whose version kimg cannot read (no soname version, no
# release string): with a driver known, it says why it is not judged
mkdir -p "$TMP/libs/rand" && cp "$FX/libtwo.so" "$TMP/libs/rand/libcurand.so.10" # .so.10: not a CUDA version
h200 run "$PROBE" doctor "$TMP/libs/rand"
expect_grep "doctor text: a library of unknown CUDA version is 'not judged' for that reason, not for a missing driver" \
	"$TMP/out" "not judged (its CUDA version is not known)"
h200 run "$PROBE" doctor "$TMP/env"
expect_grep "doctor text: a FAIL line for foo" "$TMP/out" "FAIL  foo 1.2.3 (pip)"
expect_grep "doctor text: the summary line" "$TMP/out" "FAIL: 3 packages, 3 cannot run"
# names from the walk are escaped in the page, as check escapes them
esc_dir="$TMP/esc/x$(printf '\033')[31m"
mkdir -p "$esc_dir" && cp "$FX/sm80_exe" "$esc_dir/lib.so"
run "$PROBE" doctor --sm 9.0 "$TMP/esc"
if grep -q "$(printf '\033')" "$TMP/out"; then fail "doctor text: an ESC from a path reached the terminal"; else
	expect_grep "doctor text: the ESC in a path shown as \\x1b" "$TMP/out" 'x\x1b[31m/lib.so'; fi
# the Python environment of an interpreter: a stand-in python3 printing what the real one would
mkdir -p "$TMP/bin"
cat >"$TMP/bin/python3" <<PY
#!/bin/sh
# (python_env.c's query: a marker line, executable and version, cwd, stdlib, platstdlib, sys.path)
printf 'kimg-doctor-sys-path-1\n%s\t3.11.9\n%s\n%s\n%s\n%s\n%s\n' /fake/python3 /nonexistent/cwd /nonexistent/stdlib /nonexistent/stdlib /nonexistent/python311.zip "$sp"
PY
chmod +x "$TMP/bin/python3"
h200 run env PATH="$TMP/bin:$PATH" "$PROBE" doctor --json
expect_rc 1 "doctor with no arguments: python3 on PATH"
expect_json "its sys.path directories that exist, and foo found there" \
	'd["python"]["paths"] == ["'"$sp"'"] and d["python"]["version"] == "3.11.9" and [p["package"]["name"] for p in d["packages"] if p["package"]] == ["foo"]'
# No driver, on every machine: an empty file named libcuda.so.1 first on
# LD_LIBRARY_PATH (searched before the loader cache) makes dlopen fail
# ("file too short") even where a driver is installed.
mkdir -p "$TMP/nodriver" && : >"$TMP/nodriver/libcuda.so.1"
run env PATH="$TMP/bin:$PATH" LD_LIBRARY_PATH="$TMP/nodriver" "$PROBE" doctor
expect_rc 2 "doctor without a driver"
expect_grep "says there is no GPU to check against" "$TMP/out" "NO GPU TO CHECK AGAINST"
expect_grep "and why" "$TMP/out" "cannot load libcuda.so.1"
expect_grep "still lists the packages with device code" "$TMP/out" "foo 1.2.3 (pip)"
run env PATH="$TMP/bin:$PATH" "$PROBE" doctor --python /nonexistent/python
expect_rc 2 "doctor --python with an interpreter that does not exist"
expect_grep "names it" "$TMP/err" "cannot run /nonexistent/python"
# A JIT cache's entries that cannot be read (doctor_caches.c): two fatbins
# cut after 40 and 60 bytes are device code that cannot be read, counted and
# said; a host library cut short (no device code to read) and a text file
# are not.
mkdir -p "$TMP/cache-cut" "$TMP/cache-empty"
head -c 40 "$FX/multi.fatbin" >"$TMP/cache-cut/cut.fatbin"
head -c 60 "$FX/multi.fatbin" >"$TMP/cache-cut/cut2.fatbin"
head -c 3000 "$FX/libtwo.so" >"$TMP/cache-cut/cut.so"
echo hello >"$TMP/cache-cut/index.txt"
run env CUPY_CACHE_DIR="$TMP/cache-cut" "$PROBE" doctor --json --sm 9.0 "$TMP/cache-empty"
expect_json "the cut fatbins counted unreadable, nothing checked; the cut library and the text not counted" \
	"[(c['files_checked'], c['unreadable'], c['stale_count']) for c in d['jit_caches'] if c['name'] == 'cupy'] == [(0, 2, 0)]"
run env CUPY_CACHE_DIR="$TMP/cache-cut" "$PROBE" doctor --sm 9.0 "$TMP/cache-empty"
expect_grep "text: the cache's unread entries said" "$TMP/out" "0 files with device code checked, 0 stale, some entries not read"
finish
