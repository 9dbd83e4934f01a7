#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The JSON Schemas of docs/schema/ (issue 31 item 3) are a contract that
# can fail: each is a draft 2020-12 schema with its $id and schema_version,
# every object in it closed (additionalProperties false), and for each one
# a document kimg makes now is valid, the same document with a key added
# is not, and with a required key removed is not. (Every document the
# other tests make is validated too: tests/lib.bash, json_finish.)
. "$(dirname "$0")/../lib.bash" probe
if ! python3 -c 'import jsonschema' 2>/dev/null; then
	missing python3-jsonschema "the schema checks (scripts/setup-debian.sh installs it)"
	finish
fi
LIB=$BUILD_DIR/libkimg.so
DRV=$BUILD_DIR/shim-tests/drv_dl
fake_standin "$FAKE/libcuda.so.1"
require "$DRV" "make shim-tests"

# Every object schema closed; $id, schema_version, draft 2020-12.
res=$(python3 - "$ROOT/docs/schema" <<'PY'
import json, os, sys
bad = []
for name in sorted(os.listdir(sys.argv[1])):
    if not name.endswith(".schema.json"):
        continue
    s = json.load(open(os.path.join(sys.argv[1], name)))
    if s.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
        bad.append(name + ": not draft 2020-12")
    if not isinstance(s.get("schema_version"), int):
        bad.append(name + ": no schema_version")
    def walk(v, path):
        if isinstance(v, dict):
            t = v.get("type")
            if (t == "object" or (isinstance(t, list) and "object" in t)) and v.get("additionalProperties") is not False:
                bad.append("%s: %s: an object schema without additionalProperties false" % (name, path))
            for k, c in v.items():
                walk(c, path + "/" + k)
        elif isinstance(v, list):
            for i, c in enumerate(v):
                walk(c, "%s/%d" % (path, i))
    walk(s, "#")
print("\n".join(bad))
PY
)
expect_eq "every schema: draft 2020-12, schema_version, every object closed" "" "$res"
n=$(ls "$ROOT"/docs/schema/*.schema.json | wc -l)
for s in "$ROOT"/docs/schema/*.schema.json; do
	b=$(basename "$s")
	if grep -qF "schema/$b" "$ROOT/docs/json-probe.md" "$ROOT/docs/json-shim-report.md"; then ok "$b is named in the docs"
	else fail "$b is named in neither docs/json-probe.md nor docs/json-shim-report.md"; fi
done

# One real document of each kind.
mkdir -p "$TMP/docs" "$TMP/logs"
h200="FAKE_CUDA_SM=90 FAKE_CUDA_COUNT=1 FAKE_CUDA_DRIVER=13000 FAKE_CUDA_NAME=NVIDIA_H200"
env $h200 LD_LIBRARY_PATH="$FAKE" "$PROBE" device --json >"$TMP/docs/device" 2>/dev/null
"$PROBE" scan --json --kernels "$FX/multi.fatbin" "$FX/libtwo.so" >"$TMP/docs/scan" 2>/dev/null
"$PROBE" check --json --sm 9.0,8.0 "$FX/multi_exe" "$FX/sm80.cubin" >"$TMP/docs/check" 2>/dev/null
"$PROBE" doctor --json --sm 9.0 "$FX" >"$TMP/docs/doctor" 2>/dev/null
"$PROBE" check --json "$FX/sm80.cubin" >"$TMP/docs/error" 2>/dev/null
env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" FAKE_CUDA_SM=90 KIMG_FORMAT=json KIMG_LOG="$TMP/logs/image.log" \
	"$DRV" dlsym path "$FX/sm80.cubin" >/dev/null 2>&1
env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" FAKE_CUDA_SM=80 FAKE_CUDA_DRIVER=12020 KIMG_FORMAT=json \
	KIMG_LOG="$TMP/logs/mismatch.log" "$DRV" gpa load "$FX/sm80.cubin" >/dev/null 2>&1
head -n1 "$TMP/logs/image.log" >"$TMP/docs/report"
head -n1 "$TMP/logs/mismatch.log" >"$TMP/docs/driver-mismatch"
"$PROBE" summarize --json "$TMP/logs/image.log" "$TMP/logs/mismatch.log" >"$TMP/docs/summarize" 2>/dev/null
# The members that came after the first schemas, filled: a check and a
# doctor placed on a Kubernetes node list (sm80_exe runs on the A100 node,
# not on the H100 one; cpu-1 has no GPU labels), and a doctor with a Triton
# ptxas of CUDA 11.8 (no sm_90a), a stale CuPy cache (sm_80 code on 9.0) and
# TORCH_CUDA_ARCH_LIST set, in a HOME and PATH of the test's own.
cat >"$TMP/gfd.json" <<'EOF'
{"apiVersion": "v1", "kind": "List", "items": [
 {"kind": "Node", "metadata": {"name": "gpu-h1", "labels": {"nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0",
  "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8", "nvidia.com/cuda.runtime.major": "12", "nvidia.com/cuda.runtime.minor": "4"}}},
 {"kind": "Node", "metadata": {"name": "gpu-a1", "labels": {"nvidia.com/gpu.compute.major": "8", "nvidia.com/gpu.compute.minor": "0",
  "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8", "nvidia.com/cuda.runtime.major": "12", "nvidia.com/cuda.runtime.minor": "2"}}},
 {"kind": "Node", "metadata": {"name": "cpu-1", "labels": {"kubernetes.io/os": "linux"}}}]}
EOF
H=$TMP/home SITE=$TMP/site
mkdir -p "$H/.cupy/kernel_cache" "$SITE/triton/backends/nvidia/bin"
printf '#!/bin/sh\necho "Cuda compilation tools, release 11.8, V11.8.89"\n' >"$SITE/triton/backends/nvidia/bin/ptxas"
chmod +x "$SITE/triton/backends/nvidia/bin/ptxas"
cp "$FX/sm80.cubin" "$H/.cupy/kernel_cache/0a1b.cubin"
"$PROBE" check --json --sm "k8s:$TMP/gfd.json" "$FX/sm80_exe" >"$TMP/docs/check-placement" 2>/dev/null
env -i HOME="$H" PATH=/usr/bin:/bin KIMG_TOOLKIT_DIRS= TORCH_CUDA_ARCH_LIST="8.0;8.6" \
	"$PROBE" doctor --json --sm "k8s:$TMP/gfd.json" "$SITE" >"$TMP/docs/doctor-tools" 2>/dev/null

# SCHEMA DOC MUTATION: the document changed by MUTATION (python on d)
mutate() {
	python3 - "$2" "$3" >"$TMP/mutant" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
print(json.dumps(d))
PY
}
# a key added at the top, and deep where the document has one
declare -A deep=(
	[device]='d["devices"][0]["planted"] = 1'
	[scan]='d["files"][0]["modules"][0]["images"][0]["planted"] = 1'
	[check]='d["files"][1]["modules"][0]["verdicts"][0]["fix"]["planted"] = 1'
	[doctor]='d["summary"]["planted"] = 1'
	[error]='d["error"]["planted"] = 1'
	[report]='d["module"]["images"][0]["planted"] = 1'
	[driver-mismatch]='d["process"]["planted"] = 1'
	[summarize]='d["groups"][0]["module"]["planted"] = 1'
)
declare -A gone=(
	[device]='del d["devices"][0]["sm"]' [scan]='del d["summary"]["errors"]'
	[check]='del d["files"][0]["modules"][0]["link_stub"]' [doctor]='del d["driver"]["error"]'
	[error]='del d["error"]["messages"]' [report]='del d["process"]'
	[driver-mismatch]='del d["why"]' [summarize]='del d["groups"][0]["kind"]'
)
checked=0
for kind in device scan check doctor error report driver-mismatch summarize; do
	doc=$TMP/docs/$kind
	if [ ! -s "$doc" ]; then fail "$kind: no document made ($(head -c 200 "$doc"))"; continue; fi
	json_valid "$kind" "$doc" "$kind: a document kimg makes"
	for m in 'd["planted_at_top"] = True' "${deep[$kind]}" "${gone[$kind]}"; do
		if ! mutate "$kind" "$doc" "$m" 2>"$TMP/mutate.err"; then fail "$kind: cannot apply '$m'" "$(cat "$TMP/mutate.err")"; continue; fi
		if python3 "$ROOT/tests/schema_check.py" "$kind" "$TMP/mutant" >"$TMP/why" 2>&1; then
			fail "$kind: still valid after $m"
		else
			ok "$kind: invalid after $m ($(sed -n 2p "$TMP/why" | sed 's/^ *//' | head -c 120))"
		fi
	done
	checked=$((checked + 1))
done
expect_eq "every schema had its document and mutants" "$n" "$checked"

# DOC SCHEMA MUTATION: the new members, each object planted into, each
# required key removed, a wrong value (the documents above have them filled)
af='d["placement"][0]["kubernetes_affinity"]'
terms="$af[\"nodeAffinity\"][\"requiredDuringSchedulingIgnoredDuringExecution\"][\"nodeSelectorTerms\"]"
members=(
	'check-placement check d["placement"][0]["planted"] = 1'
	'check-placement check d["placement"][0]["groups"][0]["planted"] = 1'
	'check-placement check d["placement"][0]["groups"][0]["products"][0]["planted"] = 1'
	'check-placement check d["placement"][0]["no_gpu_facts"]["planted"] = 1'
	'check-placement check d["placement"][0]["reasons"][0]["planted"] = 1'
	"check-placement check $af[\"planted\"] = 1"
	"check-placement check $af[\"nodeAffinity\"][\"planted\"] = 1"
	"check-placement check $af[\"nodeAffinity\"][\"requiredDuringSchedulingIgnoredDuringExecution\"][\"planted\"] = 1"
	"check-placement check $terms[0][\"planted\"] = 1"
	"check-placement check $terms[0][\"matchExpressions\"][0][\"planted\"] = 1"
	'check-placement check del d["placement"]'
	'check-placement check del d["placement"][0]["kubernetes_affinity"]'
	'check-placement check del d["placement"][0]["slurm_note"]'
	'check-placement check del d["placement"][0]["groups"][0]["fix"]'
	'check-placement check del d["placement"][0]["groups"][0]["products"][0]["gpus"]'
	'check-placement check del d["placement"][0]["no_gpu_facts"]["node_names"]'
	'check-placement check del d["placement"][0]["reasons"][0]["first"]'
	"check-placement check del $terms[0][\"matchExpressions\"][0][\"operator\"]"
	'check-placement check d["placement"][0]["source"] = "pbs"'
	'check-placement check d["placement"] = {}'
	"check-placement check $terms[0][\"matchExpressions\"][0][\"values\"] = [8]"
	'doctor-tools doctor d["toolchains"][0]["planted"] = 1'
	'doctor-tools doctor d["jit_caches"][0]["planted"] = 1'
	'doctor-tools doctor d["jit_caches"][0]["stale"][0]["planted"] = 1'
	'doctor-tools doctor d["cuda_environment"][0]["planted"] = 1'
	'doctor-tools doctor d["placement"][0]["groups"][0]["planted"] = 1'
	'doctor-tools doctor del d["toolchains"]'
	'doctor-tools doctor del d["jit_caches"]'
	'doctor-tools doctor del d["cuda_environment"]'
	'doctor-tools doctor del d["placement"]'
	'doctor-tools doctor del d["summary"]["triton_ptxas_too_old"]'
	'doctor-tools doctor del d["summary"]["build_tools_too_old"]'
	'doctor-tools doctor del d["summary"]["stale_cache_files"]'
	'doctor-tools doctor del d["toolchains"][0]["needs_release"]'
	'doctor-tools doctor del d["jit_caches"][0]["stale_count"]'
	'doctor-tools doctor del d["jit_caches"][0]["stale"][0]["remove"]'
	'doctor-tools doctor del d["cuda_environment"][0]["verdict"]'
	'doctor-tools doctor d["toolchains"][0]["kind"] = "clang"'
	'doctor-tools doctor d["jit_caches"][0]["stale"][0]["reason"] = "stale"'
)
for doc in check-placement doctor-tools; do
	if [ -s "$TMP/docs/$doc" ]; then json_valid "${doc%%-*}" "$TMP/docs/$doc" "$doc: a document kimg makes"
	else fail "$doc: no document made"; fi
done
# FILE WHAT EXPR: the mutants below test something only where the member is filled
filled() {
	if python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$3" 2>/dev/null
	then ok "$2"; else fail "$2" "$(head -c 300 "$1")"; fi
}
filled "$TMP/docs/check-placement" "check-placement: filled (a group that runs, an affinity, a reason)" \
	'd["placement"][0]["any_runs"] and d["placement"][0]["kubernetes_affinity"] and d["placement"][0]["reasons"]'
filled "$TMP/docs/doctor-tools" "doctor-tools: filled (a ptxas that cannot target 9.0, a stale file, a switch's verdict, a placement)" \
	'd["toolchains"][0]["cannot_target"] == ["9.0"] and d["jit_caches"][0]["stale"] and d["cuda_environment"][0]["verdict"] and d["placement"]'
for line in "${members[@]}"; do
	read -r doc schema m <<<"$line"
	if ! mutate "$schema" "$TMP/docs/$doc" "$m" 2>"$TMP/mutate.err"; then fail "$doc: cannot apply '$m'" "$(cat "$TMP/mutate.err")"; continue; fi
	if python3 "$ROOT/tests/schema_check.py" "$schema" "$TMP/mutant" >"$TMP/why" 2>&1; then
		fail "$doc: still valid after $m"
	else
		ok "$doc: invalid after $m ($(sed -n 2p "$TMP/why" | sed 's/^ *//' | head -c 120))"
	fi
done

# Each file stands alone, so check and doctor each carry the parts they
# share (placement, package, cuda_library): the copies must be the same.
res=$(python3 - "$ROOT/docs/schema" <<'PY'
import json, os, sys
c, d = (json.load(open(os.path.join(sys.argv[1], n + ".schema.json")))["$defs"] for n in ("check", "doctor"))
bad = [k + " differs" for k in sorted(set(c) & set(d)) if c[k] != d[k]]
bad += [k + " missing" for k in ("placement", "placement_source", "placement_group", "placement_affinity",
                                 "placement_match_expression", "package", "cuda_library", "library_fix")
        if k not in c or k not in d]
print(", ".join(bad))
PY
)
expect_eq "check and doctor: the \$defs they share are the same in both files" "" "$res"
finish
