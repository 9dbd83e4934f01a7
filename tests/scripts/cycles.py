#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Circles between the files of kimg's layers, for tests/scripts/layers.sh.

  cycles.py includes ROOT FOLDER...   #include circles among the units of FOLDERs
  cycles.py calls OBJECT...           call circles among the objects (nm)

Prints the first circle found ("a -> b -> a") and exits 1, or prints
nothing and exits 0.

A unit is x.c with its x.h. A header without a .c (shared declarations,
types: span.h, diag_internal.h) is not a unit of its own: including it
counts as including what it includes. A quote include resolves as the
compiler resolves it: the including file's folder first, then the build's
include path (-Icore -Isys -Ireport, and -Ishim -Ishim/diag for the
diagnosis layer). An object calls another when it leaves undefined a
function the other defines (nm: T or W); reading another unit's data (the
options everybody reads, kimg_opts) is not a call."""
import os
import re
import subprocess
import sys

INCLUDE_PATH = {"shim/diag": ["shim/diag", "shim", "core", "sys", "report"]}
DEFAULT_PATH = ["core", "sys", "report"]


def first_circle(deps):
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(deps.get(u, ())):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                c = visit(v)
                if c:
                    return c
        state[u] = 2
        stack.pop()
        return None

    for u in sorted(deps):
        if u not in state:
            c = visit(u)
            if c:
                return c
    return None


def include_deps(root, folders):
    def stem(f):
        return os.path.splitext(f)[0]

    def includes(f):
        d = os.path.dirname(f)
        text = open(os.path.join(root, f), errors="replace").read()
        for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            for base in [d] + INCLUDE_PATH.get(d, DEFAULT_PATH):
                t = os.path.normpath(os.path.join(base, inc))
                if os.path.isfile(os.path.join(root, t)):
                    yield t
                    break

    files = [os.path.join(d, n) for d in folders for n in sorted(os.listdir(os.path.join(root, d)))
             if n.endswith((".c", ".h"))]
    units = {stem(f) for f in files if f.endswith(".c")}

    def reach(f, seen):
        for t in includes(f):
            if t in seen or os.path.dirname(t) not in folders:
                continue
            seen.add(t)
            if stem(t) in units:
                yield stem(t)
            else:
                yield from reach(t, seen)

    deps = {u: set() for u in units}
    for f in files:
        if stem(f) in units:
            deps[stem(f)].update(v for v in reach(f, {f}) if v != stem(f))
    return deps


def call_deps(objects):
    defined, undefined = {}, {}
    for o in objects:
        u = os.path.splitext(o)[0]
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TW":
                defined[p[2]] = u
            elif len(p) == 2 and p[0] == "U":
                undefined.setdefault(u, set()).add(p[1])
    return {u: {defined[s] for s in syms if s in defined and defined[s] != u} for u, syms in undefined.items()}


def main(argv):
    if len(argv) >= 3 and argv[1] == "includes":
        deps = include_deps(argv[2], argv[3:])
    elif len(argv) >= 2 and argv[1] == "calls":
        deps = call_deps(argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    c = first_circle(deps)
    if c:
        print(" -> ".join(c))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
