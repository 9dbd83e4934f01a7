#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libkimgapi.so and api/kimg.h (docs/api.md), from build/tests/api_ask, a
# program linked as a user links it (tests/api/ask.c): the exports are
# exactly api/libkimgapi.map; the answers for the fixtures are the ones
# docs/rules.md gives (sm_80 SASS on 9.0: 209 [S1]; on 8.6: runs as SASS;
# compute_100 PTX on 9.0: 218 [P3]; ISA 9.0 PTX under a 12.4 driver: 222
# [P4]; a file without device code runs); every verdict equals kimg-probe
# check --json's for the same file and targets (one core, no second copy
# of the rules); bytes, file and loaded module give the same answer; many
# threads get the same answer; errors are returned with a reason, never
# printed; `native` reads the stand-in driver.
. "$(dirname "$0")/../lib.bash" probe
API=$BUILD_DIR/libkimgapi.so
ASK=$BUILD_DIR/tests/api_ask
require "$API" "make"
require "$ASK" "make BUILD=$BUILD $BUILD/tests/api_ask"

# ---- exports: the map, nothing else; no hooks, no constructor of kimg's ----
want=$(sed 's#/\*.*\*/##' api/libkimgapi.map | grep -oE '^[[:space:]]+kimg_[a-z_]+;' | tr -d ' \t;' | sort)
got=$(readelf --dyn-syms -W "$API" | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $4 == "FUNC" {print $8}' | sed 's/@.*//' | sort)
expect_eq "libkimgapi.so exports exactly the functions of api/libkimgapi.map ($(echo "$want" | wc -l))" "$want" "$got"
expect_eq "every function the map lists is declared in api/kimg.h" "" \
	"$(for f in $want; do grep -q "\b$f(" api/kimg.h || echo "$f"; done)"
expect_eq "no driver entry point (cu*, dlsym) is defined: it is not the LD_PRELOAD library" "" \
	"$(readelf --dyn-syms -W "$API" | awk '$7 != "UND" {print $8}' | grep -E '^(cu|dlsym)' || true)"
ctors=$(objdump -d "$API" | grep -c '<.*constructor' || true)
expect_eq "no constructor of its own (loading it changes nothing)" 0 "$ctors"
expect_eq "libkimgapi.so needs no glibc version newer than 2.17" "" \
	"$(objdump -T "$API" | grep -oE 'GLIBC_[0-9.]+' | sort -uV | awk -F'[_.]' '$2 > 2 || $3 > 17')"

# ---- answers for the fixtures (oracle: docs/rules.md) ----
ask() { "$ASK" "$@" 2>&1; }
expect_eq "sm_80 cubin on 9.0: cannot run, 209 [S1]" \
	"0 0 209|0 9.0 cannot_run - different_major S1 209 fails F0 - 80-real;90" \
	"$(ask "$FX/sm80.cubin" 9.0 | sed -n '1p;4p' | paste -sd'|')"
expect_eq "sm_80 cubin on 8.6: runs as SASS sm_80" "0 1 0|0 8.6 sass sm_80 fits S1 0 runs - - -" \
	"$(ask "$FX/sm80.cubin" 8.6 | sed -n '1p;4p' | paste -sd'|')"
out=$(ask "$FX/sm80.cubin" 9.0)
expect_match "sm_80 on 9.0: the reason names module, target, rule and error" \
	'^module 1 \(the whole file\) cannot run on 9\.0: cubin for another major version \[S1, F0\] -> error 209 \(CUDA_ERROR_NO_BINARY_FOR_GPU\)$' \
	"$(sed -n 2p <<<"$out")"
expect_match "sm_80 on 9.0: the fix adds sm_90 SASS and compute_90 PTX" \
	'^nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90; CMAKE_CUDA_ARCHITECTURES="80-real;90"; TORCH_CUDA_ARCH_LIST="8.0;9.0\+PTX"' \
	"$(sed -n 3p <<<"$out")"
expect_eq "sm_80 cubin on 9.0 and 8.6 at once: fails (on 9.0), both verdicts" \
	"0 0 209|0 9.0 cannot_run|0 8.6 sass" "$(ask "$FX/sm80.cubin" 9.0,8.6 | sed -n '1p;4,5p' | cut -d' ' -f1-3 | paste -sd'|')"
expect_eq "compute_100 PTX on 9.0: cannot run, 218 [P3]" \
	"0 0 218|0 9.0 cannot_run - ptx_newer_than_device P3 218 fails F0 -" \
	"$(ask "$FX/compute100.ptx" 9.0 | sed -n '1p;4p' | cut -d' ' -f1-10 | paste -sd'|')"
expect_eq "compute_80 PTX (ISA 9.0) on 8.6 with a CUDA 12.4 driver: 222 [P4]" "0 0 222|P4" \
	"$(ask "$FX/compute80.ptx" 8.6 12.4 | sed -n '1p;4p' | awk 'NR == 1 {print; next} {print $6}' | paste -sd'|')"
expect_eq "compute_80 PTX on 8.6, no driver limit: runs by PTX JIT" "0 1 0|ptx_jit compute_80" \
	"$(ask "$FX/compute80.ptx" 8.6 | sed -n '1p;4p' | awk 'NR == 1 {print; next} {print $3, $4}' | paste -sd'|')"
expect_eq "a file without device code (/bin/true): runs, no error, no module, no fix" "0 1 0|no device code to judge|-" \
	"$(ask /bin/true 9.0 | sed -n 1,3p | sed 's/: nothing.*//' | paste -sd'|')"
expect_eq "a shared object of a wheel-style extension (libtwo.so) on H100: module 2 fails with 209 [F3]" "0 0 209" \
	"$(ask "$FX/libtwo.so" H100 | sed -n 1p)"
expect_match "GPU names are targets: H100 is 9.0" '^[0-9] 9\.0 ' "$(ask "$FX/libtwo.so" H100 | sed -n 4p)"
expect_eq "a library's per-GPU modules are dispatched, not failures (libdispatch.so on 9.0) [F1]" \
	"0 1 0|dispatched F1" "$(ask "$FX/libdispatch.so" 9.0 | awk 'NR == 1 {print} $8 == "dispatched" {print $8, $9}' | paste -sd'|')"
expect_eq "--strict: the same module then fails" "0 0 209" "$(ask --strict "$FX/libdispatch.so" 9.0 | sed -n 1p)"
expect_eq "-rdc file whose link inputs hold PTX: runs after a JIT link [R1]" "0 1 0|jit_link R1" \
	"$(ask "$FX/rdc_ptx80_exe" 9.0 | awk 'NR == 1 {print} $3 == "jit_link" {print $3, $9}' | paste -sd'|')"
expect_eq "-rdc file with SASS-only link inputs: error 500 [R2]" "0 0 500" "$(ask "$FX/rdc_sm80_exe" 9.0 | sed -n 1p)"

# a CUDA runtime newer than the driver: 35 before any kernel (core/cuda_versions.h), as check says
cp /bin/true "$TMP/libcudart.so.13.0.96"
expect_eq "libcudart.so.13.0.96 under a CUDA 12.4 driver: cannot run, error 35, the minimum driver as the fix" \
	"0 0 35|upgrade the driver to >= 580 (the R580 branch or newer); or on data-center GPUs install cuda-compat-13-0; or use a build for the driver's CUDA major" \
	"$(ask "$TMP/libcudart.so.13.0.96" 9.0 12.4 | sed -n '1p;3p' | paste -sd'|')"
"$PROBE" check --sm 9.0 --driver 12.4 "$TMP/libcudart.so.13.0.96" >/dev/null 2>&1
expect_eq "kimg-probe check agrees (exit 1)" 1 "$?"
expect_eq "the same runtime under a CUDA 13.0 driver, and with no driver given: runs" "0 1 0|0 1 0" \
	"$(ask "$TMP/libcudart.so.13.0.96" 9.0 13.0 | sed -n 1p)|$(ask "$TMP/libcudart.so.13.0.96" 9.0 | sed -n 1p)"

# ---- errors: returned, with a reason; nothing printed by the library ----
expect_eq "not device code or ELF: -KIMG_API_EUNKNOWN (-4008), named" \
	"-4008 $ROOT/README.md: not an ELF file, static archive, fatbin, cubin or PTX" "$(ask "$ROOT/README.md" 9.0)"
expect_eq "missing file: -ENOENT" "-2 $TMP/none: No such file or directory" "$(ask "$TMP/none" 9.0)"
expect_eq "a directory: -EISDIR" "-21" "$(ask "$TMP" 9.0 | cut -d' ' -f1)"
expect_eq "a compute capability no GPU has (86.0): -EINVAL, named" \
	"-22 sm: '86.0' would be compute capability 86.0, which no NVIDIA GPU has" "$(ask "$FX/sm80.cubin" 86.0)"
expect_eq "an unknown GPU name: -EINVAL" "-22 sm: 'RTX 9999' is neither a compute capability (9.0, 90, sm_90) nor a known GPU name" \
	"$(ask "$FX/sm80.cubin" 'RTX 9999')"
expect_eq "an empty item: -EINVAL" "-22 sm: empty item in '9.0,,8.0'" "$(ask "$FX/sm80.cubin" 9.0,,8.0)"
expect_eq "a bad driver: -EINVAL" "-22 driver: 'twelve' is not a CUDA version X.Y (e.g. 12.4)" "$(ask "$FX/sm80.cubin" 9.0 twelve)"
expect_eq "unknown flag bits: -EINVAL" "-22 unknown flag bits 0x100" "$(ask --flags 0x100 "$FX/sm80.cubin" 9.0)"
printf 'PK\003\004rest' >"$TMP/w.whl"
expect_eq "a wheel: -KIMG_API_ENOTSUP, pointing at kimg-probe check" "-4003 $TMP/w.whl: a zip archive (wheel): kimg-probe check reads it" \
	"$(ask "$TMP/w.whl" 9.0)"
head -c 3000 "$FX/sm80.cubin" >"$TMP/cut.cubin"
expect_match "a truncated cubin: an error or a module error, never a crash" '^(-40[0-9][0-9] |0 )' "$(ask "$TMP/cut.cubin" 9.0 | head -1)"
# hostile bytes: every prefix length class of a shared object and a fatbin,
# and flipped bytes in their headers: an answer or an error, never a crash
python3 - "$FX/libtwo.so" "$FX/multi.fatbin" "$TMP/hostile" <<'PY'
import os, random, sys
random.seed(26)
os.makedirs(sys.argv[3], exist_ok=True)
n = 0
for src in sys.argv[1:3]:
    b = open(src, "rb").read()
    for cut in sorted(set([0, 1, 16, 63, 64, 200, 1000, 4096] + [random.randrange(len(b)) for _ in range(20)])):
        open(os.path.join(sys.argv[3], "cut%03d" % n), "wb").write(b[:cut]); n += 1
    for _ in range(20):
        m = bytearray(b)
        for _ in range(8):
            m[random.randrange(min(len(m), 4096))] = random.randrange(256)
        open(os.path.join(sys.argv[3], "flip%03d" % n), "wb").write(bytes(m)); n += 1
PY
crashed=0 n_hostile=0
for f in "$TMP"/hostile/*; do
	n_hostile=$((n_hostile + 1))
	timeout 20 "$ASK" "$f" 9.0 >/dev/null 2>&1; rc=$?
	[ "$rc" -le 1 ] || { crashed=$((crashed + 1)); echo "   $f: exit $rc"; }
	timeout 20 "$ASK" --bytes "$f" 9.0 >/dev/null 2>&1; rc=$?
	[ "$rc" -le 1 ] || { crashed=$((crashed + 1)); echo "   $f (bytes): exit $rc"; }
done
expect_eq "$n_hostile truncated or corrupted inputs, as files and as bytes: each an answer or an error, no crash or hang" 0 "$crashed"
for e in native NULL; do
	expect_match "sm $e without a driver: -ENOENT with the reason" '^-2 sm native: cannot load libcuda\.so\.1' \
		"$(env LD_LIBRARY_PATH=/nonexistent "$ASK" "$FX/sm80.cubin" "$e" 2>&1)"
done
# why may be NULL (api/kimg.h), whatever why_size says: the same error,
# nothing written (ask prints its buffer, which it left "unchanged")
expect_eq "why NULL with a size: the error alone, no crash" "-2 unchanged" \
	"$(env LD_LIBRARY_PATH=/nonexistent "$ASK" --no-why "$FX/sm80.cubin" native 2>&1)"

# ---- native through the stand-in driver and NVML (tests/fake_cuda) ----
fake_standin "$FAKE/libcuda.so.1"
fake_standin "$FAKE_NVML/libnvidia-ml.so.1"
got=$(env FAKE_CUDA_SM=90 FAKE_CUDA_DRIVER=13000 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME=NVIDIA_H200 FAKE_CUDA_COUNT=2 \
	LD_LIBRARY_PATH="$FAKE:$FAKE_NVML" "$ASK" --json "$FX/sm80.cubin" native 2>&1)
expect_eq "native: the stand-in's two H200s with their driver; sm_80 fails there with 209" \
	"[('9.0', 'NVIDIA_H200', 0, '13.0'), ('9.0', 'NVIDIA_H200', 1, '13.0')] False 209" \
	"$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print([(t["sm"], t["device"], t["index"], t["driver_cuda_version"]) for t in d["targets"]], d["runs"], d["error"])' "$got" 2>&1)"
got=$(env FAKE_CUDA_SM=80 FAKE_CUDA_DRIVER=13000 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME=NVIDIA_A100 FAKE_CUDA_COUNT=1 \
	LD_LIBRARY_PATH="$FAKE:$FAKE_NVML" "$ASK" "$FX/sm80.cubin" NULL 2>&1 | head -1)
expect_eq "sm NULL is native: an A100 runs the sm_80 cubin" "0 1 0" "$got"
# The target list holds 64 (API_TARGETS_MAX): 64 distinct spellings fit,
# and the native GPU as a 65th is refused, not dropped.
many=$(python3 -c '
t = []
for c in "5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 10.0 10.3 11.0 12.0 12.1 3.5 3.7".split():
    a, b = c.split(".")
    t += [c, a + b, "sm_" + a + b]
print(",".join(t + ["H100"]))')
expect_eq "64 targets: answered" "0 0 209" "$(ask "$FX/sm80.cubin" "$many" | sed -n 1p)"
got=$(env FAKE_CUDA_SM=90 FAKE_CUDA_DRIVER=13000 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME=NVIDIA_H200 FAKE_CUDA_COUNT=1 \
	LD_LIBRARY_PATH="$FAKE:$FAKE_NVML" "$ASK" "$FX/sm80.cubin" "$many,native" 2>&1 | head -1)
expect_eq "64 targets and native: -KIMG_API_ELIMIT, the native GPU not dropped" "-4006 sm: more than 64 targets" "$got"

# ---- one core: every verdict is kimg-probe check --json's ----
targets="9.0,8.6,8.0,10.0,12.0,H100,Jetson AGX Orin,7.5"
fields='("sm", "outcome", "image", "reason", "rule", "expected_error", "fate", "file_rule", "library", "fix")'
n_same=0 n_files=0
for f in sm80.cubin sm90a.cubin sm100f.cubin sm120.cubin compute80.ptx compute90a.ptx compute100.ptx multi.fatbin \
	compress_size.fatbin multi_exe ptxonly_exe sm80_exe rdc_exe libtwo.so libtwo.a tu_a.o lto.o embedded.o wrapped.so \
	libdispatch.so rdc_ptx80_exe rdc_sm80_exe rdc_ptx100_exe ptx100_z.fatbin sm80_exe_stripped; do
	[ -f "$FX/$f" ] || { fail "fixture $f present"; continue; }
	n_files=$((n_files + 1))
	for drv in "" 12.4; do
		"$ASK" --json "$FX/$f" "$targets" $drv >"$TMP/api.json" 2>&1
		"$PROBE" check --json --all --sm "$targets" ${drv:+--driver $drv} "$FX/$f" >"$TMP/probe.json" 2>/dev/null
		res=$(python3 -S - "$TMP/api.json" "$TMP/probe.json" "$fields" <<'PY' 2>&1 # -S: json only, 50 starts
import json, sys
a = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
fields = eval(sys.argv[3])
pm = [m for f in p["files"] for m in f["modules"]]
def mod(m, probe):
    v = [tuple(x[k] for k in fields) for x in m["verdicts"]]
    imgs = [(i["kind"], i["arch"]) for i in m["images"]]
    return (m["offset"], m["kind"], m["origin"], m["link_stub"], m["link_input"], imgs, v)
am = [mod(m, False) for m in a["modules"]]
pmm = [mod(m, True) for m in pm]
runs = all(v["fate"] != "fails" for m in p["files"][0]["modules"] for v in m["verdicts"]) if p["files"] else True
if am != pmm:
    i = next(k for k in range(min(len(am), len(pmm)) + 1) if k >= min(len(am), len(pmm)) or am[k] != pmm[k])
    print("module", i, "differs:", str(am[i:i + 1])[:600], "|", str(pmm[i:i + 1])[:600])
elif a["runs"] != runs: print("runs differ", a["runs"], runs)
else: print("same")
PY
)
		if [ "$res" = same ]; then n_same=$((n_same + 1)); else fail "$f (driver ${drv:-none}): the API's verdicts are check's" "$res"; fi
	done
done
expect_eq "every module's verdicts on 8 targets are kimg-probe check's, for $n_files fixtures with and without a 12.4 driver" \
	$((n_files * 2)) $n_same

# ---- bytes, file and loaded module: one answer ----
"$ASK" --json "$FX/libtwo.so" 9.0,8.0 >"$TMP/file.json"
"$ASK" --json --bytes "$FX/libtwo.so" 9.0,8.0 >"$TMP/bytes.json"
"$ASK" --json --loaded _Z11tu_a_launchPf "$FX/libtwo.so" 9.0,8.0 >"$TMP/loaded.json" 2>&1
if cmp -s "$TMP/file.json" "$TMP/bytes.json"; then ok "kimg_can_run_bytes gives kimg_can_run_file's answer"; else fail "bytes and file differ" "$(diff "$TMP/file.json" "$TMP/bytes.json" | head -4)"; fi
expect_eq "kimg_can_run_loaded finds the loaded module's file (dladdr) and gives the same answer" "$FX/libtwo.so same" \
	"$(python3 -c 'import json, sys; a, b = (json.load(open(p)) for p in sys.argv[1:3]); print(b["path"], "same" if dict(a, path=0) == dict(b, path=0) else "differ")' "$TMP/file.json" "$TMP/loaded.json" 2>&1)"

# ---- thread safety: 8 threads x 50 questions, each answer the first's ----
expect_eq "8 threads asking at once get the same answer (libtwo.so, 2 targets)" same "$(ask --threads 8 "$FX/libtwo.so" 9.0,8.0)"
expect_eq "8 threads asking about a compressed fatbin (zstd, decoded for the stub test)" same "$(ask --threads 8 "$FX/ptx100_z.fatbin" 9.0)"
finish
