#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/loading.md section 12, the table of entry points that can return an
# image-class error, checked against the driver's own export list rather
# than memory: the prototypes of /usr/local/cuda/include/cuda.h (its
# cuGetProcAddress names) and of cuda_runtime_api.h. Both ways: every
# cuda.h entry point that takes a module, library, kernel or function handle,
# or whose documentation lists an image-class code, has a row; every row
# names a real prototype. A row marked hooked is exported by libkimg
# (shim/libkimg.map) with each variant cuda.h maps the name to (_v2, _ptsz)
# and each the row claims; a name the map exports is a hooked row; every
# test a row names exists.
. "$(dirname "$0")/../lib.bash"
# the toolkit's headers: CUDA_INC, else beside the nvcc the fixtures use
# (scripts/setup-debian.sh: /usr/local/cuda or on PATH), else /usr/local/cuda
if [ -z "${CUDA_INC:-}" ]; then
	nvcc=$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
	CUDA_INC=$(cd "$(dirname "$(readlink -f "$nvcc" 2>/dev/null || echo "$nvcc")")/../include" 2>/dev/null && pwd)
	[ -f "$CUDA_INC/cuda.h" ] || CUDA_INC=/usr/local/cuda/include
fi
if [ ! -f "$CUDA_INC/cuda.h" ] || [ ! -f "$CUDA_INC/cuda_runtime_api.h" ]; then
	missing "$CUDA_INC/cuda.h" "the CUDA toolkit (scripts/setup-debian.sh installs it)"
	finish
fi
out=$(python3 - "$ROOT" "$CUDA_INC" <<'PY'
import os, re, sys
root, inc = sys.argv[1], sys.argv[2]
cuda = open(os.path.join(inc, "cuda.h")).read()
rt = open(os.path.join(inc, "cuda_runtime_api.h")).read()
doc = open(os.path.join(root, "docs/loading.md")).read()
mp = re.sub(r"/\*.*?\*/", "", open(os.path.join(root, "shim/libkimg.map")).read(), flags=re.S)
kimg = mp[mp.index("KIMG_1.0 {"):]
exported = set(re.findall(r"^\s+(\w+);", kimg[:kimg.index("local:")], re.M))

protos = set(m.group(1) for m in re.finditer(r"CUresult\s+CUDAAPI\s+(\w+)\s*\(", cuda))
rt_protos = set(m.group(1) for m in re.finditer(r"cudaError_t\s+CUDARTAPI\s+(\w+)\s*\(", rt))
# the universe: handle-taking entry points, those documented with an image code, the JIT linker
universe = set()
for m in re.finditer(r"CUresult\s+CUDAAPI\s+(\w+)\s*\(([^;{]*?)\)\s*;", cuda, re.S):
    if re.search(r"\bCU(module|library|kernel|function)\b", m.group(2)):
        universe.add(m.group(1))
codes = ("NO_BINARY_FOR_GPU", "INVALID_IMAGE", "INVALID_PTX", "UNSUPPORTED_PTX_VERSION",
         "JIT_COMPILER_NOT_FOUND", "INVALID_SOURCE", "JIT_COMPILATION_DISABLED")
for m in re.finditer(r"/\*\*((?:(?!\*/).)*?)\*/\s*(?:__CUDA_DEPRECATED\s+)?CUresult\s+CUDAAPI\s+(\w+)\s*\(", cuda, re.S):
    ret = m.group(1).split("\\return", 1)[-1].split("\\sa")[0]
    if any("CUDA_ERROR_" + c in ret for c in codes):
        universe.add(m.group(2))
universe |= {n for n in protos if n.startswith("cuLink") and n != "cuLinkDestroy"}
# cuda.h's name maps: cuModuleGetGlobal -> cuModuleGetGlobal_v2, cuLaunchKernel -> _ptsz
maps = {}
for m in re.finditer(r"#define\s+(cu\w+)\s+(cu\w+_v\d+)\b", cuda):
    maps.setdefault(m.group(1), set()).add(m.group(2))
for m in re.finditer(r"#define\s+(cu\w+)\s+__CUDA_API_PTSZ\((cu\w+)\)", cuda):
    maps.setdefault(m.group(1), set()).add(m.group(2) + "_ptsz")

sec = doc[doc.index("## 12. Entry points"):doc.index("## 13.")]
rows = {}
for line in sec.splitlines():
    m = re.match(r"\|\s*`(\w+)`\s*\|([^|]*)\|([^|]*)\|", line)
    if m:
        rows[m.group(1)] = (m.group(2).strip(), m.group(3).strip())
def say(ok, what, detail=""):
    print(("ok - " if ok else "FAIL - ") + what + ("" if ok or not detail else "\n     " + detail))
say(len(rows) >= 60, "the table has a row per entry point (%d rows)" % len(rows))
gone = sorted(universe - set(rows))
say(not gone, "every cuda.h entry point that can resolve a module's code has a row (%d names)" % len(universe), " ".join(gone))
unknown = sorted(n for n in rows if n not in protos and n not in rt_protos)
say(not unknown, "every row names a prototype of cuda.h or cuda_runtime_api.h", " ".join(unknown))
bad = []
for n, (cov, test) in rows.items():
    if cov.startswith("hooked"):
        want = {n} | (maps.get(n, set()) if n in protos else set())
        for v in re.findall(r"`(_\w+)`", cov):
            want.add(n + v)
        bad += sorted(w for w in want - exported)
say(not bad, "every hooked row and its variants are exported by libkimg (shim/libkimg.map)", " ".join(bad))
# exported hooks that resolve no device code: entry-point queries, versions, the linker's teardown
not_code = ("cuGetProcAddress", "cuInit", "cuLinkDestroy", "cudaGetDriverEntryPoint", "cudaRuntimeGetVersion")
driver_rt = {n for n in exported if n.startswith("cu") and not n.startswith(not_code)}
base = lambda n: re.sub(r"(_v\d+|_ptsz|_ptds)$", "", n)
unlisted = sorted(n for n in driver_rt if base(n) not in rows and n not in rows)
say(not unlisted, "every exported cu*/cuda* hook is a row of the table", " ".join(unlisted))
notes = sorted(n for n, (cov, _) in rows.items() if not re.match(r"(hooked|safety net|no code resolved)", cov))
say(not notes, "every row says hooked, safety net or no code resolved", " ".join(notes))
tests = sorted({t for _, t in rows.values() if not os.path.isfile(os.path.join(root, t))})
say(not tests, "every test a row names exists", " ".join(tests))
PY
)
while IFS= read -r line; do
	case $line in "ok - "*) ok "${line#ok - }" ;; "FAIL - "*) fail "${line#FAIL - }" ;; *) echo "$line" ;; esac
done <<<"$out"
finish
