#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The stand-in driver (tests/fake_cuda, its own reader in fake_image.h) on
# its own, without libkimg: the load results the shim tests rely on, each
# a literal taken from the CUDA rules (cubins within their major and never
# across the Tegra line, `a` code on one CC, PTX for any newer CC, raw PTX
# for a newer target 218, PTX ISA above the driver 222, JIT disabled 223,
# no JIT library 221, garbage 200). This pins the oracle the other shim
# tests compare kimg with; it never consults kimg's code.
. "$(dirname "$0")/../lib.bash" shim
printf 'garbage bytes, not device code\n' >"$TMP/garbage.bin"
# load SM FILE [VAR=VALUE...]: the driver's cuModuleLoadData result
load() {
	local sm=$1 file=$2; shift 2
	env -u LD_PRELOAD LD_LIBRARY_PATH="$FAKE" FAKE_CUDA_SM="$sm" "$@" "$PROGS/drv_dl" dlsym load "$file" 2>&1 |
		sed -n 's/^cuModuleLoadData: //p'
}
while read -r sm file want why; do
	[ -n "$sm" ] || continue
	case $file in /*) path=$file ;; *) path=$FIX/$file ;; esac
	envs=()
	case $why in *=*) envs=("${why%% *}") why=${why#* } ;; esac
	got=$(load "$sm" "$path" ${envs[@]+"${envs[@]}"})
	if [ "$got" = "$want" ]; then ok "SM $sm, $file: $want ($why)"; else fail "SM $sm, $file: got '$got', want $want ($why)"; fi
done <<EOF_CASES
90 sm80.cubin 209 another major
86 sm80.cubin 0 same major, higher minor
80 sm80.cubin 0 exact
87 sm80.cubin 209 desktop cubin on Tegra (Orin)
121 sm120.cubin 0 GB10 runs desktop sm_120 code
90 sm90a.cubin 0 V2 cubin: no suffix in e_flags, sm_90 on 9.0
100 sm90a.cubin 209 another major
103 sm100f.cubin 0 same major, higher minor
120 sm100f.cubin 209 another major
90 multi.fatbin 0 sm_90 cubin
75 multi.fatbin 209 nothing for 7.5: cubins of other majors, PTX targets above it
87 multi.fatbin 209 Orin: no sm_87 cubin, PTX targets above 8.7
110 multi.fatbin 0 Thor: compute_90 PTX JIT-compiles on any newer CC
90 compute80.ptx 0 PTX JIT for a newer CC
75 compute80.ptx 218 raw PTX for a newer target
90 compute80.ptx 222 FAKE_CUDA_DRIVER=12040 ISA 9.0 above a CUDA 12.4 driver (8.4)
90 compute80.ptx 223 CUDA_DISABLE_PTX_JIT=1 JIT disabled
90 compute80.ptx 221 FAKE_CUDA_NO_JIT=1 no JIT library
90 sm80.cubin 209 CUDA_FORCE_PTX_JIT=1 cubins ignored, no PTX
90 multi.fatbin 0 CUDA_FORCE_PTX_JIT=1 compute_90 PTX
90 $TMP/garbage.bin 200 not device code
EOF_CASES
finish
