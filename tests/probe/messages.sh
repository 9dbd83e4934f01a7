#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Messages (issue 22 items 15, 16, 17): bidi and format characters and a
# NUL in a zip member's name are shown escaped; --sm @FILE takes what --sm
# and --driver take and refuses the rest, naming it; a file with no
# package record gets a fix line without a literal "?". Oracles: names and
# documents written here, and --sm's own answers to the same values.
. "$(dirname "$0")/../lib.bash" probe

# ---- item 15 ----
mkdir -p "$TMP/bidi"
rlo=$(printf '\342\200\256') lri=$(printf '\342\201\246')
cp "$FX/sm80_exe" "$TMP/bidi/lib${rlo}os.txt"
cp "$FX/sm80_exe" "$TMP/bidi/x${lri}y.so"
run "$PROBE" check --sm 9.0 "$TMP/bidi"
check "a right-to-left override in a file name does not reach the terminal" bash -c "! grep -q '$rlo' '$TMP/out' '$TMP/err'"
expect_grep "... shown as \\u202e" "$TMP/out" 'lib\u202eos.txt'
check "nor a left-to-right isolate (shown as \\u2066)" bash -c "! grep -q '$lri' '$TMP/out' && grep -qF 'x\\u2066y.so' '$TMP/out'"
run "$PROBE" check --sm 9.0 --json "$TMP/bidi"
expect_json "JSON keeps the names as they are (JSON readers render no bidi)" \
	'sorted(f["path"].rsplit("/", 1)[1] for f in d["files"]) == sorted(["lib\u202eos.txt", "x\u2066y.so"])'
python3 - "$TMP/nul.whl" "$FX/sm80_exe" <<'PY'
import struct, sys, zlib
data = open(sys.argv[2], "rb").read()
name = b"pkg/lib.so\x00.txt"
crc = zlib.crc32(data)
local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0, crc, len(data), len(data), len(name), 0) + name + data
cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 0, 0, 0, crc, len(data), len(data), len(name), 0, 0, 0, 0, 0, 0) + name
end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 1, 1, len(cd), len(local), 0)
open(sys.argv[1], "wb").write(local + cd + end)
PY
run "$PROBE" scan "$TMP/nul.whl"
expect_grep "a zip member name with a NUL: shown whole, the NUL as \\x00" "$TMP/out" 'nul.whl!/pkg/lib.so\x00.txt'
run "$PROBE" scan --json "$TMP/nul.whl"
expect_json "... and in JSON as \\u0000" '[f["path"].split("!/")[1] for f in d["files"]] == ["pkg/lib.so\u0000.txt"]'

# ---- item 16 ----
doc() { printf '{"host":"n1","driver":{"release":"550.54","cuda_version":%s},"devices":[{"index":0,"name":"GPU","cc":%s,"tegra":false,"cuda_driver":%s}]}\n' "$1" "$2" "$3"; }
for cc in '"860"' '"8.6.1"' '"x"' '"0.5"' '86'; do
	doc '"12.4"' "$cc" '"12.4"' >"$TMP/fleet.jsonl"
	run "$PROBE" check --sm "@$TMP/fleet.jsonl" "$FX/sm80_exe"
	expect_rc 2 "--sm @FILE with \"cc\":$cc: refused, exit 2"
	expect_grep "... naming the file, line and value" "$TMP/err" "kimg-probe: --sm @FILE: $TMP/fleet.jsonl:1: device 0: \"cc\""
done
run "$PROBE" check --sm 860 "$FX/sm80_exe"
expect_rc 2 "(the oracle: --sm 860 itself is refused too)"
for cuda in '"12.4.1"' '"12"' '"twelve"' '12.4'; do
	doc 'null' '"8.6"' "$cuda" >"$TMP/fleet.jsonl"
	run "$PROBE" check --sm "@$TMP/fleet.jsonl" "$FX/sm80_exe"
	expect_rc 2 "--sm @FILE with \"cuda_driver\":$cuda: refused, exit 2 (not \"CUDA ?\" without a PTX limit)"
	expect_grep "... said" "$TMP/err" "is not a CUDA version X.Y (as --driver takes it)"
done
run "$PROBE" check --sm 8.6 --driver 12.4.1 "$FX/sm80_exe"
expect_rc 2 "(the oracle: --driver 12.4.1 itself is refused too)"
doc '"12.4"' '"8.6"' 'null' >"$TMP/fleet.jsonl"
run "$PROBE" check --sm "@$TMP/fleet.jsonl" "$FX/sm80_exe"
expect_rc 0 "a valid document: sm_80 code runs on 8.6"
expect_grep "... with the document's driver, CUDA 12.4" "$TMP/out" "12.4"

# ---- item 17 ----
mkdir -p "$TMP/noowner"
cp "$FX/sm80_exe" "$TMP/noowner/lib.so"
run "$PROBE" doctor --sm 9.0 "$TMP/noowner"
expect_grep "a file with no package record: the fix says what to rebuild" "$TMP/out" "fix: rebuild the code for sm_90"
check "... no literal '?' in a fix line" bash -c "! grep -E 'fix: .*\\?' '$TMP/out'"
run "$PROBE" check --sm 9.0 "$TMP/noowner"
check "check: no literal '?' standing for a package" bash -c "! grep -E 'rebuild \\?' '$TMP/out'"
finish
