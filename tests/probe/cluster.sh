#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 25: check --sm k8s:, slurm:, dcgm: and all: GPUs read from what
# clusters publish, one target per (compute capability, driver CUDA) with
# its node group, and where the job may run after the verdicts.
# Oracles: documents written here in each engine's documented format
# (GFD labels of NVIDIA/k8s-device-plugin docs/gpu-feature-discovery,
# `scontrol show node --oneliner`, dcgm-exporter's Prometheus text), and
# the fixtures' known architectures: sm80_exe holds only sm_80 SASS (runs on
# 8.x but 8.7, not on 9.0), ptx100.fatbin only compute_100 PTX of ISA 9.0
# (runs on 10.x from a CUDA 13.0 driver; error 222 before).
. "$(dirname "$0")/../lib.bash" probe

P() { timeout 120 "$PROBE" "$@"; }
JSON_PROBE_WRAPPERS=P # its --json documents are checked against docs/schema/ too

# ---- documents ----
python3 - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
def labels(maj, mnr, prod, count, rt=None, drv=None, extra=None):
    l = {"kubernetes.io/os": "linux", "nvidia.com/gpu.compute.major": str(maj), "nvidia.com/gpu.compute.minor": str(mnr),
         "nvidia.com/gpu.product": prod, "nvidia.com/gpu.count": str(count), "nvidia.com/gpu.family": "x"}
    if rt:
        l["nvidia.com/cuda.runtime.major"], l["nvidia.com/cuda.runtime.minor"] = rt.split(".")
    if drv:
        l["nvidia.com/cuda.driver.major"], l["nvidia.com/cuda.driver.minor"], l["nvidia.com/cuda.driver.rev"] = drv.split(".")
    l.update(extra or {})
    return l
def node(name, l):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": l}, "status": {"capacity": {"cpu": "64"}}}
def write(name, items, kind="List"):
    json.dump({"apiVersion": "v1", "items": items, "kind": kind, "metadata": {"resourceVersion": ""}}, open(f"{d}/{name}", "w"), indent=1)
h100 = labels(9, 0, "NVIDIA-H100-80GB-HBM3", 8, "12.4", "550.54.15")
a100 = labels(8, 0, "NVIDIA-A100-SXM4-80GB", 8, "12.2", "535.104.05")
mig = labels(8, 0, "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 56, "12.2", "535.104.05", {"nvidia.com/mig.strategy": "single"})
write("gfd.json", [node("gpu-h1", h100), node("gpu-h2", h100), node("gpu-a1", a100), node("gpu-m1", mig),
                   node("cpu-1", {"kubernetes.io/os": "linux"}), node("cpu-2", {})])
items = [{k: v for k, v in node("gpu-a1", a100).items() if k not in ("kind", "apiVersion")}]
json.dump({"kind": "NodeList", "apiVersion": "v1", "items": items}, open(f"{d}/nodelist.json", "w"))
write("h100only.json", [node("gpu-h1", h100), node("cpu-1", {})])
write("odd.json", [node("gpu-h1", h100), node("bad-1", labels("x", 0, "NVIDIA-H100", 8, "12.4")),
                   node("gpu-h1", h100), node("dup-free", h100)])
b = lambda rt: labels(10, 0, "NVIDIA-B200", 8, rt)
write("drivers.json", [node("b-old", b("12.8")), node("b-new", b("13.1"))])
write("pods.json", [{"kind": "Pod", "metadata": {"name": "p"}}])
PY
printf '%s\n' \
	'NodeName=gpu-h1 Arch=x86_64 CoresPerSocket=32 AvailableFeatures=h100,ib ActiveFeatures=h100,ib Gres=gpu:h100:8(S:0-1) State=IDLE Reason=maintenance [root@2026-11-30T10:00:00] Gres=gpu:a100:1' \
	'NodeName=gpu-h2 Arch=x86_64 AvailableFeatures=h100 Gres=gpu:h100:8(S:0-1),shard:h100:32 State=IDLE' \
	'NodeName=gpu-a1 Gres=gpu:nvidia_a100-sxm4-80gb:4(S:0),gpu:tesla_v100:2(S:1) State=MIXED' \
	'NodeName=gpu-x1 Gres=gpu:mi300x:8 State=IDLE' \
	'NodeName=cpu-1 Gres=(null) State=IDLE' >"$TMP/nodes.slurm"
cat >"$TMP/metrics.txt" <<'EOF'
# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-a0",pci_bus_id="00000000:01:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a",DCGM_FI_DRIVER_VERSION="550.54.15"} 1980
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-b0",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="1g.5gb",GPU_I_ID="8",Hostname="node-b",DCGM_FI_DRIVER_VERSION="535.104.05"} 1410
DCGM_FI_DEV_SM_CLOCK{gpu="1",UUID="GPU-a1",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a",DCGM_FI_DRIVER_VERSION="550.54.15"} 1980
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-b0",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="9",Hostname="node-b",DCGM_FI_DRIVER_VERSION="535.104.05"} 1410
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a",DCGM_FI_DRIVER_VERSION="550.54.15"} 40
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-b0",modelName="NVIDIA A100-SXM4-40GB",Hostname="node-b",DCGM_FI_DRIVER_VERSION="535.104.05"} 38
go_gc_duration_seconds{quantile="0"} 1.5e-05
EOF

# ---- 1. Kubernetes ----
run P check --sm "k8s:$TMP/gfd.json" --json "$FX/sm80_exe"
expect_rc 1 "k8s: sm80_exe fails on the H100 group"
expect_json "two groups: (9.0, 12.4) and (8.0, 12.2), named with their nodes" \
	'[(t["sm"], t["driver_cuda_version"], t["device"]) for t in d["targets"]] ==
	 [("9.0", "12.4", "gpu-h1, gpu-h2: 16 × H100, driver CUDA 12.4"),
	  ("8.0", "12.2", "gpu-a1, gpu-m1: 8 × A100, 56 × A100 MIG 1g.5gb, driver CUDA 12.2")]'
expect_json "placement: the 8.0 group runs, the 9.0 group does not, with the fix" \
	'(lambda s: [(g["sm"], g["runs"], g["nodes"], g["gpus"]) for g in s["groups"]] == [("9.0", False, 2, 16), ("8.0", True, 2, 64)]
	 and "compute_90" in s["groups"][0]["fix"] and s["any_runs"] is True)(d["placement"][0])'
expect_json "nodes without GPU labels listed once, never a failure" \
	'd["placement"][0]["no_gpu_facts"] == {"nodes": 2, "node_names": ["cpu-1", "cpu-2"]}
	 and d["placement"][0]["reasons"] == [{"why": "no GPU labels", "nodes": 2, "first": "cpu-1"}]'
expect_json "the affinity selects compute capability 8.0 on GFD labels" \
	'd["placement"][0]["kubernetes_affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
	 == [{"matchExpressions": [{"key": "nvidia.com/gpu.compute.major", "operator": "In", "values": ["8"]},
	                            {"key": "nvidia.com/gpu.compute.minor", "operator": "In", "values": ["0"]}]}]'
# -j 1: no worker threads, each file's rows added to the totals directly
# (not through a job's copy): the same placement.
run P check -j 1 --sm "k8s:$TMP/gfd.json" --json "$FX/sm80_exe"
expect_rc 1 "k8s, -j 1: sm80_exe fails on the H100 group"
expect_json "k8s, -j 1: placement: the 8.0 group runs, the 9.0 group does not, with the fix" \
	'(lambda s: [(g["sm"], g["runs"], g["nodes"], g["gpus"]) for g in s["groups"]] == [("9.0", False, 2, 16), ("8.0", True, 2, 64)]
	 and "compute_90" in s["groups"][0]["fix"] and s["any_runs"] is True)(d["placement"][0])'
run P check --sm "k8s:$TMP/gfd.json" "$FX/sm80_exe"
expect_grep "text: the group label" "$TMP/out" "9.0 (gpu-h1, gpu-h2: 16 × H100, driver CUDA 12.4)"
expect_grep "text: where it may run" "$TMP/out" "    runs          8.0 (gpu-a1, gpu-m1: 8 × A100, 56 × A100 MIG 1g.5gb, driver CUDA 12.2)"
expect_grep "text: does not run, with its fix" "$TMP/out" "    does not run  9.0 (gpu-h1, gpu-h2: 16 × H100, driver CUDA 12.4)"
expect_grep "text: nodes without GPU facts" "$TMP/out" "no GPU facts  2 nodes: cpu-1, cpu-2 (never a failure)"
# the pasted affinity is valid YAML of a pod spec: python reads it back (a flow-style subset)
sed -n '/^      affinity:/,/^[^ ]/p' "$TMP/out" | sed '$d' >"$TMP/affinity.yaml"
if python3 -c 'import yaml' 2>/dev/null; then
	expect_eq "the text affinity parses as YAML to the JSON one" "True" "$(python3 -c '
import yaml, json, sys
y = yaml.safe_load(open(sys.argv[1]))["affinity"]
j = json.load(open(sys.argv[2]))
print(y == j["placement"][0]["kubernetes_affinity"])' "$TMP/affinity.yaml" <(P check --sm "k8s:$TMP/gfd.json" --json "$FX/sm80_exe"))"
else
	missing python3-yaml "reads the pasted affinity back (scripts/setup-debian.sh installs it)"
fi
run P check --sm "k8s:$TMP/nodelist.json" "$FX/sm80_exe"
expect_rc 0 "NodeList (GET /api/v1/nodes, items without kind): the A100 runs it"
run sh -c "'$PROBE' check --sm k8s:- --json '$FX/sm80_exe' <'$TMP/gfd.json'"
expect_json "k8s:- reads standard input" 'len(d["targets"]) == 2 and d["placement"][0]["input"] == "k8s:-"'
run P check --sm "k8s:$TMP/h100only.json" --json "$FX/sm80_exe"
expect_rc 1 "no group can run it"
expect_json "no group can run it: said, with the fix, and no constraint" \
	'(lambda s: s["any_runs"] is False and "compute_90" in s["fix"] and s["kubernetes_affinity"] is None)(d["placement"][0])'
run P check --sm "k8s:$TMP/h100only.json" "$FX/sm80_exe"
expect_grep "text: no group can run it" "$TMP/out" "no group can run it; fix: nvcc"
run P check --sm "k8s:$TMP/h100only.json" "$FX/multi.fatbin"
expect_rc 0 "the node without labels never fails the check"
# a driver floor: B200 at CUDA 12.8 cannot JIT ISA 9.0 PTX (222), at 13.1 it can
run P check --sm "k8s:$TMP/drivers.json" --json "$FX/ptx100.fatbin"
expect_json "same CC, two drivers: 12.8 fails (222), 13.1 runs" \
	'[(g["driver_cuda_version"], g["runs"]) for g in d["placement"][0]["groups"]] == [("12.8", False), ("13.1", True)]'
expect_json "the affinity adds the driver floor 13.1: runtime.major > 13, or 13 and minor > 0" \
	'[[(e["key"].split("/")[1], e["operator"], e["values"][0]) for e in t["matchExpressions"]]
	  for t in d["placement"][0]["kubernetes_affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]]
	 == [[("gpu.compute.major", "In", "10"), ("gpu.compute.minor", "In", "0"), ("cuda.runtime.major", "Gt", "13")],
	     [("gpu.compute.major", "In", "10"), ("gpu.compute.minor", "In", "0"), ("cuda.runtime.major", "In", "13"), ("cuda.runtime.minor", "Gt", "0")]]'

# doctor takes the same sources, and ends with the same placement
mkdir -p "$TMP/env"
cp "$FX/sm80_exe" "$TMP/env/app"
run P doctor --sm "k8s:$TMP/gfd.json" --json "$TMP/env"
expect_rc 1 "doctor --sm k8s: the H100 group fails"
expect_json "doctor: placement as check's, 8.0 runs, 9.0 does not" \
	'[(g["sm"], g["runs"]) for g in d["placement"][0]["groups"]] == [("9.0", False), ("8.0", True)]
	 and d["placement"][0]["kubernetes_affinity"] is not None'
expect_json "doctor: the 9.0 group's fix is the rebuild for compute_90, as check's (not the fallback text)" \
	'"compute_90" in d["placement"][0]["groups"][0]["fix"] and d["placement"][0]["groups"][0]["fix"].startswith("nvcc ")'
run P doctor --sm "k8s:$TMP/gfd.json" "$TMP/env"
expect_grep "doctor text: where it may run" "$TMP/out" "    runs          8.0 (gpu-a1, gpu-m1: 8 × A100, 56 × A100 MIG 1g.5gb, driver CUDA 12.2)"

# ---- 2. Kubernetes: hostile documents ----
run P check --sm "k8s:$TMP/odd.json" --json "$FX/multi.fatbin"
expect_json "odd label value: that node listed with why; a duplicate read once" \
	'(lambda s: s["nodes"] == 3 and s["duplicates"] == 1 and s["groups"][0]["nodes"] == 2
	 and s["reasons"] == [{"why": "label nvidia.com/gpu.compute.major is \"x\", not a number", "nodes": 1, "first": "bad-1"}])(d["placement"][0])'
head -c 300 "$TMP/gfd.json" >"$TMP/cut.json"
run P check --sm "k8s:$TMP/cut.json" "$FX/multi.fatbin"
expect_rc 2 "a truncated node list"
expect_grep "names the input and says it ends early" "$TMP/err" "kimg-probe: --sm k8s:$TMP/cut.json: JSON ends"
printf '{"items":[{"metadata":{"name":"a"}}],"kind":"List"} x' >"$TMP/trail.json"
run P check --sm "k8s:$TMP/trail.json" "$FX/multi.fatbin"
expect_grep "bytes after the document" "$TMP/err" "bytes after the JSON document"
printf '{"items":[{"metadata":{"name":"a\000b"}}],"kind":"List"}' >"$TMP/nul.json"
run P check --sm "k8s:$TMP/nul.json" "$FX/multi.fatbin"
expect_rc 2 "a NUL byte in the JSON"
expect_grep "the NUL byte named" "$TMP/err" "byte 0x00 in a string"
run P check --sm "k8s:$TMP/pods.json" "$FX/multi.fatbin"
expect_grep "a list of Pods" "$TMP/err" "item 1 is a Pod, not a Node"
python3 - "$TMP/esc.json" <<'PY'
import json, sys
l = {"nvidia.com/gpu.compute.major": "8", "nvidia.com/gpu.compute.minor": "0", "nvidia.com/gpu.count": "1"}
json.dump({"kind": "List", "items": [{"metadata": {"name": "evil\u001b[2J\u0007", "labels": l}}]}, open(sys.argv[1], "w"))
PY
run P check --sm "k8s:$TMP/esc.json" "$FX/sm80_exe"
expect_eq "a node name with ESC and BEL: no control byte reaches the text" "0" "$(tr -d '\n\t' <"$TMP/out" | LC_ALL=C grep -c '[[:cntrl:]]')"
expect_grep "the name shown with ? for each control byte" "$TMP/out" "8.0 (evil?[2J?: 1 × GPU)"
run P check --sm "k8s:$TMP/gfd.json,k8s:$TMP/gfd.json" --json "$FX/sm80_exe"
expect_json "the same source twice: two sources, each with its own targets" \
	'len(d["placement"]) == 2 and len(d["targets"]) == 4 and d["placement"][1]["groups"][0]["target"] == 2'
echo '{"kind":"List","items":[{"metadata":{"name":"c"}}]}' >"$TMP/nogpu.json"
run P check --sm "k8s:$TMP/nogpu.json" "$FX/multi.fatbin"
expect_rc 2 "no node has GPU labels: nothing to check"
expect_grep "says so, and why" "$TMP/err" "none of its 1 node has GPU facts kimg can read (no GPU labels; is GPU Feature Discovery deployed?)"

# ---- 3. kubectl and scontrol run by kimg ----
mkdir -p "$TMP/bin" "$TMP/empty"
cat >"$TMP/bin/kubectl" <<EOF
#!/bin/sh
[ "\$*" = "get nodes -o json" ] || { echo "stand-in kubectl: unexpected arguments: \$*" >&2; exit 64; }
[ -n "\${KUBECTL_FAIL:-}" ] && { echo "error: You must be logged in to the server (Unauthorized)" >&2; exit 1; }
cat "$TMP/gfd.json"
EOF
cat >"$TMP/bin/scontrol" <<EOF
#!/bin/sh
[ "\$*" = "show node --oneliner" ] || { echo "stand-in scontrol: unexpected arguments: \$*" >&2; exit 64; }
cat "$TMP/nodes.slurm"
EOF
chmod +x "$TMP/bin/kubectl" "$TMP/bin/scontrol"
run env PATH="$TMP/bin:$PATH" "$PROBE" check --sm k8s: --json "$FX/sm80_exe"
expect_json "k8s: runs kubectl get nodes -o json" \
	'd["placement"][0]["input"] == "k8s: (kubectl get nodes -o json)" and len(d["targets"]) == 2'
# (under make test-aarch64 the probe is a qemu stand-in that finds qemu on PATH: give it qemu's path)
qemu=$(command -v "${KIMG_QEMU:-qemu-aarch64-static}" 2>/dev/null || echo "${KIMG_QEMU:-qemu-aarch64-static}")
run env PATH="$TMP/empty" KIMG_QEMU="$qemu" "$PROBE" check --sm k8s: "$FX/sm80_exe"
expect_rc 2 "k8s: without kubectl"
expect_grep "kubectl missing: said, with the way out" "$TMP/err" \
	"kimg-probe: --sm k8s:: 'kubectl get nodes -o json' could not be read: kubectl is not on PATH (install kubectl, or save its output to a file and give k8s:FILE)"
run env PATH="$TMP/bin:$PATH" KUBECTL_FAIL=1 "$PROBE" check --sm k8s: "$FX/sm80_exe"
expect_rc 2 "k8s: with kubectl failing"
expect_grep "kubectl's own message passes through" "$TMP/err" "error: You must be logged in to the server (Unauthorized)"
expect_grep "and kimg says it failed" "$TMP/err" "could not be read: it failed (exit status 1)"
run env PATH="$TMP/bin:$PATH" "$PROBE" check --sm slurm: --json "$FX/sm80_exe"
expect_json "slurm: runs scontrol show node --oneliner" 'd["placement"][0]["input"] == "slurm: (scontrol show node --oneliner)"'

# ---- 4. Slurm ----
run P check --sm "slurm:$TMP/nodes.slurm" --json "$FX/sm80_exe"
expect_rc 1 "slurm: sm80_exe fails on the H100 and V100 groups"
expect_json "GRES types through the name table (case, nvidia_ and tesla_ prefixes): three groups" \
	'[(t["sm"], t["device"]) for t in d["targets"]] ==
	 [("9.0", "gpu-h1, gpu-h2: 16 × H100"), ("8.0", "gpu-a1: 4 × A100"), ("7.0", "gpu-a1: 2 × Tesla V100")]'
expect_json "the mixed node is in two groups; Reason text and shards are not GPUs" \
	'[(g["nodes"], g["gpus"], g["gres_types"]) for g in d["placement"][0]["groups"]] ==
	 [(2, 16, ["h100"]), (1, 4, ["nvidia_a100-sxm4-80gb"]), (1, 2, ["tesla_v100"])]'
expect_json "the Slurm line: --gres on the one type that runs" 'd["placement"][0]["slurm"] == "--gres=gpu:nvidia_a100-sxm4-80gb:1"'
expect_json "an unknown type: its node listed with why" \
	'{"why": "GRES type '"'"'mi300x'"'"' is not in kimg'"'"'s GPU-name table", "nodes": 1, "first": "gpu-x1"} in d["placement"][0]["reasons"]'
expect_grep "the unknown type named, with how to map it" "$TMP/err" \
	"note: GRES type 'mi300x' is not in kimg's GPU-name table (1 node, first gpu-x1): map it in a site file named by \$KIMG_GRES_MAP"
printf '# site GRES types\nmi300x = 9.0\n' >"$TMP/gres.map"
run env KIMG_GRES_MAP="$TMP/gres.map" "$PROBE" check --sm "slurm:$TMP/nodes.slurm" --json "$FX/multi.fatbin"
expect_json "KIMG_GRES_MAP: mi300x read as 9.0, in the H100 group" \
	'd["placement"][0]["groups"][0]["nodes"] == 3 and d["placement"][0]["no_gpu_facts"]["nodes"] == 1'
expect_json "several running types: a --constraint line and its note" \
	'd["placement"][0]["slurm"] == "--constraint=\"h100|mi300x|nvidia_a100-sxm4-80gb\"" and "Features" in d["placement"][0]["slurm_note"]'
printf 'mi300x = Radeon\n' >"$TMP/bad.map"
run env KIMG_GRES_MAP="$TMP/bad.map" "$PROBE" check --sm "slurm:$TMP/nodes.slurm" "$FX/multi.fatbin"
expect_rc 2 "a bad site map"
expect_grep "the map's line named" "$TMP/err" "line 1: 'Radeon' is neither a GPU name kimg knows nor a compute capability"
printf 'NodeName=a Gres=gpu:h100:1\000NodeName=b\n' >"$TMP/nul.slurm"
run P check --sm "slurm:$TMP/nul.slurm" "$FX/multi.fatbin"
expect_grep "slurm: a NUL byte" "$TMP/err" "a NUL byte: not 'scontrol show node' output"
run P check --sm "slurm:$TMP/gfd.json" "$FX/multi.fatbin"
expect_grep "slurm: a JSON document instead" "$TMP/err" "before any NodeName=: not 'scontrol show node' output"

# ---- 5. dcgm-exporter ----
run P check --sm "dcgm:$TMP/metrics.txt" --json "$FX/sm80_exe"
expect_json "dcgm: hosts interleaved, GPUs by UUID, MIG instances one GPU, driver release to CUDA" \
	'[(t["sm"], t["driver_cuda_version"], t["device"]) for t in d["targets"]] ==
	 [("9.0", "12.4", "node-a: 2 × H100, driver CUDA 12.4"), ("8.0", "12.2", "node-b: 1 × A100 (MIG), driver CUDA 12.2")]'
expect_json "dcgm: the host list of the group that runs" 'd["placement"][0]["slurm"] == "--nodelist=node-b" and d["placement"][0]["nodes"] == 2'
run P check --sm dcgm: "$FX/sm80_exe"
expect_grep "dcgm: alone says how to feed it" "$TMP/err" "needs a FILE or - (e.g. curl -s http://NODE:9400/metrics"
printf 'DCGM_FI_DEV_SM_CLOCK{UUID="GPU-a",modelName="H100" 5\n' >"$TMP/bad.txt"
run P check --sm "dcgm:$TMP/bad.txt" "$FX/sm80_exe"
expect_grep "dcgm: a malformed line named" "$TMP/err" "line 1: ',' or '}' expected at column"

# ---- 6. --sm all ----
run P check --sm all "$FX/sm80_exe"
expect_rc 1 "all: sm80_exe fails on most of the table"
expect_grep "all: runs on 8.0" "$TMP/out" "    runs on       8.0 (A100, A30, A800)"
expect_grep "all: does not run on 9.0, with the fix" "$TMP/out" "    does not run on 9.0 (H100, H200, GH200, H800, H20)"
expect_eq "all: exactly 8.9, 8.6 and 8.0 run (sm_80 SASS: same major, not Tegra 8.7)" "8.9 8.6 8.0" \
	"$(grep -o '^    runs on       [0-9.]*' "$TMP/out" | awk '{print $3}' | xargs)"
run P check --sm all --json "$FX/multi.fatbin"
expect_json "all: one target per compute capability of the name table" \
	'len(d["targets"]) == len({(t["sm"], t["tegra"]) for t in d["targets"]}) and d["placement"][0]["source"] == "all"'

# ---- 7. 100,000 nodes: read in linear time ----
python3 - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
def node_text(i, h):
    l = {"kubernetes.io/hostname": "gpu-%d" % i, "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "p5.48xlarge",
         "nvidia.com/gpu.compute.major": "98"[h > 0], "nvidia.com/gpu.compute.minor": "006"[h],
         "nvidia.com/gpu.product": ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-A10G"][h],
         "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81559", "nvidia.com/cuda.driver.major": "550",
         "nvidia.com/cuda.driver.minor": "54", "nvidia.com/cuda.driver.rev": "15", "nvidia.com/cuda.runtime.major": "12",
         "nvidia.com/cuda.runtime.minor": "4", "nvidia.com/gfd.timestamp": "1733011200"}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-%d" % i, "labels": l, "uid": "%032x" % i},
            "status": {"capacity": {"cpu": "192", "nvidia.com/gpu": "8"},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}],
                       "nodeInfo": {"kubeletVersion": "v1.31.2", "osImage": "Debian GNU/Linux 12 (bookworm)"}}}
    return json.dumps(node, separators=(',', ':'))
# The three kinds of node as templates of the text above, made once (json.dumps
# of 110,000 nodes took most of this script's time): node i is the template of
# i % 3 with i written where the sentinel number stands, in each of its 3 places.
SENTINEL = 987654321
tmpl = [node_text(SENTINEL, h).replace("%", "%%").replace("%032x" % SENTINEL, "%032x").replace(str(SENTINEL), "%d")
        for h in range(3)]
def doc(n, path):
    with open(path, "w") as f:
        f.write('{"apiVersion":"v1","items":[')
        f.write(",".join(tmpl[i % 3] % (i, i, i) for i in range(n)))
        f.write('],"kind":"List","metadata":{"resourceVersion":""}}')
doc(10000, d + "/n10k.json")
doc(100000, d + "/n100k.json")
PY
read_time() { # FILE: the seconds kimg says it took to read and group it, the least of 3 runs (a shared machine)
	for _ in 1 2 3; do
		env KIMG_CLUSTER_TIMING=1 timeout 120 "$PROBE" check --sm "k8s:$1" "$FX/multi.fatbin" 2>&1 >/dev/null |
			sed -n 's/.* read in \([0-9.]*\) s$/\1/p'
	done | sort -n | head -n 1
}
t10=$(read_time "$TMP/n10k.json"); t100=$(read_time "$TMP/n100k.json")
run P check --sm "k8s:$TMP/n100k.json" --json "$FX/multi.fatbin"
expect_json "100,000 nodes: three groups of 33,334 / 33,333 / 33,333 nodes, 800,000 GPUs" \
	'[(g["sm"], g["nodes"]) for g in d["placement"][0]["groups"]] == [("9.0", 33334), ("8.0", 33333), ("8.6", 33333)]
	 and sum(g["gpus"] for g in d["placement"][0]["groups"]) == 800000 and d["placement"][0]["nodes"] == 100000'
echo "   read: 10,000 nodes ${t10:-?} s, 100,000 nodes ${t100:-?} s ($(du -m "$TMP/n100k.json" | cut -f1) MB)"
# linear is 10x; a reader quadratic in the nodes would take 100x
expect_eq "100,000 nodes read in linear time: at most 30x the time of 10,000" "yes" \
	"$(awk -v a="${t10:-0}" -v b="${t100:-999}" 'BEGIN { print (b <= 30 * (a > 0.005 ? a : 0.005)) ? "yes" : "no (" a " s, " b " s)" }')"

finish
