#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One-minute smoke test of libkimg.so on a GPU machine (the full suite is tests/gpu/run.sh):
# static and shared cudart programs built for another major only and a driver-API cubin of
# that arch must be reported with their original error; a right-arch program must run
# silently; a program whose only image is PTX for a newer target must run under
# KIMG_FALLBACK=ptx. The device's SM is read from nvidia-smi, not assumed. Prints
# "N passed, N failed" and fails unless all 9 checks ran and passed.
set -u
export PATH="/usr/local/cuda/bin:$PATH" CUDA_CACHE_DISABLE=1
BUILD=${BUILD:-build}
W=$BUILD/gpu-quick
mkdir -p "$W"
case $BUILD in /*) LIB=$BUILD/libkimg.so ;; *) LIB=$PWD/$BUILD/libkimg.so ;; esac
# checks and totals: tests/lib.bash (finish fails a run of another number of checks)
. "$(dirname "$0")/../lib.bash"
EXPECTED_CHECKS=9
die() { fail "$*"; finish; }
command -v nvcc >/dev/null || die "prerequisite nvcc not on PATH nor in /usr/local/cuda/bin"
[ -f "$LIB" ] || die "prerequisite $LIB not built (make)"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -n 1 | tr -d ' ')
[[ $cc =~ ^[0-9]+\.[0-9]$ ]] || die "the device's compute capability: nvidia-smi --query-gpu=compute_cap said '$cc'"
dev=${cc/./}
wrong=80; [ "${cc%%.*}" = 8 ] && wrong=90
new=""; for t in 90 100 120 121; do [ "$t" -gt "$dev" ] && { new=$t; break; }; done
[ -n "$new" ] || die "no PTX target above SM $cc for the fallback case"
echo "device: SM $cc; wrong SASS sm_$wrong; PTX-only target compute_$new"
gw="-gencode arch=compute_$wrong,code=sm_$wrong"
nvcc $gw -o "$W/wrong_static" tests/gpu/src/wrong_arch.cu &
nvcc $gw -cudart shared -o "$W/wrong_shared" tests/gpu/src/wrong_arch.cu &
nvcc -gencode arch=compute_$dev,code=sm_$dev -o "$W/right" tests/gpu/src/right_arch.cu &
nvcc -cubin $gw -o "$W/wrong.cubin" tests/fixtures/src/kern.cu &
nvcc -gencode arch=compute_$new,code=compute_$new -o "$W/saxpy_new" tests/gpu/src/fb_saxpy.cu &
gcc -o "$W/drv_load" tests/gpu/src/drv_load.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda &
wait
# KIMG_RUN=PATH: run each program through that kimg-run (an installed one:
# tests/gpu/wheel_gpu.sh) instead of LD_PRELOAD=$LIB.
if [ -n "${KIMG_RUN:-}" ]; then
	k() { KIMG_FORMAT=json KIMG_LOG="$W/$1.jsonl" "$KIMG_RUN" -- "${@:2}" >"$W/$1.out" 2>&1; echo $? >"$W/$1.rc"; }
	echo "(through $KIMG_RUN: $("$KIMG_RUN" --print-lib 2>&1))"
else
	k() { LD_PRELOAD=$LIB KIMG_FORMAT=json KIMG_LOG="$W/$1.jsonl" "${@:2}" >"$W/$1.out" 2>&1; echo $? >"$W/$1.rc"; }
fi
rm -f "$W"/*.jsonl
k static "$W/wrong_static"; k shared "$W/wrong_shared"; k drv "$W/drv_load" "$W/wrong.cubin"
k right "$W/right"; k fb env KIMG_FALLBACK=ptx "$W/saxpy_new"
rep() { python3 -c "import json,sys; R=[json.loads(l) for l in open('$W/$1.jsonl')]; sys.exit(0 if ($2) else 1)" 2>/dev/null; }
for c in static shared; do
	check "$c cudart: program sees 209" eval "grep -q 'launch: 209' $W/$c.out"
	check "$c cudart: report 209, add_one, sm_$wrong, device $cc, fix sm_$dev" eval \
		"rep $c 'R[0][\"error\"][\"code\"] == 209 and \"add_one\" in R[0][\"kernel\"][\"demangled\"] and R[0][\"module\"][\"images\"][0][\"arch\"] == \"sm_$wrong\" and R[0][\"device\"][\"sm\"] == \"$cc\" and \"sm_$dev\" in R[0][\"fix\"][\"nvcc\"] and R[0][\"error\"][\"cause\"]'"
done
check "driver API cubin: program sees 209" eval "grep -q 'cuModuleLoadData: 209' $W/drv.out"
check "driver API cubin (read into memory): report at cuModuleLoadData lists its sm_$wrong image" eval \
	"rep drv 'R[0][\"call\"] == \"cuModuleLoadData\" and R[0][\"error\"][\"code\"] == 209 and R[0][\"module\"][\"images\"][0][\"arch\"] == \"sm_$wrong\"'"
check "right-arch program: runs, no report" eval "[ \$(cat $W/right.rc) = 0 ] && [ ! -s $W/right.jsonl ]"
check "compute_$new-only under KIMG_FALLBACK=ptx: runs, correct" eval "[ \$(cat $W/fb.rc) = 0 ] && grep -q 'saxpy: ok' $W/fb.out"
check "fallback reported with jit_ms" eval "rep fb 'R[0][\"fallback\"][\"applied\"] and R[0][\"fallback\"][\"jit_ms\"] > 0'"
finish
