#!/usr/bin/env bash
# One-minute smoke test of libkimg.so on a GPU machine (the full suite is tests/gpu/run.sh):
# static and shared cudart sm_80-only programs and a driver-API sm_80 cubin must be reported
# with their original error; a right-arch program must run silently; a compute_100-only program
# must run under KIMG_FALLBACK=ptx. Prints "N passed, N failed".
set -u
export PATH="/usr/local/cuda/bin:$PATH" CUDA_CACHE_DISABLE=1
BUILD=${BUILD:-build}
W=$BUILD/gpu-quick
mkdir -p "$W"
LIB=$PWD/$BUILD/libkimg.so
pass=0 fail=0
ok() { if eval "$2"; then echo "PASS $1"; pass=$((pass + 1)); else echo "FAIL $1"; fail=$((fail + 1)); fi; }
g80="-gencode arch=compute_80,code=sm_80"
nvcc $g80 -o "$W/wrong_static" tests/gpu/src/wrong_arch.cu &
nvcc $g80 -cudart shared -o "$W/wrong_shared" tests/gpu/src/wrong_arch.cu &
nvcc -gencode arch=compute_90,code=sm_90 -o "$W/right" tests/gpu/src/right_arch.cu &
nvcc -cubin $g80 -o "$W/sm80.cubin" tests/fixtures/src/kern.cu &
nvcc -gencode arch=compute_100,code=compute_100 -o "$W/saxpy100" tests/gpu/src/fb_saxpy.cu &
gcc -o "$W/drv_load" tests/gpu/src/drv_load.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda &
wait
k() { LD_PRELOAD=$LIB KIMG_FORMAT=json KIMG_LOG="$W/$1.jsonl" "${@:2}" >"$W/$1.out" 2>&1; echo $? >"$W/$1.rc"; }
rm -f "$W"/*.jsonl
k static "$W/wrong_static"; k shared "$W/wrong_shared"; k drv "$W/drv_load" "$W/sm80.cubin"
k right "$W/right"; k fb env KIMG_FALLBACK=ptx "$W/saxpy100"
rep() { python3 -c "import json,sys; R=[json.loads(l) for l in open('$W/$1.jsonl')]; sys.exit(0 if ($2) else 1)" 2>/dev/null; }
for c in static shared; do
	ok "$c cudart: program sees 209" "grep -q 'launch: 209' $W/$c.out"
	ok "$c cudart: report 209, add_one, sm_80, device 9.0, fix sm_90" \
		"rep $c 'R[0][\"error\"][\"code\"] == 209 and \"add_one\" in R[0][\"kernel\"][\"demangled\"] and R[0][\"module\"][\"images\"][0][\"arch\"] == \"sm_80\" and R[0][\"device\"][\"sm\"] == \"9.0\" and \"sm_90\" in R[0][\"fix\"][\"nvcc\"] and R[0][\"error\"][\"cause\"]'"
done
ok "driver API cubin: program sees 209" "grep -q 'cuModuleLoadData: 209' $W/drv.out"
ok "driver API cubin (read into memory): report at cuModuleLoadData lists its sm_80 image" \
	"rep drv 'R[0][\"call\"] == \"cuModuleLoadData\" and R[0][\"error\"][\"code\"] == 209 and R[0][\"module\"][\"images\"][0][\"arch\"] == \"sm_80\"'"
ok "right-arch program: runs, no report" "[ \$(cat $W/right.rc) = 0 ] && [ ! -s $W/right.jsonl ]"
ok "compute_100-only under KIMG_FALLBACK=ptx: runs, correct" "[ \$(cat $W/fb.rc) = 0 ] && grep -q 'saxpy: ok' $W/fb.out"
ok "fallback reported with jit_ms" "rep fb 'R[0][\"fallback\"][\"applied\"] and R[0][\"fallback\"][\"jit_ms\"] > 0'"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
