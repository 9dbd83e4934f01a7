#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make bench: benchmarks with their baselines measured in the same run, each
# goal judged (PASS/FAIL with its ratio, or NOT MEASURED with the reason).
#  1. kimg-probe scan vs reading the file once and vs cuobjdump (probe_bench.py),
#     on $KIMG_BENCH_FILE, else libtorch_cuda.so when PyTorch is installed, else
#     the largest library of the CUDA toolkit, else the largest fixture.
#  2. kimg-probe check of a whole tree (the fixtures, python3's site-packages) vs reading every
#     file of it, cold and warm, 1 thread and the default (bench/env_bench.py).
#  3. kimg-probe doctor, cold and warm (bench/doctor_bench.py; $KIMG_BENCH_PYTHON: --python).
#  4. Shim overhead (bench/shim/run.sh) where a GPU and nvcc exist.
# The scan also runs against the probe of 498579e (the last before the worker
# pool), built from git by bench/baseline_probe.sh in a scratch worktree.
# On the H200 machine, bench/gpu_bench.sh runs the GPU goals in one command.
# Then checks that README.md's benchmark figures are all in bench/README.md
# (bench/figures.py), and with KIMG_BENCH_RECORD=LABEL writes this run's
# result lines there first, as the run LABEL. The output is kept in
# $BUILD/bench/last-run.txt.
# Exits non-zero when a goal is missed, a benchmark could not run, or a
# README figure is in no record.
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
benches() {
status=0
echo "== probe: scan vs read vs cuobjdump vs the probe of ${KIMG_BENCH_BASE_COMMIT:-498579e} (built now, bench/baseline_probe.sh)"
base_probe=$BUILD/bench/probe-base
if why=$("$here/baseline_probe.sh" "$base_probe"); then
	base=(--baseline "$base_probe" "${KIMG_BENCH_BASE_COMMIT:-498579e}")
elif [ -x "$base_probe" ]; then
	echo "bench: $why: using the baseline probe already in $base_probe"
	base=(--baseline "$base_probe" "${KIMG_BENCH_BASE_COMMIT:-498579e}")
else
	base=(--baseline-missing "$why")
fi
python3 "$here/probe_bench.py" "$BUILD/kimg-probe" "$target" "${KIMG_BENCH_REPEAT:-7}" "${base[@]}" || status=$?
echo "== probe: a container image of 2 GB vs decompressing its layers once (bench/image_bench.sh)"
"$here/image_bench.sh" "$BUILD/kimg-probe" || { rc=$?; [ "$status" -ne 0 ] || status=$rc; }
echo "== probe: environment check vs reading every file (cold, warm; bench/env_bench.py)"; python3 "$here/env_bench.py" "$BUILD/kimg-probe" "$BUILD/fixtures" --site-packages || { rc=$?; [ "$status" -ne 0 ] || status=$rc; }
echo "== probe: doctor, cold and warm (bench/doctor_bench.py)"
python3 "$here/doctor_bench.py" "$BUILD/kimg-probe" ${KIMG_BENCH_PYTHON:+--python "$KIMG_BENCH_PYTHON"} --repeat "${KIMG_BENCH_REPEAT:-7}" || { rc=$?; [ "$status" -ne 0 ] || status=$rc; }
echo "== shim overhead"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "NOT MEASURED shim overhead: no GPU here (nvidia-smi -L fails); run make bench on the GPU machine"
else
	BUILD=$BUILD "$here/shim/run.sh"
	rc=$?
	[ "$rc" -eq 0 ] || [ "$status" -ne 0 ] || status=$rc
fi
if [ "$status" -eq 0 ]; then echo "bench: every measured goal met"; else echo "bench: FAILED (exit $status)"; fi
return "$status"
}
mkdir -p "$BUILD/bench"
benches 2>&1 | tee "$BUILD/bench/last-run.txt"
status=${PIPESTATUS[0]}
root=$here/..
if [ -n "${KIMG_BENCH_RECORD:-}" ]; then
	python3 "$here/figures.py" record "$KIMG_BENCH_RECORD" "$BUILD/bench/last-run.txt" "$here/README.md" || status=2
fi
python3 "$here/figures.py" check "$root/README.md" "$here/README.md" || { [ "$status" -ne 0 ] || status=1; }
exit "$status"
