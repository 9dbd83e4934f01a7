#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# KIMG_FALLBACK=ptx / force-ptx[:GLOB] end to end through the fake driver
# (no GPU). The fake driver "JIT-compiles" PTX the rules accept and rejects
# PTX containing FAKE_JIT_REJECT with 218; FAKE_CUDA_DUMP records which
# image each launch ran, so the tests see the rewritten PTX being used.
# Pins: P3 (compute_100 on 9.0: lower .target), P4 (.version 9.9 on a 13.0
# driver: lower .version), compressed PTX entries, both loading paths
# (driver-API loads, runtime-registered fatbins), the rejection passing the
# original error through, SASS-only modules reported as not rescuable with
# the fix, force-ptx and its glob, every fallback reported (JSON and text).
. "$(dirname "$0")/../lib.bash" shim
DRV=$PROGS/drv_dl
dump() { cat "$TMP/$1.dump" 2>/dev/null; }
ran() { grep -qxF -- "$2" "$TMP/$1.dump" || { echo "   (dump of $1:)"; dump "$1" | sed 's/^/   | /'; false; }; }
fb() { local name=$1; shift; run "$name" KIMG_FALLBACK=ptx FAKE_CUDA_DUMP="$TMP/$name.dump" "$@"; }

sed 's/^\.version 9\.0$/.version 9.9/' "$FIX/compute80.ptx" >"$TMP/isa99.ptx"
{ cat "$FIX/compute100.ptx"; echo "// FAKE_JIT_REJECT: uses an instruction sm_90 lacks"; } >"$TMP/reject100.ptx"

# ---- P3: raw compute_100 PTX on 9.0 (218 without kimg) ----
fb ptx100 -- "$DRV" dlsym load "$FIX/compute100.ptx" axpy
check "P3 load: cuModuleLoadData succeeds with the stand-in" has ptx100 "cuModuleLoadData: 0"
check "P3 load: kernel found and launched" has ptx100 "cuLaunchKernel: 0"
check "P3 load: the launch ran PTX lowered to sm_90 (ISA 9.0 kept)" ran ptx100 "launch axpy ptx compute_90 9.0"
check "P3 load: one report: fallback applied, target sm_100 -> sm_90, version untouched, JIT timed, warning" \
	report ptx100 'len(R) == 1 and R[0]["call"] == "cuModuleLoadData" and R[0]["error"]["code"] == 218
		and R[0]["fallback"]["mode"] == "ptx" and R[0]["fallback"]["applied"] is True
		and R[0]["fallback"]["image"] == "compute_100"
		and R[0]["fallback"]["rewritten"] == {"version": None, "target": {"from": "sm_100", "to": "sm_90"}}
		and isinstance(R[0]["fallback"]["jit_ms"], float) and R[0]["fallback"]["jit_ms"] >= 0
		and "__CUDA_ARCH__" in R[0]["fallback"]["warning"] and R[0]["verdict"]["rule"] == "P3"'

# A load the fallback rescued is no error of the program's: KIMG_ON_ERROR
# does not stop it there (only an audit's cannot-run report does)
fb onerr KIMG_ON_ERROR=exit:7 -- "$DRV" dlsym load "$FIX/compute100.ptx" axpy
check "KIMG_ON_ERROR=exit:7 with a rescued load: the program runs on and ends 0, one fallback report" \
	eval 'has onerr "cuLaunchKernel: 0" && [ "$(cat "$TMP/onerr.rc")" = 0 ] &&
		report onerr "len(R) == 1 and R[0][\"fallback\"][\"applied\"] is True"'

# ---- P4: .version 9.9 on a 13.0 driver (222 without kimg) ----
fb isa99 -- "$DRV" dlsym loadex "$TMP/isa99.ptx" axpy
check "P4 loadex: runs" has isa99 "cuLaunchKernel: 0"
check "P4 loadex: the launch ran .version 9.0, target compute_80 kept" ran isa99 "launch axpy ptx compute_80 9.0"
check "P4 loadex: report: version 9.9 -> 9.0, target untouched, error 222 averted" \
	report isa99 'len(R) == 1 and R[0]["call"] == "cuModuleLoadDataEx" and R[0]["error"]["code"] == 222
		and R[0]["fallback"]["rewritten"] == {"version": {"from": "9.9", "to": "9.0"}, "target": None}
		and R[0]["fallback"]["applied"] is True'

# ---- libraries (how cudart 13 loads registered fatbins), path loads ----
fb lib100 -- "$DRV" dlsym lib "$FIX/ptx100.fatbin" axpy
check "library: cuLibraryLoadData, cuLibraryGetKernel, cuKernelGetFunction, launch all 0" \
	eval 'has lib100 "cuLibraryLoadData: 0" && has lib100 "cuLibraryGetKernel: 0" &&
		has lib100 "cuKernelGetFunction: 0" && has lib100 "cuLaunchKernel: 0"'
check "library: ran the stand-in" ran lib100 "launch axpy ptx compute_90 9.0"
check "library: report names cuLibraryLoadData and the 209 it averted" \
	report lib100 'len(R) == 1 and R[0]["call"] == "cuLibraryLoadData" and R[0]["error"]["code"] == 209
		and R[0]["fallback"]["applied"] is True and archs(R[0]) == ["compute_100"]'
fb libz -- "$DRV" dlsym lib "$FIX/ptx100_z.fatbin" _Z10big_kernelPKfPfi
check "compressed (zstd) PTX entry: decompressed, rewritten, run" \
	ran libz "launch _Z10big_kernelPKfPfi ptx compute_90 9.0"
check "compressed: report marks the image compressed and the rewrite applied" \
	report libz 'R[0]["module"]["images"][0]["compression"] == "zstd" and R[0]["fallback"]["applied"] is True
		and R[0]["fallback"]["rewritten"]["target"] == {"from": "sm_100", "to": "sm_90"}'
fb path100 -- "$DRV" dlsym path "$FIX/compute100.ptx" axpy
check "cuModuleLoad (path): runs the stand-in" ran path100 "launch axpy ptx compute_90 9.0"
check "cuModuleLoad: report names the file" \
	report path100 'R[0]["call"] == "cuModuleLoad" and R[0]["module"]["file"].endswith("/compute100.ptx")
		and R[0]["fallback"]["applied"] is True'
fb libfile -- "$DRV" dlsym libfile "$FIX/ptx100.fatbin" axpy
check "cuLibraryLoadFromFile: runs the stand-in" ran libfile "launch axpy ptx compute_90 9.0"

# ---- the shared runtime: registered fatbin, loaded at registration ----
fb rt100 -- "$PROGS/rt" "$FIX/ptx100.fatbin" axpy
check "runtime: cudaFuncGetAttributes and cudaLaunchKernel succeed" \
	eval 'has rt100 "cudaFuncGetAttributes: 0" && has rt100 "cudaLaunchKernel: 0"'
check "runtime: the launch ran the stand-in" ran rt100 "launch axpy ptx compute_90 9.0"

# ---- not rescuable: SASS only; JIT switched off ----
fb sass80 -- "$DRV" dlsym lib "$FIX/sm80.fatbin" axpy
check "SASS only: the program keeps its original error" has sass80 "cuLibraryGetKernel: 209"
check "SASS only: one report, not applied, says why, with the fix" \
	report sass80 'len(R) == 1 and R[0]["call"] == "cuLibraryLoadData" and R[0]["error"]["code"] == 209
		and R[0]["fallback"]["applied"] is False and "not rescuable" in R[0]["fallback"]["result"]
		and "SASS only" in R[0]["fallback"]["result"] and "sm_90" in R[0]["fix"]["nvcc"]
		and R[0]["fallback"]["jit_ms"] is None'
check "SASS only: the later failure is counted in the summary" \
	grep -qx "kimg: 1 kernel in 1 module failed to load (see above)" "$TMP/sass80.err"
fb nojit CUDA_DISABLE_PTX_JIT=1 -- "$DRV" dlsym lib "$FIX/ptx100.fatbin" axpy
check "CUDA_DISABLE_PTX_JIT: not rescuable, original result kept" \
	report nojit 'len(R) == 1 and R[0]["fallback"]["applied"] is False
		and "CUDA_DISABLE_PTX_JIT" in R[0]["fallback"]["result"]'

# ---- the JIT rejects the rewritten PTX: original error passed through ----
fb reject -- "$DRV" dlsym load "$TMP/reject100.ptx" axpy
check "rejected (eager): the program gets the original 218" has reject "cuModuleLoadData: 218"
check "rejected: one report saying so, with the JIT's error and time" \
	report reject 'len(R) == 1 and R[0]["error"]["code"] == 218 and R[0]["fallback"]["applied"] is False
		and R[0]["fallback"]["result"].startswith("JIT rejected the rewritten PTX: 218 CUDA_ERROR_INVALID_PTX")
		and R[0]["fallback"]["rewritten"]["target"] == {"from": "sm_100", "to": "sm_90"}
		and R[0]["fallback"]["jit_ms"] >= 0'
fb rejectex -- "$DRV" dlsym loadex "$TMP/reject100.ptx" axpy
check "rejected (cuModuleLoadDataEx): the program gets the original 218 from that entry point too" \
	eval 'has rejectex "cuModuleLoadDataEx: 218" && report rejectex "len(R) == 1 and R[0][\"call\"] == \"cuModuleLoadDataEx\" and R[0][\"fallback\"][\"applied\"] is False"'
fb rejlazy FAKE_CUDA_LAZY=1 -- "$DRV" dlsym lazy "$TMP/reject100.ptx" axpy
check "rejected (lazy JIT at first kernel): caught at load, original library handed out" \
	eval 'has rejlazy "cuLibraryLoadData: 0" && has rejlazy "cuKernelGetFunction: 218"'
# (the drv program then launches the kernel handle itself; that launch is
# reported on its own, as without the fallback)
check "rejected (lazy): reported at the load, the later cuKernelGetFunction 218 not again" \
	report rejlazy 'len([r for r in R if r["call"] != "cuLaunchKernel"]) == 1 and R[0]["call"] == "cuLibraryLoadData"
		and R[0]["fallback"]["result"].startswith("JIT rejected the rewritten PTX: 218")'

# ---- force-ptx[:GLOB]: SASS ignored, PTX JIT-compiled ----
run nofb FAKE_CUDA_DUMP="$TMP/nofb.dump" -- "$DRV" dlsym load "$FIX/multi.fatbin" axpy
check "without KIMG_FALLBACK the sm_90a cubin runs, silently" \
	eval 'ran nofb "launch axpy sass sm_90a -" && report nofb "R == []"'
run force KIMG_FALLBACK=force-ptx FAKE_CUDA_DUMP="$TMP/force.dump" -- "$DRV" dlsym load "$FIX/multi.fatbin" axpy
check "force-ptx: the PTX the driver would pick (compute_90a) runs, unchanged" ran force "launch axpy ptx compute_90a 9.0"
check "force-ptx: reported (mode, applied, nothing rewritten, no error averted)" \
	report force 'len(R) == 1 and R[0]["fallback"]["mode"] == "force-ptx" and R[0]["fallback"]["applied"] is True
		and R[0]["fallback"]["rewritten"] == {"version": None, "target": None} and R[0]["error"]["code"] == 0'
run globyes KIMG_FALLBACK='force-ptx:*multi*' FAKE_CUDA_DUMP="$TMP/globyes.dump" -- \
	"$DRV" dlsym path "$FIX/multi.fatbin" axpy
check "force-ptx:*multi*: the matching file runs PTX" ran globyes "launch axpy ptx compute_90a 9.0"
run globbase KIMG_FALLBACK='force-ptx:multi.fatbin' FAKE_CUDA_DUMP="$TMP/globbase.dump" -- \
	"$DRV" dlsym path "$FIX/multi.fatbin" axpy
check "force-ptx:multi.fatbin: a base-name glob matches too" ran globbase "launch axpy ptx compute_90a 9.0"
run globno KIMG_FALLBACK='force-ptx:*cublas*' FAKE_CUDA_DUMP="$TMP/globno.dump" -- \
	"$DRV" dlsym path "$FIX/multi.fatbin" axpy
check "force-ptx:*cublas*: other files keep their SASS, no report" \
	eval 'ran globno "launch axpy sass sm_90a -" && report globno "R == []"'
run forcesass KIMG_FALLBACK=force-ptx FAKE_CUDA_DUMP="$TMP/forcesass.dump" -- \
	"$DRV" dlsym load "$FIX/sm90a.cubin" axpy
check "force-ptx on a SASS-only module that runs: loaded as it is, and said so" \
	eval 'ran forcesass "launch axpy sass sm_90 -" && report forcesass "len(R) == 1
		and R[0][\"fallback\"][\"applied\"] is False and \"loaded as it is\" in R[0][\"fallback\"][\"result\"]"'

# ---- text report and summary for people ----
run text KIMG_FALLBACK=ptx KIMG_FORMAT=text KIMG_LOG= -- "$DRV" dlsym load "$FIX/compute100.ptx" axpy
check "text: headline says the call runs rewritten PTX and what it averted" \
	grep -qx "kimg: fallback: cuModuleLoadData runs rewritten PTX (without it: 218 CUDA_ERROR_INVALID_PTX)" \
	"$TMP/text.err"
check "text: what was rewritten and the JIT time" \
	grep -qE "^kimg: +image compute_100, \.target sm_100 -> sm_90, JIT [0-9]+\.[0-9]{3} ms$" "$TMP/text.err"
check "text: the __CUDA_ARCH__/performance warning" grep -q "^kimg: .*warning: code paths chosen by __CUDA_ARCH__" \
	"$TMP/text.err"
check "text: exit summary counts the fallback" \
	grep -qE "^kimg: fallback: 1 module ran from rewritten PTX \(JIT [0-9.]+ ms in all\)" "$TMP/text.err"

# ---- off: nothing changes ----
run off -- "$DRV" dlsym load "$FIX/compute100.ptx" axpy
check "KIMG_FALLBACK unset: 218 as without kimg, diagnosed as before" \
	eval 'has off "cuModuleLoadData: 218" && report off "len(R) == 1 and \"fallback\" not in R[0]"'
finish
