#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every unit test program (build/tests/test_*) and every integration
# script (tests/{probe,shim,scripts}/*.sh), then prints "N passed, N failed".
# Each program/script is one test unit; its own output says what it checked.
set -u
BUILD=${BUILD:-build}
export BUILD
export KIMG_FIXTURES=${KIMG_FIXTURES:-$BUILD/fixtures}
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}
passed=0 failed=0 failures=()
run_one() {
	local name=$1; shift
	echo "== $name"
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for s in tests/probe/*.sh tests/shim/*.sh tests/scripts/*.sh; do
	[ -f "$s" ] || continue
	run_one "$s" bash "$s"
done
if [ ${#failures[@]} -gt 0 ]; then echo "failed: ${failures[*]}"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
