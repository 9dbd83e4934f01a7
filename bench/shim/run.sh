#!/usr/bin/env bash
# Shim overhead benchmarks (GPU machine): see bench.py.
set -u
BUILD=${BUILD:-build}
[ -f "$BUILD/libkimg.so" ] || { echo "no $BUILD/libkimg.so"; exit 1; }
python3 "$(dirname "$0")/bench.py" "$BUILD" "$BUILD/bench-work" "${KIMG_BENCH_ROUNDS:-9}"
