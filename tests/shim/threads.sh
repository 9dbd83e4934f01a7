#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# 16 threads race through the static-cudart path (dlsym + cuGetProcAddress_v2
# + first resolution of every slot), some loading a bad image (209), the
# others launching 2000 times; ThreadSanitizer builds of the program and of
# libkimg must report no race, and every thread must see the codes the
# driver gave (docs/design.md section 8: atomic slots, lock-free hot path).
. "$(dirname "$0")/../lib.bash" shim
TSAN_LIB=$BUILD/tsan/libkimg.so
[ -e "$TSAN_LIB" ] || { echo "FAIL - $TSAN_LIB missing (make shim-tests)"; exit 1; }
LIB=$TSAN_LIB run tsan TSAN_OPTIONS="halt_on_error=0 exitcode=66 report_signal_unsafe=0" -- \
	"$PROGS/threads" "$FIX/multi.fatbin" "$FIX/sm80.cubin" axpy
check "all threads saw the driver's codes; 4 bad loads gave 209" has tsan "threads: ok 4 failures"
check "exit status 0 (TSan exits 66 on a report)" test "$(cat "$TMP/tsan.rc")" = 0
check "no ThreadSanitizer warning" bash -c "! grep -q ThreadSanitizer '$TMP/tsan.err'"
grep -A30 "WARNING: ThreadSanitizer" "$TMP/tsan.err" | head -60 | sed 's/^/   | /'
check "the failure was reported" report tsan 'first("cuLibraryGetKernel", 209)["kernel"]["name"] == "axpy"'
# the driver's log callback (shim/diag/driver_log.c) ran on the racing threads
# too, under ThreadSanitizer: its per-thread rings are part of the no-race claim
check "the report carries the driver's lines of its own call" \
	report tsan 'first("cuLibraryGetKernel", 209)["driver_log"][-1] == "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel"'
finish
