#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU-machine test suite: run from the repository root on a machine with an NVIDIA GPU,
# nvcc, cuobjdump, PyTorch (with torchrun) and CuPy: each is a prerequisite, and a missing
# one is a failure, not a skip. Builds kimg, then:
#   1. kimg-probe device vs nvidia-smi (device_vs_nvidia_smi.py)
#   2. kimg-probe scan vs cuobjdump on the large CUDA libraries present (compare_cuobjdump.py)
#   3. libkimg.so end to end (shim_gpu.py: 51 checks)
#   4. two torchrun ranks and kimg-probe summarize (multirank_gpu.sh: 12 checks)
#   5. KIMG_FALLBACK and KIMG_AUDIT, with the audit's cost bounded (fallback_gpu.py: 33 checks)
#   6. what reaches the program (reach_gpu.py: 27 checks on two GPUs; on one, its two-rank case is a
#      failure unless KIMG_GPU_ALLOW_PARTIAL=1, then 25): healthy workloads
#      silent (NCCL, EAGER cuDNN/cuBLAS, JAX, CuPy, training), KIMG_AUDIT groups, Python frames
#      without the GIL, cuLink
#   7. host safety with the real driver (hardening_gpu.sh: 18 checks): two copies, SIGPIPE,
#      full disk, fork
#   8. verdicts true to this environment (site_verdicts.py: 13 checks): check --sm native over
#      python3's site-packages passes with the dispatched modules counted, wrong-arch builds
#      still fail, -rdc verdicts equal the programs, scan equals cuobjdump (and --all, -all)
#   9. kimg-probe doctor over the stock Python environment and the device's three readings
#      (doctor_gpu.sh: 7 checks)
#  10. environment speed (bench/env_bench.py, issue 15): check --sm native of python3's
#      site-packages cold and warm against reading every file, -j 1 / 8 / 16: outputs identical
#      to -j 1, goals (cold <= 0.1, warm <= 0.05 of the read) judged, KIMG_READAHEAD compared
#  11. the can-it-run API (api_gpu.py, issue 26: 20 checks): kimg.can_run on libtorch_cuda.so and
#      a wrong-arch extension against the driver's own launch result, the C API, doctor's new
#      sections on the stock environment
#  12. the symbol lookups and the driver's error log (driver_log_gpu.py, issue 29: 44 checks): a
#      symbol-first program reported, driver_log on a real 209, ptxas's line on a real 222 and
#      218, the safety net on an unhooked call, healthy workloads silent, the callback's cost
#      on the launch loop and on import torch (<= 1.01x, <= 1.02x)
# Every part must end with "N passed, M failed", N > 0 and M = 0; the scripts assert their
# own totals. The last line is "gpu suite: N passed, M failed in 12 parts".
# KIMG_GPU_SKIP_SHIM / _MULTIRANK / _FALLBACK / _REACH / _HARDENING / _SITE / _DOCTOR / _ENV_SPEED / _API / _DRIVER_LOG=1 leave a part out, said, and fail the suite
# anyway (a partial run is not a passing one) unless KIMG_GPU_ALLOW_PARTIAL=1.
# Logs go to ${OUT:-build/gpu}.
# Each part runs under a time limit, KIMG_GPU_PART_TIMEOUT seconds (default
# 1800): past it, timeout(1) ends it and its log has no closing line, so
# the part fails by name.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
PART_LIMIT=${KIMG_GPU_PART_TIMEOUT:-1800}
BUILD=${BUILD:-build}
LOGS=${OUT:-$BUILD/gpu}
mkdir -p "$LOGS"
status=0 total_pass=0 total_fail=0 parts=0 left_out=0
make -j"$(nproc)" BUILD="$BUILD" all >"$LOGS/build.log" 2>&1 || { tail -n 30 "$LOGS/build.log"; exit 1; }
for need in nvcc cuobjdump nvidia-smi torchrun python3; do
	command -v "$need" >/dev/null || { echo "FAIL prerequisite $need not on PATH (nor in /usr/local/cuda/bin)"; status=1; }
done
for f in "$BUILD/kimg-probe" "$BUILD/libkimg.so"; do
	[ -f "$f" ] || { echo "FAIL $f not built (see $LOGS/build.log)"; status=1; }
done
# part NAME LOG: judge one part from the "N passed, M failed" line its log ends with
part() {
	local name=$1 log=$2 line p f
	parts=$((parts + 1))
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then echo "FAIL part $name: no 'N passed, M failed' line"; status=1; total_fail=$((total_fail + 1)); return; fi
	p=${line%% passed*} f=${line#*passed, } f=${f%% failed*}
	total_pass=$((total_pass + p)) total_fail=$((total_fail + f))
	if [ "$p" -eq 0 ]; then echo "FAIL part $name: 0 passed"; status=1; fi
	[ "$f" -eq 0 ] || status=1
}
skip_part() {
	echo "LEFT OUT $1 ($2=1)"
	left_out=$((left_out + 1))
}
echo "== device vs nvidia-smi"
timeout -k 10 "$PART_LIMIT" python3 tests/gpu/device_vs_nvidia_smi.py "$BUILD/kimg-probe" >"$LOGS/device.log" 2>&1 || status=1
cat "$LOGS/device.log"; part device "$LOGS/device.log"
echo "== scan vs cuobjdump"
libs=()
torch_lib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
if [ -n "$torch_lib" ]; then
	for f in "$torch_lib"/libtorch_cuda.so "$torch_lib"/libc10_cuda.so; do [ -f "$f" ] && libs+=("$f"); done
	site=$(dirname "$torch_lib" | xargs dirname)
	while IFS= read -r f; do libs+=("$f"); done < <(find "$site/nvidia" -name 'libcublasLt.so*' -o -name 'libcusparse.so*' \
		-o -name 'libcufft.so*' -o -name 'libcurand.so*' 2>/dev/null | sort | head -n 6)
else
	echo "FAIL prerequisite PyTorch: python3 cannot import torch"; status=1
fi
[ ${#libs[@]} -gt 0 ] || echo "FAIL no CUDA library found to compare (libtorch_cuda.so, nvidia/*)"
timeout -k 10 "$PART_LIMIT" python3 tests/gpu/compare_cuobjdump.py "$BUILD/kimg-probe" "${libs[@]}" >"$LOGS/compare.log" 2>&1 || status=1
cat "$LOGS/compare.log"; part compare "$LOGS/compare.log"
if [ "${KIMG_GPU_SKIP_SHIM:-0}" = 1 ]; then skip_part "libkimg.so end to end" KIMG_GPU_SKIP_SHIM; else
	echo "== libkimg.so end to end"
	timeout -k 10 "$PART_LIMIT" python3 tests/gpu/shim_gpu.py "$BUILD" "$BUILD/gpu-work" >"$LOGS/shim.log" 2>&1 || status=1
	cat "$LOGS/shim.log"; part shim "$LOGS/shim.log"
	tar -C "$BUILD/gpu-work" -czf "$LOGS/shim-work.tgz" --exclude='*.so' --exclude='drv_load' --exclude='wrong_*' \
		--exclude='right_*' --exclude='torch_ext' . 2>/dev/null
fi
if [ "${KIMG_GPU_SKIP_MULTIRANK:-0}" = 1 ]; then skip_part "torchrun ranks" KIMG_GPU_SKIP_MULTIRANK; else
	echo "== two torchrun ranks under libkimg.so, kimg-probe summarize"
	BUILD="$BUILD" WORK="$BUILD/gpu-multirank" timeout -k 10 "$PART_LIMIT" bash tests/gpu/multirank_gpu.sh >"$LOGS/multirank.log" 2>&1 || status=1
	cat "$LOGS/multirank.log"; part multirank "$LOGS/multirank.log"
fi
if [ "${KIMG_GPU_SKIP_FALLBACK:-0}" = 1 ]; then skip_part "KIMG_FALLBACK / KIMG_AUDIT" KIMG_GPU_SKIP_FALLBACK; else
	echo "== KIMG_FALLBACK / KIMG_AUDIT"
	timeout -k 10 "$PART_LIMIT" python3 tests/gpu/fallback_gpu.py "$BUILD" "$BUILD/fb-work" >"$LOGS/fallback.log" 2>&1 || status=1
	cat "$LOGS/fallback.log"; part fallback "$LOGS/fallback.log"
fi
if [ "${KIMG_GPU_SKIP_REACH:-0}" = 1 ]; then skip_part "what reaches the program" KIMG_GPU_SKIP_REACH; else
	echo "== what reaches the program: silent healthy workloads, audit groups, frames without the GIL, cuLink"
	timeout -k 10 "$PART_LIMIT" python3 tests/gpu/reach_gpu.py "$BUILD" "$BUILD/gpu-reach" >"$LOGS/reach.log" 2>&1 || status=1
	cat "$LOGS/reach.log"; part reach "$LOGS/reach.log"
	tar -C "$BUILD/gpu-reach" -czf "$LOGS/reach-work.tgz" --exclude='*.ptx' . 2>/dev/null
fi
if [ "${KIMG_GPU_SKIP_HARDENING:-0}" = 1 ]; then skip_part "host safety" KIMG_GPU_SKIP_HARDENING; else
	echo "== host safety: two copies, SIGPIPE, /dev/full, fork"
	BUILD="$BUILD" WORK="$BUILD/gpu-hardening" timeout -k 10 "$PART_LIMIT" bash tests/gpu/hardening_gpu.sh >"$LOGS/hardening.log" 2>&1 || status=1
	cat "$LOGS/hardening.log"; part hardening "$LOGS/hardening.log"
fi
if [ "${KIMG_GPU_SKIP_SITE:-0}" = 1 ]; then skip_part "verdicts true to this environment" KIMG_GPU_SKIP_SITE; else
	echo "== verdicts true to this environment"
	timeout -k 10 "$PART_LIMIT" python3 tests/gpu/site_verdicts.py "$BUILD" "$BUILD/gpu-work" >"$LOGS/site.log" 2>&1 || status=1
	cat "$LOGS/site.log"; part site "$LOGS/site.log"
fi
if [ "${KIMG_GPU_SKIP_DOCTOR:-0}" = 1 ]; then skip_part "kimg-probe doctor" KIMG_GPU_SKIP_DOCTOR; else
	echo "== kimg-probe doctor and device readings"
	BUILD="$BUILD" OUT="$LOGS" timeout -k 10 "$PART_LIMIT" bash tests/gpu/doctor_gpu.sh >"$LOGS/doctor.log" 2>&1 || status=1
	cat "$LOGS/doctor.log"; part doctor "$LOGS/doctor.log"
fi
if [ "${KIMG_GPU_SKIP_ENV_SPEED:-0}" = 1 ]; then skip_part "environment speed" KIMG_GPU_SKIP_ENV_SPEED; else
	echo "== environment speed: check of site-packages vs reading it, cold and warm"
	timeout -k 10 "$PART_LIMIT" python3 bench/env_bench.py "$BUILD/kimg-probe" --site-packages --sm native --jobs 8,16 >"$LOGS/env_speed.log" 2>&1 || status=1
	cat "$LOGS/env_speed.log"; part env_speed "$LOGS/env_speed.log"
fi
if [ "${KIMG_GPU_SKIP_API:-0}" = 1 ]; then skip_part "the can-it-run API" KIMG_GPU_SKIP_API; else
	echo "== the can-it-run API: kimg.can_run against the driver"
	make -j"$(nproc)" BUILD="$BUILD" "$BUILD/tests/api_ask" >>"$LOGS/build.log" 2>&1
	python3 tests/gpu/api_gpu.py "$BUILD" "$BUILD/gpu-work" >"$LOGS/api.log" 2>&1 || status=1
	cat "$LOGS/api.log"; part api "$LOGS/api.log"
fi
if [ "${KIMG_GPU_SKIP_DRIVER_LOG:-0}" = 1 ]; then skip_part "symbol lookups and the driver's log" KIMG_GPU_SKIP_DRIVER_LOG; else
	echo "== symbol lookups, the driver's error log, the safety net, ptxas's reason, the callback's cost"
	python3 tests/gpu/driver_log_gpu.py "$BUILD" "$BUILD/gpu-driver-log" >"$LOGS/driver_log.log" 2>&1 || status=1
	cat "$LOGS/driver_log.log"; part driver_log "$LOGS/driver_log.log"
fi
if [ "$left_out" -gt 0 ] && [ "${KIMG_GPU_ALLOW_PARTIAL:-0}" != 1 ]; then
	echo "FAIL $left_out part(s) left out (KIMG_GPU_ALLOW_PARTIAL=1 to accept a partial run)"; status=1
fi
echo "gpu suite: $total_pass passed, $total_fail failed in $parts parts$([ "$left_out" -gt 0 ] && echo ", $left_out left out")"
[ "$total_pass" -gt 0 ] || status=1
exit $status
