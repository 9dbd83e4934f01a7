#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Symbolic links that lead nowhere (issue 22 item 11): one inside a tree
# holds no device code, so check, doctor and scan count it in one line
# and exit as they would without it; check --strict and a link named on
# the command line keep it an error (exit 2). Oracle: the same tree
# without the links, and the exit statuses of docs/man/kimg-probe.1.
. "$(dirname "$0")/../lib.bash" probe

t=$TMP/site
mkdir -p "$t/pkg/sub" "$t/other"
cp "$FX/sm80_exe" "$t/pkg/lib.so"
cp "$FX/multi_exe" "$t/other/ok.so"
cp -r "$t" "$TMP/clean"
ln -s "$TMP/nowhere" "$t/notes.txt"              # a name that is not code
ln -s "$TMP/nowhere/lib.so" "$t/pkg/sub/libgone.so" # one that is
ln -s loop1 "$t/other/loop2"; ln -s loop2 "$t/other/loop1" # a loop

for cmd in "check --sm 8.0" "check --sm 9.0" "scan" "doctor --sm 9.0"; do
	run $PROBE $cmd "$TMP/clean"; want=$rc
	cp "$TMP/out" "$TMP/clean.out"
	run $PROBE $cmd "$t"
	expect_rc "$want" "$cmd over a tree with 4 links that lead nowhere: the exit of the same tree without them"
	expect_grep "... one line counts them" "$TMP/err" \
		"kimg-probe: 4 symbolic links inside the directories lead nowhere and hold no device code (not an error; check --strict makes each one): $t/notes.txt and others"
	check "... and it is the only line on stderr" test "$(wc -l <"$TMP/err")" = 1
done
run $PROBE check --sm 8.0 --json "$t"
expect_rc 0 "check --json: exit 0 (sm_80 code on 8.0)"
expect_json "... no file entry for the links" 'not any(f["error"] for f in d["files"])'
run $PROBE check --sm 8.0 --strict "$t"
expect_rc 2 "check --strict: each dangling link is an error (exit 2)"
expect_grep "... named" "$TMP/err" "kimg-probe: $t/pkg/sub/libgone.so: No such file or directory"
expect_grep "... a loop named too" "$TMP/err" "kimg-probe: $t/other/loop1: Too many levels of symbolic links"
run $PROBE check --sm 8.0 "$t/notes.txt"
expect_rc 2 "a dangling link named on the command line: exit 2"
expect_grep "... said" "$TMP/err" "kimg-probe: $t/notes.txt: No such file or directory"
run $PROBE check --sm 8.0 -j 4 "$t"
cp "$TMP/err" "$TMP/e4"
run $PROBE check --sm 8.0 -j 1 "$t"
check "-j 4 says what -j 1 says" cmp -s "$TMP/e4" "$TMP/err"
finish
