#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 24's GPU item: an image of the GPU machine's whole Python environment,
# checked against `native`. The image is an OCI layout built here by hand
# (python's tarfile: umoci and skopeo are not on the GPU machine), its layers
# the site-packages of /opt/torch/.venv split by size into gzip layers, one
# of them left uncompressed, with the environment's absolute paths. The
# oracle is the directory itself: `check --sm native` of the image must give
# the same files, the same verdicts per (file, module, target) and the same
# exit status as `check --sm native` of the site-packages directory, and the
# image's files must be named IMAGE:/path with their layer.
# Prints figures, PASS/FAIL lines, and "N passed, M failed"; exit 0 only when
# every check ran and passed. Runs in well under 5 minutes on the H200.
#   KIMG_IMAGE_SITE   the directory to image (default: /opt/torch/.venv's site-packages)
#   KIMG_IMAGE_LAYERS gzip layers (default 8); PROBE (default build/kimg-probe)
#   KIMG_IMAGE_WORK   where the image is written (default: a temporary directory, removed)
# Off the GPU machine, `native` needs the stand-in driver: run with
# LD_LIBRARY_PATH=build/fake_cuda:build/fake_nvml FAKE_CUDA_SM=90 FAKE_CUDA_DRIVER=13000.
set -u
PROBE=${PROBE:-build/kimg-probe}
PY=/opt/torch/.venv/bin/python
[ -x "$PY" ] || PY=python3
SITE=${KIMG_IMAGE_SITE:-$(/opt/torch/.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)}
LAYERS=${KIMG_IMAGE_LAYERS:-8}
EXPECTED=7
pass=0 fail=0
ok() { if eval "$2"; then echo "PASS $1"; pass=$((pass + 1)); else echo "FAIL $1"; fail=$((fail + 1)); fi; }
die() { echo "FAIL $*"; echo "$pass passed, $((fail + 1)) failed"; exit 1; }
[ -x "$PROBE" ] || die "prerequisite $PROBE not built (make)"
[ -n "$SITE" ] && [ -d "$SITE" ] || die "prerequisite: no site-packages at '${SITE:-/opt/torch/.venv}' (KIMG_IMAGE_SITE)"
SITE=$(cd "$SITE" && pwd -P)
if [ -n "${KIMG_IMAGE_WORK:-}" ]; then W=$KIMG_IMAGE_WORK; rm -rf "$W"; mkdir -p "$W"; else
	W=$(mktemp -d "${TMPDIR:-/tmp}/kimg-image-gpu.XXXXXX"); trap 'rm -rf "$W"' EXIT; fi
echo "site-packages: $SITE ($(du -sh "$SITE" 2>/dev/null | cut -f1))"

# ---- the image: an OCI layout, layers made in parallel ----
t0=$(date +%s.%N)
"$PY" - "$SITE" "$W/oci" "$LAYERS" <<'PY' || die "building the image"
import gzip, hashlib, json, os, shutil, sys, tarfile
from concurrent.futures import ProcessPoolExecutor

site, out, n_layers = sys.argv[1], sys.argv[2], int(sys.argv[3])
blobs = os.path.join(out, "blobs", "sha256")
os.makedirs(blobs)

def size_of(p):
    total = 0
    for root, dirs, files in os.walk(p):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total if os.path.isdir(p) and not os.path.islink(p) else os.lstat(p).st_size

# top-level entries split into layers by size, largest first, each to the lightest layer
entries = sorted(os.listdir(site))
sizes = {e: size_of(os.path.join(site, e)) for e in entries}
groups = [[] for _ in range(n_layers)]
weight = [0] * n_layers
for e in sorted(entries, key=lambda e: -sizes[e]):
    i = weight.index(min(weight))
    groups[i].append(e)
    weight[i] += sizes[e]
groups = [g for g in groups if g]

def parents(path):
    parts = path.strip("/").split("/")
    return ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]

def make_layer(job):
    index, names, compress = job
    tmp = os.path.join(out, "layer%d.tmp" % index)
    raw = hashlib.sha256()
    class Tee:
        def __init__(self, f): self.f = f
        def write(self, b):
            raw.update(b)
            return self.f.write(b)
    with open(tmp, "wb") as f:
        gz = gzip.GzipFile(fileobj=f, mode="wb", compresslevel=1, mtime=0) if compress else None
        tee = Tee(gz if gz else f)
        with tarfile.open(fileobj=tee, mode="w|", format=tarfile.PAX_FORMAT) as t:
            if index == 0:  # the directories above site-packages, once
                for d in parents(site)[:-1]:
                    ti = tarfile.TarInfo(d)
                    ti.type = tarfile.DIRTYPE
                    ti.mode = 0o755
                    t.addfile(ti)
            if index == 0:
                ti = tarfile.TarInfo(site.strip("/"))
                ti.type = tarfile.DIRTYPE
                ti.mode = 0o755
                t.addfile(ti)
            # every path its own entry: files sharing an inode stay regular
            # files (tarfile would write the second as a hard link, which an
            # image judges under one name), as the directory walk sees them
            def add(path):
                t.inodes.clear()
                t.add(path, arcname=path.lstrip("/"), recursive=False)
            for n in sorted(names):
                top = os.path.join(site, n)
                add(top)
                if os.path.isdir(top) and not os.path.islink(top):
                    for root, dirs, files in os.walk(top):
                        dirs.sort()
                        for e in sorted(dirs) + sorted(files):
                            add(os.path.join(root, e))
        if gz:
            gz.close()
    h = hashlib.sha256()
    with open(tmp, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    digest = h.hexdigest()
    os.rename(tmp, os.path.join(blobs, digest))
    return index, digest, os.path.getsize(os.path.join(blobs, digest)), "sha256:" + raw.hexdigest(), compress

# layer 0 (the directories and the first group) gzip; the last one uncompressed
jobs = [(i, g, i != len(groups) - 1 or len(groups) == 1) for i, g in enumerate(groups)]
with ProcessPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as ex:
    layers = sorted(ex.map(make_layer, jobs))

def blob(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, d), "wb").write(data)
    return d, len(data)

config = {"architecture": "amd64", "os": "linux",
          "config": {"Env": ["PATH=/opt/torch/.venv/bin:/usr/bin:/bin"]},
          "rootfs": {"type": "layers", "diff_ids": [l[3] for l in layers]},
          "history": [{"created_by": "COPY site-packages part %d" % (l[0] + 1)} for l in layers]}
cd, cs = blob(json.dumps(config).encode())
manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + cd, "size": cs},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if l[4] else ""),
                        "digest": "sha256:" + l[1], "size": l[2]} for l in layers]}
md, ms = blob(json.dumps(manifest).encode())
json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                                               "digest": "sha256:" + md, "size": ms}]},
          open(os.path.join(out, "index.json"), "w"))
open(os.path.join(out, "oci-layout"), "w").write('{"imageLayoutVersion": "1.0.0"}')
print("image: %d layers (%d gzip), %d bytes of blobs" % (len(layers), sum(1 for l in layers if l[4]),
      sum(l[2] for l in layers)))
PY
t1=$(date +%s.%N)
# seconds between two date +%s.%N readings (awk: the GPU machine has no bc)
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
echo "image built in $(secs "$t0" "$t1")s"

# ---- the two checks ----
t1=$(date +%s.%N)
timeout 240 "$PROBE" check --sm native --json "$SITE" >"$W/dir.json" 2>"$W/dir.err"
rc_dir=$?
t2=$(date +%s.%N)
timeout 240 "$PROBE" check --sm native --json "$W/oci" >"$W/img.json" 2>"$W/img.err"
rc_img=$?
t3=$(date +%s.%N)
echo "check --sm native of the directory: $(secs "$t1" "$t2")s (exit $rc_dir); of the image: $(secs "$t2" "$t3")s (exit $rc_img)"
ok "the directory is checked (exit 0 or 1, not $rc_dir)" '[ $rc_dir -le 1 ]'
ok "the image is checked (exit 0 or 1, not $rc_img)" '[ $rc_img -le 1 ]'
ok "the same exit status ($rc_dir, $rc_img)" '[ $rc_dir = $rc_img ]'

python3 - "$W/dir.json" "$W/img.json" "$W/oci" "$SITE" >"$W/cmp.txt" 2>&1 <<'PY'
import collections, json, sys
d, i = (json.load(open(p)) for p in sys.argv[1:3])
image, site = sys.argv[3], sys.argv[4]
def rows(doc, prefix):
    files, verdicts, outcomes = {}, {}, collections.Counter()
    for f in doc.get("files", []):
        if f.get("kind") == "container_image":
            continue
        p = f["path"]
        if prefix:
            if not p.startswith(prefix + ":"):
                continue
            p = p[len(prefix) + 1:]
        files[p] = f
        for k, m in enumerate(f.get("modules") or []):
            for v in m.get("verdicts") or []:
                key = (p, k, v.get("sm"), v.get("index") if "index" in v else v.get("device"))
                verdicts[key] = (v.get("outcome"), v.get("rule"), v.get("fate"))
                if v.get("fate") != "not_judged":
                    outcomes[v.get("outcome")] += 1
    return files, verdicts, outcomes
df, dv, do = rows(d, None)
if_, iv, io = rows(i, image)
# A symlink to a file of the tree: the directory walk judges it by its own
# name too, the image walk once, by the target's path (docs/deploy.md):
# left out of the comparison when its target is judged in the image.
import os
links = [p for p in set(df) - set(if_) if os.path.islink(p) and os.path.realpath(p) in if_]
for p in links:
    del df[p]
for k in [k for k in dv if k[0] in links]:
    v = dv.pop(k)
    if v[2] != "not_judged":
        do[v[0]] -= 1
do = +do
print("symlinks judged through their targets in the image: %d" % len(links))
print("directory: %d files, %d verdicts %s" % (len(df), len(dv), dict(sorted(do.items()))))
print("image:     %d files, %d verdicts %s" % (len(if_), len(iv), dict(sorted(io.items()))))
only_d = sorted(set(df) - set(if_)); only_i = sorted(set(if_) - set(df))
print("FILES", "same" if not only_d and not only_i else "differ")
for p in only_d[:10]: print("  only in the directory:", p)
for p in only_i[:10]: print("  only in the image:", p)
diff = [k for k in set(dv) | set(iv) if dv.get(k) != iv.get(k)]
print("VERDICTS", "same" if not diff else "differ")
for k in sorted(diff, key=str)[:10]: print("  ", k, "directory", dv.get(k), "image", iv.get(k))
print("COUNTS", "same" if do == io else "differ")
layered = all(f.get("image", {}).get("layer") for f in if_.values())
print("LAYERS", "named" if layered and if_ else "missing")
print("NONEMPTY", "yes" if dv else "no")
PY
cat "$W/cmp.txt"
ok "the image holds the directory's files, named IMAGE:/path" 'grep -q "^FILES same" "$W/cmp.txt"'
ok "the same verdict for every (file, module, target)" 'grep -q "^VERDICTS same" "$W/cmp.txt"'
ok "the same verdict counts, and some verdicts at all" 'grep -q "^COUNTS same" "$W/cmp.txt" && grep -q "^NONEMPTY yes" "$W/cmp.txt" && grep -q "^LAYERS named" "$W/cmp.txt"'
ok "the image's check reports no read errors" '! grep -q "layer [0-9]* of" "$W/img.err"'
[ $((pass + fail)) -eq $EXPECTED ] || { echo "FAIL ran $((pass + fail)) checks, expected $EXPECTED"; fail=$((fail + 1)); }
[ $fail -eq 0 ] || { echo "--- image check stderr (tail)"; tail -5 "$W/img.err"; echo "--- directory check stderr (tail)"; tail -5 "$W/dir.err"; }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
