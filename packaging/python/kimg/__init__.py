# SPDX-License-Identifier: Apache-2.0
"""kimg: why CUDA says "no kernel image is available".

The wheel carries native code: ``libkimg.so`` (the LD_PRELOAD library) and
``kimg-run`` (the POSIX shell launcher) inside this package, ``kimg-probe``
(an executable) on ``PATH``. This package only finds them: ``libpath()``
for ``LD_PRELOAD=$(python -m kimg --libpath)``, and ``python -m kimg`` or
the ``kimg-run`` command pip installs to run the launcher with this
package's library.

The can-it-run API asks before the first kernel (docs/api.md):
``can_run(path, sm="native")`` and ``can_run_module(module)`` answer
whether a file's GPU code runs here (``runs``, ``error``, ``reason``,
``fix``, ``modules``), through ``libkimgapi.so`` and ctypes;
``check_environment()`` is ``kimg-probe doctor --json`` as data.
"""

import os

__version__ = "@VERSION@"
__all__ = ["libpath", "launcher", "can_run", "can_run_module", "check_environment", "Answer", "KimgError"]

_HERE = os.path.dirname(os.path.abspath(__file__))

from ._api import Answer, KimgError, can_run, can_run_module, check_environment, probe_path  # noqa: E402


def libpath():
    """Absolute path of this package's libkimg.so, or None if it is missing."""
    p = os.path.join(_HERE, "libkimg.so")
    return p if os.path.isfile(p) else None


def launcher():
    """Absolute path of this package's kimg-run shell script, or None."""
    p = os.path.join(_HERE, "kimg-run")
    return p if os.path.isfile(p) else None
