#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# old-glibc.sh: the packages on a real older system. Builds the x86-64 wheel,
# the .deb and the fixtures here, then, in a fresh Debian 11 root (bullseye,
# glibc 2.31; debootstrap --variant=minbase through scripts/ci/fresh-root.sh,
# its tarball cached), installs the wheel with pip --no-index into a venv
# and runs, with the installed kimg-probe and libkimg.so, the probe tests
# (tests/probe) and the stand-in-driver shim tests (tests/shim; the test
# programs and the stand-in driver are built there with Debian 11's gcc),
# then installs and removes the .deb with dpkg.
#
# Usage: scripts/ci/old-glibc.sh [--suite S] [--cache DIR] [--keep]
#   --suite S   Debian suite (default bullseye)
#   --cache DIR, --keep   passed to fresh-root.sh
#
# Needs root, debootstrap, nvcc (the fixtures) and the Debian mirror (for the
# root's first build and its apt-get). Committed work only goes in (a fresh
# clone), plus dist/ and build/fixtures/ from here. Exit status: 0 when
# every test passed; the closing line is "old-glibc: N passed, N failed".
# Inside the root the script runs itself with --inside.
set -euo pipefail
me=old-glibc
. "$(dirname "$0")/../lib.sh"

# Tests that cannot run there, each with its reason (none may be skipped silently).
SKIP_threads="needs the ThreadSanitizer build of libkimg (make shim-tests), not the installed library"
SKIP_python="expects Python frames from the system python3, which is 3.9 here; shim/diag/pyframes.c reads CPython 3.10 and newer"
SKIP_stack="its Python-frame cases expect them from the system python3 (3.9 here; shim/diag/pyframes.c reads 3.10+); its other cases passed here"

inside() {
	export DEBIAN_FRONTEND=noninteractive
	echo "$me: $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -n1)"
	# The tests' own tools, the stand-in driver's compiler, and what kimg
	# opens at run time; nothing of kimg's comes from here.
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends python3 python3-venv python3-dev gcc libc6-dev make binutils \
		file zip zstd bzip2 libzstd1 liblz4-1 zlib1g libarchive13 >/tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 2; }
	local whl deb V=/opt/kimg-venv
	whl=$(ls dist/kimg-*-manylinux_2_17_x86_64.manylinux2014_x86_64.whl)
	deb=$(ls dist/kimg_*_amd64.deb)
	python3 -m venv "$V"
	"$V/bin/pip" install -q --no-index --disable-pip-version-check "$whl"
	echo "$me: installed ${whl##*/} into $V with pip $("$V/bin/pip" --version | cut -d' ' -f2) (python $("$V/bin/python" -c 'import platform; print(platform.python_version())'))"

	# The stand-ins (tests/fake_cuda/fake.mk), the test programs and the
	# 8-entry-window probe of jobs.sh, built here (test scaffolding); the
	# tests find them under $B.
	local B=build-old
	make -s BUILD=$B shim-test-programs $B/tests/kimg-probe-ahead8 >/tmp/make.log 2>&1 || { tail -20 /tmp/make.log; exit 2; }
	# The product under test: the wheel's files as pip installed them.
	cp "$V/bin/kimg-probe" "$B/kimg-probe"
	cp "$("$V/bin/python" -m kimg --libpath)" "$B/libkimg.so"
	ln -sfn ../build/fixtures "$B/fixtures"

	local passed=0 failed=0 failures=() s name var
	one() { # NAME CMD...
		echo "== $1"
		if "${@:2}"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$1"); fi
	}
	for s in tests/probe/*.sh tests/shim/*.sh; do
		name=$(basename "$s" .sh) var=SKIP_$(basename "$s" .sh)
		if [ -n "${!var:-}" ]; then echo "== $s: not run here: ${!var}"; continue; fi
		one "$s" env BUILD=$B KIMG_FIXTURES=$B/fixtures bash "$s"
	done
	py_preload() { # python -m kimg: the library loads into Debian 11's python3
		local out
		out=$("$V/bin/python" -m kimg --verbose python3 -c 'print("py ok")' 2>&1)
		echo "$out"
		grep -q '^kimg ' <<<"$out" && grep -qx 'py ok' <<<"$out"
	}
	run_status() { # the wheel's kimg-run: banner, the command's status kept
		local rc
		"$V/bin/kimg-run" --verbose sh -c 'exit 4' 2>"$TMP_LOG"; rc=$?
		cat "$TMP_LOG"
		[ "$rc" = 4 ] && grep -q '^kimg ' "$TMP_LOG"
	}
	deb_cycle() { # the .deb: install, run, purge leaves nothing
		dpkg -i "$deb" >/dev/null || return 1
		/usr/bin/kimg-probe scan build/fixtures/multi.fatbin | grep -q 'fatbin, 9 images' || return 1
		[ "$(env -u KIMG_LIB kimg-run --print-lib)" = /usr/lib/libkimg.so ] || return 1
		kimg-run --verbose true 2>&1 | grep -q '^kimg ' || return 1
		dpkg --purge kimg >/dev/null || return 1
		local f
		for f in /usr/bin/kimg-probe /usr/bin/kimg-run /usr/lib/libkimg.so /usr/share/man/man1/kimg-probe.1.gz /usr/share/doc/kimg; do
			[ ! -e "$f" ] || { echo "left behind: $f"; return 1; }
		done
		! dpkg -s kimg >/dev/null 2>&1 && echo "deb: installed, ran, purged"
	}
	TMP_LOG=$(mktemp)
	one "the wheel's python -m kimg preloads its library into Debian 11's python3" py_preload
	one "the wheel's kimg-run preloads its library and keeps the status" run_status
	one "dpkg -i ${deb##*/}, run, dpkg --purge leaves nothing" deb_cycle
	[ ${#failures[@]} -eq 0 ] || echo "$me: failed: ${failures[*]}"
	echo "$me: $passed passed, $failed failed ($(ldd --version | head -n1 | sed 's/.* //') glibc, kimg $(ls dist/*.whl | sed -n 's/.*kimg-\([^-]*\)-.*x86_64.*/\1/p'))"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}

if [ "${1:-}" = --inside ]; then
	inside
	exit
fi

suite=bullseye pass=()
while [ $# -gt 0 ]; do
	case $1 in
	--suite) suite=${2:?}; shift 2 ;;
	--cache) pass+=(--cache "${2:?}"); shift 2 ;;
	--keep) pass+=(--keep); shift ;;
	-h | --help) show_help "$0"; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
export PATH=/usr/local/cuda/bin:$PATH
make -C "$top" -s all fixtures wheel deb >/dev/null
# shellcheck disable=SC2086
exec "$top/scripts/ci/fresh-root.sh" --suite "$suite" ${pass[@]+"${pass[@]}"} --with dist --with build/fixtures \
	-- bash scripts/ci/old-glibc.sh --inside
