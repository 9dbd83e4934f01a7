#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Arch-dispatched failures (shim/diag/dispatch_track.c, core/dispatch.c): a
# library with a module for the device and one for other GPUs probes the
# other one and ignores the 209, as NCCL does. kimg records it and stays
# quiet; it reports in full only when the failure reaches the program (a
# launch of that module fails, the program's own call fails, the process
# exits with a failure status; a fatal signal gets one line per file), and
# KIMG_VERBOSE=1 shows one line per file at exit. Modules of files with no
# code for the device, and plain code for other GPUs outside the libraries
# known to select per GPU, are reported at once as before.
. "$(dirname "$0")/../lib.bash" shim
MAIN=$PROGS/disp_main
# The libraries (tests/shim/progs/disp.c around fixtures; make fixtures builds
# them, tests/shim/shim.mk): libdisp.so sm_90 + sm_100f only (F1),
# libcudnn_disp.so plain sm_80 under a cuDNN name (F2), libplain.so plain
# sm_80 in any other library (F3).
DISP=$BUILD_DIR/shim-tests/disp
for l in libdisp.so libcudnn_disp.so libplain.so; do require "$DISP/$l" "make BUILD=$BUILD fixtures"; done
D=$DISP/libdisp.so

run quiet -- "$MAIN" "$D" probe
check "probe of a module for other GPUs, exit 0: the library's 209 happens, no report, stderr empty" \
	eval 'has quiet "probe B: 209" && has quiet "module A launch: 0" && report quiet "R == []" && [ ! -s "$TMP/quiet.err" ] &&
		[ "$(cat "$TMP/quiet.rc")" = 0 ]'
run verbose KIMG_VERBOSE=1 -- "$MAIN" "$D" probe
check "KIMG_VERBOSE=1: one dispatch line for the file at exit, naming the arch and rule" \
	eval '[ "$(grep -c "^kimg: dispatch: " "$TMP/verbose.err")" = 1 ] &&
		grep -q "^kimg: dispatch: $D: 1 module for other GPUs failed 1 time .*\[F1\]; first: sm_100f); not reported$" "$TMP/verbose.err"'

run onerr KIMG_ON_ERROR=exit:7 -- "$MAIN" "$D" probe
check "KIMG_ON_ERROR=exit:7 does not fire for a recorded failure: the program ends normally (0)" \
	eval '[ "$(cat "$TMP/onerr.rc")" = 0 ] && has onerr "disp_run: 0" && report onerr "R == []"'

run exitfail -- "$MAIN" "$D" probe fail
check "then the process exits 3: one full report, status unchanged" \
	eval '[ "$(cat "$TMP/exitfail.rc")" = 3 ] && report exitfail "len(R) == 1"'
check "... the recorded failure: cuLibraryGetKernel 209, axpy, sm_100f, its file, reported because of exit status 3" \
	report exitfail 'R[0]["call"] == "cuLibraryGetKernel" and R[0]["error"]["code"] == 209 and R[0]["kernel"]["name"] == "axpy"
		and archs(R[0]) == ["sm_100f"] and R[0]["module"]["file"] == "'"$D"'"
		and R[0]["dispatch"] == {"reported_because": "exit_status", "exit_status": 3, "modules_recorded": 1}'
check "... with the stack of the failure (inside the library), not of the exit" \
	report exitfail 'any("libdisp.so" in f for f in R[0]["stack"]) and not any("exit" in f for f in R[0]["stack"][:2])'

run launch FAKE_CUDA_LAZY=1 -- "$MAIN" "$D" launch fail
check "the library then launches that module: the launch is reported, marked, and not again at exit" \
	eval 'has launch "module B launch: 209" && report launch "len(R) == 1 and R[0][\"call\"] == \"cuLaunchKernel\"
		and R[0][\"dispatch\"] == {\"reported_because\": \"launch\"} and R[0][\"kernel\"][\"name\"] == \"axpy\"
		and R[0][\"module\"][\"file\"] == \"$D\""'

run program -- "$MAIN" "$D" program
check "the program's own lookup in that module: reported at once, marked program_call, once" \
	eval 'has program "program'"'"'s own lookup in B: 209" && report program "len(R) == 1
		and R[0][\"dispatch\"] == {\"reported_because\": \"program_call\"} and R[0][\"call\"] == \"cuLibraryGetKernel\""'

# the same lookup made by the shared runtime (the stand-in libcudart.so.13)
# for the program's cudaFuncGetAttributes: the driver call is the
# runtime's, recorded; the failure reaches the program at the runtime call,
# and is reported there, once (issue 23: counted as the program's own
# driver call, it was reported at cuLibraryGetKernel instead)
run rtcall -- "$MAIN" "$D" runtime
check "a lookup in that module from inside libcudart: 209, one report, at the runtime call (cudaFuncGetAttributes)" \
	eval 'has rtcall "runtime'"'"'s lookup in B: 209" && report rtcall "len(R) == 1 and R[0][\"call\"] == \"cudaFuncGetAttributes\"
		and R[0][\"dispatch\"] == {\"reported_because\": \"program_call\"}"'

run abort -- "$MAIN" "$D" probe abort
check "a fatal signal after it: the process still dies of SIGABRT (134), with one line per file on stderr" \
	eval '[ "$(cat "$TMP/abort.rc")" = 134 ] && grep -qx "kimg: fatal signal 6 after arch-dispatched load failures (modules for other GPUs):" "$TMP/abort.err" &&
		grep -qx "kimg:   $D: 1 module for other GPUs failed to load (sm_100f), recorded not reported" "$TMP/abort.err"'

# the first of the fatal signals kimg watches (SIGSEGV, as SIGBUS, SIGILL,
# SIGFPE and SIGABRT): the same line, and the process dies of it (139)
run segv -- "$MAIN" "$D" probe segv
check "SIGSEGV after it: the process still dies of SIGSEGV (139), the same lines on stderr" \
	eval '[ "$(cat "$TMP/segv.rc")" = 139 ] && grep -qx "kimg: fatal signal 11 after arch-dispatched load failures (modules for other GPUs):" "$TMP/segv.err" &&
		grep -qx "kimg:   $D: 1 module for other GPUs failed to load (sm_100f), recorded not reported" "$TMP/segv.err"'

run cudnn -- "$MAIN" "$DISP/libcudnn_disp.so" probe
check "plain sm_80 code in a library that selects per GPU (a cuDNN name, F2): recorded, silent" \
	eval 'has cudnn "probe B: 209" && report cudnn "R == []"'
run plain -- "$MAIN" "$DISP/libplain.so" probe
check "the same module in any other library (F3): reported at once, as today" \
	report plain 'len(R) == 1 and R[0]["call"] == "cuLibraryGetKernel" and "dispatch" not in R[0] and archs(R[0]) == ["sm_80"]'
run nocode FAKE_CUDA_SM=75 -- "$MAIN" "$D" probe
check "a file with no code for the device (7.5: F0): both modules reported at once" \
	report nocode 'len(R) == 2 and all("dispatch" not in r for r in R)'
finish
