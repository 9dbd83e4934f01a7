#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kimg-probe device: without a driver, one clear line and exit 2; with the
# fake driver of tests/fake_cuda (when built), the facts it reports.
. "$(dirname "$0")/../lib.bash" probe

# No driver, on every machine: an empty file named libcuda.so.1 first on
# LD_LIBRARY_PATH (searched before the loader cache) makes dlopen fail
# ("file too short") even where a driver is installed.
mkdir -p "$TMP/empty-lib" && : >"$TMP/empty-lib/libcuda.so.1"
LD_LIBRARY_PATH="$TMP/empty-lib" run "$PROBE" device
expect_rc 2 "device without a driver"
expect_grep "no-driver message" "$TMP/err" "kimg-probe: cannot load libcuda.so.1: no NVIDIA driver installed or visible"
if [ ! -s "$TMP/out" ]; then ok "nothing on stdout without a driver"; else fail "stdout: $(cat "$TMP/out")"; fi
LD_LIBRARY_PATH="$TMP/empty-lib" run "$PROBE" check --sm native "$FX/sm80_exe"
expect_rc 2 "check --sm native without a driver"
expect_grep "native names the driver problem" "$TMP/err" "--sm native: cannot load libcuda.so.1"

# The fake driver of tests/fake_cuda (its own image reader, no kimg code),
# built by make (tests/fake_cuda/fake.mk): missing, it is a failure.
fake=$FAKE
fake_standin "$fake/libcuda.so.1"
if [ -n "$fake" ]; then
	FAKE_CUDA_SM=87 FAKE_CUDA_COUNT=2 FAKE_CUDA_DRIVER=12040 FAKE_CUDA_TEGRA=1 FAKE_CUDA_NAME="Orin (fake)" \
		LD_LIBRARY_PATH="$fake" run "$PROBE" device --json
	expect_rc 0 "device with the fake driver"
	expect_json "two fake Orin devices, Tegra, CUDA 12.4, PTX ISA 8.4" \
		'[(g["index"], g["name"], g["cc"], g["tegra"], g["cuda_driver"], g["max_ptx_isa"]) for g in d["devices"]]
		 == [(0, "Orin (fake)", "8.7", True, "12.4", "8.4"), (1, "Orin (fake)", "8.7", True, "12.4", "8.4")]'
	FAKE_CUDA_SM=90 FAKE_CUDA_COUNT=1 FAKE_CUDA_DRIVER=13000 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME="NVIDIA H200" \
		LD_LIBRARY_PATH="$fake" run "$PROBE" check --sm native --json "$FX/sm80_exe"
	expect_rc 1 "check --sm native with a fake H200"
	expect_json "native target: the fake H200 with its driver version" \
		'[(t["sm"], t["device"], t["index"], t["driver_cuda_version"]) for t in d["targets"]] == [("9.0", "NVIDIA H200", 0, "13.0")]'
	# A driver newer than kimg's PTX ISA table: null, as docs/json-probe.md says, not a guess.
	FAKE_CUDA_SM=90 FAKE_CUDA_COUNT=1 FAKE_CUDA_DRIVER=14000 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME="NVIDIA H200" \
		LD_LIBRARY_PATH="$fake" run "$PROBE" device --json
	expect_json "driver newer than the table: max_ptx_isa null" \
		'd["driver"]["max_ptx_isa"] is None and d["devices"][0]["max_ptx_isa"] is None and d["driver"]["cuda_version"] == "14.0"'
	FAKE_CUDA_SM=90 FAKE_CUDA_COUNT=1 FAKE_CUDA_DRIVER=14000 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME="NVIDIA H200" \
		LD_LIBRARY_PATH="$fake" run "$PROBE" device
	expect_grep "text says the driver is newer than the table" "$TMP/out" "PTX ISA up to ? (driver newer than kimg's table)"
	if ! grep -q "more GPUs" "$TMP/out"; then ok "every GPU shown: no 'more GPUs' line"; else fail "'more GPUs' with one GPU: $(cat "$TMP/out")"; fi
	FAKE_CUDA_SM=61 FAKE_CUDA_COUNT=1 FAKE_CUDA_DRIVER=6050 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME="GeForce GTX 1080" \
		LD_LIBRARY_PATH="$fake" run "$PROBE" device
	expect_grep "text says the driver is older than the table" "$TMP/out" "PTX ISA up to ? (driver older than CUDA 7.0"
	FAKE_CUDA_COUNT=0 LD_LIBRARY_PATH="$fake" run "$PROBE" device
	expect_rc 2 "device with a driver but no GPU"
	expect_grep "no-GPU message names the CUresult" "$TMP/err" \
		"kimg-probe: cuInit failed: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable GPU is visible"
	# GB10 (12.1) is integrated but not Tegra (docs/rules.md 2.1): S2 must not apply.
	FAKE_CUDA_SM=121 FAKE_CUDA_COUNT=1 FAKE_CUDA_TEGRA=1 FAKE_CUDA_NAME="NVIDIA GB10" \
		LD_LIBRARY_PATH="$fake" run "$PROBE" device --json
	expect_json "GB10: integrated, not tegra" \
		'[(g["cc"], g["integrated"], g["tegra"]) for g in d["devices"]] == [("12.1", True, False)]'
	# More GPUs than the device page holds (64, cmd_device.c): the first 64
	# listed, GPU 0 to 63, and the rest counted in one line (70 - 64 = 6).
	FAKE_CUDA_SM=90 FAKE_CUDA_COUNT=70 FAKE_CUDA_TEGRA=0 LD_LIBRARY_PATH="$fake" run "$PROBE" device
	expect_rc 0 "device with 70 fake GPUs"
	expect_eq "GPUs 0 to 63 listed" "64 GPU 63" "$(grep -c '^GPU [0-9]*: ' "$TMP/out") $(grep -o '^GPU [0-9]*' "$TMP/out" | tail -n 1)"
	expect_grep "the 6 past 64 counted" "$TMP/out" "(6 more GPUs not shown)"
	# gethostname failing (bad_hostname.so: ENAMETOOLONG, the buffer filled
	# with a cut name, as glibc leaves it): no host, not the cut bytes.
	FAKE_CUDA_SM=90 FAKE_CUDA_COUNT=1 LD_LIBRARY_PATH="$fake" LD_PRELOAD="$BUILD_DIR/tests/bad_hostname.so" \
		run "$PROBE" device --json
	expect_rc 0 "device with gethostname failing"
	expect_json "gethostname failing: host null" 'd["host"] is None'
	FAKE_CUDA_SM=90 FAKE_CUDA_COUNT=1 LD_LIBRARY_PATH="$fake" run "$PROBE" device --json
	expect_json "host: this machine's name" "d[\"host\"] == \"$(hostname)\""
fi

# An argument device does not know: one line naming it, exit 2, nothing on stdout.
run "$PROBE" device --gpus
expect_rc 2 "device with an unknown argument"
expect_grep "the unknown argument named" "$TMP/err" "kimg-probe device: unknown argument '--gpus' (see kimg-probe device --help)"
if [ ! -s "$TMP/out" ]; then ok "nothing on stdout for an unknown argument"; else fail "stdout: $(cat "$TMP/out")"; fi

finish
