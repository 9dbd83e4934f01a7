#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hand-made container images for tests/probe/images.sh: OCI layouts (a
directory, or a tar of one) and docker-save archives, whose layers are built
entry by entry, so hostile cases (whiteouts, opaque dirs, links, traversal
names, damaged blobs, bombs) can be written exactly.

    oci_image.py OUT SPEC.json

SPEC: {"format": "oci-dir"|"oci-tar"|"docker",
       "images": [{"platform": "linux/amd64", "env": [...], "history": [...],
                   "layers": [{"compress": "gzip"|"zstd"|"bzip2"|"none",
                               "entries": [[type, name, arg], ...],
                               "corrupt": false, "missing": false,
                               "raw_header_size": 0}]}],
       "manifest_text": null, "index_text": null, "layers_count": 0,
       "extra_diff_ids": 0}   (more rootfs.diff_ids in each config than layers)
entry types: "file" (arg: a path whose bytes to store, or "text:..."),
"dir", "symlink" (arg: target), "hardlink" (arg: target member).
"""
import bz2, gzip, hashlib, io, json, os, subprocess, sys, tarfile


def layer_tar(spec):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for kind, name, *rest in spec.get("entries", []):
            arg = rest[0] if rest else None
            ti = tarfile.TarInfo(name)
            ti.mtime = 0
            if kind == "file" and arg.startswith("text:"):
                data = arg[5:].encode()
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
            elif kind == "file":  # copied from the file (images.sh stores a 500 MB one)
                with open(arg, "rb") as f:
                    ti.size = os.fstat(f.fileno()).st_size
                    t.addfile(ti, f)
            elif kind == "dir":
                ti.type = tarfile.DIRTYPE
                t.addfile(ti)
            elif kind == "symlink":
                ti.type = tarfile.SYMTYPE
                ti.linkname = arg
                t.addfile(ti)
            elif kind == "hardlink":
                ti.type = tarfile.LNKTYPE
                ti.linkname = arg
                t.addfile(ti)
    raw = buf.getbuffer()  # not a copy
    if spec.get("raw_header_size"):
        # one header declaring a huge member, with little data after it
        ti = tarfile.TarInfo("bomb.bin")
        ti.size = spec["raw_header_size"]
        hdr = ti.tobuf(format=tarfile.GNU_FORMAT)
        raw = hdr + bytes(4096) + bytes(1024)
    return raw


def compress(raw, how):
    # gzip's fastest level: what is tested is reading the format, and level 9
    # took most of images.sh's time making its images (20 MB of fixtures)
    if how == "gzip":
        return gzip.compress(raw, compresslevel=1, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip"
    if how == "zstd":
        out = subprocess.run(["zstd", "-q", "-c"], input=raw, stdout=subprocess.PIPE, check=True).stdout
        return out, "application/vnd.oci.image.layer.v1.tar+zstd"
    if how == "bzip2":  # read through libarchive only (sys/tar.h)
        return bz2.compress(raw), "application/vnd.oci.image.layer.v1.tar+bzip2"
    return raw, "application/vnd.oci.image.layer.v1.tar"


def sha(b):
    return hashlib.sha256(b).hexdigest()


def main():
    out, spec = sys.argv[1], json.load(open(sys.argv[2]))
    blobs = {}  # hex -> bytes
    fmt = spec.get("format", "oci-dir")
    manifests, docker = [], []
    for img in spec["images"]:
        layers, diff_ids, files = [], [], []
        for ls in img["layers"]:
            raw = layer_tar(ls)
            blob, mt = compress(raw, ls.get("compress", "gzip") if fmt != "docker" else "none")
            h = sha(blob)
            if not ls.get("missing"):
                blobs[h] = (bytes(blob[:600]) + bytes([blob[600] ^ 0xff]) + bytes(blob[601:])) if ls.get("corrupt") else blob
            layers.append({"mediaType": mt, "digest": "sha256:" + h, "size": len(blob)})
            diff_ids.append("sha256:" + (h if blob is raw else sha(raw)))
            files.append(h)
        for _ in range(spec.get("layers_count", 0)):
            layers.append({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + "0" * 64, "size": 0})
        diff_ids += ["sha256:" + "1" * 64] * spec.get("extra_diff_ids", 0)
        os_, arch = img.get("platform", "linux/amd64").split("/")[:2]
        config = {"architecture": arch, "os": os_, "config": {"Env": img.get("env", [])},
                  "rootfs": {"type": "layers", "diff_ids": diff_ids},
                  "history": [{"created_by": c} for c in img.get("history", [])]}
        cb = spec.get("config_text", "").encode() or json.dumps(config).encode()
        blobs[sha(cb)] = cb
        man = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
               "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + sha(cb), "size": len(cb)},
               "layers": layers}
        mb = spec.get("manifest_text", "").encode() or json.dumps(man).encode()
        blobs[sha(mb)] = mb
        manifests.append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + sha(mb),
                          "size": len(mb), "platform": {"os": os_, "architecture": arch}})
        docker.append({"Config": sha(cb) + ".json", "RepoTags": ["t:latest"], "Layers": [h + ".tar" for h in files]})
    index = spec.get("index_text") or json.dumps({"schemaVersion": 2, "manifests": manifests})
    files = {}
    if fmt == "docker":
        for h, b in blobs.items():
            files[h + (".tar" if b[:1] != b"{" else ".json")] = b
        files["manifest.json"] = json.dumps(docker).encode()
    else:
        for h, b in blobs.items():
            files["blobs/sha256/" + h] = b
        files["oci-layout"] = b'{"imageLayoutVersion": "1.0.0"}'
        files["index.json"] = index.encode()
    if fmt == "oci-dir":
        for name, b in files.items():
            p = os.path.join(out, name)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "wb").write(b)
    else:
        with tarfile.open(out, "w") as t:
            for name, b in files.items():
                ti = tarfile.TarInfo(name)
                ti.size = len(b)
                t.addfile(ti, io.BytesIO(b))


main()
