#!/usr/bin/env bash
# Installs what kimg needs to build and test on Debian/Ubuntu (run as root or with sudo).
# The CUDA toolkit (nvcc) is used only to build test fixtures; it is expected at
# /usr/local/cuda (NVIDIA's installer) or on PATH, and Debian's nvidia-cuda-toolkit
# is tried when neither exists.
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# What each package is for (the README lists the same):
#   build-essential pkg-config        gcc, make; pkg-config finds Check
#   check libsubunit-dev              the unit-test framework (Check) and its subunit link dependency
#   libzstd1 liblz4-1                 payload decoders, dlopen()ed by kimg and by the fuzz targets
#   libarchive13                      wheel/zip reading, dlopen()ed
#   libunwind8                        the shim's host stacks (dlopen()ed; backtrace() otherwise)
#   clang libclang-rt-dev             the libFuzzer targets (make fuzz)
#   python3 binutils file zip         test scripts: wheels, objdump/readelf/nm checks, file types
#   groff-base man-db bsdextrautils   the man-page tests (groff, man -l, col)
pkgs="build-essential pkg-config check libsubunit-dev libzstd1 liblz4-1 libarchive13 libunwind8 \
clang libclang-rt-dev python3 binutils file zip groff-base man-db bsdextrautils"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq $missing
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
	echo "setup: nvcc not found; trying Debian's nvidia-cuda-toolkit" >&2
	$SUDO apt-get install -y -qq nvidia-cuda-toolkit || {
		echo "setup: install the CUDA toolkit (nvcc >= 12.9) to build the test fixtures" >&2
		exit 1
	}
fi
echo "setup: ok"
