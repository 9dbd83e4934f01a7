#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python API (packaging/python/kimg/_api.py) and the examples of
# docs/api.md, run as written: from the source tree (KIMG_API_LIB, PYTHONPATH)
# and from the wheel installed into a fresh venv together with a wheel
# holding an extension module with sm_80 code only (tests/api/src/
# kimgtest_ext.cu, built here with nvcc). The oracle is docs/rules.md: sm_80
# SASS fails on 9.0 with 209 [S1] and runs on 8.0 and 8.6; compute_100 PTX
# fails on 9.0 with 218 [P3]. `native` is the stand-in driver and NVML
# (tests/fake_cuda) made an sm_80 or an sm_90 GPU.
. "$(dirname "$0")/../lib.bash" probe
API=$BUILD_DIR/libkimgapi.so
require "$API" "make"
fake_standin "$FAKE/libcuda.so.1"
fake_standin "$FAKE_NVML/libnvidia-ml.so.1"
PY=python3
tree() { env KIMG_API_LIB="$API" KIMG_PROBE="$BUILD_DIR/kimg-probe" PYTHONPATH="$ROOT/packaging/python" "$@"; }
gpu() { # gpu SM CMD...: CMD with the stand-ins as one GPU of compute capability SM/10
	env FAKE_CUDA_SM="$1" FAKE_CUDA_DRIVER=13000 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME="NVIDIA_SM$1" FAKE_CUDA_COUNT=1 \
		LD_LIBRARY_PATH="$FAKE:$FAKE_NVML" "${@:2}"
}

# ---- the API from the tree ----
got=$(tree $PY - "$FX" "$ROOT/README.md" <<'PY' 2>&1
import errno, os, sys, kimg
fx = sys.argv[1]
out = []
a = kimg.can_run(fx + "/sm80.cubin", sm="9.0"); out.append((a.runs, bool(a), a.error, a.error_name, a.modules[0]["verdicts"][0]["rule"], a.fix.startswith("nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90")))
a = kimg.can_run(fx + "/sm80.cubin", sm="8.6"); out.append((a.runs, a.error, a.fix, a.modules[0]["verdicts"][0]["image"]))
a = kimg.can_run(fx + "/compute100.ptx", sm=["9.0"]); out.append((a.runs, a.error, a.modules[0]["verdicts"][0]["rule"]))
a = kimg.can_run("/bin/true", sm="9.0"); out.append((a.runs, a.error, a.modules, a.fix))
a = kimg.can_run(fx + "/compute80.ptx", sm="8.6", driver="12.4"); out.append((a.runs, a.error))
for bad in (dict(path=fx + "/none", sm="9.0"), dict(path=sys.argv[2], sm="9.0"), dict(path=fx + "/sm80.cubin", sm="86.0")):
    try:
        kimg.can_run(**bad); out.append("no error")
    except kimg.KimgError as e:
        out.append((e.code, e.errno))
for obj in (kimg, os):
    try:
        kimg.can_run_module(obj); out.append("no error")
    except ValueError as e:
        out.append("ValueError")
import ctypes
a = kimg.can_run_module(ctypes.CDLL(fx + "/libtwo.so"), sm="9.0"); out.append((a.runs, a.error, a.path == fx + "/libtwo.so"))
for o in out: print(o)
PY
)
expect_eq "kimg.can_run from the tree: the fixtures' answers, errors as KimgError, modules that are not extensions refused" \
"(False, False, 209, 'CUDA_ERROR_NO_BINARY_FOR_GPU', 'S1', True)
(True, None, None, 'sm_80')
(False, 218, 'P3')
(True, None, [], None)
(False, 222)
(-2, 2)
(-4008, None)
(-22, 22)
ValueError
ValueError
(False, 209, True)" "$got"
expect_eq "kimg.can_run sm=native (the default) with an sm_80 stand-in GPU: runs" "True None" \
	"$(gpu 80 env KIMG_API_LIB="$API" PYTHONPATH="$ROOT/packaging/python" $PY -c 'import sys, kimg; a = kimg.can_run(sys.argv[1]); print(a.runs, a.error)' "$FX/sm80.cubin" 2>&1)"
expect_eq "kimg.can_run sm=native with no driver: KimgError naming libcuda" "-2 True" \
	"$(env LD_LIBRARY_PATH=/nonexistent KIMG_API_LIB="$API" PYTHONPATH="$ROOT/packaging/python" $PY -c '
import sys, kimg
try: kimg.can_run(sys.argv[1])
except kimg.KimgError as e: print(e.code, "libcuda.so.1" in str(e))' "$FX/sm80.cubin" 2>&1)"
got=$(tree $PY -c 'import sys, kimg; d = kimg.check_environment(sm="9.0", dirs=[sys.argv[1]]); print(d["exit_status"], d["ok"], d["summary"]["cannot_run"], sorted(d)[:3])' "$FX" 2>&1)
expect_match "kimg.check_environment(dirs=fixtures, sm=9.0): doctor's document, exit 1, failures counted" "^1 False [1-9][0-9]* \[" "$got"

# ---- the extension module of a wheel (sm_80 code only; make builds it
# with nvcc against python3's headers: test-programs) ----
E=$TMP/ext
mkdir -p "$E"
require "$BUILD_DIR/tests/py/kimgtest_ext.so" "make BUILD=$BUILD test-programs (nvcc, python3-dev)"
cp "$BUILD_DIR/tests/py/kimgtest_ext.so" "$E/"
got=$(tree env PYTHONPATH="$ROOT/packaging/python:$E" $PY -c '
import kimg, kimgtest_ext
for sm in ("9.0", "8.0"):
    a = kimg.can_run_module(kimgtest_ext, sm=sm)
    print(sm, a.runs, a.error, a.path == kimgtest_ext.__file__, len(a.modules))' 2>&1) # 2: CUDA 13's device-link stub, then the code
expect_eq "kimg.can_run_module on an imported extension with sm_80 code: 209 on 9.0, runs on 8.0, found by its __file__" \
	"9.0 False 209 True 2
8.0 True None True 2" "$got"

# ---- the examples of docs/api.md, as written ----
python3 - "$ROOT/docs/api.md" "$TMP/doc" <<'PY'
import os, re, sys
text = open(sys.argv[1]).read()
os.makedirs(sys.argv[2], exist_ok=True)
blocks = re.findall(r"```(c|python)\n(.*?)```", text, re.S)
names = {"c": "ask.c"}
for lang, body in blocks:
    if lang == "c": name = "ask.c"
    elif "def pick_attention" in body: name = "guard.py"
    elif body.startswith("# conftest.py"): name = "conftest.py"
    elif body.startswith("# test_my_ext.py"): name = "test_my_ext.py"
    else: continue
    open(os.path.join(sys.argv[2], name), "w").write(body)
PY
D=$TMP/doc
expect_eq "docs/api.md has the C example, the dispatch guard and the pytest fixture" "ask.c conftest.py guard.py test_my_ext.py" \
	"$(ls "$D" | tr '\n' ' ' | sed 's/ $//')"
# my_ext: the sm_80 extension under the example's name
mkdir -p "$E/alias" && printf 'from kimgtest_ext import *\nimport kimgtest_ext as _e\n__file__ = _e.__file__\n' >"$E/alias/my_ext.py"
# compiled here, not by make: the example as docs/api.md has it now is what is tested
if gcc -std=c11 -I"$ROOT/api" -o "$D/ask" "$D/ask.c" -L"$BUILD_DIR" -l:libkimgapi.so -Wl,-rpath,"$BUILD_DIR" 2>"$TMP/cc.log"; then
	got=$("$D/ask" "$FX/sm80.cubin" 9.0); rc=$?
	expect_match "docs C example: sm_80 on 9.0 prints the error, the reason and the fix; exit 1" \
		"^1 error 209: module 1 .*\[S1, F0\].*fix: nvcc -gencode" "$rc $(tr '\n' ' ' <<<"$got")"
	got=$(gpu 86 "$D/ask" "$FX/sm80.cubin"); rc=$?
	expect_match "docs C example, native (an sm_86 stand-in): runs; exit 0" "^0 runs: runs on 8\.6" "$rc $got"
else
	fail "the docs' C example compiles against api/kimg.h and libkimgapi.so" "$(head -3 "$TMP/cc.log")"
fi
guard() { gpu "$1" env KIMG_API_LIB="$API" PYTHONPATH="$ROOT/packaging/python:$E:$E/alias" $PY "$D/guard.py" 2>&1; }
expect_match "dispatch guard on an sm_80 GPU: the CUDA path" "^path: cuda$" "$(guard 80 | tail -1)"
got=$(guard 90)
expect_match "dispatch guard on an sm_90 GPU: names the reason (209 [S1]) and the fix" \
	"my_ext cannot run here: module [0-9]+ .* cannot run on 9\.0 \(NVIDIA_SM90\): .*\[S1, F0\] -> error 209.*fix: nvcc -gencode" "$(tr '\n' ' ' <<<"$got")"
expect_match "dispatch guard on an sm_90 GPU without Triton: the CPU path" "^path: (cpu|triton)$" "$(tail -1 <<<"$got")"
got=$(env LD_LIBRARY_PATH=/nonexistent KIMG_API_LIB="$API" PYTHONPATH="$ROOT/packaging/python:$E:$E/alias" $PY "$D/guard.py" 2>&1)
expect_match "dispatch guard without a driver: the CPU path, and why" "no GPU: sm native: cannot load libcuda.*path: cpu" "$(tr '\n' ' ' <<<"$got")"

PYTEST=
for p in $PY /usr/bin/python3; do "$p" -m pytest --version >/dev/null 2>&1 && { PYTEST=$p; break; }; done
if [ -z "$PYTEST" ]; then
	missing "pytest" "python3-pytest (scripts/setup-debian.sh) runs the docs' fixture example" 2
else
	pt() { (cd "$D" && env KIMG_API_LIB="$API" PYTHONPATH="$ROOT/packaging/python:$E:$E/alias" "$@" "$PYTEST" -m pytest -q -p no:cacheprovider test_my_ext.py 2>&1); }
	got=$(pt env KIMG_SM=8.0,8.6); rc=$?
	expect_match "pytest fixture, KIMG_SM=8.0,8.6: passes" "^0 .*1 passed" "$rc $(tr '\n' ' ' <<<"$got")"
	got=$(pt env KIMG_SM=9.0); rc=$?
	expect_match "pytest fixture, KIMG_SM=9.0: fails with kimg's reason and fix" \
		"^1 .*my_ext: module [0-9]+ .*cannot run on 9\.0.*error 209.*fix: nvcc.*1 failed" "$rc $(tr '\n' ' ' <<<"$got")"
fi

# ---- from the wheels, in a fresh venv: kimg and a wheel holding the extension ----
version=$(cat "$ROOT/VERSION")
WHEEL=$ROOT/dist/kimg-$version-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
need "$WHEEL" "make wheel" || finish
python3 - "$E/kimgtest_ext.so" "$TMP/whl" <<'PY'
import base64, hashlib, os, sys, zipfile
so = open(sys.argv[1], "rb").read()
info = "kimgtest_ext-1.0.dist-info"
files = [("kimgtest_ext.so", so), (info + "/METADATA", b"Metadata-Version: 2.1\nName: kimgtest-ext\nVersion: 1.0\n"),
         (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: kimg tests\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n")]
h = lambda b: "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
rec = "".join("%s,%s,%d\n" % (n, h(b), len(b)) for n, b in files) + info + "/RECORD,,\n"
os.makedirs(sys.argv[2], exist_ok=True)
with zipfile.ZipFile(os.path.join(sys.argv[2], "kimgtest_ext-1.0-py3-none-linux_x86_64.whl"), "w") as z:
    for n, b in files + [(info + "/RECORD", rec.encode())]:
        z.writestr(n, b)
PY
V=$TMP/venv
if ! fresh_venv "$V"; then
	fail "python3 -m venv works (python3-venv)" "$(tail -3 "$TMP/venv.log")"; finish
fi
out=$("$V/bin/python" -m pip install -q --no-index --disable-pip-version-check "$WHEEL" "$TMP/whl/kimgtest_ext-1.0-py3-none-linux_x86_64.whl" 2>&1)
expect_eq "pip install --no-index of kimg's wheel and the extension's wheel into a fresh venv" "" "$out"
vpy() { (cd "$TMP" && env -u KIMG_API_LIB -u KIMG_PROBE -u PYTHONPATH "$@"); }
got=$(vpy "$V/bin/python" -c '
import kimg, kimgtest_ext
print(kimgtest_ext.__file__.endswith("site-packages/kimgtest_ext.so"), kimg._api._library_path().endswith("site-packages/kimg/libkimgapi.so"))
for sm in ("9.0", "8.0,8.6"):
    a = kimg.can_run_module(kimgtest_ext, sm=sm)
    print(sm, a.runs, a.error, a.modules[0]["images"][0]["arch"])' 2>&1)
expect_eq "installed: kimg.can_run_module on the installed wheel's extension, through the package's libkimgapi.so" \
	"True True
9.0 False 209 sm_80
8.0,8.6 True None sm_80" "$got"
got=$(gpu 90 env -u KIMG_API_LIB PYTHONPATH="$E/alias" "$V/bin/python" "$D/guard.py" 2>&1 | tail -1)
expect_match "installed: the docs' dispatch guard on an sm_90 stand-in takes the CPU path" "^path: (cpu|triton)$" "$got"
vpy "$V/bin/python" -m kimg check --sm 9.0 "$E/kimgtest_ext.so" >"$TMP/a" 2>&1; ra=$?
vpy "$V/bin/kimg-probe" check --sm 9.0 "$E/kimgtest_ext.so" >"$TMP/b" 2>&1; rb=$?
if [ "$ra" = 1 ] && [ "$rb" = 1 ] && cmp -s "$TMP/a" "$TMP/b"; then
	ok "installed: python -m kimg check = kimg-probe check on the extension (same text, exit 1)"
else
	fail "installed: python -m kimg check = kimg-probe check (exit $ra vs $rb)" "$(diff "$TMP/a" "$TMP/b" | head -4)"
fi
finish
