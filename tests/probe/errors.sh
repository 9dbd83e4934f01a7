#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kimg-probe on bad input: one "kimg-probe: PATH: problem" line per input on
# stderr, the scan goes on, exit 2 at the end; never a crash or a hang.
. "$(dirname "$0")/../lib.bash" probe

head -c 5000 "$FX/libtwo.so" >"$TMP/truncated.so"       # section headers past the end
head -c 700 "$FX/multi.fatbin" >"$TMP/truncated.fatbin" # fatSize passes the end
printf 'hello, world\n' >"$TMP/garbage.txt"
head -c 4096 /dev/urandom >"$TMP/random.bin"
: >"$TMP/empty"

run timeout 20 "$PROBE" scan "$TMP/missing" "$TMP/truncated.so" "$TMP/truncated.fatbin" "$TMP/garbage.txt" \
	"$TMP/random.bin" "$TMP/empty" "$FX/multi.fatbin"
expect_rc 2 "scan of bad inputs plus one good one"
expect_grep "missing file" "$TMP/err" "kimg-probe: $TMP/missing: No such file or directory"
expect_grep "truncated ELF" "$TMP/err" "kimg-probe: $TMP/truncated.so: host ELF: section headers"
expect_grep "truncated fatbin" "$TMP/err" "kimg-probe: $TMP/truncated.fatbin: fatbin container: fatSize"
expect_grep "garbage file" "$TMP/err" "kimg-probe: $TMP/garbage.txt: not an ELF file, static archive, fatbin, cubin or PTX"
expect_grep "random bytes" "$TMP/err" "kimg-probe: $TMP/random.bin: not an ELF file"
expect_grep "empty file" "$TMP/err" "kimg-probe: $TMP/empty: empty file"
if [ "$(grep -c '^kimg-probe: ' "$TMP/err")" -eq 6 ]; then ok "exactly one stderr line per bad input"; else fail "stderr lines: $(cat "$TMP/err")"; fi
expect_grep "the good input after the bad ones is still scanned" "$TMP/out" "6 files, 1 module, 9 images: 6 sass, 3 ptx; 6 errors"

run timeout 20 "$PROBE" scan --json "$TMP/missing" "$TMP/truncated.so" "$FX/multi.fatbin"
expect_rc 2 "scan --json of bad inputs"
expect_json "JSON: per-file error strings, good file without error" \
	'[(f["error"] is not None, len(f["modules"])) for f in d["files"]] == [(True, 0), (True, 0), (False, 1)]
	 and d["files"][0]["error"] == "No such file or directory" and d["summary"]["errors"] == 2'

# A truncated wheel: the member that cannot be inflated is named, once.
python3 - "$FX/libtwo.so" "$TMP/full.whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[1], "pkg/libtwo.so")
PY
head -c 2000 "$TMP/full.whl" >"$TMP/cut.whl"
run timeout 20 "$PROBE" scan "$TMP/cut.whl"
expect_rc 2 "truncated wheel"
if [ "$(grep -c "cut.whl" "$TMP/err")" -eq 1 ]; then ok "truncated wheel: one error line"; else fail "truncated wheel stderr: $(cat "$TMP/err")"; fi

# Devices and FIFOs never hang: /dev/zero is refused, a FIFO without a writer reads as empty.
run timeout 20 "$PROBE" scan /dev/zero
expect_rc 2 "scan /dev/zero"
expect_grep "/dev/zero refused" "$TMP/err" "kimg-probe: /dev/zero: not a regular file, pipe or terminal"
mkfifo "$TMP/fifo"
run timeout 20 "$PROBE" scan "$TMP/fifo"
expect_rc 2 "scan of a FIFO without writer"
expect_grep "FIFO reads as empty" "$TMP/err" "kimg-probe: $TMP/fifo: empty file"

# Directory walk: broken entries are reported and the walk goes on. A
# dangling symlink inside the tree holds no device code: one line counts
# it, and it is an error only under check --strict or when named (issue
# 22 item 11; before, it made the walk exit 2).
mkdir -p "$TMP/tree/sub"
cp "$FX/multi.fatbin" "$TMP/tree/sub/"
ln -s "$TMP/nowhere" "$TMP/tree/dangling"
mkfifo "$TMP/tree/pipe" # inside a tree: skipped, not read
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$TMP/tree/locked" && cp "$FX/libtwo.so" "$TMP/tree/locked/" && chmod 000 "$TMP/tree/locked"
fi
run timeout 20 "$PROBE" scan "$TMP/tree"
if [ "$(id -u)" -ne 0 ]; then
	expect_rc 2 "scan of a tree with an unreadable directory"
	expect_grep "unreadable directory reported" "$TMP/err" "kimg-probe: $TMP/tree/locked: Permission denied"
else
	expect_rc 0 "scan of a tree whose only broken entry is a dangling link (as root nothing else can be broken)"
fi
expect_grep "dangling symlink counted in one line" "$TMP/err" \
	"kimg-probe: 1 symbolic link inside the directories leads nowhere and holds no device code (not an error; check --strict makes it one): $TMP/tree/dangling"
check "... and not reported as an error of its own" bash -c "! grep -q '$TMP/tree/dangling: No such file' '$TMP/err'"
expect_grep "rest of the tree scanned" "$TMP/out" "1 file, 1 module, 9 images"
if grep -q "pipe" "$TMP/err" "$TMP/out"; then fail "FIFO inside a tree was touched"; else ok "FIFO inside a tree skipped"; fi

# Output that cannot be written (issue 12 item 4): exit 2 with a message,
# in every output mode, not a silently cut document with exit 0.
if [ -w /dev/full ]; then
	for mode in --json ""; do
		"$PROBE" scan $mode "$FX/multi_exe" >/dev/full 2>"$TMP/err"
		rc=$?
		expect_rc 2 "scan ${mode:-(text)} > /dev/full"
		expect_grep "scan ${mode:-(text)} > /dev/full says why" "$TMP/err" \
			"kimg-probe: cannot write to standard output: No space left on device"
	done
	"$PROBE" check --sm 9.0 --json "$FX/multi_exe" >/dev/full 2>"$TMP/err"
	rc=$?
	expect_rc 2 "check --json > /dev/full"
	"$PROBE" --help >/dev/full 2>"$TMP/err"
	rc=$?
	expect_rc 2 "--help > /dev/full"
else
	fail "/dev/full missing: the write-error cases cannot run"
fi

# Usage errors.
run "$PROBE" scan
expect_rc 2 "scan without PATH"
run "$PROBE" scan --bogus "$FX/multi.fatbin"
expect_rc 2 "scan with an unknown option"
run "$PROBE" frobnicate
expect_rc 2 "unknown command"
for c in device scan check; do
	run "$PROBE" $c --help
	expect_rc 0 "$c --help"
	expect_grep "$c --help has a usage line" "$TMP/out" "usage: kimg-probe $c"
done

# --json failing before its document (issue 31 item 2): still one JSON
# document on stdout, the error document of docs/json-probe.md, exit 2, the
# stderr line unchanged and copied into it.
mkdir -p "$TMP/no-driver"
json_error_case() {
	local what=$1 want=$2; shift 2
	run "$@"
	expect_rc 2 "$what"
	expect_json "$what: stdout is the error document, naming the command, with the stderr line" \
		"d['ok'] is False and d['error']['exit_status'] == 2 and d['error']['command'] == '$want' and d['error']['messages'] == open('$TMP/err').read().splitlines()"
}
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	skip_allowed "--json without a driver" "libcuda.so.1 is in this machine's loader cache"
else
	LD_LIBRARY_PATH="$TMP/no-driver" json_error_case "device --json, no driver" device "$PROBE" device --json
	LD_LIBRARY_PATH="$TMP/no-driver" json_error_case "check --json --sm native, no driver" check \
		"$PROBE" check --json --sm native "$FX/sm80_exe"
fi
json_error_case "check --json without --sm" check "$PROBE" check --json "$FX/sm80_exe"
json_error_case "scan --json with an unknown option" scan "$PROBE" scan --json --bogus "$FX/multi.fatbin"
json_error_case "summarize --json without FILE" summarize "$PROBE" summarize --json
json_error_case "doctor --json with a bad --driver" doctor "$PROBE" doctor --json --driver x
run "$PROBE" scan -- --json
if [ "$rc" -eq 2 ] && ! grep -q '"error":{"command"' "$TMP/out"; then ok "scan -- --json: --json after -- is a PATH, no JSON"
else fail "scan -- --json: rc $rc, $(head -c 200 "$TMP/out")"; fi
finish
