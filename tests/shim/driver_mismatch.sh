#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The driver refusing the program's runtime (shim/diag/driver_mismatch.c): a
# runtime that asks cuGetProcAddress for CUDA 13.0 (drv's gpa access, as
# static cudart 13 does) on a driver reporting CUDA 12.2 gets one report,
# however many names it asks for, naming both versions, error 35 and the
# R580 fix; cuInit returning 803 or 804 (the stand-in driver's
# FAKE_CUDA_INIT_ERROR) gets one report each, the program its code
# unchanged; a shared runtime whose cudaRuntimeGetVersion says 13.0 likewise. A driver of the
# runtime's major, or newer, gets no report.
. "$(dirname "$0")/../lib.bash" shim

run old FAKE_CUDA_SM=80 FAKE_CUDA_DRIVER=12020 -- "$PROGS/drv_dl" gpa load "$FIX/sm80.cubin"
check "runtime 13.0 on driver 12.2: exactly one report" report old 'len(R) == 1'
check "... a driver_mismatch report: cuGetProcAddress, error 35 cudaErrorInsufficientDriver" \
	report old 'R[0]["report"] == "driver_mismatch" and R[0]["call"] == "cuGetProcAddress"
		and R[0]["error"]["code"] == 35 and R[0]["error"]["name"] == "cudaErrorInsufficientDriver"'
check "... with both versions (13.0 asked, 12.2 driver) and the minimum driver 580" \
	report old 'R[0]["runtime_cuda_version"] == "13.0" and R[0]["driver_cuda_version"] == "12.2"
		and R[0]["min_driver"] == "580"'
check "... and the fixes: driver >= 580, cuda-compat-13-0, a build for CUDA 12.2" \
	report old '">= 580" in R[0]["fix"] and "cuda-compat-13-0" in R[0]["fix"] and "CUDA 12.2 or older" in R[0]["fix"]'
check "the program still ran its course (the fake driver does not refuse)" has old "cuModuleLoadData: 0"

run same FAKE_CUDA_DRIVER=13000 -- "$PROGS/drv_dl" gpa load "$FIX/sm80.cubin"
check "runtime 13.0 on driver 13.0: no driver_mismatch report" \
	report same 'not [r for r in R if r.get("report") == "driver_mismatch"]'
run minor FAKE_CUDA_SM=80 FAKE_CUDA_DRIVER=12000 -- "$PROGS/drv_dl" gpa4 load "$FIX/sm80.cubin"
check "versions 11.3 and 12.0 asked (gpa4) of a 12.0 driver: no report" report minor 'not [r for r in R if r.get("report") == "driver_mismatch"]'

for code in 803 804; do
	run "init$code" FAKE_CUDA_SM=80 FAKE_CUDA_INIT_ERROR=$code -- "$PROGS/drv_dl" gpa load "$FIX/sm80.cubin"
	check "cuInit $code: the program gets $code's failure unchanged" has "init$code" "cuInit failed"
	check "cuInit $code: one report, call cuInit, error $code" \
		report "init$code" "len(R) == 1 and R[0]['call'] == 'cuInit' and R[0]['error']['code'] == $code"
done
check "803 names CUDA_ERROR_SYSTEM_DRIVER_MISMATCH and the user-mode/kernel-mode mismatch" \
	report init803 'R[0]["error"]["name"] == "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" and "kernel module" in R[0]["why"]'
check "804 names CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE and says to drop cuda-compat" \
	report init804 'R[0]["error"]["name"] == "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" and "cuda-compat" in R[0]["fix"]'

# a shared runtime whose driver table libkimg never sees (FAKE_CUDART_PRIVATE): its
# cudaRuntimeGetVersion answer, 13.0, against the 12.2 driver
run rtver FAKE_CUDART_PRIVATE=1 FAKE_CUDA_DRIVER=12020 -- "$PROGS/rt" "$FIX/multi.fatbin" axpy
check "cudaRuntimeGetVersion answers 13000 unchanged" has rtver "cudaRuntimeGetVersion: 0 13000"
check "runtime 13.0 (cudaRuntimeGetVersion) on driver 12.2: one driver_mismatch report, error 35" \
	report rtver 'len([r for r in R if r.get("report") == "driver_mismatch"]) == 1 and first("cudaRuntimeGetVersion", 35)["runtime_cuda_version"] == "13.0"'
run rtok FAKE_CUDART_PRIVATE=1 FAKE_CUDART_VERSION=13020 FAKE_CUDA_DRIVER=13000 -- "$PROGS/rt" "$FIX/multi.fatbin" axpy
check "runtime 13.2 on driver 13.0 (minor-version compatibility): no report" \
	report rtok 'not [r for r in R if r.get("report") == "driver_mismatch"]'

# linked directly against libcuda: cuInit binds to libkimg's export
run direct FAKE_CUDA_SM=80 FAKE_CUDA_INIT_ERROR=804 -- "$PROGS/drv_direct" direct load "$FIX/sm80.cubin"
check "direct link: cuInit 804 reported too" report direct 'len(R) == 1 and R[0]["call"] == "cuInit"'

# text format: the same facts on kimg: lines, once
env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" FAKE_CUDA_SM=80 FAKE_CUDA_DRIVER=12020 "$PROGS/drv_dl" gpa load "$FIX/sm80.cubin" \
	>"$TMP/text.out" 2>"$TMP/text.err"
check "text: one headline with both versions and error 35" test "$(grep -c 'CUDA 13.0 runtime, driver supports CUDA 12.2 -> error 35' "$TMP/text.err")" = 1
check "text: the fix line names the R580 driver" grep -q 'kimg:   fix:  upgrade the driver to >= 580' "$TMP/text.err"
# cuInit failing with 35 before any runtime asked for a version: the CUDA
# the program needs is unknown, so the fix names no made-up package or path
run init35 FAKE_CUDA_INIT_ERROR=35 -- "$PROGS/drv_direct" direct load "$FIX/sm80.cubin"
check "cuInit 35, version unknown: reported, the fix names no cuda-compat--1-0 or cuda-0.0" \
	report init35 'len(R) == 1 and R[0]["error"]["code"] == 35 and "cuda-compat--" not in R[0]["fix"]
		and "cuda-0.0" not in R[0]["fix"] and "cuda-compat package of that version" in R[0]["fix"]
		and "CUDA 13.0 or older" in R[0]["fix"]'
finish
