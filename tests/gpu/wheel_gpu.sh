#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The wheel on the GPU machine (offline: pip --no-index). Builds it with
# make wheel when dist/ has none for this machine, installs it into a fresh
# venv, checks that its kimg-run and python -m kimg use the package's
# library and that its kimg-probe reads the GPU, then runs the GPU smoke
# test (tests/gpu/quick_gpu.sh) with every program started through the
# installed kimg-run. Closing line (tests/lib.bash): "N passed, N failed, N skipped".
#
#   bash tests/gpu/wheel_gpu.sh [WHEEL]
set -u
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${BUILD:-build}
m=$(uname -m)
version=$(cat VERSION)
WHEEL=${1:-dist/kimg-$version-py3-none-manylinux_2_17_$m.manylinux2014_$m.whl}
# checks and totals: tests/lib.bash
. "$(dirname "$0")/../lib.bash"
EXPECTED_CHECKS=5
if [ ! -f "$WHEEL" ]; then
	make -s BUILD="$BUILD" wheel >"$BUILD-wheel.log" 2>&1 || { tail -20 "$BUILD-wheel.log"; fail "make wheel"; finish; }
fi
echo "wheel: $WHEEL"
V=$PWD/$BUILD/gpu-wheel-venv
rm -rf "$V"
if python3 -m venv "$V" >/dev/null 2>&1; then
	check "pip install --no-index of the wheel into a fresh venv" eval "'$V/bin/pip' install -q --no-index --disable-pip-version-check '$WHEEL'"
else
	# No ensurepip (python3-venv) here: a venv without pip, filled by the system's pip.
	rm -rf "$V" && python3 -m venv --without-pip "$V"
	check "pip install --no-index of the wheel into a fresh venv (no ensurepip: system pip --target)" eval \
		"python3 -m pip install -q --no-index --disable-pip-version-check --target '$V/lib/python3-kimg' '$WHEEL'"
	export PYTHONPATH=$V/lib/python3-kimg
	mkdir -p "$V/bin"
	for t in kimg-run kimg-probe; do ln -sf "$V/lib/python3-kimg/bin/$t" "$V/bin/$t"; done
fi
PKG=$("$V/bin/python" -c 'import kimg, os; print(os.path.dirname(kimg.__file__))' 2>/dev/null)
check "installed kimg-run preloads the package's libkimg.so" eval "[ \"\$(env -u KIMG_LIB '$V/bin/kimg-run' --print-lib)\" = '$PKG/libkimg.so' ]"
check "python -m kimg --libpath prints the package's libkimg.so" eval "[ \"\$('$V/bin/python' -m kimg --libpath)\" = '$PKG/libkimg.so' ]"
check "installed kimg-probe device reads the GPU (a device with an sm_ and a CUDA driver version)" eval \
	"'$V/bin/kimg-probe' device --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"devices\"]); sys.exit(0 if d[\"devices\"] and d[\"devices\"][0][\"sm\"].startswith(\"sm_\") and d[\"driver\"][\"cuda_version\"] else 1)'"
echo "== tests/gpu/quick_gpu.sh through $V/bin/kimg-run"
check "quick_gpu.sh through the installed kimg-run" env KIMG_RUN="$V/bin/kimg-run" BUILD="$BUILD" bash tests/gpu/quick_gpu.sh
finish
