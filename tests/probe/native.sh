#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-timeout: 120
# check --sm native: the GPUs from NVML without cuInit where that is the
# CUDA driver's answer, else from the driver (sys/driver_query.h:
# kimg_native_devices). The oracle is the stand-ins' configured facts, and
# which path ran is told by a cuInit made to fail (FAKE_CUDA_INIT_ERROR):
# the NVML path never calls it, the driver path reports it.
. "$(dirname "$0")/../lib.bash" probe

fake_standin "$FAKE/libcuda.so.1"
fake_standin "$FAKE_NVML/libnvidia-ml.so.1"
both="$FAKE:$FAKE_NVML"
h200="FAKE_CUDA_SM=90 FAKE_CUDA_DRIVER=13000 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME=NVIDIA_H200"
targets='[(t["sm"], t["device"], t["index"], t["driver_cuda_version"]) for t in d["targets"]]'

for n in 1 2; do
	# shellcheck disable=SC2086
	env $h200 FAKE_CUDA_COUNT=$n LD_LIBRARY_PATH="$both" "$PROBE" check --sm native --json "$FX/sm80_exe" >"$TMP/auto" 2>"$TMP/auto.err"
	rc_auto=$?
	# shellcheck disable=SC2086
	env $h200 FAKE_CUDA_COUNT=$n KIMG_NATIVE=cuda LD_LIBRARY_PATH="$both" "$PROBE" check --sm native --json "$FX/sm80_exe" >"$TMP/cuda" 2>"$TMP/cuda.err"
	rc_cuda=$?
	if [ "$rc_auto" = 1 ] && [ "$rc_cuda" = 1 ] && cmp -s "$TMP/auto" "$TMP/cuda" && cmp -s "$TMP/auto.err" "$TMP/cuda.err"; then
		ok "$n uniform GPU(s): NVML's answer is the driver's, byte for byte (exit 1: sm80_exe cannot run on 9.0)"
	else
		fail "$n uniform GPU(s): auto (exit $rc_auto) and KIMG_NATIVE=cuda (exit $rc_cuda) differ" "$(diff "$TMP/auto" "$TMP/cuda" | head -5)"
	fi
	cp "$TMP/auto" "$TMP/out"
	expect_json "$n uniform GPU(s): each stand-in H200 with the driver library's CUDA version" \
		"$targets == [('9.0', 'NVIDIA_H200', i, '13.0') for i in range($n)]"
done

# cuInit fails: NVML answers without it; asking the driver reports it.
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$both" run env $h200 FAKE_CUDA_INIT_ERROR=999 "$PROBE" check --sm native --json "$FX/sm80_exe"
expect_rc 1 "cuInit failing: the NVML path does not call it"
expect_json "cuInit failing: targets from NVML" "$targets == [('9.0', 'NVIDIA_H200', 0, '13.0')]"
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$both" run env $h200 FAKE_CUDA_INIT_ERROR=999 KIMG_NATIVE=cuda "$PROBE" check --sm native "$FX/sm80_exe"
expect_rc 2 "KIMG_NATIVE=cuda: the driver is asked"
expect_grep "KIMG_NATIVE=cuda: cuInit's failure named" "$TMP/err" "--sm native: cuInit failed"

# Where NVML's answer could differ from CUDA's, the driver answers (and
# its cuInit failure shows that it was asked).
for case in "CUDA_VISIBLE_DEVICES=0:CUDA_VISIBLE_DEVICES set (CUDA's numbering)" \
	"FAKE_NVML_SM=87 FAKE_CUDA_SM=87:a Tegra compute capability (only the driver knows integrated)" \
	"FAKE_NVML_MIG=1:a GPU in MIG mode (CUDA sees its instances)" \
	"FAKE_NVML_FAIL=1:NVML failing"; do
	envs=${case%%:*} what=${case#*:}
	# shellcheck disable=SC2086
	LD_LIBRARY_PATH="$both" run env $h200 $envs FAKE_CUDA_INIT_ERROR=999 "$PROBE" check --sm native "$FX/sm80_exe"
	expect_rc 2 "$what: the driver is asked"
	expect_grep "$what: cuInit's failure named" "$TMP/err" "--sm native: cuInit failed"
done
# No NVML at all: the driver answers.
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$FAKE" run env $h200 FAKE_CUDA_COUNT=1 "$PROBE" check --sm native --json "$FX/sm80_exe"
expect_json "no NVML: the driver's answer" "$targets == [('9.0', 'NVIDIA_H200', 0, '13.0')]"

# ---- the GPUs asked while the walk begins ----
# With workers, --sm native is asked on a thread of its own while the tree
# is listed and read (probe/targets_async.c). An nvmlInit made slow (300
# ms) has the workers wait for it, the small files held back meanwhile and
# the large ones (multi_exe padded to 40 MiB, a damaged wheel) read; a
# failing one calls the run off. The oracle is -j 1, which asks first and
# walks after.
mkdir -p "$TMP/tree/large"
cp -r "$FX"/. "$TMP/tree/"
cp "$FX/multi_exe" "$TMP/tree/large/libcublasLt.so.13"
truncate -s 40M "$TMP/tree/large/libcublasLt.so.13"
# and a large wheel (20 MiB stored) with a damaged member, whose error
# line is written before any wait: a run called off drops it
python3 - "$FX/libtwo.so" "$TMP/tree/large/damaged.whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w") as z:
    z.writestr(zipfile.ZipInfo("pkg/zeros.bin"), b"\0" * (20 << 20))
    z.write(sys.argv[1], "pkg/lib/libtwo.so", compress_type=zipfile.ZIP_DEFLATED)
    i = z.getinfo("pkg/lib/libtwo.so")
b = bytearray(open(sys.argv[2], "rb").read())
off = i.header_offset + 30 + len(i.filename.encode()) + len(i.extra)
for k in range(off + 10, off + 200):
    b[k] ^= 0x5a  # its deflate stream
open(sys.argv[2], "wb").write(b)
PY
ln -s "$TMP/nowhere" "$TMP/tree/dangling"
mkdir -p "$TMP/empty"
# same_as_j1 WHAT ENV... -- ARGS...: stdout, stderr and exit of -j 4 and -j 7 are -j 1's
same_as_j1() {
	local what=$1 envs=() diff=""; shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	LD_LIBRARY_PATH="$both" env "${envs[@]}" "$PROBE" check "$@" -j 1 >"$TMP/o1" 2>"$TMP/e1"
	local rc1=$?
	case " $* " in *" --json "*) json_collect check "$TMP/o1" "$what" ;; esac
	for j in 4 7; do
		LD_LIBRARY_PATH="$both" env "${envs[@]}" "$PROBE" check "$@" -j $j >"$TMP/oN" 2>"$TMP/eN"
		local rcN=$?
		cmp -s "$TMP/o1" "$TMP/oN" && cmp -s "$TMP/e1" "$TMP/eN" && [ "$rc1" -eq "$rcN" ] || diff="$diff -j $j"
	done
	if [ -z "$diff" ]; then ok "$what: -j 4 and -j 7 as -j 1 ($(wc -c <"$TMP/o1") bytes, $(wc -l <"$TMP/e1") error lines, exit $rc1)"
	else fail "$what: differs from -j 1:$diff" "$(diff "$TMP/o1" "$TMP/oN" | head -5; diff "$TMP/e1" "$TMP/eN" | head -5)"; fi
}
# shellcheck disable=SC2086
{
	same_as_j1 "native asked while the walk begins, text" $h200 FAKE_NVML_INIT_MS=300 -- --sm native "$TMP/tree"
	same_as_j1 "native asked while the walk begins, JSON" $h200 FAKE_NVML_INIT_MS=300 -- --sm native --json "$TMP/tree"
	same_as_j1 "native and a listed GPU, two lists, JSON" $h200 FAKE_NVML_INIT_MS=100 -- --sm 8.0 --sm native,12.0 --json "$TMP/tree" "$FX/sm80.cubin"
	same_as_j1 "native asked, only problems: the JSON header first" $h200 FAKE_NVML_INIT_MS=100 -- --sm native --json "$TMP/tree/dangling" "$TMP/none"
	same_as_j1 "native asked, an empty directory: the JSON header alone" $h200 FAKE_NVML_INIT_MS=100 -- --sm native --json "$TMP/empty"
	same_as_j1 "native failing: the run called off, its error alone" $h200 FAKE_NVML_INIT_MS=200 FAKE_NVML_FAIL=1 FAKE_CUDA_INIT_ERROR=999 -- --sm native --json "$TMP/tree"
	same_as_j1 "native failing, text" $h200 FAKE_NVML_FAIL=1 FAKE_CUDA_INIT_ERROR=999 -- --sm native "$TMP/tree"
}
expect_grep "native failing: the error is cuInit's" "$TMP/eN" "--sm native: cuInit failed"
if [ ! -s "$TMP/oN" ] && [ "$(wc -l <"$TMP/eN")" -eq 1 ]; then ok "native failing: no output, one error line"
else fail "native failing: output or other errors: $(head -c 300 "$TMP/oN" "$TMP/eN")"; fi

LD_LIBRARY_PATH="$both" run env KIMG_NATIVE=nvml "$PROBE" check --sm native "$FX/sm80_exe"
expect_rc 2 "KIMG_NATIVE=nvml refused"
expect_grep "KIMG_NATIVE: the message" "$TMP/err" "kimg-probe: KIMG_NATIVE='nvml': expected 'cuda' (ask the CUDA driver) or 'auto'"

finish
