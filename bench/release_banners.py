#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where each CUDA library keeps the toolkit's release banner ("Cuda
compilation tools, release X.Y"): every occurrence, by ELF section, and the
size of .rodata, for the libraries core/cuda_libs.c recognises under the
trees given (default: python3's site-packages and /usr/local/cuda/lib64).
The evidence for kimg_cuda_lib_kind.banner_in_host_data (bench/README.md,
issue 27, "the release banner"). Usage: release_banners.py [TREE...]"""
import mmap, os, re, struct, sys, site
from collections import Counter
roots = sys.argv[1:] or (site.getsitepackages() + ["/usr/local/cuda/lib64"])
pat = re.compile(rb"^lib(cudart|nvrtc|nvrtc-builtins|nvJitLink|cublas|cublasLt|nvblas|cupti|cufft|cufftw|cusolver|cusolverMg|cusparse|curand|npp\w*)(\.alt)?(-[0-9a-f]{8})?\.so")
seen = set()
for root in roots:
    for dp, dn, fn in os.walk(root, followlinks=True):
        for n in fn:
            if not pat.match(n.encode()): continue
            p = os.path.join(dp, n)
            try:
                rp = os.path.realpath(p); st = os.stat(rp)
            except OSError: continue
            if rp in seen or st.st_size < 64: continue
            seen.add(rp)
            with open(rp, "rb") as f:
                m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
            if m[:4] != b"\x7fELF": continue
            shoff, = struct.unpack_from("<Q", m, 0x28); shnum, shstrndx = struct.unpack_from("<HH", m, 0x3c)
            secs = [struct.unpack_from("<IIQQQQIIQQ", m, shoff + 64*i) for i in range(shnum)]
            stro = secs[shstrndx][4]
            def nm(s): e = m.find(b"\0", stro + s[0]); return m[stro+s[0]:e].decode()
            named = [(nm(s), s[4], s[5], s[1]) for s in secs]
            out = []
            for h in re.finditer(rb"Cuda compilation tools, release ([0-9.]*)", m):
                o = h.start(); where = next((x[0] for x in named if x[3] != 8 and x[1] <= o < x[1]+x[2]), "?")
                out.append(f"{where}:{h.group(1).decode()}")
            ro = next((x for x in named if x[0] == ".rodata"), None)
            print(f"{p} -> {os.path.basename(rp)} size={st.st_size} rodata={ro[2] if ro else None} banners={dict(Counter(out))}", flush=True)
