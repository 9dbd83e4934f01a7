"""python -m kimg [--libpath | KIMG-RUN-ARGS...]

``python -m kimg --libpath`` prints the path of the installed libkimg.so
(exit 2 when there is none); anything else runs the installed ``kimg-run``
with the same arguments, so ``python -m kimg python train.py`` is
``kimg-run python train.py``.
"""

import os
import sys

from . import libpath, tool

USAGE = """usage: python -m kimg --libpath
       python -m kimg [KIMG-RUN OPTIONS] [--] COMMAND [ARGS...]

--libpath  print the path of the installed libkimg.so, for
           LD_PRELOAD=$(python -m kimg --libpath) python train.py
Anything else is passed to kimg-run (its help follows).
"""


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    lib = libpath()
    if args[:1] == ["--libpath"]:
        if len(args) > 1:
            sys.stderr.write("python -m kimg: --libpath takes no arguments\n")
            return 2
        if lib is None:
            sys.stderr.write("python -m kimg: libkimg.so is not installed with this kimg package\n")
            return 2
        print(lib)
        return 0
    run = tool("kimg-run")
    if run is None:
        sys.stderr.write("python -m kimg: kimg-run is not installed with this kimg package\n")
        return 2
    if args[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE + "\n")
        sys.stdout.flush()
    env = dict(os.environ)
    # The library of this installation, whatever layout pip chose; an
    # explicit KIMG_LIB of the caller wins.
    if lib is not None and not env.get("KIMG_LIB"):
        env["KIMG_LIB"] = lib
    os.execve(run, [run] + args, env)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
