#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make bench: benchmarks with their baselines measured in the same run, each
# goal judged (PASS/FAIL with its ratio, or NOT MEASURED with the reason).
#  1. kimg-probe scan vs reading the file once and vs cuobjdump (probe_bench.py),
#     on $KIMG_BENCH_FILE, else libtorch_cuda.so when PyTorch is installed, else
#     the largest library of the CUDA toolkit, else the largest fixture.
#  2. kimg-probe check of a whole tree (the fixtures, python3's site-packages) vs reading every
#     file of it, cold and warm, 1 thread and the default (bench/env_bench.py).
#  3. Shim overhead (bench/shim/run.sh) where a GPU and nvcc exist.
# Exits non-zero when a goal is missed or a benchmark could not run.
set -u
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$BUILD/kimg-probe" ] || { echo "bench: $BUILD/kimg-probe not built (make)"; exit 2; }
target=${KIMG_BENCH_FILE:-}
if [ -z "$target" ]; then
	torch_lib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null || true)
	if [ -n "$torch_lib" ] && [ -f "$torch_lib/libtorch_cuda.so" ]; then
		target=$torch_lib/libtorch_cuda.so
	else
		cuda_lib=${CUDA_HOME:-/usr/local/cuda}/lib64
		target=$(ls -S "$cuda_lib"/lib*.so.* 2>/dev/null | head -n 1)
		[ -n "$target" ] || target=$(ls -S "$BUILD"/fixtures/* 2>/dev/null | head -n 1)
	fi
fi
[ -f "$target" ] || { echo "bench: no file to scan (KIMG_BENCH_FILE, or make fixtures)"; exit 2; }
status=0
echo "== probe: scan vs read vs cuobjdump"
python3 "$here/probe_bench.py" "$BUILD/kimg-probe" "$target" "${KIMG_BENCH_REPEAT:-7}" || status=$?
echo "== probe: environment check vs reading every file (cold, warm; bench/env_bench.py)"; python3 "$here/env_bench.py" "$BUILD/kimg-probe" "$BUILD/fixtures" --site-packages || { rc=$?; [ "$status" -ne 0 ] || status=$rc; }
echo "== shim overhead"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "NOT MEASURED shim overhead: no GPU here (nvidia-smi -L fails); run make bench on the GPU machine"
else
	BUILD=$BUILD "$here/shim/run.sh"
	rc=$?
	[ "$rc" -eq 0 ] || [ "$status" -ne 0 ] || status=$rc
fi
if [ "$status" -eq 0 ]; then echo "bench: every measured goal met"; else echo "bench: FAILED (exit $status)"; fi
exit "$status"
