#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what kimg needs to build and test on Debian/Ubuntu (run as root or with sudo);
# with --aarch64 also what make test-aarch64 needs.
# The CUDA toolkit (nvcc) is used only to build test fixtures; it is expected at
# /usr/local/cuda (NVIDIA's installer) or on PATH, and the script stops with a
# message when neither holds CUDA 12.9 or newer (Debian's own toolkit is too old:
# see below).
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# What each package is for (docs/development.md §1 lists the same):
#   build-essential pkg-config        gcc, make; pkg-config finds Check
#   check libsubunit-dev              the unit-test framework (Check) and its subunit link dependency
#   libzstd1 liblz4-1                 payload decoders, dlopen()ed by kimg and by the fuzz targets
#   zlib1g                            wheel/zip members (inflate), dlopen()ed
#   libarchive13                      conda packages and tarballs, dlopen()ed
#   libunwind8                        the shim's host stacks (dlopen()ed; backtrace() otherwise)
#   clang libclang-rt-dev             the libFuzzer targets (make fuzz)
#   python3 binutils file zip         test scripts: wheels, objdump/readelf/nm checks, file types
#   python3-dev                       Python.h for the C extension tests/shim/python.sh builds (frames read
#                                     with the GIL released)
#   python3-pytest                    tests/api/python.sh runs the pytest fixture example of docs/api.md
#   python3-venv                      the wheel's test: pip install --no-index into a fresh venv
#   groff-base man-db bsdextrautils   the man-page tests (groff, man -l, col)
#   zstd                              tests/probe/archives.sh: the .tar.zst inside a .conda
#   git                               make sdist / make release (git archive), SOURCE_DATE_EPOCH (git log)
#   python3-yaml                      tests/probe/cluster.sh: the pasted Kubernetes affinity read back as YAML
#   python3-jsonschema                every JSON document the tests make, against docs/schema/
#                                     (tests/schema_check.py)
#   umoci skopeo                      tests/probe/images.sh: container images made by real tools
#   bzip2                             tests/unit/test_tar_stream.c: a bzip2 layer (libarchive's)
#   time                              /usr/bin/time -v: peak RSS in images.sh and bench/image_bench.sh
#   strace                            tests/probe/images.sh: an image check writes nothing to disk
#   libssl3                           libcrypto.so.3: SHA-256 of image blobs, dlopen()ed (sys/digest.c)
pkgs="build-essential pkg-config check libsubunit-dev libzstd1 liblz4-1 libarchive13 libunwind8 \
clang libclang-rt-dev python3 python3-dev python3-venv python3-pytest binutils file zip groff-base man-db bsdextrautils zlib1g zstd \
python3-yaml python3-jsonschema umoci skopeo time strace libssl3 git bzip2"
# --aarch64 (CI uses it), for make test-aarch64: the cross compiler,
# qemu-user, and the aarch64 run-time libraries kimg opens, through Debian
# multiarch (it adds arm64 as a foreign architecture, hence opt-in).
if [ "${1:-}" = --aarch64 ]; then
	pkgs="$pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static libzstd1:arm64 liblz4-1:arm64 zlib1g:arm64 libarchive13:arm64"
	dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
fi
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq $missing
fi
# The fixtures need a toolkit that knows family targets (sm_100f, CUDA 12.9)
# and --compress-mode; Debian's own nvidia-cuda-toolkit (11.8 in bookworm,
# non-free) is too old, so it is not tried.
nvcc=$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
if [ ! -x "$nvcc" ]; then
	echo "setup: nvcc not found on PATH or at /usr/local/cuda/bin: install NVIDIA's CUDA toolkit 12.9 or" >&2
	echo "setup: newer (make test and make demo build their fixtures with it; plain make needs no toolkit)" >&2
	exit 1
fi
ver=$("$nvcc" --version | sed -n 's/.*release \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p')
# shellcheck disable=SC2086 # two words on purpose
set -- $ver
if [ $# -ne 2 ] || [ "$1" -lt 12 ] || { [ "$1" -eq 12 ] && [ "$2" -lt 9 ]; }; then
	echo "setup: $nvcc is CUDA ${1:-?}.${2:-?}; the test fixtures need CUDA 12.9 or newer" >&2
	exit 1
fi
echo "setup: ok (nvcc $1.$2 at $nvcc)"
