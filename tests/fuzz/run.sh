#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every built libFuzzer target ($BUILD/fuzz/fuzz_*) for $FUZZ_SECONDS
# each, seeded from the nvcc fixtures and tests/fixtures/committed (binary
# targets) or small JSON documents written here (fuzz_json_read). Builds
# nothing (make fuzz does). Exits non-zero if any target finds a crash;
# the input is left as $BUILD/fuzz/crash-<target>-* (commit a small copy
# under tests/fixtures/committed/ with a unit test expecting its error).
set -u
BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
FIX=${KIMG_FIXTURES:-$BUILD/fixtures}
status=0 ran=0

# JSON seeds for fuzz_json_read: the target's first byte picks the arena
# (>= 0x40: the full 1 MiB; below: byte x 16 bytes), the rest is the
# document. Shapes: a libkimg report line (docs/json-shim-report.md), escapes and
# UTF-8, numbers, nesting, empty containers, a small arena, a truncation.
json_seeds() { # $1 directory
	local report='{"error":{"code":209,"name":"CUDA_ERROR_NO_BINARY_FOR_GPU"},"call":"cuLibraryGetKernel","kernel":{"name":"_Z7add_onePfi","demangled":"add_one(float*, int)"},"module":{"file":"/work/app","offset":237568,"images":[{"kind":"sass","arch":"sm_80","ptx_isa":null,"compressed":false,"size":4096,"selected":false}]},"device":{"ordinal":0,"name":"NVIDIA H200","sm":"9.0","tegra":false,"driver_version":13000},"fix":{"nvcc":"-gencode arch=compute_90,code=sm_90","min_toolkit":11080},"stack":["main+0xe3 (app+0x12bc)"],"python_stack":[],"process":{"host":"node1","pid":4242,"rank":0,"world_size":2}}'
	printf 'J%s' "$report" >"$1/report.json"
	printf 'J%s' '{"s":"tab\t quote\" slash\/ u\u00e9 pair\ud83d\ude00 raw é","e":""}' >"$1/strings.json"
	printf 'J%s' '[0,-1,3.25,1e9,-2.5E-3,9223372036854775807,-9223372036854775808,18446744073709551616]' >"$1/numbers.json"
	printf 'J%s' '[[[[{"a":[{"b":[[]]}]}]]],{},[],null,true,false]' >"$1/nesting.json"
	printf 'J%s' '  {"ws" :	[ 1 , 2 ] }  ' >"$1/whitespace.json"
	printf '\002%s' '{"arena":"too small for this document"}' >"$1/small_arena.json"
	printf 'J%s' '{"cut":["short' >"$1/truncated.json"
}

# Zip seeds for fuzz_zip: stored and deflated members, a directory entry,
# an empty archive, a ZIP64 one (forced), a small fixture inside.
zip_seeds() { # $1 directory
	python3 - "$1" "$FIX/sm80.cubin" <<'PY'
import sys, zipfile, os
d, cubin = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(os.path.join(d, "mixed.zip"), "w") as z:
    z.writestr("pkg/", "")
    z.writestr(zipfile.ZipInfo("pkg/stored.txt"), "stored member")
    z.writestr("pkg/deflated.txt", "deflated " * 50, compress_type=zipfile.ZIP_DEFLATED)
    if os.path.exists(cubin):
        z.write(cubin, "pkg/lib/sm80.cubin", compress_type=zipfile.ZIP_DEFLATED)
zipfile.ZipFile(os.path.join(d, "empty.zip"), "w").close()
with zipfile.ZipFile(os.path.join(d, "zip64.zip"), "w", allowZip64=True) as z:
    with z.open("big.bin", "w", force_zip64=True) as f:
        f.write(b"x" * 100)
PY
}

# Seeds for fuzz_packages: the first byte picks the parser (0 RECORD, 1 dpkg
# .list, 2 dpkg status, 3 conda-meta, 4 device document, 5 CUDA library
# name + ELF bytes).
package_seeds() { # $1 directory
	printf '\000%s' 'foo/_C.so,sha256=abc,12\n"a,b",,\n"q""x",,\n' >"$1/record"
	printf '\001%s' '/.\n/usr/lib/x86_64-linux-gnu/libcudart.so.12\n' >"$1/list"
	printf '\002%s' 'Package: a\nStatus: install ok installed\nVersion: 1.0\n\nPackage: b\nVersion: 2\n' >"$1/status"
	printf '\003%s' '{"name":"pytorch","version":"2.5.1","files":["lib/libtorch_cuda.so"]}' >"$1/conda.json"
	printf '\004%s' '{"host":"n1","driver":{"cuda_version":"12.2"},"devices":[{"name":"NVIDIA H200","cc":"9.0","tegra":false,"cuda_driver":"13.0"}]}' >"$1/device.json"
	if [ -f /usr/local/cuda/lib64/libcudart.so.13 ]; then
		{ printf '\005'; cat /usr/local/cuda/lib64/libcudart.so.13; } >"$1/cudart"
	fi
}

# Seeds for the cluster readers (core/cluster.h): a GFD node list with MIG,
# scontrol lines (a map line first for fuzz_cluster_slurm), dcgm-exporter text.
cluster_seeds() { # $1 target $2 directory
	case $1 in
	fuzz_cluster_k8s)
		printf '%s' '{"apiVersion":"v1","items":[{"kind":"Node","metadata":{"name":"gpu-h1","labels":{"nvidia.com/gpu.compute.major":"9","nvidia.com/gpu.compute.minor":"0","nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.count":"8","nvidia.com/cuda.runtime.major":"12","nvidia.com/cuda.runtime.minor":"4","nvidia.com/cuda.driver.major":"550","nvidia.com/cuda.driver.minor":"54","nvidia.com/cuda.driver.rev":"15"}}},{"metadata":{"name":"m1","labels":{"nvidia.com/mig.strategy":"single","nvidia.com/gpu.product":"A100-SXM4-40GB-MIG-1g.5gb","nvidia.com/gpu.count":"56"}}},{"metadata":{"name":"cpu","labels":{}}}],"kind":"List","metadata":{"resourceVersion":""}}' >"$2/list.json"
		printf '%s' '{"kind":"Node","metadata":{"name":"solo","labels":{"nvidia.com/gpu.compute.major":"x"}}}' >"$2/node.json" ;;
	fuzz_cluster_slurm)
		printf 'map:mi300 = 9.0\nNodeName=a AvailableFeatures=sm_90 Gres=gpu:h100:8(S:0-1),gpu:mi300:2,shard:h100:4 Reason=x Gres=gpu:a:1\nNodeName=b\n   Gres=gpu:4\nNodeName=c Gres=(null)\n' >"$2/nodes.txt" ;;
	fuzz_cluster_dcgm)
		printf '%s\n' '# HELP DCGM_FI_DEV_SM_CLOCK SM clock' 'DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3",Hostname="n1",DCGM_FI_DRIVER_VERSION="550.54.15"} 1980' 'DCGM_FI_DEV_FB_USED{UUID="GPU-b",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="1g.5gb",Hostname="n2",} 6 1700000000' 'go_gc{q="0"} NaN' >"$2/metrics.txt" ;;
	esac
}

seed_dir() { # $1 target name -> directory of seed inputs (never missing)
	local d="$BUILD/fuzz/seeds-$1"
	rm -rf "$d" && mkdir -p "$d"
	case $1 in
	fuzz_json_read) json_seeds "$d" ;;
	fuzz_options) # byte 0: secure-execution mode (bit 0); then NUL-separated VAR=value entries
		printf '\000KIMG_LOG=/tmp/k-%%h-%%r-%%p.log\000RANK=3\000KIMG_FORMAT=json' >"$d/log"
		printf '\000KIMG_FALLBACK=force-ptx:*/_C[0-9].so\000KIMG_ON_ERROR=exit:86' >"$d/glob"
		printf '\000KIMG_FALLBACK=force-ptx:[\000KIMG_VERBOSE=maybe' >"$d/bad"
		printf '\001KIMG_LOG=/etc/passwd\000KIMG_AUDIT=1' >"$d/secure" ;;
	fuzz_driver_log) # byte 0: the output buffer's size; then one message as the driver words it
		printf '@%s' 'Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetKernel' >"$d/returning"
		printf '@%s' 'Kernel (rk) cannot be found in library due to compilation error' >"$d/kernel"
		printf '\005%s' '[12:01:02][E] Returning 201 (CUDA_ERROR_INVALID_CONTEXT) from cuCtxGetDevice_v2' >"$d/small" ;;
	fuzz_payload) cp "$FIX"/compress_*.fatbin "$d"/ 2>/dev/null ;;
	fuzz_fatbin) cp "$FIX"/*.fatbin "$FIX"/*.cubin "$FIX"/*.ptx "$d"/ 2>/dev/null ;;
	fuzz_zip) zip_seeds "$d" ;;
	fuzz_packages) package_seeds "$d" ;;
	fuzz_cluster_*) cluster_seeds "$1" "$d" ;;
	*) cp "$FIX"/* "$d"/ 2>/dev/null ;;
	esac
	if [ "$1" != fuzz_json_read ] && [ "$1" != fuzz_options ] && [ "$1" != fuzz_packages ] && [ "$1" != fuzz_driver_log ] &&
		[ "${1#fuzz_cluster_}" = "$1" ] && [ -d tests/fixtures/committed ]; then
		cp tests/fixtures/committed/* "$d"/ 2>/dev/null
	fi
	if [ -z "$(ls -A "$d")" ]; then
		echo "   note: no seeds for $1 (build the fixtures: make fixtures)" >&2
	fi
	echo "$d"
}

for bin in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$bin" ] && [ -f "$bin" ] || continue
	name=$(basename "$bin")
	corpus="$BUILD/fuzz/corpus-$name"
	mkdir -p "$corpus"
	seeds=$(seed_dir "$name")
	echo "== $name: ${FUZZ_SECONDS}s, seeds from $seeds"
	ran=$((ran + 1))
	if ! "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=4096 -max_len=2000000 \
		-print_final_stats=1 -artifact_prefix="$BUILD/fuzz/crash-$name-" "$corpus" "$seeds" \
		>"$BUILD/fuzz/$name.log" 2>&1; then
		echo "FAIL $name: see $BUILD/fuzz/$name.log"
		grep -E 'ERROR|SUMMARY|Test unit written' "$BUILD/fuzz/$name.log" | head -5
		status=1
	else
		grep -E 'stat::number_of_executed_units' "$BUILD/fuzz/$name.log" | sed "s/^/   /"
	fi
done
if [ "$ran" -eq 0 ]; then
	echo "no fuzz targets in $BUILD/fuzz (run make fuzz)"
	exit 1
fi
exit $status
