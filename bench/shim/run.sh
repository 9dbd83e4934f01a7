#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shim overhead benchmarks (GPU machine): see bench.py. nvcc is found on PATH
# or in the toolkit (/usr/local/cuda/bin).
set -u
BUILD=${BUILD:-build}
[ -f "$BUILD/libkimg.so" ] || { echo "ERROR no $BUILD/libkimg.so"; exit 2; }
command -v nvcc >/dev/null 2>&1 || PATH=${CUDA_HOME:-/usr/local/cuda}/bin:$PATH
command -v nvcc >/dev/null 2>&1 || { echo "ERROR nvcc not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)"; exit 2; }
python3 "$(dirname "$0")/bench.py" "$BUILD" "$BUILD/bench-work" "${KIMG_BENCH_ROUNDS:-9}"
