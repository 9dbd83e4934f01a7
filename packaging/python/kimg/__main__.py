# SPDX-License-Identifier: Apache-2.0
"""python -m kimg [--libpath | check|scan|doctor|device|summarize ARGS... | KIMG-RUN-ARGS...]

``python -m kimg --libpath`` prints the path of this package's libkimg.so
(exit 2 when it is missing); anything else runs kimg-run with the same
arguments, so ``python -m kimg python train.py`` is ``kimg-run python
train.py``. ``python -m kimg check ARGS`` (and scan, doctor, device,
summarize) is ``kimg-probe check ARGS``: the package's kimg-probe, run with
the same arguments. The ``kimg-run`` command pip installs is ``run`` below.
"""

import os
import sys

from . import launcher, libpath, probe_path

PROBE_COMMANDS = ("check", "scan", "doctor", "device", "summarize")

USAGE = """usage: python -m kimg --libpath
       python -m kimg check|scan|doctor|device|summarize [ARGS...]
       python -m kimg [KIMG-RUN OPTIONS] [--] COMMAND [ARGS...]

--libpath  print the path of the installed libkimg.so, for
           LD_PRELOAD=$(python -m kimg --libpath) python train.py
           (exit 2, nothing printed, when the path holds a space or
           colon: LD_PRELOAD cannot name such a path)
check ...  kimg-probe check ... (the same for scan, doctor, device,
           summarize): the kimg-probe installed with this package
Anything else is passed to kimg-run (its help follows).
"""


def _fail(msg):
    sys.stderr.write("kimg: %s\n" % msg)
    return 2


def run(argv=None):
    """kimg-run ARGS: the package's launcher with the package's library.
    KIMG_LIB, when the caller set it, still wins (kimg-run's own rule)."""
    args = sys.argv[1:] if argv is None else list(argv)
    script, lib = launcher(), libpath()
    if script is None or lib is None:
        return _fail("this kimg package lacks %s; reinstall it" % ("kimg-run" if script is None else "libkimg.so"))
    env = dict(os.environ)
    if not env.get("KIMG_LIB"):
        env["KIMG_LIB"] = lib
    # Through sh: the script needs no executable bit, whatever pip kept.
    os.execve("/bin/sh", ["/bin/sh", script] + args, env)
    return 127  # not reached


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["--libpath"]:
        if len(args) > 1:
            return _fail("--libpath takes no arguments")
        lib = libpath()
        if lib is None:
            return _fail("this kimg package lacks libkimg.so; reinstall it")
        if any(c.isspace() or c == ":" for c in lib):
            # ld.so splits LD_PRELOAD on spaces and colons: printing the
            # path would preload its pieces, none of them kimg
            return _fail("%s: the path contains a space or colon, which LD_PRELOAD cannot express; "
                         "use 'python -m kimg COMMAND' with KIMG_LIB naming a copy elsewhere, or install "
                         "the package where its path has neither" % lib)
        print(lib)
        return 0
    if args[:1] and args[0] in PROBE_COMMANDS:
        probe = probe_path()
        if probe is None:
            return _fail("kimg-probe not found; reinstall kimg (or set KIMG_PROBE)")
        sys.stdout.flush()
        os.execv(probe, [probe] + args)
    if args[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE + "\n")
        sys.stdout.flush()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
