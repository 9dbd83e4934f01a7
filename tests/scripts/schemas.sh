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

# The checks below are one list of jobs run by one python3 (each in its own
# process, they took about 45 s of CPU, nearly all of it python3 starting
# and jsonschema checking the schemas again): the jobs file has one job a
# line, run in order by the program at the end, whose "ok"/"FAIL" lines are
# counted as the script's own (the same lines, one check each):
#   valid SCHEMA FILE WHAT          json_valid's check
#   mutant SCHEMA FILE LABEL MUTATION  the document changed by MUTATION
#                                   (python on d) must be invalid
#   filled FILE WHAT EXPR           EXPR (python on d) holds in the document
#   line TEXT                       TEXT printed as it is (a check made here)
JOBS=$TMP/jobs
: >"$JOBS"
job() { local IFS=$'\t'; printf '%s\n' "$*" >>"$JOBS"; }
# say_fail WHAT [DETAIL...]: a failed check, in its place among the jobs
say_fail() { job line "FAIL - $1"; shift; for d in "$@"; do job line "     $d"; done; }
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
	if [ ! -s "$doc" ]; then say_fail "$kind: no document made ($(head -c 200 "$doc"))"; continue; fi
	job valid "$kind" "$doc" "$kind: a document kimg makes"
	for m in 'd["planted_at_top"] = True' "${deep[$kind]}" "${gone[$kind]}"; do
		job mutant "$kind" "$doc" "$kind" "$m"
	done
	checked=$((checked + 1))
done
if [ "$n" == "$checked" ]; then job line "ok - every schema had its document and mutants"
else say_fail "every schema had its document and mutants" "expected: $n" "actual:   $checked"; fi

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
	if [ -s "$TMP/docs/$doc" ]; then job valid "${doc%%-*}" "$TMP/docs/$doc" "$doc: a document kimg makes"
	else say_fail "$doc: no document made"; fi
done
# the mutants below test something only where the member is filled
job filled "$TMP/docs/check-placement" "check-placement: filled (a group that runs, an affinity, a reason)" \
	'd["placement"][0]["any_runs"] and d["placement"][0]["kubernetes_affinity"] and d["placement"][0]["reasons"]'
job filled "$TMP/docs/doctor-tools" "doctor-tools: filled (a ptxas that cannot target 9.0, a stale file, a switch's verdict, a placement)" \
	'd["toolchains"][0]["cannot_target"] == ["9.0"] and d["jit_caches"][0]["stale"] and d["cuda_environment"][0]["verdict"] and d["placement"]'
for line in "${members[@]}"; do
	read -r doc schema m <<<"$line"
	job mutant "$schema" "$TMP/docs/$doc" "$doc" "$m"
done

# The jobs, run. The schemas are checked against the metaschema here
# (no cache: this is the script about the schemas).
python3 - "$ROOT/tests" "$JOBS" >"$TMP/jobs.out" 2>&1 <<'PY'
import copy, json, sys, traceback
sys.path.insert(0, sys.argv[1])
from schema_check import Checker
checker = Checker()
docs = {}
def load(path):
    if path not in docs:
        with open(path) as f:
            docs[path] = json.load(f)
    return docs[path]
def fail(what, *details):
    print("FAIL - " + what)
    for d in details:
        print("     " + d)
for line in open(sys.argv[2]):
    kind, *a = line.rstrip("\n").split("\t")
    if kind == "line":
        print(a[0])
    elif kind == "valid":  # json_valid SCHEMA FILE WHAT
        schema, path, what = a
        errs = [e for _, es in checker.check_file(schema, path) for e in es]
        if errs:
            fail("%s: not valid against docs/schema/%s.schema.json" % (what, schema),
                 "FAIL - schema %s: %s" % (schema, path), *("     " + e for e in errs))
        else:
            print("ok - %s: valid against docs/schema/%s.schema.json" % (what, schema))
    elif kind == "filled":
        path, what, expr = a
        try:
            d = load(path)
            good = bool(eval(expr))
        except Exception:
            good = False
        if good:
            print("ok - " + what)
        else:
            fail(what, open(path, "rb").read(300).decode("utf-8", "replace"))
    elif kind == "mutant":
        schema, path, label, m = a
        try:
            d = copy.deepcopy(load(path))
            exec(m)
            d = json.loads(json.dumps(d))
        except Exception:
            fail("%s: cannot apply '%s'" % (label, m), *traceback.format_exc().rstrip("\n").split("\n"))
            continue
        errs = checker.errors(schema, d)
        if not errs:
            fail("%s: still valid after %s" % (label, m))
        else:
            why = errs[0].lstrip(" ").encode()[:120].decode("utf-8", "ignore")
            print("ok - %s: invalid after %s (%s)" % (label, m, why))
    else:
        fail("schemas.sh: unknown job " + kind)
PY
jrc=$?
while IFS= read -r line; do
	case $line in
	"ok - "*) T_PASS=$((T_PASS + 1)) ;;
	"FAIL - "*) T_FAIL=$((T_FAIL + 1)) ;;
	esac
	printf '%s\n' "$line"
done <"$TMP/jobs.out"
[ $jrc -eq 0 ] || fail "the schema jobs ended with status $jrc"

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
