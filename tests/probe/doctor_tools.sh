#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# doctor's toolchains, JIT caches and CUDA switches (probe/doctor_tools.c,
# doctor_caches.c). The oracles: the release each fake tool prints (a shell
# script answering --version), the core's toolkit table as docs/rules.md §7
# states it (sm_121a from CUDA 12.9, sm_110a from 13.0, sm_90a from 12.0),
# and the fixtures' recipes (sm_80 SASS cannot run on 9.0 [S1]; sm_90a runs
# on 9.0 alone [S3]; compute_100 PTX cannot run on 9.0 [P3]). HOME, PATH
# and the toolkit directories are the test's own, so nothing of this
# machine's toolchains or caches is read.
. "$(dirname "$0")/../lib.bash" probe
H=$TMP/home SITE=$TMP/site TK=$TMP/toolkits
mkdir -p "$H" "$SITE/triton/backends/nvidia/bin" "$TK/cuda-13.0/bin" "$TK/cuda-11.8/bin" "$TMP/bin"
# fake_tool PATH RELEASE: a program whose --version says "release RELEASE"
fake_tool() {
	printf '#!/bin/sh\n[ "$1" = --version ] || exit 2\necho "%s: NVIDIA (R) compiler"\necho "Cuda compilation tools, release %s, V%s.1"\n' \
		"${1##*/}" "$2" "$2" >"$1"
	chmod +x "$1"
}
fake_tool "$SITE/triton/backends/nvidia/bin/ptxas" 12.8
fake_tool "$TK/cuda-13.0/bin/ptxas" 13.0
fake_tool "$TK/cuda-13.0/bin/nvcc" 13.0
fake_tool "$TK/cuda-11.8/bin/nvcc" 11.8
fake_tool "$TMP/bin/nvcc" 11.8
doc() { run_capture env -i HOME="$H" PATH="$TMP/bin:/usr/bin:/bin" KIMG_TOOLKIT_DIRS="$TK/cuda-13.0:$TK/cuda-11.8" "$@"; }
tools='[(t["kind"], t["source"], t["release"], t["cannot_target"], t["used"]) for t in d["toolchains"]]'

# ---- Triton's bundled ptxas against each GPU ----
doc "$PROBE" doctor --json --sm 12.1,9.0 "$SITE"
expect_rc 1 "Triton's ptxas of CUDA 12.8 on a 12.1 GPU: fails"
expect_json "every tool found once, with its release; Triton's 12.8 cannot target 12.1 (sm_121a needs 12.9)" \
	"$tools == [('triton_ptxas', 'triton', '12.8', ['12.1'], True), ('nvcc', 'PATH', '11.8', ['12.1'], True), ('ptxas', 'toolkit', '13.0', [], True), ('nvcc', 'toolkit', '13.0', [], True), ('nvcc', 'toolkit', '11.8', ['12.1'], True)]"
expect_json "the fix: TRITON_PTXAS_PATH with the found CUDA 13.0 ptxas" \
	"d['toolchains'][0]['fix'] == 'export TRITON_PTXAS_PATH=$TK/cuda-13.0/bin/ptxas (CUDA 13.0, targets every GPU here)' and d['toolchains'][0]['needs_release'] == '12.9'"
expect_json "summary: one Triton ptxas too old (in the status), two nvcc too old (named only)" \
	"(d['summary']['triton_ptxas_too_old'], d['summary']['build_tools_too_old'], d['ok']) == (1, 2, False)"
expect_json "an old nvcc's fix names the newer toolkit's nvcc" \
	"d['toolchains'][1]['fix'].startswith('build with $TK/cuda-13.0/bin/nvcc (CUDA 13.0) instead')"
doc "$PROBE" doctor --sm 12.1 "$SITE"
expect_grep "text: CANNOT TARGET with the arch Triton asks for" "$TMP/out" "Triton ptxas  CUDA 12.8  CANNOT TARGET 12.1 (sm_121a)  $SITE/triton/backends/nvidia/bin/ptxas [triton]"
expect_grep "text: ptxas's own message quoted" "$TMP/out" "ptxas fatal: Value 'sm_121a' is not defined for option 'gpu-name'"
expect_grep "text: the summary line of toolchains and caches" "$TMP/out" "toolchains and caches: 1 Triton ptxas cannot target a GPU here, 0 stale cached files (in the exit status)"
doc "$PROBE" doctor --json --sm 11.0 "$SITE"
expect_json "Thor (11.0): sm_110a needs CUDA 13.0, so 12.8 cannot" "d['toolchains'][0]['cannot_target'] == ['11.0'] and d['toolchains'][0]['needs_release'] == '13.0'"
doc "$PROBE" doctor --json --sm 9.0 "$SITE"
expect_rc 0 "Triton's 12.8 on 9.0 (sm_90a since 12.0), no cache, old nvcc fine for 9.0: ok"
expect_json "on 9.0 nothing is too old" "all(t['cannot_target'] == [] for t in d['toolchains']) and d['ok'] is True"
doc env TRITON_PTXAS_PATH="$TK/cuda-13.0/bin/ptxas" "$PROBE" doctor --json --sm 12.1 "$SITE"
expect_json "TRITON_PTXAS_PATH set: the ptxas it names is Triton's (13.0 ok), the bundled one listed as not used" \
	"$tools[:2] == [('triton_ptxas', 'TRITON_PTXAS_PATH', '13.0', [], True), ('triton_ptxas', 'triton', '12.8', ['12.1'], False)] and d['summary']['triton_ptxas_too_old'] == 0"
expect_json "TRITON_PTXAS_PATH is named among the CUDA switches" "[s['name'] for s in d['cuda_environment']] == ['TRITON_PTXAS_PATH']"
doc env KIMG_TOOLKIT_DIRS= "$PROBE" doctor --json --sm 12.1 "$SITE"
expect_json "no newer ptxas found: the fix names the release to install" \
	"d['toolchains'][0]['fix'].startswith('install a CUDA toolkit of 12.9 or newer and export TRITON_PTXAS_PATH=')"
# a GPU newer than the toolkit table (the driver's 13.5): no release is
# known to target it, so none of Triton's can, and none is named
doc env FAKE_CUDA_SM=135 FAKE_CUDA_DRIVER=13000 FAKE_CUDA_TEGRA=0 FAKE_CUDA_NAME=NVIDIA_NEXT FAKE_CUDA_COUNT=1 \
	LD_LIBRARY_PATH="$FAKE" "$PROBE" doctor --json "$SITE"
expect_json "a GPU of no toolkit row: Triton's ptxas cannot target it, needs_release null, the fix names no release" \
	"(d['toolchains'][0]['cannot_target'], d['toolchains'][0]['needs_release'], d['toolchains'][0]['fix'].startswith('install a CUDA toolkit of ? or newer')) == (['13.5'], None, True)"
# Triton 2.x layout, and a ptxas whose --version names no release
mkdir -p "$TMP/site2/triton/third_party/cuda/bin"
printf '#!/bin/sh\necho hello\n' >"$TMP/site2/triton/third_party/cuda/bin/ptxas"
chmod +x "$TMP/site2/triton/third_party/cuda/bin/ptxas"
doc "$PROBE" doctor --json --sm 12.1 "$TMP/site2"
expect_json "Triton 2.x's third_party/cuda/bin/ptxas is found; no release in its --version: not judged, said" \
	"(d['toolchains'][0]['kind'], d['toolchains'][0]['release'], d['toolchains'][0]['error'], d['toolchains'][0]['cannot_target']) == ('triton_ptxas', None, '--version names no CUDA release', [])"
doc "$PROBE" doctor --json "$SITE"
expect_json "no GPU and no --sm: the tools are listed with their releases, nothing judged" \
	"[t['release'] for t in d['toolchains']] == ['12.8', '11.8', '13.0', '13.0', '11.8'] and all(t['cannot_target'] == [] for t in d['toolchains'])"
# Several bundled ptxas (Triton 3.x ships ptxas and ptxas-blackwell), made
# in an order that is not their names'; files that are no ptxas beside them
mkdir -p "$TMP/site3/triton/backends/nvidia/bin"
for n in ptxas-z ptxas-blackwell ptxas ptxas-m ptxas-a; do fake_tool "$TMP/site3/triton/backends/nvidia/bin/$n" 12.8; done
fake_tool "$TMP/site3/triton/backends/nvidia/bin/cuobjdump" 12.8
fake_tool "$TMP/site3/triton/backends/nvidia/bin/ptxa-old" 12.8
doc env KIMG_TOOLKIT_DIRS= "$PROBE" doctor --json --sm 9.0 "$TMP/site3"
expect_json "bundled ptxas listed in name order (ptxas before ptxas-blackwell), nothing else of the directory" \
	"[t['path'].rsplit('/', 1)[1] for t in d['toolchains'] if t['kind'] == 'triton_ptxas'] == ['ptxas', 'ptxas-a', 'ptxas-blackwell', 'ptxas-m', 'ptxas-z']"
# tools that do not run, or whose --version exits 127 yet answers
mkdir -p "$TMP/odd"
printf '#!/nonexistent/interpreter\n' >"$TMP/odd/nvcc"
printf '#!/bin/sh\necho "Cuda compilation tools, release 12.4, V12.4.1"\nexit 127\n' >"$TMP/odd/ptxas"
chmod +x "$TMP/odd/nvcc" "$TMP/odd/ptxas"
doc env KIMG_TOOLKIT_DIRS="$TMP/odd/.." PATH="$TMP/odd:/usr/bin:/bin" "$PROBE" doctor --json --sm 9.0 "$TMP/site2"
expect_json "a tool that cannot be started: no release, 'cannot run it'; one that answers and exits 127: its release" \
	"[(t['kind'], t['release'], t['error']) for t in d['toolchains'] if t['source'] == 'PATH'] == [('ptxas', '12.4', None), ('nvcc', None, 'cannot run it')]"
# a tool that answers on stderr is read; one that reads its stdin gets
# nothing (not doctor's own input: it would wait on a terminal)
mkdir -p "$TMP/io"
printf '#!/bin/sh\necho "Cuda compilation tools, release 12.6, V12.6.1" >&2\n' >"$TMP/io/ptxas"
printf '#!/bin/sh\nread v\necho "Cuda compilation tools, release ${v:-11.8}, V11.8.1"\n' >"$TMP/io/nvcc"
chmod +x "$TMP/io/ptxas" "$TMP/io/nvcc"
echo 13.0 >"$TMP/io/stdin"
doc env KIMG_TOOLKIT_DIRS= PATH="$TMP/io:/usr/bin:/bin" "$PROBE" doctor --json --sm 9.0 "$TMP/site2" <"$TMP/io/stdin"
expect_json "a release said on stderr is read; a tool's stdin is empty (/dev/null), not doctor's" \
	"[(t['kind'], t['release']) for t in d['toolchains'] if t['source'] == 'PATH'] == [('ptxas', '12.6'), ('nvcc', '11.8')]"
# a --version that never answers (a wrapper waiting on a lock): given up
# after docs/json-probe.md's 10 s, the tool killed, not waited for
mkdir -p "$TMP/slow"
printf '#!/bin/sh\necho $$ >"%s"\nexec sleep 100\n' "$TMP/slow.pid" >"$TMP/slow/nvcc"
chmod +x "$TMP/slow/nvcc"
began=$SECONDS
doc env KIMG_TOOLKIT_DIRS= PATH="$TMP/slow:/usr/bin:/bin" "$PROBE" doctor --json --sm 9.0 "$TMP/site2"
took=$((SECONDS - began))
expect_json "a tool whose --version does not answer: no release, said" \
	"[(t['kind'], t['release'], t['error']) for t in d['toolchains'] if t['source'] == 'PATH'] == [('nvcc', None, '--version did not answer within 10 s')]"
check "... after 10 s, not its 100 (${took} s), the tool killed" bash -c "(( $took >= 9 && $took < 60 )) && ! kill -0 $(cat "$TMP/slow.pid") 2>/dev/null"
# one file by two names (a directory linked into PATH) is listed once;
# the same file as Triton's ptxas and as a toolkit's is listed as each
ln -s "$TK/cuda-13.0/bin" "$TMP/linked-bin"
doc env TRITON_PTXAS_PATH="$TK/cuda-13.0/bin/ptxas" PATH="$TMP/linked-bin:/usr/bin:/bin" KIMG_TOOLKIT_DIRS="$TK/cuda-13.0" \
	"$PROBE" doctor --json --sm 9.0
expect_json "the toolkit's ptxas and nvcc found on PATH and again under KIMG_TOOLKIT_DIRS: listed once, as found first" \
	"[(t['kind'], t['source'], t['path']) for t in d['toolchains']] == [('triton_ptxas', 'TRITON_PTXAS_PATH', '$TK/cuda-13.0/bin/ptxas'), ('ptxas', 'PATH', '$TMP/linked-bin/ptxas'), ('nvcc', 'PATH', '$TMP/linked-bin/nvcc')]"
ln -s "$TK/cuda-13.0" "$TMP/linked-tk"
doc env PATH="$TK/cuda-13.0/bin:/usr/bin:/bin" KIMG_TOOLKIT_DIRS="$TMP/linked-tk" "$PROBE" doctor --json --sm 9.0
expect_json "... and the other way round (the link found second): listed once" \
	"[(t['kind'], t['source'], t['path']) for t in d['toolchains']] == [('ptxas', 'PATH', '$TK/cuda-13.0/bin/ptxas'), ('nvcc', 'PATH', '$TK/cuda-13.0/bin/nvcc')]"

# ---- JIT caches: stale and good code ----
mkdir -p "$H/.cupy/kernel_cache" "$H/.triton/cache/5f3a" "$H/.cache/torch_extensions/py311_cu128/myop"
cp "$FX/sm80.cubin" "$H/.cupy/kernel_cache/0a1b.cubin"
cp "$FX/sm90a.cubin" "$H/.cupy/kernel_cache/2c3d.cubin"
printf 'not code\n' >"$H/.cupy/kernel_cache/index.txt"
cp "$FX/sm90a.cubin" "$H/.triton/cache/5f3a/kernel.cubin"
printf '{"name": "kernel"}\n' >"$H/.triton/cache/5f3a/kernel.json"
cp "$FX/libtwo.so" "$H/.cache/torch_extensions/py311_cu128/myop/myop.so"
caches='[(c["name"], c["exists"], c["files_checked"], c["stale_count"]) for c in d["jit_caches"]]'
doc "$PROBE" doctor --json --sm 9.0 "$SITE"
expect_rc 1 "stale cached code: doctor fails"
expect_json "each cache found at its default, its files with device code checked, the stale ones counted" \
	"$caches == [('cupy', True, 2, 1), ('torch_extensions', True, 1, 1), ('triton', True, 1, 0), ('flashinfer', False, 0, 0), ('nv_compute_cache', False, 0, 0)]"
expect_json "the stale CuPy cubin: sm_80 on 9.0 [S1] -> 209, remove the file (it sits in the cache root)" \
	"[(s['path'], s['remove'], s['targets'], s['sm'], s['rule'], s['expected_error']) for s in d['jit_caches'][0]['stale']] == [('$H/.cupy/kernel_cache/0a1b.cubin', '$H/.cupy/kernel_cache/0a1b.cubin', 'sm_80', '9.0', 'S1', 209)]"
expect_json "the stale torch_extensions build: remove its build directory" \
	"[s['remove'] for s in d['jit_caches'][1]['stale']] == ['$H/.cache/torch_extensions/py311_cu128/myop']"
expect_json "summary: 2 stale cached files" "d['summary']['stale_cache_files'] == 2"
doc "$PROBE" doctor --sm 9.0 "$SITE"
expect_grep "text: the stale file, why, and what to remove" "$TMP/out" \
	"STALE $H/.cupy/kernel_cache/0a1b.cubin: sm_80 cannot run on 9.0: cubin for another major version [S1] -> error 209 (CUDA_ERROR_NO_BINARY_FOR_GPU)"
expect_grep "text: remove line" "$TMP/out" "remove: $H/.cache/torch_extensions/py311_cu128/myop"
expect_grep "text: a cache not present is said" "$TMP/out" "flashinfer        $H/.cache/flashinfer (default; \$FLASHINFER_WORKSPACE_BASE): not present"
# the variables that move the caches; FlashInfer's and the driver's
mkdir -p "$TMP/cupy2" "$TMP/fi/.cache/flashinfer/0.2.8/120a/cached_ops/moe" "$TMP/nv/9f"
cp "$FX/sm90a.cubin" "$TMP/cupy2/ok.cubin"
cp "$FX/sm90a.cubin" "$TMP/fi/.cache/flashinfer/0.2.8/120a/cached_ops/moe/moe.cubin"
cp "$FX/sm120.cubin" "$TMP/fi/.cache/flashinfer/0.2.8/120a/cached_ops/moe/good.cubin"
cp "$FX/compute100.ptx" "$TMP/nv/9f/entry"
head -c 4096 /dev/urandom >"$TMP/nv/index"
rm -rf "$H/.cupy" "$H/.cache"
doc env CUPY_CACHE_DIR="$TMP/cupy2" FLASHINFER_WORKSPACE_BASE="$TMP/fi" CUDA_CACHE_PATH="$TMP/nv" CUDA_CACHE_DISABLE=1 \
	"$PROBE" doctor --json --sm 12.1 "$SITE"
expect_json "moved caches: CUPY_CACHE_DIR, FLASHINFER_WORKSPACE_BASE/.cache/flashinfer, CUDA_CACHE_PATH" \
	"[(c['name'], c['dir'], c['from_env']) for c in d['jit_caches'] if c['from_env']] == [('cupy', '$TMP/cupy2', True), ('flashinfer', '$TMP/fi/.cache/flashinfer', True), ('nv_compute_cache', '$TMP/nv', True)]"
expect_json "on 12.1: the sm_90a cubins are stale (another major: S1); FlashInfer's sm_120 one runs; the driver cache's compute_100 PTX runs (JIT)" \
	"[(c['name'], c['files_checked'], c['stale_count'], [s['rule'] for s in c['stale']]) for c in d['jit_caches'] if c['exists']] == [('cupy', 1, 1, ['S1']), ('triton', 1, 1, ['S1']), ('flashinfer', 2, 1, ['S1']), ('nv_compute_cache', 1, 0, [])]"
expect_json "FlashInfer's stale op: remove its directory" \
	"d['jit_caches'][3]['stale'][0]['remove'] == '$TMP/fi/.cache/flashinfer/0.2.8/120a/cached_ops/moe'"
expect_json "CUDA_CACHE_DISABLE=1: the driver's cache marked disabled, and the switch named" \
	"d['jit_caches'][4]['disabled'] is True and 'CUDA_CACHE_DISABLE' in [s['name'] for s in d['cuda_environment']]"
# more stale files than a cache shows (8): all counted, 8 shown, the rest said
mkdir -p "$TMP/many"
for i in 0 1 2 3 4 5 6 7 8 9; do cp "$FX/sm80.cubin" "$TMP/many/k$i.cubin"; done
doc env CUPY_CACHE_DIR="$TMP/many" "$PROBE" doctor --json --sm 9.0 "$SITE"
expect_json "ten stale cubins in CuPy's cache: ten counted, the first eight shown" \
	"[(c['stale_count'], len(c['stale'])) for c in d['jit_caches'] if c['name'] == 'cupy'] == [(10, 8)]"
doc env CUPY_CACHE_DIR="$TMP/many" "$PROBE" doctor --sm 9.0 "$SITE"
expect_grep "text: the two not shown are said" "$TMP/out" "    ... and 2 more stale"
rm -rf "$TMP/many"
# XDG_CACHE_HOME moves the caches that live under ~/.cache (PyTorch's
# extensions: $XDG_CACHE_HOME/torch_extensions), not the others
mkdir -p "$TMP/xdg/torch_extensions/py311_cu128/op"
cp "$FX/libtwo.so" "$TMP/xdg/torch_extensions/py311_cu128/op/op.so"
doc env XDG_CACHE_HOME="$TMP/xdg" "$PROBE" doctor --json --sm 9.0 "$SITE"
expect_json "XDG_CACHE_HOME: torch_extensions read under it (not from a variable of its own), CuPy's cache still under HOME" \
	"[(c['name'], c['dir'], c['from_env'], c['exists'], c['files_checked']) for c in d['jit_caches'] if c['name'] in ('torch_extensions', 'cupy')] == [('cupy', '$H/.cupy/kernel_cache', False, False, 0), ('torch_extensions', '$TMP/xdg/torch_extensions', False, True, 1)]"
doc env CUDA_CACHE_PATH="$TMP/nv" "$PROBE" doctor --json --sm 9.0 "$SITE"
expect_json "on 9.0 the driver cache's compute_100 PTX is stale [P3] (error 218)" \
	"[(s['rule'], s['expected_error']) for s in d['jit_caches'][4]['stale']] == [('P3', 218)]"
rm -rf "$H/.triton" "$TMP/cupy2"
doc env CUPY_CACHE_DIR="$TMP/cupy2" "$PROBE" doctor --json --sm 9.0 "$SITE"
expect_json "no cache present: nothing stale, ok" "d['summary']['stale_cache_files'] == 0 and d['ok'] is True"
# A cached library whose only code for another GPU is its device-link stub
# (libdispatch.so: an sm_75 stub, sm_100a dispatched, sm_90 that runs):
# checked, not stale on 9.0 (a stub is never loaded, as check says).
mkdir -p "$TMP/cupy3"
cp "$FX/libdispatch.so" "$TMP/cupy3/op.so"
doc env CUPY_CACHE_DIR="$TMP/cupy3" "$PROBE" doctor --json --sm 9.0 "$SITE"
expect_json "a cached library with a failing stub only: checked, not stale" \
	"[(c['files_checked'], c['stale_count']) for c in d['jit_caches'] if c['name'] == 'cupy'] == [(1, 0)]"

# ---- the CUDA switches ----
doc env CUDA_FORCE_PTX_JIT=1 CUDA_DISABLE_PTX_JIT=0 CUDA_MODULE_LOADING=LAZY TORCH_CUDA_ARCH_LIST="8.0;8.6" \
	"$PROBE" doctor --json --sm 9.0,8.6 "$SITE"
expect_json "each switch set is named with its value, in table order" \
	"[(s['name'], s['value']) for s in d['cuda_environment']] == [('CUDA_FORCE_PTX_JIT', '1'), ('CUDA_DISABLE_PTX_JIT', '0'), ('CUDA_MODULE_LOADING', 'LAZY'), ('TORCH_CUDA_ARCH_LIST', '8.0;8.6')]"
expect_json "each with what it changes (P6 for the PTX switches)" \
	"'209' in d['cuda_environment'][0]['effect'] and '223' in d['cuda_environment'][1]['effect'] and 'first launch' in d['cuda_environment'][2]['effect']"
expect_json "TORCH_CUDA_ARCH_LIST=8.0;8.6 judged by the core: a build cannot run on 9.0 [S1], runs on 8.6" \
	"d['cuda_environment'][3]['verdict'] == 'a build with it cannot run on 9.0: cubin for another major version [S1] -> error 209'"
doc env TORCH_CUDA_ARCH_LIST="8.0 9.0+PTX" "$PROBE" doctor --json --sm 9.0,12.0 "$SITE"
expect_json "TORCH_CUDA_ARCH_LIST=8.0 9.0+PTX covers 9.0 and 12.0 (PTX JIT): no verdict" "d['cuda_environment'][0]['verdict'] is None"
doc env TORCH_CUDA_ARCH_LIST="8.0;banana" "$PROBE" doctor --json --sm 9.0 "$SITE"
expect_json "a token that is no architecture is named" "d['cuda_environment'][0]['verdict'] == \"'banana' is not an architecture PyTorch knows (8.0, 9.0a, 8.6+PTX)\""
doc "$PROBE" doctor --sm 9.0 "$SITE"
expect_grep "none set: said in one line" "$TMP/out" "CUDA environment: none of CUDA_FORCE_PTX_JIT, CUDA_DISABLE_PTX_JIT, CUDA_MODULE_LOADING, TORCH_CUDA_ARCH_LIST, CUDA_CACHE_* set"
# ---- the toolchains asked side by side ----
# Four tools whose --version takes 1 s each (a cold ptxas reads 30 MB from disk): asked at
# once, not in turn; each keeps its own answer, in the order they were found.
for v in 12.4 12.6 12.8 13.0; do
	mkdir -p "$TMP/slow/$v/bin"
	printf '#!/bin/sh
sleep 1
echo "Cuda compilation tools, release %s, V%s.1"
' "$v" "$v" >"$TMP/slow/$v/bin/nvcc"
	chmod +x "$TMP/slow/$v/bin/nvcc"
done
run_capture env -i HOME="$H" PATH=/usr/bin:/bin KIMG_DOCTOR_TIMING=1 \
	KIMG_TOOLKIT_DIRS="$TMP/slow/12.4:$TMP/slow/12.6:$TMP/slow/12.8:$TMP/slow/13.0" "$PROBE" doctor --json --sm 9.0 "$SITE"
expect_json "four slow tools: each with its own release, in order" \
	"[t['release'] for t in d['toolchains'] if t['kind'] == 'nvcc'] == ['12.4', '12.6', '12.8', '13.0']"
took=$(sed -n 's/.*toolchains \([0-9.]*\)$/\1/p' "$TMP/err")
expect_eq "four tools of 1 s each asked side by side: under 3 s in all (took ${took:-?} s)" \
	1 "$(awk -v s="${took:-9}" 'BEGIN { print (s < 3.0) ? 1 : 0 }')"

# ---- /usr/local/cuda*: the toolkits found where no KIMG_TOOLKIT_DIRS says ----
# The oracle: the release /usr/local/cuda/bin/nvcc --version prints (CI mounts the toolkit there).
if [ -x /usr/local/cuda/bin/nvcc ] && [ -x /usr/local/cuda/bin/ptxas ]; then
	rel=$(/usr/local/cuda/bin/nvcc --version | sed -n 's/.*release \([0-9]*\.[0-9]*\),.*/\1/p')
	run_capture env -i HOME="$H" PATH=/usr/bin:/bin "$PROBE" doctor --json --sm 9.0 "$SITE"
	expect_json "no KIMG_TOOLKIT_DIRS: /usr/local/cuda's ptxas and nvcc found first, release $rel" \
		"[(t['kind'], t['path'], t['release']) for t in d['toolchains'] if t['source'] == 'toolkit'][:2]
		 == [('ptxas', '/usr/local/cuda/bin/ptxas', '$rel'), ('nvcc', '/usr/local/cuda/bin/nvcc', '$rel')]"
else
	fail "no /usr/local/cuda/bin/nvcc and ptxas: the toolkit the tests are built with belongs there (CI mounts it)"
fi

finish
