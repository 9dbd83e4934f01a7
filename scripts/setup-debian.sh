#!/usr/bin/env bash
# Installs what kimg needs to build and test on Debian/Ubuntu (run as root or with sudo).
# The CUDA toolkit (nvcc) is used only to build test fixtures; it is expected at
# /usr/local/cuda (NVIDIA's installer) or on PATH, and Debian's nvidia-cuda-toolkit
# is tried when neither exists.
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
pkgs="build-essential pkg-config check libsubunit-dev libzstd1 liblz4-1 libarchive13 libunwind8 \
clang libclang-rt-dev python3 binutils groff-base file zip"
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
