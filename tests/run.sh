#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every unit test program (build/tests/test_*) and every integration
# script (tests/{probe,shim,api,scripts}/*.sh), then prints "N passed, N failed".
# Each program/script is one test unit; its own output says what it checked.
# Every one runs under a time limit (timeout(1), which ends its whole
# process group): KIMG_TEST_TIMEOUT seconds (default 300), or the number a
# script names in its first lines as "# test-timeout: SECONDS". A test past
# its bound fails, named: "TIMEOUT NAME after Ns". With -j N on fewer than N
# cores the bounds grow by N / cores (rounded up).
# KIMG_TESTS="NAME ..." runs only those (test_x, tests/probe/x.sh).
#
# tests/run.sh [-j N]: N tests side by side (KIMG_TEST_JOBS, default 1).
# The tests are independent (each has its own scratch folder, tests/lib.bash's
# TMP, and only reads the build). With N > 1 each test's output is kept and
# printed in one block, "== NAME (S s, CPU S s)" then its lines, in the same order as
# with -j 1 whatever order they end in; the longest ones start first (their
# times of the last run, kept in $BUILD/tests/run-times), so that no long
# test is left to run alone at the end. With -j 1 the output streams as the
# tests run. run-times has one line a test, "WALL_MS CPU_MS NAME": CPU_MS is
# the user + system time of the test and every process it waited for (the
# steadier figure on a loaded machine); a full run with -j N writes it.
set -u
BUILD=${BUILD:-build}
export BUILD
export KIMG_FIXTURES=${KIMG_FIXTURES:-$BUILD/fixtures}
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}
DEFAULT_TIMEOUT=${KIMG_TEST_TIMEOUT:-300}
JOBS=${KIMG_TEST_JOBS:-1}
while getopts j: opt; do
	case $opt in
	j) JOBS=$OPTARG ;;
	*) echo "usage: tests/run.sh [-j N]" >&2; exit 2 ;;
	esac
done
case $JOBS in '' | *[!0-9]* | 0) echo "tests/run.sh: -j wants a whole number above 0, not '$JOBS'" >&2; exit 2 ;; esac
# A limit is for a test alone; side by side with others on fewer cores it
# gets a share of the machine, so the limits grow by JOBS / cores (rounded up).
CORES=$(nproc 2>/dev/null || echo 1)
SCALE=$(((JOBS + CORES - 1) / CORES))

# limit_of FILE: the script's own "# test-timeout: N", else the default
limit_of() {
	local n
	n=$(head -n 20 "$1" 2>/dev/null | grep -aoE '^# test-timeout: [0-9]+' | head -n 1 | grep -oE '[0-9]+$')
	echo "${n:-$DEFAULT_TIMEOUT}"
}

# The tests in their order: names, time limits, files (a program, or a
# script run with bash).
ONLY=" ${KIMG_TESTS:-} "
names=() limits=() files=()
add() { # add NAME LIMIT FILE
	[ "$ONLY" = "  " ] || [[ $ONLY == *" $1 "* ]] || return 0
	names+=("$1") limits+=("$(($2 * SCALE))") files+=("$3")
}
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	add "$(basename "$t")" "$DEFAULT_TIMEOUT" "$t"
done
for s in tests/probe/*.sh tests/shim/*.sh tests/api/*.sh tests/scripts/*.sh; do
	[ -f "$s" ] || continue
	add "$s" "$(limit_of "$s")" "$s"
done

# children_cpu VAR: VAR = the user + system milliseconds of this shell's
# waited-for children so far, from the second line of bash's `times`
# ("0m1.234s 0m0.056s"), run in this shell (a subshell has children of its own)
children_cpu() {
	local -a t
	local f ms=0 m r
	times >"$OUTDIR/times.$BASHPID"
	read -r -d '' -a t <"$OUTDIR/times.$BASHPID"
	rm -f "$OUTDIR/times.$BASHPID"
	for f in "${t[2]}" "${t[3]}"; do
		m=${f%%m*} r=${f#*m} r=${r%s}
		ms=$((ms + 10#$m * 60000 + 10#${r%.*} * 1000 + 10#${r#*.}))
	done
	printf -v "$1" %d "$ms"
}

# run_test I: test I under its limit; its status, wall and CPU milliseconds
# in $OUTDIR/I.rc, the pid of its timeout(1) in $OUTDIR/I.pid while it runs
run_test() {
	local i=$1 rc=0 t0 c0 c1 cmd=("${files[$1]}")
	[[ ${files[i]} != *.sh ]] || cmd=(bash "${files[i]}")
	t0=$(date +%s%N)
	children_cpu c0
	timeout -k 10 "${limits[i]}" "${cmd[@]}" </dev/null &
	echo $! >"$OUTDIR/$i.pid"
	wait $! || rc=$?
	rm -f "$OUTDIR/$i.pid"
	children_cpu c1
	echo "$rc $((($(date +%s%N) - t0) / 1000000)) $((c1 - c0))" >"$OUTDIR/$i.rc.tmp"
	mv "$OUTDIR/$i.rc.tmp" "$OUTDIR/$i.rc"
}

passed=0 failed=0 failures=() times=() cpus=()
# settle I: counts test I's status; a timeout names the test and its limit
settle() {
	local i=$1 name=${names[$1]} rc ms cpu
	read -r rc ms cpu <"$OUTDIR/$i.rc"
	times[i]=$ms cpus[i]=${cpu:-0}
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "TIMEOUT $name after ${limits[i]}s"
		name="$name(timeout)"
	fi
	if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

OUTDIR=$(mktemp -d "${TMPDIR:-/tmp}/kimg-run.XXXXXX")
trap 'rm -rf "$OUTDIR"' EXIT
# python3 as the interpreter itself, found once for every test (as
# tests/lib.bash would in each: a version manager's shim in front of it
# costs about 0.1 s of CPU a call); KIMG_PYTHON3 tells lib.bash it is done.
PY_REAL=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -n "$PY_REAL" ] && [ -x "$PY_REAL" ] && [ "$PY_REAL" != "$(command -v python3)" ]; then
	mkdir -p "$OUTDIR/python" && ln -s "$PY_REAL" "$OUTDIR/python/python3" && PATH=$OUTDIR/python:$PATH
fi
KIMG_PYTHON3=$(command -v python3)
export PATH KIMG_PYTHON3
# Interrupted: each running test's timeout(1) (in a process group of its
# own, which a terminal's ^C does not reach) passes the signal to its test.
stop_tests() {
	local p
	for p in "$OUTDIR"/*.pid; do [ -f "$p" ] && kill -TERM "$(cat "$p")" 2>/dev/null; done
	wait
	exit 130
}
trap stop_tests INT TERM
n=${#names[@]}
if [ "$JOBS" -eq 1 ]; then
	for ((i = 0; i < n; i++)); do
		echo "== ${names[i]}"
		run_test "$i"
		settle "$i"
	done
else
	# launch order: longest first by the last run's times (unknown ones as
	# listed, before the known: a new test may be a long one)
	# A fresh build has no times yet: then those of tests/run-times.default
	# (a warm make test's run-times, committed), or the long tests would start
	# last in a cold make test and run alone at its end.
	TIMES_FILE=$BUILD/tests/run-times
	declare -A last=()
	times_in=$TIMES_FILE
	[ -f "$times_in" ] || times_in=tests/run-times.default
	if [ -f "$times_in" ]; then
		while read -r ms cpu name; do
			case $cpu in *[!0-9]*) name=$cpu ;; esac # an older "WALL_MS NAME" line
			last[$name]=$ms
		done <"$times_in"
	fi
	order=()
	while read -r _ i; do order+=("$i"); done < <(
		for ((i = 0; i < n; i++)); do echo "${last[${names[i]}]:-999999999} $i"; done | sort -s -k1,1nr)
	shown=0
	# show_done: prints the blocks of the tests that ended, in list order
	show_done() {
		while [ "$shown" -lt "$n" ] && [ -f "$OUTDIR/$shown.rc" ]; do
			read -r _ ms cpu <"$OUTDIR/$shown.rc"
			echo "== ${names[shown]} ($(secs "$ms") s, CPU $(secs "${cpu:-0}") s)"
			cat "$OUTDIR/$shown.out"
			settle "$shown"
			shown=$((shown + 1))
		done
	}
	for i in "${order[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
			wait -n
			show_done
		done
		run_test "$i" >"$OUTDIR/$i.out" 2>&1 &
	done
	while [ "$shown" -lt "$n" ]; do
		if [ "$(jobs -rp | wc -l)" -gt 0 ]; then wait -n; else
			wait
			# nothing runs and the next has no status: its runner died
			[ -f "$OUTDIR/$shown.rc" ] || { echo "tests/run.sh: ${names[shown]} ended without a status" >>"$OUTDIR/$shown.out"; echo "1 0 0" >"$OUTDIR/$shown.rc"; }
		fi
		show_done
	done
	if [ -z "${KIMG_TESTS:-}" ] && mkdir -p "$(dirname "$TIMES_FILE")" 2>/dev/null; then
		for ((i = 0; i < n; i++)); do echo "${times[i]} ${cpus[i]} ${names[i]}"; done >"$TIMES_FILE"
	fi
fi
if [ ${#failures[@]} -gt 0 ]; then echo "failed: ${failures[*]}"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
