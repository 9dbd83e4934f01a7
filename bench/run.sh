#!/usr/bin/env bash
# make bench: benchmarks with their baselines measured in the same run.
#  1. kimg-probe scan vs reading the file once (any machine) and vs cuobjdump (where installed),
#     on the largest CUDA library found (libtorch_cuda.so when PyTorch is installed), else on
#     the largest fixture.
#  2. Shim overhead (bench/shim/run.sh) where a GPU and nvcc exist.
set -u
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
target=${KIMG_BENCH_FILE:-}
if [ -z "$target" ]; then
	torch_lib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null || true)
	if [ -n "$torch_lib" ] && [ -f "$torch_lib/libtorch_cuda.so" ]; then
		target=$torch_lib/libtorch_cuda.so
	else
		target=$(ls -S "$BUILD"/fixtures/* | head -n 1)
	fi
fi
echo "== probe: scan vs read vs cuobjdump"
python3 "$here/probe_bench.py" "$BUILD/kimg-probe" "$target" "${KIMG_BENCH_REPEAT:-7}"
if [ -x "$here/shim/run.sh" ] && command -v nvidia-smi >/dev/null 2>&1; then
	echo "== shim overhead"
	BUILD=$BUILD "$here/shim/run.sh"
fi
