#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Facts the shim must read from the device and the image, each pinned by a
# case no other test reaches: GB10 (12.1) is an integrated GPU that is not
# Tegra (docs/rules.md S2 must not apply), a CUDA 12 (ELF ABI V1) cubin keeps
# its sm_90a mark in e_flags 0x800, and another interposer's
# dlsym(RTLD_NEXT, "cuModuleLoadData") reaches the driver, not itself.
. "$(dirname "$0")/../lib.bash" shim

# GB10: the driver says integrated; kimg's device must not be Tegra, so the
# sm_80 cubin fails for the major (S1), not for the Tegra line (S2).
run gb10 FAKE_CUDA_SM=121 FAKE_CUDA_TEGRA=1 FAKE_CUDA_NAME="NVIDIA GB10" -- "$PROGS/drv_dl" dlsym load "$FIX/sm80.cubin"
check "GB10: the program sees 209" has gb10 "cuModuleLoadData: 209"
check "GB10: device 12.1, not tegra; verdict S1 (different major), not S2" \
	report gb10 'len(R) == 1 and R[0]["device"]["sm"] == "12.1" and R[0]["device"]["tegra"] is False
		and R[0]["verdict"]["rule"] == "S1"'
# Orin: integrated and Tegra -> S2 for the same cubin
run orin FAKE_CUDA_SM=87 FAKE_CUDA_TEGRA=1 -- "$PROGS/drv_dl" dlsym load "$FIX/sm80.cubin"
check "Orin: device 8.7 tegra, verdict S2" \
	report orin 'len(R) == 1 and R[0]["device"]["tegra"] is True and R[0]["verdict"]["rule"] == "S2"'
# GB10 runs desktop sm_120 code: no error, no report
run gb10ok FAKE_CUDA_SM=121 FAKE_CUDA_TEGRA=1 -- "$PROGS/drv_dl" dlsym load "$FIX/sm120.cubin"
check "GB10: the sm_120 cubin loads" has gb10ok "cuModuleLoadData: 0"
check "GB10: no report for the sm_120 cubin" report gb10ok 'R == []'

# A V1 cubin (what CUDA 12 wrote below SM 100): OS/ABI 0x33, ABI version 7,
# e_flags 0x005a0d5a = SM 0x5a | 0x800 (sm_90a) | texmode and 64-bit bits.
python3 - "$FIX/sm90a.cubin" "$TMP/v1_sm90a.cubin" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
b[7], b[8] = 0x33, 7
struct.pack_into("<I", b, 0x30, 0x005A0D5A)
open(sys.argv[2], "wb").write(b)
PY
run v1 FAKE_CUDA_SM=100 -- "$PROGS/drv_dl" dlsym load "$TMP/v1_sm90a.cubin"
check "V1 sm_90a cubin on 10.0: the program sees 209" has v1 "cuModuleLoadData: 209"
check "V1 sm_90a cubin: the report names sm_90a (e_flags 0x800), not sm_90" \
	report v1 'len(R) == 1 and archs(R[0]) == ["sm_90a"]'
run v1ok FAKE_CUDA_SM=90 -- "$PROGS/drv_dl" dlsym load "$TMP/v1_sm90a.cubin"
check "V1 sm_90a cubin on 9.0 loads, no report" eval 'has v1ok "cuModuleLoadData: 0" && report v1ok "R == []"'

# RTLD_NEXT for a hooked cu* name from a library between the program and libcuda.
run next -- "$PROGS/next_cu" "$FIX/sm80.cubin"
check "RTLD_NEXT cuModuleLoadData from another interposer is the driver's" \
	has next "next cuModuleLoadData: libcuda.so.1"
check "the interposer's call reaches the driver once (209, no recursion)" \
	eval 'has next "wrapped cuModuleLoadData: 209" && ! grep -q recursion "$TMP/next.err"'
finish
