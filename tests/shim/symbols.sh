#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Symbol and variable lookups (shim/hook/hook_symbols.c, the symbol rows of
# hook_runtime.c; docs/loading.md section 4.1 and the entry-point table of
# section 12). Under CUDA 13 a library whose code fits nothing fails its
# first lookup of any kind ([V] H200: a program that fills a __constant__
# table before its first launch gets 209 from cuLibraryGetGlobal, and had
# no report before these hooks). The stand-in driver fails the lookups the
# same way (tests/fake_cuda/fake_cuda.c); its verdict is its own reading
# of the image, never kimg's. Fixtures: consttab_sm80.fatbin (sm_80 only)
# and consttab_sm90.fatbin (sm_90 + compute_90), from consttab.cu.
. "$(dirname "$0")/../lib.bash" shim
for p in sym_direct sym_dl rtsym; do require "$PROGS/$p" "make shim-tests"; done
require "$FIX/consttab_sm80.fatbin" "make fixtures"
SM80=$FIX/consttab_sm80.fatbin SM90=$FIX/consttab_sm90.fatbin

# --- each lookup, each way the program reaches the driver ---
for access in direct dlsym gpa; do
	prog=$PROGS/sym_dl
	[ "$access" = direct ] && prog=$PROGS/sym_direct
	for op in global:cuLibraryGetGlobal managed:cuLibraryGetManaged unified:cuLibraryGetUnifiedFunction; do
		call=${op#*:} name=$access-${op%%:*}
		run "$name" -- "$prog" "$access" "${op%%:*}" "$SM80" coeffs
		check "$access, $call on sm_80-only code: the program still gets 209" has "$name" "$call: 209"
		check "$access, $call: one report naming the call, the symbol, the module's sm_80 image and the fix" \
			report "$name" 'len(R) == 1 and R[0]["call"] == "'"$call"'" and R[0]["error"]["code"] == 209
				and R[0]["symbol"]["name"] == "coeffs" and R[0]["kernel"]["name"] is None
				and archs(R[0]) == ["sm_80"] and R[0]["module"]["origin"] == "cuLibraryLoadData"
				and R[0]["verdict"]["outcome"] == "cannot_run" and "sm_90" in R[0]["fix"]["nvcc"]'
	done
done

# cuModuleGetGlobal: cuda.h names the _v2 (64-bit); version 3000 asks for the
# CUDA 2.0 ABI, which has its own wrapper (never the _v2's on the old function)
run mg-v2 -- "$PROGS/sym_dl" gpa modglobal "$SM90" missing_name
check "cuGetProcAddress(cuModuleGetGlobal, 13000) hands out libkimg's wrapper" has mg-v2 "cuModuleGetGlobal: libkimg"
check "a module that fits: cuModuleGetGlobal of a missing name is 500" has mg-v2 "cuModuleGetGlobal: 500"
check "... and no report (500 only counts when no image fits, rule of docs/rules.md §9)" report mg-v2 'R == []'
run mg-v1 -- "$PROGS/sym_dl" gpa-old modglobal "$SM90" coeffs
check "version 3000: the 32-bit cuModuleGetGlobal, wrapped too" has mg-v1 "cuModuleGetGlobal: libkimg"
check "... and it works through the wrapper (0, no report)" eval 'has mg-v1 "cuModuleGetGlobal: 0" && report mg-v1 "R == []"'
run mg-found -- "$PROGS/sym_direct" direct modglobal "$SM90" coeffs
check "direct cuModuleGetGlobal_v2 of a present name: 0, silent" eval 'has mg-found "cuModuleGetGlobal: 0" && report mg-found "R == []"'

# --- healthy: code for the device, every lookup silent ---
run fits -- "$PROGS/sym_dl" gpa global "$SM90" coeffs
check "sm_90 code on 9.0: cuLibraryGetGlobal 0 and no report" eval 'has fits "cuLibraryGetGlobal: 0" && report fits "R == []"'

# --- the symbol-first program on the shared runtime (nvcc's shape) ---
run rtsym -- "$PROGS/rtsym" "$SM80"
check "symbol-first program: cudaMemcpyToSymbol 209, exit status 1 (unchanged)" \
	eval 'has rtsym "cudaMemcpyToSymbol: 209" && [ "$(cat "$TMP/rtsym.rc")" = 1 ]'
check "one report: the driver call inside the runtime (cuLibraryGetGlobal), symbol coeffs, sm_80 image" \
	report rtsym 'len(R) == 1 and R[0]["call"] == "cuLibraryGetGlobal" and R[0]["symbol"]["name"] == "coeffs"
		and archs(R[0]) == ["sm_80"] and R[0]["verdict"]["rule"] == "S1"'
run rtsym-private FAKE_CUDART_PRIVATE=1 -- "$PROGS/rtsym" "$SM80"
check "runtime with a driver table kimg never saw: the runtime hook reports cudaMemcpyToSymbol" \
	report rtsym-private 'len(R) == 1 and R[0]["call"] == "cudaMemcpyToSymbol" and R[0]["symbol"]["name"] == "coeffs"
		and R[0]["module"]["origin"] == "__cudaRegisterFatBinary" and archs(R[0]) == ["sm_80"]'
for first in from:cudaMemcpyFromSymbol address:cudaGetSymbolAddress size:cudaGetSymbolSize; do
	run "rt-${first%%:*}" FAKE_CUDART_PRIVATE=1 -- "$PROGS/rtsym" "$SM80" "${first%%:*}"
	check "runtime hook ${first#*:}: 209 unchanged, one report naming the call and the symbol" \
		eval 'has "rt-${first%%:*}" "${first#*:}: 209" && report "rt-${first%%:*}" "len(R) == 1 and R[0][\"call\"] == \"${first#*:}\" and R[0][\"symbol\"][\"name\"] == \"coeffs\""'
done
run rtsym-launch -- "$PROGS/rtsym" "$SM90" launch
check "symbol-first program with sm_90 code: copy and launch succeed, no report" \
	eval 'has rtsym-launch "cudaMemcpyToSymbol: 0" && has rtsym-launch "cudaLaunchKernel: 0" && report rtsym-launch "R == []"'

# --- one report per (module, error): the later kernel lookup is counted ---
run twice SYM_THREADS=4 -- "$PROGS/sym_dl" gpa global "$SM80" coeffs
check "four threads, same failing module: one report" report twice 'len(R) == 1'

# --- text format ---
rm -f "$TMP/text.err"
env -u KIMG_DISABLE LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" KIMG_LOG= "$PROGS/sym_dl" gpa global "$SM80" coeffs \
	>/dev/null 2>"$TMP/text.err"
check "text report: the symbol line" grep -qx "kimg:   symbol: coeffs" "$TMP/text.err"
check "text report: header names cuLibraryGetGlobal" grep -q "^kimg: cuLibraryGetGlobal returned 209" "$TMP/text.err"
finish
