#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-aarch64: the cross-built kimg-probe and libkimg.so under
# qemu-user, against aarch64 fixtures (tests/fixtures/aarch64.mk) and the
# cross-built stand-in driver and shim test programs. Runs tests/probe/*.sh
# and the tests/shim/*.sh that use those programs, then the aarch64 wheel
# (tests/aarch64/wheel.sh); each aarch64 program is
# reached through tests/aarch64/qemu_exec.c, so no binfmt_misc entry is
# needed. Prints "N passed, N failed" like tests/run.sh.
set -u
BUILD=${BUILD:-build/aarch64}
ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$ROOT" || exit 2
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
export KIMG_QEMU=${KIMG_QEMU:-qemu-aarch64-static}
# One C library for the guest, loader and libc.so.6 of the same build: the
# multiarch one (libc6:arm64, which the multiarch libzstd1:arm64 ... pull
# in) where it is installed, else the cross compiler's. qemu with the
# cross compiler's loader found the multiarch libc.so.6 through
# /etc/ld.so.cache: two builds of glibc 2.36 whose internal layouts differ,
# and the first pthread_create walked a stack list that was never set up
# (the "threaded walk spins under qemu" of earlier runs; a five-line
# pthread program hung the same way).
if [ -z "${QEMU_LD_PREFIX:-}" ]; then
	if [ -x /lib/ld-linux-aarch64.so.1 ]; then QEMU_LD_PREFIX=/; else QEMU_LD_PREFIX=/usr/aarch64-linux-gnu; fi
fi
export QEMU_LD_PREFIX

# Tests that cannot run here, each with its reason.
declare -A SKIP=(
	[archives]="its inflation-limit cases need libtwo.so above 100 KiB (nvcc links cudart statically into the x86-64 one; the aarch64 one carries only the device code)"
	[threads]="needs a ThreadSanitizer libkimg and program; not cross-built"
	[runtime]="reads the programs' symbol versions (in the view they are qemu stand-ins)"
	[stack]="its probe library is loaded by the host's python3 (an x86-64 process); its programs are not cross-built"
	[python]="runs the host's python3 (an x86-64 process) under the library"
	[alloc_fail]="preloads tests/probe/src/fail_alloc.c, built for the host only (an x86-64 library cannot enter the aarch64 probe)"
	[security]="assembles a chroot with ldd's list and runs its program setuid there; the qemu stand-in and qemu are not in that root"
)

fail_setup() { echo "FAIL - $1"; echo "0 passed, 1 failed"; exit 1; }
command -v "$KIMG_QEMU" >/dev/null || fail_setup "$KIMG_QEMU not found (scripts/setup-debian.sh --aarch64)"
[ -x "$QEMU_LD_PREFIX/lib/ld-linux-aarch64.so.1" ] || fail_setup "no aarch64 C library in $QEMU_LD_PREFIX (scripts/setup-debian.sh --aarch64)"
for f in kimg-probe tests/kimg-probe-ahead8 libkimg.so qemu_exec fake_cuda/libcuda.so.1 shim-tests/drv_dl fixtures/multi_exe; do
	[ -e "$B/$f" ] || fail_setup "$B/$f missing (make ARCH=aarch64 test-aarch64 builds it)"
done
for l in libzstd.so.1 liblz4.so.1 libz.so.1 libarchive.so.13; do
	[ -e "/usr/lib/aarch64-linux-gnu/$l" ] || [ -e "$QEMU_LD_PREFIX/lib/$l" ] ||
		fail_setup "no aarch64 $l (scripts/setup-debian.sh --aarch64 installs it through multiarch)"
done
machine=$(od -An -j18 -N2 -tu2 "$B/kimg-probe" | tr -d ' ')
[ "$machine" = 183 ] || fail_setup "$B/kimg-probe is not an aarch64 ELF (e_machine $machine)"

# A view of the build where each aarch64 program is its qemu stand-in.
V=$B/qemu-view
rm -rf "$V" && mkdir -p "$V/shim-tests" "$V/tests"
wrap() { cp "$B/qemu_exec" "$V/$1" && ln -s "$B/$1" "$V/$1.aarch64"; }
wrap kimg-probe
wrap tests/kimg-probe-ahead8 # jobs.sh: the listers' back-pressure
for p in "$B"/shim-tests/*; do
	# libraries and folders of libraries (disp/) as they are; programs wrapped
	if [ -d "$p" ] || [[ $p == *.so ]]; then ln -s "$p" "$V/shim-tests/"; else wrap "shim-tests/${p##*/}"; fi
done
# the probe tests' LD_PRELOAD helpers (Makefile PROBE_TEST_PRELOADS)
for p in "$B"/tests/*.so; do [ -e "$p" ] && ln -s "$p" "$V/tests/"; done
ln -s "$B/libkimg.so" "$V/libkimg.so"
# the cross-built stand-ins (tests/fake_cuda/fake.mk)
ln -s "$B/fake_cuda" "$V/fake_cuda"
ln -s "$B/fake_nvml" "$V/fake_nvml"
ln -s "$B/fixtures" "$V/fixtures"
# exports.sh reads the hooks layer's objects (their glibc versions)
ln -s "$B/obj" "$V/obj"
# What a test compiles while it runs (exports.sh's planted objects) must be
# aarch64 too: it takes ${CC:-gcc}.
export CC=${CROSS:-aarch64-linux-gnu-}gcc
export KIMG_QEMU_USER=$KIMG_QEMU
echo "== aarch64 build in $B, under $("$KIMG_QEMU" --version | head -n1), C library from $QEMU_LD_PREFIX"

passed=0 failed=0 failures=()
for s in tests/probe/*.sh tests/shim/*.sh; do
	name=$(basename "$s" .sh)
	if [ -n "${SKIP[$name]:-}" ]; then
		echo "== $s: not run under qemu: ${SKIP[$name]}"
		continue
	fi
	echo "== $s"
	if env BUILD="$V" KIMG_FIXTURES="$V/fixtures" KIMG_LIB="$V/libkimg.so" bash "$s"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1)) failures+=("$s")
	fi
done
echo "== tests/aarch64/wheel.sh"
if V=$V bash tests/aarch64/wheel.sh; then passed=$((passed + 1)); else failed=$((failed + 1)) failures+=(tests/aarch64/wheel.sh); fi
[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
