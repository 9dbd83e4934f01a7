#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# doctor and the interpreter it asks for sys.path (issue 22, items 2, 3,
# 10, 13, 14): the interpreter is the user's and may hang, leave a child
# holding its stdout, print garbage, answer at length or put "/" (the cwd)
# and pseudo file systems in sys.path. Oracles: stand-in interpreters
# written here (their answers are known), the real python3 where the case
# is Python's own behaviour (an empty PYTHONPATH item is the cwd), and
# the clock.
. "$(dirname "$0")/../lib.bash" probe

sp=$TMP/env/lib/python3.11/site-packages
mkdir -p "$sp/foo" "$sp/foo-1.2.3.dist-info" "$TMP/bin"
cp "$FX/sm80_exe" "$sp/foo/_C.so"
printf 'foo/_C.so,sha256=def,123\nfoo-1.2.3.dist-info/RECORD,,\n' >"$sp/foo-1.2.3.dist-info/RECORD"
MARK=kimg-doctor-sys-path-1
case $PROBE in /*) ;; *) PROBE=$ROOT/$PROBE ;; esac # the cases below change directory

# standin NAME BODY: an interpreter (a shell script) at $TMP/bin/NAME
standin() { printf '#!/bin/bash\n%s\n' "$2" >"$TMP/bin/$1"; chmod +x "$TMP/bin/$1"; }
# answer CWD ENTRY...: what python_env.c's query prints
answer() { local cwd=$1; shift; printf '%s\n/fake/python3\t3.11.9\n%s\n/nonexistent/stdlib\n/nonexistent/stdlib\n' "$MARK" "$cwd"; printf '%s\n' "$@"; }
# timed SECONDS CMD...: run with a time limit; $rc, $ms
timed() {
	local t0; t0=$(date +%s%N)
	timeout -k 2 "$1" "${@:2}" >"$TMP/out" 2>"$TMP/err"; rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
}

# ---- item 2: "/" and pseudo file systems are not an environment ----
standin roots "$(declare -f answer); MARK=$MARK; answer / / /proc /proc/self /sys /dev '$sp'"
timed 60 "$PROBE" doctor --sm 9.0 --json --python "$TMP/bin/roots"
check "sys.path of /, /proc, /sys, /dev and a site-packages: doctor ends in ${ms} ms (under 20 s)" test "$rc" != 124 -a "$ms" -lt 20000
expect_rc 1 "... and finds foo's sm_80-only library failing on 9.0"
expect_json "... only the site-packages is checked" 'd["python"]["paths"] == ["'"$sp"'"]'
expect_json "... the others are listed as not checked, each with why" \
	'sorted(e["path"] for e in d["python"]["not_checked"]) == ["/", "/dev", "/proc", "/proc/self", "/sys"] and all(e["why"] for e in d["python"]["not_checked"])'
check "... nothing read under /proc (no error line)" bash -c "! grep -q '/proc/' '$TMP/err'"
timed 60 "$PROBE" doctor --sm 9.0 --python "$TMP/bin/roots"
expect_grep "text: / is not checked, and why" "$TMP/out" "sys.path entry / (the current directory) not checked: the root directory is not an environment"
expect_grep "text: /proc is not checked, a pseudo file system" "$TMP/out" "sys.path entry /proc not checked: on a pseudo file system (proc), not an environment"
# the case as users meet it: the real python3, cwd /, an empty PYTHONPATH item
if command -v python3 >/dev/null; then
	timed 60 env -C / PYTHONPATH=":$sp" "$PROBE" doctor --sm 9.0 --json
	check "cd / && PYTHONPATH=:SITE doctor (real python3): ends in ${ms} ms, exit $rc (1: foo fails on 9.0)" test "$rc" = 1 -a "$ms" -lt 30000
	expect_json "... / is not checked, as the current directory" \
		'any(e["path"] == "/" for e in d["python"]["not_checked"]) and d["python"]["cwd"] == "/"'
	expect_json "... and the site-packages after it is still checked (not swallowed by /)" '"'"$sp"'" in d["python"]["paths"]'
	timed 60 env -C "$TMP/env" PYTHONPATH=":$sp" "$PROBE" doctor --sm 9.0
	expect_grep "an empty PYTHONPATH item elsewhere: the cwd entry is named as such" "$TMP/out" \
		"sys.path entry $TMP/env is the current directory (an empty PYTHONPATH item puts it there): checked"
else
	missing python3 "the real interpreter's empty-PYTHONPATH behaviour" 4
fi

# ---- item 3: an interpreter that hangs, one whose child keeps stdout ----
standin hangs "echo \$\$ >'$TMP/hangs.pid'; exec sleep 600"
timed 60 "$PROBE" doctor --sm 9.0 --python "$TMP/bin/hangs"
check "an interpreter that never answers: doctor gives up in ${ms} ms (limit 10 s, well under 60)" test "$ms" -lt 20000
expect_rc 2 "... exit 2"
expect_eq "... one line, naming it" \
	"kimg-probe doctor: cannot run $TMP/bin/hangs: no answer within 10 s: give the directories to check, or --python PATH" \
	"$(cat "$TMP/err")"
hung=$(cat "$TMP/hangs.pid" 2>/dev/null)
sleep 0.2
if [ -n "$hung" ] && kill -0 "$hung" 2>/dev/null; then
	fail "... and its process is gone (pid $hung still runs)"
	kill -9 "$hung" 2>/dev/null
else
	ok "... and its process is gone (pid ${hung:-?})"
fi
standin forks "$(declare -f answer); MARK=$MARK; answer /nonexistent '$sp'; sleep 30 & exit 0"
timed 60 "$PROBE" doctor --sm 9.0 --json --python "$TMP/bin/forks"
check "an interpreter that leaves a child holding its stdout: doctor ends at its exit (${ms} ms, not 30 s)" test "$ms" -lt 10000
expect_rc 1 "... with the answer it gave (foo fails on 9.0)"
expect_json "... its sys.path read" 'd["python"]["paths"] == ["'"$sp"'"]'

# ---- item 10: garbage, or no directory, is not an environment ----
standin garbage 'echo "Welcome to the cluster!"; echo "module load python/3.11"; exit 0'
timed 60 "$PROBE" doctor --sm 9.0 --python "$TMP/bin/garbage"
expect_rc 2 "an interpreter that prints garbage and exits 0: not OK"
expect_grep "... says it answered something other than sys.path" "$TMP/err" "answered something other than its sys.path"
check "... no OK line" bash -c "! grep -q '^OK' '$TMP/out'"
standin nothing "$(declare -f answer); MARK=$MARK; answer /nonexistent /nonexistent/a /nonexistent/b"
timed 60 "$PROBE" doctor --sm 9.0 --python "$TMP/bin/nothing"
expect_rc 2 "an interpreter whose sys.path names no existing directory: exit 2"
expect_grep "... said" "$TMP/err" "named no existing sys.path directory to check"
standin silent 'exit 0'
timed 60 "$PROBE" doctor --sm 9.0 --python "$TMP/bin/silent"
expect_rc 2 "an interpreter that prints nothing and exits 0: exit 2"

# ---- item 13: an answer over 1 MiB ----
standin long "$(declare -f answer); MARK=$MARK; answer /nonexistent '$sp'; python3 -c 'import sys; sys.stdout.write(\"\".join(\"/nonexistent/%07d\\n\" % i for i in range(120000)))'"
timed 60 "$PROBE" doctor --sm 9.0 --json --python "$TMP/bin/long"
expect_rc 1 "an answer of 2 MiB (a long sys.path): checked, not 'failed' (foo fails on 9.0)"
expect_json "... the entries in its first MiB used, and said" 'd["python"]["paths"] == ["'"$sp"'"] and d["python"]["answer_over_1mib"] is True'
timed 60 "$PROBE" doctor --sm 9.0 --python "$TMP/bin/long"
expect_grep "... text says it" "$TMP/out" "the interpreter's answer was over 1 MiB"
standin many "$(declare -f answer); MARK=$MARK; mkdir -p '$TMP/many'; for i in \$(seq 100); do mkdir -p '$TMP/many/d'\$i; done; answer /nonexistent '$TMP/many/d'{1..100} '$sp'"
timed 60 "$PROBE" doctor --sm 9.0 --json --python "$TMP/bin/many"
expect_json "102 sys.path directories: all kept (no silent cap at 64), the site-packages last among them" \
	'len(d["python"]["paths"]) == 101 and d["python"]["paths"][-1] == "'"$sp"'"'

# ---- item 14: every field from the interpreter is escaped ----
standin esc "printf '%s\n/fake/py\033]0;title\007thon\t3.11\033[31mred\n/nonexistent\n/n\n/n\n%s\n' $MARK '$sp'"
timed 60 "$PROBE" doctor --sm 9.0 --python "$TMP/bin/esc"
if grep -q "$(printf '\033')" "$TMP/out"; then fail "doctor text: an ESC from the interpreter's version or name reached the terminal"; else
	ok "doctor text: no ESC from the interpreter reaches the terminal"; fi
expect_grep "... the version shown escaped" "$TMP/out" 'Python: /fake/py\x1b]0;title\x07thon 3.11\x1b[31mred, 1 directory'
finish
