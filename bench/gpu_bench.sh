#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU goals of issue 27 in one command, for the H200 machine (under 8
# minutes there): builds the tree, then prints each figure with its
# baseline measured in this run and one PASS/FAIL (or NOT MEASURED, with
# why) line per goal:
#   scan --json libtorch_cuda.so vs cuobjdump --list-elf --list-ptx   >= 1000x
#   the same scan vs the 498579e probe (built from git, if a checkout) <= 0.7
#   check --sm native of torch's site-packages vs reading every file:
#     cold <= 0.04, warm <= 0.03
#   doctor --python PY: cold <= 2.0 s, warm <= 0.5 s
#   shim: launch loop <= 1.01, import torch + first op <= 1.02
# Cold means the page cache dropped (echo 3 > /proc/sys/vm/drop_caches,
# root only); elsewhere the cold figures say they could not be made.
# Environment: KIMG_BENCH_PYTHON (default /opt/torch/.venv/bin/python);
# KIMG_BENCH_ENV_REPEAT (default 3) and KIMG_BENCH_ROUNDS (default 9): fewer
# runs of the environment and shim figures, where device time is short.
# Usage: bash bench/gpu_bench.sh     (from the repository root)
set -u
cd "$(dirname "$0")/.." || exit 2
t0=$(date +%s)
PY=${KIMG_BENCH_PYTHON:-/opt/torch/.venv/bin/python}
BUILD=${BUILD:-build}
echo "gpu_bench: $(date -u +%FT%TZ), $(nproc) cores, uid $(id -u), load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ]; then echo "gpu_bench: cold runs drop the page cache (root)"
else echo "gpu_bench: not root: cold could not be made (the cold figures say so)"; fi
nvidia-smi -L 2>&1 | head -n 8
[ -x "$PY" ] || { echo "ERROR no python at $PY (KIMG_BENCH_PYTHON)"; exit 2; }
SP=$("$PY" -c 'import site; print(site.getsitepackages()[0])') || { echo "ERROR $PY has no site-packages"; exit 2; }
TORCH_CUDA=$SP/torch/lib/libtorch_cuda.so
command -v nvcc >/dev/null 2>&1 || PATH=${CUDA_HOME:-/usr/local/cuda}/bin:$PATH
echo "== build (make -j$(nproc) all fixtures)"
make -j"$(nproc)" all fixtures >"${TMPDIR:-/tmp}/kimg-gpu-bench-build.log" 2>&1 ||
	{ tail -n 20 "${TMPDIR:-/tmp}/kimg-gpu-bench-build.log"; echo "ERROR build failed"; exit 2; }
status=0
note() { [ "$1" -eq 0 ] || [ "$status" -ne 0 ] || status=$1; }

echo "== one file: scan --json $TORCH_CUDA"
base_probe=$BUILD/bench/probe-base
# Built from git here; without a checkout (a copy of the work tree), the
# one built beforehand on another machine and carried as build/bench/probe-base.
if why=$(bench/baseline_probe.sh "$base_probe"); then base=(--baseline "$base_probe" 498579e)
elif [ -x "$base_probe" ]; then echo "gpu_bench: $why: using the 498579e probe carried in $base_probe"; base=(--baseline "$base_probe" 498579e)
else base=(--baseline-missing "$why (nor a carried $base_probe: bench/baseline_probe.sh $base_probe builds one)"); fi
if [ -f "$TORCH_CUDA" ]; then
	python3 bench/probe_bench.py "$BUILD/kimg-probe" "$TORCH_CUDA" 5 "${base[@]}"; note $?
else
	echo "NOT MEASURED one file: no $TORCH_CUDA"
fi

echo "== environment: check --sm native of $SP vs reading every file"
python3 bench/env_bench.py "$BUILD/kimg-probe" "$SP" --sm native --jobs 8,16 --repeat "${KIMG_BENCH_ENV_REPEAT:-3}"; note $?

echo "== doctor --python $PY"
python3 bench/doctor_bench.py "$BUILD/kimg-probe" --python "$PY" --repeat 5; note $?

echo "== shim overhead (launch loop; import torch + first op with $PY)"
# bench.py runs torch under its own interpreter: the venv's
"$PY" bench/shim/bench.py "$BUILD" "$BUILD/bench-work" "${KIMG_BENCH_ROUNDS:-9}"; note $?

if [ $(( $(date +%s) - t0 )) -lt 360 ]; then
	echo "== container image (issue 24, bench/image_bench.sh)"
	bench/image_bench.sh "$BUILD/kimg-probe"; note $?
else
	echo "NOT MEASURED container image: over 6 minutes already (make bench runs it)"
fi
echo "gpu_bench: $(( $(date +%s) - t0 )) s; $([ "$status" -eq 0 ] && echo 'every measured goal met' || echo "FAILED (exit $status)")"
exit "$status"
