#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Container images as inputs (probe/image*.c, core/layer_fs.c, core/jit_env.c,
# core/image_format.c, core/nvidia_require.c; docs/deploy.md): images made by
# umoci and skopeo, and hand-made ones (tests/probe/src/oci_image.py) for the
# exact layer contents and the hostile cases. The oracle is the image as it
# was built: which library each layer adds or deletes, and whether that
# library (build/fixtures/sm80_exe: sm_80 only; multi_exe: sm_90 too) runs
# on sm_90. Every probe run is made twice, the second time with libarchive
# not loadable (KIMG_LIBARCHIVE naming a library that does not exist): its
# stdout, stderr and exit status must be the first run's, so no case here
# depends on libarchive (sys/tar_stream.c reads plain, gzip and zstd layers;
# tests/probe/images_native.sh has the cases that need it).
. "$(dirname "$0")/../lib.bash" probe
for tool in umoci skopeo zstd strace; do
	command -v $tool >/dev/null || { fail "$tool missing: scripts/setup-debian.sh installs it"; finish; exit; }
done
MK="python3 $ROOT/tests/probe/src/oci_image.py"
BAD=$FX/sm80_exe GOOD=$FX/multi_exe
# a bound per run: a hang fails its case, not the script's own limit;
# qemu-user (make test-aarch64) runs the probe some ten times slower
run_limit=60; [ -n "${KIMG_QEMU_USER:-}" ] && run_limit=600
NOLA=libkimg-test-absent.so.13 nola_runs=0 nola_diff=()
run() {
	run_capture timeout "$run_limit" "$@"
	local rc1=$rc
	KIMG_LIBARCHIVE=$NOLA timeout "$run_limit" "$@" >"$TMP/out.nola" 2>"$TMP/err.nola"
	local rc2=$? what="${*: -1} (${*:1:$#-1})"
	nola_runs=$((nola_runs + 1))
	# /usr/bin/time's last line (the peak RSS) is the one line that may differ
	if [ "$1" = /usr/bin/time ]; then
		cmp -s <(sed '$d' "$TMP/err") <(sed '$d' "$TMP/err.nola") || nola_diff+=("stderr of $what")
	else
		cmp -s "$TMP/err" "$TMP/err.nola" || nola_diff+=("stderr of $what")
	fi
	cmp -s "$TMP/out" "$TMP/out.nola" || nola_diff+=("stdout of $what")
	[ "$rc1" -eq "$rc2" ] || nola_diff+=("exit status of $what: $rc2, with libarchive $rc1")
	rc=$rc1
}
spec() { printf '%s' "$2" >"$TMP/$1.json"; rm -rf "$TMP/$1"; $MK "$TMP/$1" "$TMP/$1.json" || fail "oci_image.py $1"; }

# ---- made by the real tools: umoci layers, skopeo conversions ----
(
	cd "$TMP" && umoci init --layout oci && umoci new --image oci:t &&
	umoci unpack --rootless --image oci:t bundle && mkdir -p bundle/rootfs/usr/lib &&
	cp "$BAD" bundle/rootfs/usr/lib/libbad.so && cp "$GOOD" bundle/rootfs/usr/lib/libgood.so &&
	umoci repack --image oci:t bundle && cp -r oci oci1 && rm -rf bundle &&
	umoci unpack --rootless --image oci:t bundle && rm bundle/rootfs/usr/lib/libbad.so &&
	umoci repack --image oci:t bundle &&
	skopeo copy -q oci:oci:t docker-archive:d.tar:t:latest && skopeo copy -q oci:oci:t oci-archive:o.tar:t
) >"$TMP/tools.log" 2>&1 || fail "umoci/skopeo could not make the test image: $(tail -3 "$TMP/tools.log")"

run "$PROBE" check --sm 9.0 "$TMP/oci1"
expect_rc 1 "umoci image, bad library in its only layer"
expect_grep "files are named by their path in the image" "$TMP/out" "$TMP/oci1:/usr/lib/libbad.so: 2 modules"
run "$PROBE" check --sm 9.0 "$TMP/oci"
expect_rc 0 "umoci image whose second layer deletes the bad library (a whiteout)"
check "the deleted library is not judged" bash -c "! grep -q libbad $TMP/out"
expect_grep "the surviving library is judged, with its layer" "$TMP/out" "layer: 1 of 2"
# nothing extracted: no file opened for writing, made, renamed or removed
# (LeakSanitizer cannot run under ptrace: off for this run of an ASan build)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 run strace -f -qq -o "$TMP/strace.log" -e trace=open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,unlink,unlinkat \
	"$PROBE" check --sm 9.0 "$TMP/oci"
expect_rc 0 "the same check under strace"
check "nothing written to disk ($(wc -l <"$TMP/strace.log") calls traced)" bash -c \
	"grep -q openat $TMP/strace.log && ! grep -E 'O_WRONLY|O_RDWR|O_CREAT|creat\\(|mkdir|rename|link\\(|linkat|unlink' $TMP/strace.log"
# the verdicts, per file and module, of the OCI directory: the oracle of its copies
verdicts_of() { python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
print(repr([(x['image']['path'], x['image']['layer'], [m['verdicts'] for m in x['modules']]) for x in d['files'] if 'image' in x]))" "$1"; }
run "$PROBE" check --sm 9.0,8.0 --json "$TMP/oci"
verdicts_of "$TMP/out" >"$TMP/oci.verdicts"
for f in d.tar o.tar; do
	run "$PROBE" check --sm 9.0,8.0 --json "$TMP/$f"
	check "skopeo $f: the verdicts of the OCI directory, module by module" test "$(verdicts_of "$TMP/out")" = "$(cat "$TMP/oci.verdicts")"
	run "$PROBE" check --sm 9.0 --json "$TMP/$f"
	expect_rc 0 "skopeo $f of the same image"
	expect_json "$f: the same files as the OCI directory" \
		"[x['image']['path'] for x in d['files'] if 'image' in x] == ['/usr/lib/libgood.so']"
	expect_json "$f: the container_image object" \
		"[x['container_image']['format'] for x in d['files'] if x['kind'] == 'container_image'] == ['$( [ $f = d.tar ] && echo docker-archive || echo oci-archive)']"
done
run "$PROBE" scan "$TMP/d.tar"
expect_rc 0 "scan reads an image too"
expect_grep "scan names files in the image" "$TMP/out" "$TMP/d.tar:/usr/lib/libgood.so: elf, 2 modules"

# ---- hand-made: whiteouts, opaque dirs, zstd, links ----
spec opq "{\"images\": [{\"layers\": [
 {\"entries\": [[\"dir\", \"opt/x\"], [\"file\", \"opt/x/libbad.so\", \"$BAD\"], [\"file\", \"opt/y/libbad.so\", \"$BAD\"]]},
 {\"compress\": \"zstd\", \"entries\": [[\"file\", \"opt/x/.wh..wh..opq\", \"text:\"], [\"file\", \"opt/x/libgood.so\", \"$GOOD\"],
   [\"file\", \"opt/.wh.y\", \"text:\"]]}]}]}"
run "$PROBE" check --sm 9.0 --json "$TMP/opq"
expect_rc 0 "opaque directory and a directory whiteout, in a zstd layer"
expect_json "only the file of the upper layer survives" \
	"[(x['image']['path'], x['image']['layer']) for x in d['files'] if 'image' in x] == [('/opt/x/libgood.so', 2)]"

spec links "{\"images\": [{\"history\": [\"ADD base\", \"RUN ln\", \"RUN rm\"], \"layers\": [
 {\"entries\": [[\"dir\", \"usr/local/cuda-13.0\"], [\"symlink\", \"usr/local/cuda\", \"cuda-13.0\"],
   [\"file\", \"opt/lib/libbad.so.1\", \"$BAD\"], [\"file\", \"a/libbad2.so\", \"$BAD\"], [\"hardlink\", \"b/libbad2.so\", \"a/libbad2.so\"]]},
 {\"entries\": [[\"symlink\", \"usr/lib/libbad.so\", \"/opt/lib/libbad.so.1\"], [\"file\", \"usr/local/cuda/compat/libgood.so\", \"$GOOD\"]]},
 {\"entries\": [[\"file\", \"opt/lib/.wh.libbad.so.1\", \"text:\"], [\"file\", \"a/.wh.libbad2.so\", \"text:\"]]}]}]}"
run "$PROBE" check --sm 9.0 --json "$TMP/links"
expect_rc 1 "links: a hard link keeps the bytes of a deleted file"
expect_json "a file under a symlinked directory lands where the link points; the hard link is judged by its name" \
	"sorted(x['image']['path'] for x in d['files'] if 'image' in x) == ['/b/libbad2.so', '/usr/local/cuda-13.0/compat/libgood.so']"
expect_json "the layer's history step is named" \
	"[x['image']['created_by'] for x in d['files'] if x['path'].endswith('libgood.so')] == ['RUN ln']"

spec lower "{\"images\": [{\"layers\": [{\"entries\": [[\"file\", \"opt/lib/libbad.so.1\", \"$BAD\"]]},
 {\"entries\": [[\"symlink\", \"usr/lib/libbad.so\", \"/opt/lib/libbad.so.1\"]]}]}]}"
run "$PROBE" check --sm 9.0 --json "$TMP/lower"
expect_rc 1 "a symlink to a library in a lower layer: the library is judged"
expect_json "... once, by its own name and layer" \
	"[(x['image']['path'], x['image']['layer']) for x in d['files'] if 'image' in x] == [('/opt/lib/libbad.so.1', 1)]"

# ---- multi-platform index ----
spec multi "{\"images\": [{\"platform\": \"linux/amd64\", \"layers\": [{\"entries\": [[\"file\", \"lib/libx.so\", \"$BAD\"]]}]},
 {\"platform\": \"linux/arm64\", \"layers\": [{\"entries\": [[\"file\", \"lib/libx.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 "$TMP/multi"
expect_rc 1 "multi-platform index: each platform on its own (amd64 fails)"
expect_grep "platforms named apart" "$TMP/out" "$TMP/multi[linux/arm64]:/lib/libx.so"
run "$PROBE" check --sm 9.0 --platform linux/arm64 "$TMP/multi"
expect_rc 0 "--platform linux/arm64 picks one"
check "--platform: the other platform is not read" bash -c "! grep -q amd64 $TMP/out"

# ---- the config: NVIDIA_REQUIRE_CUDA ----
spec req "{\"images\": [{\"env\": [\"CUDA_VERSION=13.0.1\", \"NVIDIA_REQUIRE_CUDA=cuda>=13.0 brand=tesla,driver>=535,driver<536\",
 \"LD_LIBRARY_PATH=/usr/local/cuda/compat\", \"CUDA_MODULE_LOADING=LAZY\"], \"layers\": [{\"entries\": [[\"file\", \"lib/libx.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 --driver 12.4 "$TMP/req"
expect_rc 1 "NVIDIA_REQUIRE_CUDA that a 12.4 driver (R550) fails: the toolkit would refuse the container"
expect_grep "the refusal names the constraint" "$TMP/out" "refused: the container will not start (cuda>=13.0 is false"
expect_grep "LD_LIBRARY_PATH shown" "$TMP/out" "env: LD_LIBRARY_PATH=/usr/local/cuda/compat"
run "$PROBE" check --sm 9.0 --driver 12.2 "$TMP/req"
expect_rc 0 "a 12.2 driver (R535) may pass through brand=tesla,driver>=535,driver<536: not a failure"
expect_grep "unknown, with what it depends on" "$TMP/out" "unknown: depends on brand=tesla"
run "$PROBE" check --sm 9.0 "$TMP/req"
expect_rc 0 "no driver known: shown, not judged"
expect_grep "not judged" "$TMP/out" "not judged: no driver known"
# a cluster's data (GPU Feature Discovery labels) gives each group its driver
python3 -c 'import json, sys
l = {"nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
     "nvidia.com/gpu.count": "8", "nvidia.com/cuda.driver.major": "550", "nvidia.com/cuda.driver.minor": "54", "nvidia.com/cuda.driver.rev": "15",
     "nvidia.com/cuda.runtime.major": "12", "nvidia.com/cuda.runtime.minor": "4"}
json.dump({"apiVersion": "v1", "kind": "List", "items": [{"kind": "Node", "metadata": {"name": "gpu-h1", "labels": l}}]}, open(sys.argv[1], "w"))' "$TMP/k8s.json"
run "$PROBE" check --sm "k8s:$TMP/k8s.json" "$TMP/req"
expect_rc 1 "NVIDIA_REQUIRE_CUDA judged against a Kubernetes node's driver (550.54.15: CUDA 12.4)"
expect_grep "the node's refusal said" "$TMP/out" "9.0 (driver CUDA 12.4): refused: the container will not start"
# Where it may run: a node whose driver the image's requirement refuses
# does not run it, whatever its modules say (the container never starts);
# gpu-old has only the driver release labels (550.54.15: CUDA 12.4)
python3 -c 'import json, sys
def node(name, labels):
    l = {"nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
         "nvidia.com/gpu.count": "8"}
    l.update(labels)
    return {"kind": "Node", "metadata": {"name": name, "labels": l}}
json.dump({"apiVersion": "v1", "kind": "List", "items": [
    node("gpu-old", {"nvidia.com/cuda.driver.major": "550", "nvidia.com/cuda.driver.minor": "54", "nvidia.com/cuda.driver.rev": "15"}),
    node("gpu-new", {"nvidia.com/cuda.driver.major": "580", "nvidia.com/cuda.driver.minor": "65", "nvidia.com/cuda.driver.rev": "06",
                     "nvidia.com/cuda.runtime.major": "13", "nvidia.com/cuda.runtime.minor": "0"})]}, open(sys.argv[1], "w"))' "$TMP/k8s2.json"
run "$PROBE" check --sm "k8s:$TMP/k8s2.json" "$TMP/req"
expect_rc 1 "a refused node fails the check"
expect_grep "the driver release alone gives the node its CUDA" "$TMP/out" "9.0 (driver CUDA 12.4): refused: the container will not start"
expect_grep "the refused node does not run it" "$TMP/out" "does not run  9.0 (gpu-old: 8 × H100, driver CUDA 12.4)"
expect_grep "its fix is the requirement" "$TMP/out" "fix: a driver that the image's requirement accepts, NVIDIA_REQUIRE_CUDA=cuda>=13.0"
expect_grep "the satisfied node runs it" "$TMP/out" "runs          9.0 (gpu-new: 8 × H100, driver CUDA 13.0)"
expect_grep "the affinity asks for the newer driver" "$TMP/out" "{key: nvidia.com/cuda.runtime.major, operator: Gt, values: [\"12\"]}"
run "$PROBE" check --json --sm "k8s:$TMP/k8s2.json" "$TMP/req"
expect_json "JSON placement: gpu-old refused, gpu-new runs" "sorted((g['node_names'][0], g['runs']) for p in d['placement'] for g in p['groups']) == [('gpu-new', True), ('gpu-old', False)] and d['placement'][0]['any_runs']"
run "$PROBE" check --sm 9.0 --driver 13.0 --json "$TMP/req"
expect_rc 0 "a 13.0 driver satisfies it"
expect_json "JSON verdict" "[r['verdicts'][0]['verdict'] for x in d['files'] if x['kind'] == 'container_image' for r in x['container_image']['requirements']] == ['satisfied']"

spec legacy "{\"images\": [{\"env\": [\"CUDA_VERSION=13.0.1\"], \"layers\": [{\"entries\": [[\"file\", \"lib/libx.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 --driver 12.4 "$TMP/legacy"
expect_rc 1 "CUDA_VERSION alone: the toolkit's legacy cuda>=13.0, which a 12.4 driver fails"
expect_grep "the legacy requirement named" "$TMP/out" "requirement (NVIDIA container toolkit): legacy image, cuda>=13.0"

# ---- owners from the image's own records ----
spec own "{\"images\": [{\"layers\": [{\"entries\": [[\"file\", \"usr/lib/libbad.so\", \"$BAD\"],
 [\"file\", \"var/lib/dpkg/status\", \"text:Package: libfoo\\nStatus: install ok installed\\nVersion: 1.2-3\\n\\n\"],
 [\"file\", \"var/lib/dpkg/info/libfoo:amd64.list\", \"text:/usr/lib/libbad.so\\n\"],
 [\"file\", \"usr/lib/python3/site-packages/torchx/_C.so\", \"$BAD\"],
 [\"file\", \"usr/lib/python3/site-packages/torchx-2.1.dist-info/RECORD\", \"text:torchx/_C.so,,\\n\"]]}]}]}"
run "$PROBE" check --sm 9.0 --json "$TMP/own"
expect_json "dpkg and dist-info records of the image name the owners" \
	"sorted((x['image']['path'], x['package']['name'], x['package']['version']) for x in d['files'] if 'image' in x) == [('/usr/lib/libbad.so', 'libfoo', '1.2-3'), ('/usr/lib/python3/site-packages/torchx/_C.so', 'torchx', '2.1')]"
run "$PROBE" check --sm 9.0 "$TMP/own"
expect_grep "the page by package, as for a directory" "$TMP/out" "  libfoo                           1.2-3          dpkg           1       2  CANNOT RUN"

# Each dist-info's INSTALLER names the installer of its own package only
# (the .dist-info directory of the RECORD, PEP 376): torchy's says pip,
# otherx has none.
spec inst "{\"images\": [{\"layers\": [{\"entries\": [
 [\"file\", \"usr/lib/python3/site-packages/torchy/_C.so\", \"$BAD\"],
 [\"file\", \"usr/lib/python3/site-packages/torchy-2.1.dist-info/RECORD\", \"text:torchy/_C.so,,\\n\"],
 [\"file\", \"usr/lib/python3/site-packages/torchy-2.1.dist-info/INSTALLER\", \"text:pip\\n\"],
 [\"file\", \"usr/lib/python3/site-packages/otherx/_C.so\", \"$BAD\"],
 [\"file\", \"usr/lib/python3/site-packages/otherx-0.3.dist-info/RECORD\", \"text:otherx/_C.so,,\\n\"]]}]}]}"
run "$PROBE" check --sm 9.0 --json "$TMP/inst"
expect_json "INSTALLER: each package's own (pip for torchy, none for otherx)" \
	"sorted((x['package']['name'], x['package'].get('installer')) for x in d['files'] if 'image' in x) == [('otherx', None), ('torchy', 'pip')]"
spec conda "{\"images\": [{\"layers\": [{\"entries\": [[\"file\", \"opt/conda/lib/libcondax.so\", \"$BAD\"],
 [\"file\", \"opt/conda/conda-meta/condax-1.4-h0.json\", \"text:{\\\"name\\\": \\\"condax\\\", \\\"version\\\": \\\"1.4\\\", \\\"files\\\": [\\\"lib/libcondax.so\\\"]}\"]]}]}]}"
run "$PROBE" check --sm 9.0 --json "$TMP/conda"
expect_json "a conda-meta record of the image names the owner" \
	"[(x['image']['path'], x['package']['name'], x['package']['version']) for x in d['files'] if 'image' in x] == [('/opt/conda/lib/libcondax.so', 'condax', '1.4')]"

# ---- CUDA runtimes and cuda-compat libraries inside the image ----
CUDART=$(ls /usr/local/cuda/lib64/libcudart.so.13.* 2>/dev/null | head -1)
[ -n "$CUDART" ] || CUDART=$GOOD
spec compat "{\"images\": [{\"env\": [\"LD_LIBRARY_PATH=/usr/local/cuda/compat\"], \"layers\": [{\"entries\": [
 [\"dir\", \"usr/local/cuda-13.0/compat\"], [\"symlink\", \"usr/local/cuda\", \"cuda-13.0\"],
 [\"file\", \"usr/local/cuda-13.0/compat/libcuda.so.580.65.06\", \"$GOOD\"],
 [\"symlink\", \"usr/local/cuda-13.0/compat/libcuda.so.1\", \"libcuda.so.580.65.06\"],
 [\"file\", \"usr/local/cuda-13.0/lib64/libcudart.so.13.0.48\", \"$CUDART\"]]}]}]}"
run "$PROBE" check --sm 9.0 --driver 12.4 "$TMP/compat"
expect_rc 1 "a CUDA 13.0 runtime in the image against a 12.4 driver: error 35"
expect_grep "the runtime is judged by the error-35 rule" "$TMP/out" "driver CUDA 12.4: NEEDS A NEWER DRIVER: the runtime is of a newer CUDA major than the driver supports -> error 35"
expect_grep "the compat library is found by its final path" "$TMP/out" "cuda-compat: /usr/local/cuda-13.0/compat/libcuda.so.580.65.06 (driver 580.65.06, CUDA 13.0)"
expect_grep "a 12.4 driver gets forward compatibility from it" "$TMP/out" "9.0 (driver CUDA 12.4): forward compatibility: CUDA 13.0 on data-center GPUs"
run "$PROBE" check --sm 9.0 --driver 13.0 --json "$TMP/compat"
expect_rc 0 "the same image against a 13.0 driver"
expect_json "compat not needed on a 13.0 driver; the library named by its final path, driver 580.65.06 (its file name), CUDA 13.0" \
	"[(c['path'], c['driver'], c['cuda_version'], [v['outcome'] for v in c['verdicts']]) for x in d['files'] if x['kind'] == 'container_image' for c in x['container_image']['cuda_compat']] == [('/usr/local/cuda-13.0/compat/libcuda.so.580.65.06', '580.65.06', '13.0', ['not_needed'])]"

# ---- the image's JIT switches (core/jit_env.h; docs/rules.md P6): its Env, not ours ----
# Oracle: the CUDA Programming Guide's environment variables (docs/loading.md
# section 9): CUDA_FORCE_PTX_JIT=1 ignores cubins (sm90_lineinfo.cubin is
# sm_90 SASS only: 209; multi_exe's second module has compute_90 PTX: JIT);
# CUDA_DISABLE_PTX_JIT=1 loads no PTX (ptxonly_exe: compute_80 only: 223).
jit_img() { spec "$1" "{\"images\": [{\"env\": [$2], \"layers\": [{\"entries\": [
 [\"file\", \"usr/lib/k.cubin\", \"$FX/sm90_lineinfo.cubin\"], [\"file\", \"usr/lib/libmulti.so\", \"$GOOD\"],
 [\"file\", \"usr/lib/libptx.so\", \"$FX/ptxonly_exe\"]]}]}]}"; }
verdicts() { python3 -c "import json,sys
d = json.load(open(sys.argv[1]))
print(' '.join('%s:%s:%s' % (f['image']['path'].rsplit('/', 1)[1], v['outcome'], v['rule'])
	       for f in d['files'] if 'image' in f for m in f['modules'] for v in (m.get('verdicts') or []) if v['fate'] != 'not_judged'))" "$TMP/out"; }
jit_img jit0 ""
run "$PROBE" check --sm 9.0 --json "$TMP/jit0"
expect_rc 0 "no JIT switch in the image: cubins used"
check "no switch: sm_90 cubins run as SASS, PTX-only by JIT" test "$(verdicts)" = \
	"k.cubin:sass:S1 libmulti.so:sass:S3 libmulti.so:sass:S3 libptx.so:ptx_jit:P1"
jit_img jitf "\"CUDA_FORCE_PTX_JIT=1\""
run "$PROBE" check --sm 9.0 --json "$TMP/jitf"
expect_rc 1 "CUDA_FORCE_PTX_JIT=1 in the image's Env: a SASS-only module fails"
check "forced JIT: the cubin is ignored (209, P6), the module with PTX runs by JIT" test "$(verdicts)" = \
	"k.cubin:cannot_run:P6 libmulti.so:ptx_jit:P2 libptx.so:ptx_jit:P1"
expect_json "forced JIT: error 209 and the fix names the switch" \
	"[v['expected_error'] for f in d['files'] if f['path'].endswith('k.cubin') for m in f['modules'] for v in m['verdicts']] == [209] and 'unset CUDA_FORCE_PTX_JIT' in json.dumps(d)"
CUDA_FORCE_PTX_JIT=1 run "$PROBE" check --sm 9.0 --json "$TMP/jit0"
expect_rc 0 "kimg-probe's own CUDA_FORCE_PTX_JIT does not reach the container's files"
jit_img jitg "\"CUDA_FORCE_PTX_JIT=0\", \"CUDA_FORCE_JIT=1\""
run "$PROBE" check --sm 9.0 --json "$TMP/jitg"
expect_rc 0 "CUDA_FORCE_PTX_JIT=0 wins over CUDA_FORCE_JIT=1 (the specific name)"
jit_img jitd "\"CUDA_DISABLE_JIT=1\""
run "$PROBE" check --sm 9.0 --json "$TMP/jitd"
expect_rc 1 "CUDA_DISABLE_JIT=1: PTX-only code fails"
check "disabled JIT: cubins still run, PTX-only fails (223, P6)" test "$(verdicts)" = \
	"k.cubin:sass:S1 libmulti.so:sass:S3 libmulti.so:sass:S3 libptx.so:cannot_run:P6"
run "$PROBE" check --sm 9.0 "$TMP/jitf"
expect_grep "text: the switch is shown with what it does" "$TMP/out" "JIT: CUDA_FORCE_PTX_JIT=1: cubins ignored"

# ---- large files read sparsely (core/elf_sparse.c): the same verdicts as whole reads ----
ents=""
for f in "$FX"/*; do case $f in *.so|*_exe|*.o) ents="$ents[\"file\", \"fx/$(basename "$f")\", \"$f\"], ";; esac; done
spec sparse "{\"images\": [{\"layers\": [{\"entries\": [${ents%, }]}]}]}"
KIMG_IMAGE_SPARSE_MIN=1 run "$PROBE" check --sm 8.0,9.0,10.0,12.0 --json "$TMP/sparse"
cp "$TMP/out" "$TMP/sparse.out"; sparse_rc=$rc
KIMG_IMAGE_SPARSE_MIN=100G run "$PROBE" check --sm 8.0,9.0,10.0,12.0 --json "$TMP/sparse"
check "every fixture read sparsely gives the JSON of a whole read" cmp -s "$TMP/sparse.out" "$TMP/out"
check "... and the same exit status ($rc)" test "$sparse_rc" = "$rc"
KIMG_IMAGE_SPARSE_MIN=1 run "$PROBE" scan --kernels --json "$TMP/sparse"
cp "$TMP/out" "$TMP/sparse.out"
KIMG_IMAGE_SPARSE_MIN=100G run "$PROBE" scan --kernels --json "$TMP/sparse"
check "scan --kernels reads files whole (the kernel names are in the payloads)" cmp -s "$TMP/sparse.out" "$TMP/out"

BIG=$(ls -S "${CUDA_HOME:-/usr/local/cuda}"/lib64/lib*.so.* 2>/dev/null | head -1)
if [ -n "$BIG" ] && [ "$(stat -Lc %s "$BIG")" -ge $((100 << 20)) ] && [ -x /usr/bin/time ]; then
	spec big "{\"images\": [{\"layers\": [{\"compress\": \"none\", \"entries\": [[\"file\", \"lib/$(basename "$BIG")\", \"$BIG\"]]}]}]}"
	run /usr/bin/time -f "%M" "$PROBE" check --sm 9.0,10.0 -j 1 --json "$TMP/big"
	cp "$TMP/out" "$TMP/big.out"; big_rss=$(tail -1 "$TMP/err")
	KIMG_IMAGE_SPARSE_MIN=100G run "$PROBE" check --sm 9.0,10.0 -j 1 --json "$TMP/big"
	check "$(basename "$BIG") read sparsely: the JSON of a whole read" cmp -s "$TMP/big.out" "$TMP/out"
	check "$(basename "$BIG") read sparsely: peak RSS ${big_rss} KiB, under half its $(($(stat -Lc %s "$BIG") >> 10)) KiB" \
		test "$big_rss" -lt $(($(stat -Lc %s "$BIG") / 2048))
else
	fail "no CUDA library of 100 MB in ${CUDA_HOME:-/usr/local/cuda}/lib64 (the toolkit the fixtures are built with) or no /usr/bin/time: the sparse read of a large file is not tested"
fi

# ---- bad input: each an error naming the image and layer, exit 2 ----
spec missing "{\"images\": [{\"layers\": [{\"missing\": true, \"entries\": [[\"file\", \"a/libbad.so\", \"$BAD\"]]},
 {\"entries\": [[\"file\", \"b/libgood.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 "$TMP/missing"
expect_rc 2 "a missing blob"
expect_grep "the error names the image and the layer" "$TMP/err" "kimg-probe: $TMP/missing: layer 1 of 2 (sha256:"
expect_grep "the other layer is still checked" "$TMP/out" "$TMP/missing:/b/libgood.so"
spec corrupt "{\"images\": [{\"layers\": [{\"corrupt\": true, \"compress\": \"none\", \"entries\": [[\"file\", \"a/libbad.so\", \"$BAD\"]]},
 {\"entries\": [[\"file\", \"b/libgood.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 "$TMP/corrupt"
expect_rc 2 "a blob whose sha256 does not match"
expect_grep "digest mismatch said" "$TMP/err" "layer 1 of 2 (sha256:"
expect_grep "digest mismatch named" "$TMP/err" "digest mismatch"
check "the damaged layer is not applied" bash -c "! grep -q libbad $TMP/out"
expect_grep "the other layer is still checked" "$TMP/out" "$TMP/corrupt:/b/libgood.so"
# a damaged gzip blob: its digest, not gzip's CRC-32 (not computed), finds it
spec gzcorrupt "{\"images\": [{\"layers\": [{\"corrupt\": true, \"entries\": [[\"file\", \"a/libbad.so\", \"$BAD\"]]},
 {\"entries\": [[\"file\", \"b/libgood.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 "$TMP/gzcorrupt"
expect_rc 2 "a gzip blob with a flipped byte"
expect_grep "its layer named" "$TMP/err" "gzcorrupt: layer 1 of 2 (sha256:"
check "... and not applied" bash -c "! grep -q libbad $TMP/out"
spec names "{\"images\": [{\"layers\": [{\"entries\": [[\"file\", \"../../etc/libbad.so\", \"$BAD\"], [\"file\", \"/abs/libbad.so\", \"$BAD\"],
 [\"symlink\", \"l1\", \"l2\"], [\"symlink\", \"l2\", \"l1\"], [\"file\", \"l1/libbad.so\", \"$BAD\"], [\"file\", \"ok/libgood.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 "$TMP/names"
expect_rc 2 "traversal names, absolute names, a symlink loop"
expect_grep "../ refused" "$TMP/err" "member name '../../etc/libbad.so' leaves the image root"
expect_grep "absolute refused" "$TMP/err" "absolute member name '/abs/libbad.so'"
expect_grep "loop refused" "$TMP/err" "(a loop?)"
expect_grep "the other entries applied" "$TMP/out" "$TMP/names:/ok/libgood.so"
spec bomb "{\"images\": [{\"layers\": [{\"raw_header_size\": 8589934592}, {\"entries\": [[\"file\", \"b/libgood.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 "$TMP/bomb"
expect_rc 2 "a layer bomb (an 8 GiB member in a small blob)"
expect_grep "stopped before inflating" "$TMP/err" "a decompression bomb? Not read"
expect_grep "the layer after the bomb is still checked" "$TMP/out" "$TMP/bomb:/b/libgood.so"
spec diffids "{\"extra_diff_ids\": 1, \"images\": [{\"layers\": [{\"entries\": [[\"file\", \"b/libgood.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 "$TMP/diffids"
expect_rc 2 "a config with more diff_ids than the manifest has layers"
expect_grep "the count mismatch said" "$TMP/err" "config lists 2 diff_ids for 1 layers"
spec many "{\"layers_count\": 10000, \"images\": [{\"layers\": []}]}"
run "$PROBE" check --sm 9.0 "$TMP/many"
expect_rc 2 "a 10,000-layer manifest"
expect_grep "layer limit said" "$TMP/err" "manifest lists 10000 layers, more than kimg reads (4096)"
spec badidx "{\"index_text\": \"{\\\"manifests\\\": [\", \"images\": [{\"layers\": []}]}"
run "$PROBE" check --sm 9.0 "$TMP/badidx"
expect_rc 2 "a malformed index"
expect_grep "index error named" "$TMP/err" "$TMP/badidx: manifest is not valid JSON"
spec badcfg "{\"config_text\": \"{\\\"config\\\": [\", \"images\": [{\"layers\": [{\"entries\": [[\"file\", \"b/libgood.so\", \"$GOOD\"]]}]}]}"
run "$PROBE" check --sm 9.0 "$TMP/badcfg"
expect_rc 2 "a malformed config"
expect_grep "config error named" "$TMP/err" "kimg-probe: $TMP/badcfg: config "
spec badman "{\"manifest_text\": \"{\\\"config\\\": 1, \\\"layers\\\": 2}\", \"images\": [{\"layers\": []}]}"
run "$PROBE" check --sm 9.0 "$TMP/badman"
expect_rc 2 "a malformed manifest"
expect_grep "manifest error named" "$TMP/err" "manifest sha256:"

# every run above, again without libarchive
if [ ${#nola_diff[@]} -eq 0 ]; then
	ok "each of the $nola_runs probe runs again without libarchive (KIMG_LIBARCHIVE=$NOLA): the same stdout, stderr and exit status"
else
	fail "without libarchive, runs differ from those with it: ${#nola_diff[@]} of $nola_runs" "${nola_diff[@]:0:10}"
fi
finish
