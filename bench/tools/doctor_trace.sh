#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where kimg-probe doctor's time goes on a GPU machine: the driver's and
# NVML's start alone and together (gpu_init_cost.c), doctor's phases
# (KIMG_DOCTOR_TIMING=1) warm and, as root, with the page cache dropped, and
# the toolchains and caches it looks at. Usage: bash bench/tools/doctor_trace.sh [PYTHON]
set -u
cd "$(dirname "$0")/../.." || exit 2
export PATH=/usr/local/cuda/bin:$PATH
PY=${1:-/opt/torch/.venv/bin/python}
BUILD=${BUILD:-build}
T=${TMPDIR:-/tmp}/kimg-doctor-trace
mkdir -p "$T"
make -j"$(nproc)" "$BUILD/kimg-probe" >"$T/build.log" 2>&1 || { tail -n 20 "$T/build.log"; exit 2; }
gcc -O2 -o "$T/gpu_init_cost" bench/tools/gpu_init_cost.c -ldl -lpthread || exit 2
drop() { [ -w /proc/sys/vm/drop_caches ] && { sync; echo 3 >/proc/sys/vm/drop_caches; }; }
nvidia-smi --query-gpu=name,persistence_mode,driver_version --format=csv,noheader
for m in cu nvml both cu nvml both; do echo "-- warm $m"; "$T/gpu_init_cost" "$m"; done
for m in cu nvml both; do drop; echo "-- cold $m"; "$T/gpu_init_cost" "$m"; done
for i in 1 2 3; do KIMG_DOCTOR_TIMING=1 "$BUILD/kimg-probe" doctor --python "$PY" >"$T/page.txt" 2>"$T/err.txt"; echo "warm doctor exit $?: $(grep timing "$T/err.txt")"; done
for i in 1 2; do drop; KIMG_DOCTOR_TIMING=1 "$BUILD/kimg-probe" doctor --python "$PY" >/dev/null 2>"$T/err.txt"; echo "cold doctor exit $?: $(grep timing "$T/err.txt")"; done
s=$(date +%s.%N); "$PY" -c pass; echo "python -c pass: $(echo "$(date +%s.%N) - $s" | awk '{print $1 - $3}') s"
s=$(date +%s.%N); "$BUILD/kimg-probe" device >/dev/null; echo "kimg-probe device: $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{print b - a}') s"
sed -n '/Toolchain/,/^$/p' "$T/page.txt" | head -n 20
grep -n "seconds\|cache" "$T/page.txt" | head -n 20
