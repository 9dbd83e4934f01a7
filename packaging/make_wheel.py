#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes kimg's wheel with the standard library only (zipfile, hashlib):
no package index, no pip, setuptools or wheel package needed.

    make_wheel.py --version V --arch {x86_64,aarch64} --probe FILE --lib FILE
                  --run FILE --man DIR --readme FILE --licence FILE
                  --licence-name SPDX-EXPRESSION --python DIR --out DIR [--api-lib FILE]

Layout (PEP 427; names relative to the wheel):
    kimg/__init__.py, kimg/__main__.py         python -m kimg [--libpath]
    kimg/_api.py, kimg/libkimgapi.so           kimg.can_run ... (docs/api.md): the
                                               can-it-run API over ctypes
    kimg/libkimg.so, kimg/kimg-run             the library and the launcher, in
                                               the package, so every pip scheme
                                               (venv, --user, --prefix, --target)
                                               keeps them together
    kimg-V.data/scripts/kimg-probe             installed on PATH by pip
    kimg-V.data/data/share/man/man{1,7}/...    man pages beside PATH
    kimg-V.dist-info/entry_points.txt          kimg-run on PATH: kimg.__main__:run
                                               (sets KIMG_LIB to the package's lib)
    kimg-V.dist-info/{METADATA,WHEEL,top_level.txt,RECORD}
    kimg-V.dist-info/licenses/LICENSE          the licence (core metadata 2.4,
                                               PEP 639: License-Expression,
                                               License-File)

The platform tag is manylinux_2_17 (PEP 600) with its manylinux2014 alias:
the build refuses an ELF file that needs a glibc symbol version newer than
2.17 (read with readelf -V), so the tag cannot lie. Reproducible: the same
inputs give the same bytes, with every time stamp SOURCE_DATE_EPOCH (else
2020-01-01), entries sorted by name (the .dist-info last, RECORD at its end),
modes 644 or 755 and no owner (zip stores none).
"""

import argparse
import base64
import hashlib
import os
import re
import subprocess
import sys
import time
import zipfile

GLIBC_MAX = (2, 17)
PLATFORMS = {"x86_64": "x86_64", "aarch64": "aarch64"}


def die(msg):
    sys.stderr.write("make_wheel: %s\n" % msg)
    sys.exit(1)


def glibc_needs(path):
    """The GLIBC_x.y versions the file requires (its verneed entries)."""
    out = subprocess.run(["readelf", "-V", "--wide", path], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    needs, in_refs = set(), False
    for line in out.splitlines():
        if "Version needs section" in line:
            in_refs = True
        elif line and not line.startswith(" "):
            in_refs = False
        elif in_refs:
            m = re.search(r"Name: (GLIBC_[0-9.]+)", line)
            if m:
                needs.add(m.group(1))
    return needs


def version_tuple(v):
    return tuple(int(x) for x in v[len("GLIBC_"):].split("."))


def check_glibc(path):
    newer = sorted(v for v in glibc_needs(path) if version_tuple(v)[:2] > GLIBC_MAX)
    if newer:
        die("%s needs %s, newer than glibc %d.%d: it would not run where manylinux_2_17 promises"
            % (path, ", ".join(newer), *GLIBC_MAX))


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def metadata(version, readme, licence_name, licence_file):
    with open(readme, encoding="utf-8") as f:
        description = f.read()
    head = [
        "Metadata-Version: 2.4",
        "Name: kimg",
        "Version: " + version,
        "Summary: Explains CUDA \"no kernel image is available\" (error 209): the module, its GPU "
        "code, the device and the build fix",
        "Keywords: cuda,nvcc,error-209,no-kernel-image,fatbin,cubin,ptx,ld_preload,gpu",
        "License-Expression: " + licence_name,
        "License-File: " + licence_file,
        "Platform: Linux",
        "Classifier: Development Status :: 4 - Beta",
        "Classifier: Environment :: Console",
        "Classifier: Environment :: GPU :: NVIDIA CUDA",
        "Classifier: Intended Audience :: Developers",
        "Classifier: Intended Audience :: Science/Research",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Programming Language :: C",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Topic :: Software Development :: Debuggers",
        "Requires-Python: >=3.6",
        "Description-Content-Type: text/markdown",
    ]
    return ("\n".join(head) + "\n\n" + description).encode("utf-8")


def main():
    ap = argparse.ArgumentParser(description="write kimg's wheel")
    for opt in ("version", "arch", "probe", "lib", "run", "man", "readme", "licence", "python", "out"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--api-lib", help="libkimgapi.so, shipped as kimg/libkimgapi.so")
    ap.add_argument("--licence-name", required=True)
    a = ap.parse_args()
    if a.arch not in PLATFORMS:
        die("unknown --arch %s (x86_64 or aarch64)" % a.arch)
    m = PLATFORMS[a.arch]
    tag = "py3-none-manylinux_2_17_%s.manylinux2014_%s" % (m, m)
    name = "kimg-%s-%s.whl" % (a.version, tag)
    data = "kimg-%s.data" % a.version
    info = "kimg-%s.dist-info" % a.version

    for elf in (a.probe, a.lib) + ((a.api_lib,) if a.api_lib else ()):
        check_glibc(elf)

    def read(p):
        with open(p, "rb") as f:
            return f.read()

    init = read(os.path.join(a.python, "kimg", "__init__.py")).replace(b"@VERSION@", a.version.encode())
    licence_name = os.path.basename(a.licence)
    entries = [  # (name in the wheel, bytes, executable)
        ("kimg/__init__.py", init, False),
        ("kimg/__main__.py", read(os.path.join(a.python, "kimg", "__main__.py")), False),
        ("kimg/kimg-run", read(a.run), True),
        ("kimg/libkimg.so", read(a.lib), True),
        (data + "/scripts/kimg-probe", read(a.probe), True),
    ]
    # kimg/__init__.py imports kimg/_api.py: always shipped (it loads the library only when asked)
    entries[2:2] = [("kimg/_api.py", read(os.path.join(a.python, "kimg", "_api.py")), False)]
    if a.api_lib:
        entries.append(("kimg/libkimgapi.so", read(a.api_lib), True))
    for section in ("1", "7"):
        for page in sorted(os.listdir(a.man)):
            if page.endswith("." + section):
                entries.append(("%s/data/share/man/man%s/%s" % (data, section, page),
                                read(os.path.join(a.man, page)), False))
    entries.sort(key=lambda e: e[0])
    wheel = ("Wheel-Version: 1.0\nGenerator: kimg packaging/make_wheel.py\nRoot-Is-Purelib: false\n"
             "Tag: py3-none-manylinux_2_17_%s\nTag: py3-none-manylinux2014_%s\n" % (m, m)).encode()
    entries += [
        (info + "/METADATA", metadata(a.version, a.readme, a.licence_name, licence_name), False),
        (info + "/WHEEL", wheel, False),
        (info + "/entry_points.txt", b"[console_scripts]\nkimg-run = kimg.__main__:run\n", False),
        (info + "/licenses/" + licence_name, read(a.licence), False),
        (info + "/top_level.txt", b"kimg\n", False),
    ]
    entries[-5:] = sorted(entries[-5:], key=lambda e: e[0])
    record = "".join("%s,%s,%d\n" % (n, record_hash(b), len(b)) for n, b, _ in entries)
    record += info + "/RECORD,,\n"
    entries.append((info + "/RECORD", record.encode(), False))

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "1577836800"))
    stamp = time.gmtime(max(epoch, 315532800))[:6]  # zip cannot go before 1980
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, name)
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b, exe in entries:
            zi = zipfile.ZipInfo(n, stamp)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o100755 if exe else 0o100644) << 16
            z.writestr(zi, b)
    os.replace(tmp, path)
    print(path)


if __name__ == "__main__":
    main()
