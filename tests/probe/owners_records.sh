#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# conda-meta records of many short names (issue 22 item 9): each JSON
# value takes a 64-byte node, so a record of many short entries needs far
# more memory than 4 times its size; it must still give its files their
# owner, and a record that cannot be read is said, not dropped silently.
# Oracle: records written here, naming the file checked.
. "$(dirname "$0")/../lib.bash" probe

# env DIR NSHORT [SHORTLEN]: a conda environment whose one record names
# NSHORT short paths and then lib/libbar.so (an sm_80 library)
env_with() {
	mkdir -p "$1/conda-meta" "$1/lib"
	cp "$FX/sm80_exe" "$1/lib/libbar.so"
	python3 - "$1/conda-meta/bar-4.5-h123_0.json" "$2" <<'PY'
import json, sys
n = int(sys.argv[2])
files = ["%x" % i for i in range(n)] + ["lib/libbar.so"]
# dumps, not dump: the same text by the C encoder (dump to a file encodes in Python)
open(sys.argv[1], "w").write(json.dumps({"name": "bar", "version": "4.5", "build": "h123_0", "files": files}, separators=(",", ":")))
PY
}
owner_is_bar() {
	expect_json "$1" '[(f["path"].rsplit("/", 1)[1], (f["package"] or {}).get("name"), (f["package"] or {}).get("version")) for f in d["files"]] == [("libbar.so", "bar", "4.5")]'
}
for n in 10 201 5000 3000000; do
	env_with "$TMP/e$n" "$n"
	size=$(stat -c %s "$TMP/e$n/conda-meta/bar-4.5-h123_0.json")
	run "$PROBE" check --sm 8.0 --json "$TMP/e$n/lib"
	expect_rc 0 "record of $n short names ($size bytes): check exit 0"
	owner_is_bar "... libbar.so is owned by bar 4.5"
	check "... nothing said on stderr" test ! -s "$TMP/err"
done
run "$PROBE" doctor --sm 8.0 --json "$TMP/e201/lib"
expect_json "doctor: the package named too" '[p["package"]["name"] for p in d["packages"] if p["package"]] == ["bar"]'
# a record that cannot be read: said, naming it
mkdir -p "$TMP/bad/conda-meta" "$TMP/bad/lib"
cp "$FX/sm80_exe" "$TMP/bad/lib/libbar.so"
printf '{"name": "bar", "version": "4.5", "files": ["lib/libbar.so",' >"$TMP/bad/conda-meta/bar-4.5-h123_0.json"
run "$PROBE" check --sm 8.0 "$TMP/bad/lib"
expect_rc 0 "a damaged record: check still runs (the code itself is fine)"
expect_grep "... and says the record was not read, naming it" "$TMP/err" \
	"kimg-probe: $TMP/bad/conda-meta/bar-4.5-h123_0.json: conda-meta record not read ("
expect_grep "... and what it costs" "$TMP/err" "its files have no owner"
finish
