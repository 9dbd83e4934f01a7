"""kimg: why CUDA says "no kernel image is available".

The wheel installs three programs and a library beside Python, not inside
it: ``kimg-probe`` and ``kimg-run`` on ``PATH`` (the wheel's scripts) and
``libkimg.so`` in ``PREFIX/lib`` (its data), where ``kimg-run`` looks for it
(``bin/../lib``). This package only finds them: ``libpath()`` for
``LD_PRELOAD=$(python -m kimg --libpath)`` and ``python -m kimg`` to run
``kimg-run``.
"""

import os
import site
import sys

__version__ = "@VERSION@"
__all__ = ["libpath", "tool"]


def _installed(name, subdir):
    """The path of an installed file of this distribution named `name`,
    from its RECORD (right for venvs, --user, --prefix and --target), else
    from the usual prefixes; None when not found."""
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        metadata = None
    if metadata is not None:
        try:
            files = metadata.files("kimg") or []
        except metadata.PackageNotFoundError:
            files = []
        for f in files:
            if f.name == name:
                p = os.path.realpath(str(f.locate()))
                if os.path.isfile(p):
                    return p
    for prefix in (sys.prefix, getattr(site, "USER_BASE", None) or "", "/usr/local", "/usr"):
        p = os.path.join(prefix, subdir, name)
        if prefix and os.path.isfile(p):
            return p
    return None


def libpath():
    """Absolute path of the installed libkimg.so, or None."""
    return _installed("libkimg.so", "lib")


def tool(name):
    """Absolute path of an installed kimg program ("kimg-run",
    "kimg-probe"), or None."""
    return _installed(name, "bin")
