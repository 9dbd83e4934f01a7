#!/usr/bin/env bash
# GPU-machine test suite: run from the repository root on a machine with an NVIDIA GPU,
# nvcc, cuobjdump, PyTorch and CuPy. Builds kimg, then:
#   1. kimg-probe device vs nvidia-smi
#   2. kimg-probe scan vs cuobjdump on the large CUDA libraries present
#   3. libkimg.so end to end (tests/gpu/shim_gpu.py), when libkimg.so is built
#   4. KIMG_FALLBACK and KIMG_AUDIT (tests/gpu/fallback_gpu.py), idem
#   4. two torchrun ranks and kimg-probe summarize (tests/gpu/multirank_gpu.sh), when torchrun exists
#   5. host safety with the real driver (tests/gpu/hardening_gpu.sh): two copies, SIGPIPE, full disk, fork
#   6. what reaches the program (tests/gpu/reach_gpu.py): healthy workloads silent (NCCL, EAGER
#      cuDNN/cuBLAS, JAX, CuPy, training), KIMG_AUDIT groups, Python frames without the GIL, cuLink
#   7. verdicts true to this environment (tests/gpu/site_verdicts.py): check --sm native over
#      python3's site-packages passes with the dispatched modules counted, wrong-arch builds
#      still fail, -rdc verdicts equal the programs, scan equals cuobjdump (and --all, -all)
#   8. kimg-probe doctor over the stock Python environment and device's three readings (tests/gpu/doctor_gpu.sh)
# Logs go to ${OUT:-build/gpu}. Prints one "N passed, N failed" line per part.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${BUILD:-build}
LOGS=${OUT:-$BUILD/gpu}
mkdir -p "$LOGS"
status=0
make -j"$(nproc)" BUILD="$BUILD" all >"$LOGS/build.log" 2>&1 || { tail -n 30 "$LOGS/build.log"; exit 1; }
echo "== device vs nvidia-smi"
python3 tests/gpu/device_vs_nvidia_smi.py "$BUILD/kimg-probe" || status=1
echo "== scan vs cuobjdump"
libs=()
torch_lib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
for f in "$torch_lib"/libtorch_cuda.so "$torch_lib"/libc10_cuda.so; do [ -f "$f" ] && libs+=("$f"); done
site=$(dirname "$torch_lib" | xargs dirname)
while IFS= read -r f; do libs+=("$f"); done < <(find "$site/nvidia" -name 'libcublasLt.so*' -o -name 'libcusparse.so*' \
	-o -name 'libcufft.so*' -o -name 'libcurand.so*' 2>/dev/null | sort | head -n 6)
python3 tests/gpu/compare_cuobjdump.py "$BUILD/kimg-probe" "${libs[@]}" | tee "$LOGS/compare.log" || status=1
if [ -f "$BUILD/libkimg.so" ] && [ "${KIMG_GPU_SKIP_SHIM:-0}" != 1 ]; then
	echo "== libkimg.so end to end"
	python3 tests/gpu/shim_gpu.py "$BUILD" "$BUILD/gpu-work" | tee "$LOGS/shim.log" || status=1
	tar -C "$BUILD/gpu-work" -czf "$LOGS/shim-work.tgz" --exclude='*.so' --exclude='drv_load' --exclude='wrong_*' \
		--exclude='right_*' --exclude='torch_ext' . 2>/dev/null
fi
if command -v torchrun >/dev/null && [ "${KIMG_GPU_SKIP_MULTIRANK:-0}" != 1 ]; then
	echo "== two torchrun ranks under libkimg.so, kimg-probe summarize"
	BUILD="$BUILD" WORK="$BUILD/gpu-multirank" bash tests/gpu/multirank_gpu.sh | tee "$LOGS/multirank.log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if [ -f "$BUILD/libkimg.so" ] && [ "${KIMG_GPU_SKIP_REACH:-0}" != 1 ]; then
	echo "== what reaches the program: silent healthy workloads, audit groups, frames without the GIL, cuLink"
	python3 tests/gpu/reach_gpu.py "$BUILD" "$BUILD/gpu-reach" | tee "$LOGS/reach.log" || status=1
	tar -C "$BUILD/gpu-reach" -czf "$LOGS/reach-work.tgz" --exclude='*.ptx' . 2>/dev/null
fi
if [ -f "$BUILD/libkimg.so" ] && [ "${KIMG_GPU_SKIP_FALLBACK:-0}" != 1 ]; then
	echo "== KIMG_FALLBACK / KIMG_AUDIT"
	python3 tests/gpu/fallback_gpu.py "$BUILD" "$BUILD/fb-work" | tee "$LOGS/fallback.log" || status=1
fi
if [ -f "$BUILD/libkimg.so" ] && [ "${KIMG_GPU_SKIP_HARDENING:-0}" != 1 ]; then
	echo "== host safety: two copies, SIGPIPE, /dev/full, fork"
	BUILD="$BUILD" WORK="$BUILD/gpu-hardening" bash tests/gpu/hardening_gpu.sh | tee "$LOGS/hardening.log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if [ "${KIMG_GPU_SKIP_SITE:-0}" != 1 ]; then
	echo "== verdicts true to this environment"
	python3 tests/gpu/site_verdicts.py "$BUILD" "$BUILD/gpu-work" | tee "$LOGS/site.log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
echo "== kimg-probe doctor and device readings"
BUILD="$BUILD" OUT="$LOGS" bash tests/gpu/doctor_gpu.sh | tee "$LOGS/doctor.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status
