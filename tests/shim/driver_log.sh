#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The driver's error log (shim/hook/hook_logs.c, shim/diag/driver_log.c;
# docs/loading.md section 11) and ptxas's reason (shim/diag/ptxas_reason.c).
# The stand-in driver logs as the real one was measured to ([V] driver
# 580.159.04: "No device code available for GPU ISA 90", "Kernel (k) cannot
# be found in library due to compilation error", "Returning 209
# (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel", and the noise of
# healthy runs, six "Returning 201 ... from cuCtxGetDevice_v2" at cuInit),
# calls every registered callback synchronously on the failing thread, and
# writes CUDA_LOG_FILE. Its lines are its own; kimg's parser never wrote them.
. "$(dirname "$0")/../lib.bash" shim
for p in sym_direct sym_dl libfailalloc.so; do require "$PROGS/$p" "make shim-tests"; done
require "$FIX/consttab_sm80.fatbin" "make fixtures"
SM80=$FIX/consttab_sm80.fatbin SM90=$FIX/consttab_sm90.fatbin
NO_FIT='"No device code available for GPU ISA 90"'
RET209_KERNEL='"Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel"'

# --- the lines of the failing call join its report ---
for access in direct gpa; do
	prog=$PROGS/sym_dl
	[ "$access" = direct ] && prog=$PROGS/sym_direct
	run "k-$access" -- "$prog" "$access" kernel "$SM80" _Z5scalePf
	check "$access: cuLibraryGetKernel's report carries the driver's three lines, in order, no noise" \
		report "k-$access" 'len(R) == 1 and R[0]["driver_log"] == ['"$NO_FIT"',
			"Kernel (_Z5scalePf) cannot be found in library due to compilation error", '"$RET209_KERNEL"']'
done

# right report, right thread: two threads fail at once, each on its own module
for i in 1 2 3 4 5; do
	run "pair$i" SYM_FILE2="$FIX/sm80.fatbin" SYM_KERNEL=axpy -- "$PROGS/sym_dl" gpa pair "$SM80" coeffs
done
check "two threads failing at once (5 runs): each report has its own call's lines only" bash -c '
	for i in 1 2 3 4 5; do
		python3 - "$0/pair$i.jsonl" <<"PY" || exit 1
import json, sys
R = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {r["call"]: r for r in R}
assert len(R) == 2, R
g, k = by["cuLibraryGetGlobal"]["driver_log"], by["cuLibraryGetKernel"]["driver_log"]
assert g == ["No device code available for GPU ISA 90", "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetGlobal"], g
assert k[-2:] == ["Kernel (axpy) cannot be found in library due to compilation error",
                  "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel"], k
PY
	done' "$TMP"

# text: "driver said:" lines
env -u KIMG_DISABLE LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" KIMG_LOG= "$PROGS/sym_dl" gpa kernel "$SM80" k \
	>/dev/null 2>"$TMP/text.err"
check "text report: driver said: (three lines)" test "$(grep -c '^kimg:   driver said: ' "$TMP/text.err")" = 3
check "text report: the Returning line last" grep -qx "kimg:   driver said: Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel" "$TMP/text.err"

# the shared runtime as cudart 13 is [V]: fatbins registered before the
# driver is loaded (the first use loads it). The log is joined when kimg
# meets the driver, not given up at the registration that found none
# (this run had no driver_log on the H200, and in the stand-in, before).
run lazy-rt FAKE_CUDART_LAZY=1 -- "$PROGS/rtsym" "$SM80"
check "runtime loading the driver after registration: 209 unchanged, one report with the driver's lines" \
	eval 'has lazy-rt "cudaMemcpyToSymbol: 209" && report lazy-rt '"'"'len(R) == 1 and R[0]["call"] == "cuLibraryGetGlobal"
		and R[0]["driver_log"] == ['"$NO_FIT"', "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetGlobal"]'"'"

# noise after the failing call (a runtime asking for a context before it
# returns) is left out; the lines of an earlier call on the thread are not joined
run noise-after FAKE_CUDART_PRIVATE=1 FAKE_CUDART_NOISE=1 -- "$PROGS/rtsym" "$SM80"
check "runtime report after noise: only the failing call's two lines" \
	report noise-after 'len(R) == 1 and R[0]["call"] == "cudaMemcpyToSymbol" and R[0]["driver_log"] == ['"$NO_FIT"',
		"Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetGlobal"]'
run two-calls SYM_EXIT=1 -- "$PROGS/sym_dl" gpa countkernel "$SM80" k
check "an unhooked failure, then a hooked one on the same thread: the hooked report has its own lines only" \
	report two-calls 'first("cuLibraryGetKernel", 209)["driver_log"] == ['"$NO_FIT"',
		"Kernel (k) cannot be found in library due to compilation error", '"$RET209_KERNEL"']'
check "... and the earlier unhooked one still reaches the safety net at the failing exit" \
	report two-calls 'len(R) == 2 and first("cuLibraryGetKernelCount", 209)["safety_net"]["exit_status"] == 1'

# --- never printed otherwise: the noise of a healthy run, a failing exit ---
run healthy SYM_EXIT=1 -- "$PROGS/sym_dl" gpa kernel "$SM90" _Z5scalePf
check "healthy run (six 201 noise lines, exit 1): no report" report healthy 'R == []'
check "... and nothing of the log on stderr" eval '! grep -q "Returning\|cuCtxGetDevice" "$TMP/healthy.err"'

# --- the application's own callback and CUDA_LOG_FILE keep working ---
env -u LD_PRELOAD LD_LIBRARY_PATH="$FAKE" SYM_APP_LOG=1 CUDA_LOG_FILE="$TMP/plain.log" \
	"$PROGS/sym_dl" gpa kernel "$SM80" k >"$TMP/plain.out" 2>/dev/null
run app SYM_APP_LOG=1 CUDA_LOG_FILE="$TMP/kimg.log" -- "$PROGS/sym_dl" gpa kernel "$SM80" k
check "the program's callback gets every message, as without kimg (9: six noise, three of the failure)" \
	eval 'test "$(grep "^app log: " "$TMP/app.out")" = "$(grep "^app log: " "$TMP/plain.out")" &&
		test "$(grep -c "^app log: " "$TMP/app.out")" = 9'
check "CUDA_LOG_FILE written as without kimg" cmp -s "$TMP/plain.log" "$TMP/kimg.log"
check "... and kimg's report still has the lines" report app 'R[0]["driver_log"][-1] == '"$RET209_KERNEL"

# --- no allocation in the callback (a failing allocator while it runs) ---
run noalloc LD_PRELOAD="$LIB:$BUILD_DIR/shim-tests/libfailalloc.so" -- "$PROGS/sym_dl" gpa kernel "$SM80" k
check "under a failing allocator: kimg's callback made no allocation" grep -qx "failalloc: 0 refused" "$TMP/noalloc.err"
check "... and its lines reached the report" report noalloc 'R[0]["driver_log"][-1] == '"$RET209_KERNEL"
run allocs LD_PRELOAD="$LIB:$BUILD_DIR/shim-tests/libfailalloc.so" SYM_APP_LOG=malloc -- "$PROGS/sym_dl" gpa kernel "$SM80" k
check "the failing allocator sees a callback that allocates (9 messages, 9 refused)" \
	grep -qx "failalloc: 9 refused" "$TMP/allocs.err"

# --- the safety net: an entry point kimg does not hook ---
run net SYM_EXIT=1 -- "$PROGS/sym_dl" gpa count "$SM80"
check "unhooked cuLibraryGetKernelCount: 209 unchanged" has net "cuLibraryGetKernelCount: 209"
check "failing exit: one safety-net report with the call, the code, the device, the driver's lines" \
	report net 'len(R) == 1 and R[0]["call"] == "cuLibraryGetKernelCount" and R[0]["error"]["code"] == 209
		and R[0]["safety_net"] == {"reported_at": "exit", "exit_status": 1} and R[0]["device"]["sm"] == "9.0"
		and R[0]["driver_log"] == ['"$NO_FIT"', "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernelCount"]
		and len(R[0]["stack"]) > 0'
run net3 SYM_EXIT=1 SYM_THREADS=3 -- "$PROGS/sym_dl" gpa count "$SM80"
check "three threads, the same unhooked failure: reported once" report net3 'len(R) == 1'
run net-ok -- "$PROGS/sym_dl" gpa count "$SM80"
check "dispatch rule: an unhooked failure the program survives (exit 0) stays silent" report net-ok 'R == []'
run net-fork -- "$PROGS/sym_dl" gpa countfork "$SM80"
check "a forked child's failing exit does not report its parent's unhooked failure (the parent exits 0)" \
	eval 'has net-fork "child exit: 1" && report net-fork "R == []"'
run net-hooked SYM_EXIT=1 -- "$PROGS/sym_dl" gpa kernel "$SM80" k
check "a hooked failure is reported once, never again by the safety net" report net-hooked 'len(R) == 1 and "safety_net" not in R[0]'
run net-off SYM_EXIT=1 KIMG_DRIVER_LOG=0 -- "$PROGS/sym_dl" gpa count "$SM80"
check "KIMG_DRIVER_LOG=0: no safety net" report net-off 'R == []'
run log-off KIMG_DRIVER_LOG=0 -- "$PROGS/sym_dl" gpa kernel "$SM80" k
check "KIMG_DRIVER_LOG=0: the hooked report, without driver_log" report log-off 'len(R) == 1 and "driver_log" not in R[0]'

# --- a driver without the log API (older than 12.9): nothing changes ---
run old FAKE_CUDA_NO_LOGS=1 SYM_EXIT=1 -- "$PROGS/sym_dl" gpa kernel "$SM80" k
check "driver without cuLogs*: the same report, no driver_log" \
	report old 'len(R) == 1 and R[0]["call"] == "cuLibraryGetKernel" and "driver_log" not in R[0]'

# --- ptxas's reason: one re-compile with CU_JIT_ERROR_LOG_BUFFER ---
run p218 FAKE_CUDA_SM=75 SYM_EXIT=1 -- "$PROGS/sym_dl" gpa ptx "$FIX/compute80.ptx"
check "218 (compute_80 PTX on 7.5): the program gets 218" has p218 "cuModuleLoadData: 218"
check "... the report quotes ptxas (from kimg's re-compile), the driver's two lines, and only that report" \
	report p218 'len(R) == 1 and R[0]["jit_log_from"] == "kimg"
		and R[0]["jit_log"] == "ptxas fatal   : SM version specified by .target is higher than default SM version assumed"
		and R[0]["driver_log"] == ["JIT compilation failed", "Returning 218 (CUDA_ERROR_INVALID_PTX) from cuModuleLoadData"]'
run p222 FAKE_CUDA_DRIVER=12040 -- "$PROGS/sym_dl" gpa ptx "$FIX/compute80.ptx"
check "222 (ISA 9.0 on a 12.4 driver; the program asks for 13.0, which has its own report): ptxas's .version line" \
	report p222 'first("cuModuleLoadData", 222)["jit_log_from"] == "kimg"
		and first("cuModuleLoadData", 222)["jit_log"].startswith("ptxas fatal   : Unsupported .version")'
run p-off FAKE_CUDA_SM=75 KIMG_PTXAS_REASON=0 -- "$PROGS/sym_dl" gpa ptx "$FIX/compute80.ptx"
check "KIMG_PTXAS_REASON=0: no re-compile, no jit_log" report p-off 'len(R) == 1 and "jit_log" not in R[0]'
env -u KIMG_DISABLE LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" KIMG_LOG= FAKE_CUDA_SM=75 "$PROGS/sym_dl" gpa ptx \
	"$FIX/compute80.ptx" >/dev/null 2>"$TMP/p.err"
check "text: ptxas said (kimg compiled it once more)" grep -q "^kimg:   ptxas said (kimg compiled it once more): ptxas fatal" "$TMP/p.err"
# A ring is a thread's once the driver logged on it, not before: 70 live
# threads whose loads the driver did not log (checked at load: KIMG_AUDIT=1
# reads each thread's log mark) hold none of the 64 rings, so a later thread
# whose PTX the JIT refuses still gets one, and its report the driver's lines.
require "$PROGS/rings" "make shim-tests"
{ cat "$FIX/compute80.ptx"; echo "// FAKE_JIT_REJECT: uses an instruction sm_90 lacks"; } >"$TMP/reject80.ptx"
run rings KIMG_AUDIT=1 KIMG_PTXAS_REASON=0 FAKE_CUDA_SM=90 -- "$PROGS/rings" 70 "$FIX/multi.fatbin" "$TMP/reject80.ptx"
check "70 live threads' loads unlogged, then a refused PTX on a new thread: its report has the driver's two lines" \
	eval 'has rings "good: 70 of 70" && has rings "bad: 218" && report rings "len(R) == 1 and R[0][\"driver_log\"] ==
		[\"JIT compilation failed\", \"Returning 218 (CUDA_ERROR_INVALID_PTX) from cuModuleLoadData\"]"'
finish
