#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every unit test program (build/tests/test_*) and every integration
# script (tests/{probe,shim,api,scripts}/*.sh), then prints "N passed, N failed".
# Each program/script is one test unit; its own output says what it checked.
# Every one runs under a time limit (timeout(1), which ends its whole
# process group): KIMG_TEST_TIMEOUT seconds (default 300), or the number a
# script names in its first lines as "# test-timeout: SECONDS". A test past
# its bound fails, named: "TIMEOUT NAME after Ns".
# KIMG_TESTS="NAME ..." runs only those (test_x, tests/probe/x.sh).
set -u
BUILD=${BUILD:-build}
export BUILD
export KIMG_FIXTURES=${KIMG_FIXTURES:-$BUILD/fixtures}
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}
DEFAULT_TIMEOUT=${KIMG_TEST_TIMEOUT:-300}
passed=0 failed=0 failures=()
# limit_of FILE: the script's own "# test-timeout: N", else the default
limit_of() {
	local n
	n=$(head -n 20 "$1" 2>/dev/null | grep -aoE '^# test-timeout: [0-9]+' | head -n 1 | grep -oE '[0-9]+$')
	echo "${n:-$DEFAULT_TIMEOUT}"
}
ONLY=" ${KIMG_TESTS:-} "
run_one() {
	local name=$1 limit=$2 rc=0; shift 2
	[ "$ONLY" = "  " ] || [[ $ONLY == *" $name "* ]] || return 0
	echo "== $name"
	timeout -k 10 "$limit" "$@" || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "TIMEOUT $name after ${limit}s"
		name="$name(timeout)"
	fi
	if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$DEFAULT_TIMEOUT" "$t"
done
for s in tests/probe/*.sh tests/shim/*.sh tests/api/*.sh tests/scripts/*.sh; do
	[ -f "$s" ] || continue
	run_one "$s" "$(limit_of "$s")" bash "$s"
done
if [ ${#failures[@]} -gt 0 ]; then echo "failed: ${failures[*]}"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
