#!/usr/bin/env bash
# kimg-probe device: without a driver, one clear line and exit 2; with the
# fake driver of tests/fake_cuda (when built), the facts it reports.
. "$(dirname "$0")/lib.bash"

# No driver: an empty library path (libcuda.so.1 is not in the system
# cache on the build machine; skip if it is).
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	ok "no-driver case skipped: this machine has libcuda.so.1 installed"
else
	mkdir -p "$TMP/empty-lib"
	LD_LIBRARY_PATH="$TMP/empty-lib" run "$PROBE" device
	expect_rc 2 "device without a driver"
	expect_grep "no-driver message" "$TMP/err" "kimg-probe: cannot load libcuda.so.1: no NVIDIA driver installed or visible"
	if [ ! -s "$TMP/out" ]; then ok "nothing on stdout without a driver"; else bad "stdout: $(cat "$TMP/out")"; fi
	LD_LIBRARY_PATH="$TMP/empty-lib" run "$PROBE" check --sm native "$FX/sm80_exe"
	expect_rc 2 "check --sm native without a driver"
	expect_grep "native names the driver problem" "$TMP/err" "--sm native: cannot load libcuda.so.1"
fi

# The fake driver (tests/fake_cuda, built by the shim's tests) when present.
fake=""
for d in "$BUILD/fake_cuda" "$BUILD/tests/fake_cuda" tests/fake_cuda; do
	[ -f "$d/libcuda.so.1" ] && { fake=$d; break; }
done
if [ -z "$fake" ]; then
	ok "fake driver cases skipped: no libcuda.so.1 under $BUILD/fake_cuda or tests/fake_cuda"
else
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
	FAKE_CUDA_COUNT=0 LD_LIBRARY_PATH="$fake" run "$PROBE" device
	expect_rc 2 "device with a driver but no GPU"
fi

finish
