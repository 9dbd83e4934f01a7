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
	if grep -qF "schema/$b" "$ROOT/docs/json.md" "$ROOT/docs/report-json.md"; then ok "$b is named in the docs"
	else fail "$b is named in neither docs/json.md nor docs/report-json.md"; fi
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
finish
