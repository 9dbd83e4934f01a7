#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The built-in example: builds small CUDA programs with known arch sets (tests/fixtures),
# lists the device code inside them, and checks them against four GPUs.
set -u
BUILD=${BUILD:-build}
probe="$BUILD/kimg-probe"
fx="$BUILD/fixtures"
run() { echo; echo "\$ $*"; "$@"; }
run "$probe" scan "$fx/multi_exe" "$fx/libtwo.so"
run "$probe" check --sm "8.6,9.0,RTX 4060 Ti,Jetson AGX Orin" "$fx/sm80_exe" "$fx/ptxonly_exe" "$fx/libtwo.so"
status=$?
echo
echo "(kimg-probe check exits 1 when some module cannot run on some listed GPU; here it exited $status)"
[ "$status" -eq 1 ]
