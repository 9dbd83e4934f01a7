# SPDX-License-Identifier: Apache-2.0
"""The can-it-run API of kimg, with the standard library only (ctypes).

The answers come from ``libkimgapi.so`` in this package: the C library of
``kimg.h``, the same core as ``kimg-probe check`` (docs/api.md). Loading
it changes nothing in this process: it is not the LD_PRELOAD library.
"""

import ctypes
import json
import os
import subprocess
import sys
import threading

__all__ = ["Answer", "KimgError", "can_run", "can_run_module", "check_environment", "probe_path"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_ASK_STRICT = 1
_ASK_DEEP = 2
_lock = threading.Lock()
_lib = None


class KimgError(RuntimeError):
    """A question kimg could not answer: a missing or unreadable file, a
    bad ``sm`` or ``driver``, no GPU for ``sm="native"``. ``code`` is the
    negative errno or kimg code of the C API; ``errno`` its errno when it
    is one (``errno.ENOENT`` ...), else None."""

    def __init__(self, code, message):
        RuntimeError.__init__(self, message)
        self.code = code
        self.errno = -code if -4000 < code < 0 else None


class Answer(object):
    """Can this file's GPU code run here? ``runs`` (bool; also the truth
    value of the answer), ``error`` (the CUDA error the program would get,
    209, 218, 222 ..., or None), ``error_name``, ``reason`` (one line),
    ``fix`` (one line, or None when it runs), ``modules`` (each module with
    its images and per-target verdicts, as ``kimg-probe check --json``
    spells them), ``targets`` and ``path``; ``data`` is the whole JSON
    document."""

    __slots__ = ("runs", "error", "error_name", "reason", "fix", "modules", "targets", "path", "data")

    def __init__(self, data):
        self.data = data
        self.runs = bool(data["runs"])
        self.error = data["error"]
        self.error_name = data["error_name"]
        self.reason = data["reason"]
        self.fix = data["fix"]
        self.modules = data["modules"]
        self.targets = data["targets"]
        self.path = data["path"]

    def __bool__(self):
        return self.runs

    __nonzero__ = __bool__

    def __repr__(self):
        return "<kimg.Answer %s runs=%s error=%s: %s>" % (self.path, self.runs, self.error, self.reason)


def _library_path():
    p = os.environ.get("KIMG_API_LIB") or os.path.join(_HERE, "libkimgapi.so")
    if not os.path.isfile(p):
        raise KimgError(-2, "%s is missing: reinstall kimg (or set KIMG_API_LIB)" % p)
    return p


def _load():
    global _lib
    with _lock:
        if _lib is None:
            lib = ctypes.CDLL(_library_path())
            vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
            out = ctypes.POINTER(vp)
            lib.kimg_can_run_file.argtypes = [cp, cp, cp, ctypes.c_uint, out, cp, sz]
            lib.kimg_can_run_file.restype = ctypes.c_int
            lib.kimg_answer_json.argtypes = [vp]
            lib.kimg_answer_json.restype = cp
            lib.kimg_answer_free.argtypes = [vp]
            lib.kimg_answer_free.restype = None
            lib.kimg_api_version.restype = ctypes.c_int
            if lib.kimg_api_version() < 1:
                raise KimgError(-22, "%s is too old for this kimg package" % _library_path())
            _lib = lib
        return _lib


def _enc(s):
    if s is None:
        return None
    return os.fsencode(s) if not isinstance(s, bytes) else s


def can_run(path, sm="native", driver=None, strict=False, deep=False):
    """Can the GPU code in the file at ``path`` (a shared object, an
    executable, an object file or archive, a fatbin, a cubin, PTX) run on
    ``sm``? ``sm`` is what ``kimg-probe check --sm`` takes: ``"native"``
    (this machine's GPUs and driver), a compute capability (``"9.0"``,
    ``"sm_90"``), a GPU name (``"H100"``), or several, comma-separated.
    ``driver`` ("12.4") is the CUDA version assumed for targets given by
    number or name. A file without device code runs. Returns an Answer;
    raises KimgError when the question cannot be answered. ``native``
    reads NVML, or calls cuInit in this process where NVML cannot answer
    (docs/api.md: ask before forking CUDA workers, or name the targets)."""
    if isinstance(sm, (list, tuple)):
        sm = ",".join(str(s) for s in sm)
    flags = (_ASK_STRICT if strict else 0) | (_ASK_DEEP if deep else 0)
    lib = _load()
    ans = ctypes.c_void_p()
    why = ctypes.create_string_buffer(1024)
    rc = lib.kimg_can_run_file(_enc(os.fspath(path)), _enc(sm), _enc(driver), flags, ctypes.byref(ans), why, 1024)
    if rc != 0:
        raise KimgError(rc, why.value.decode("utf-8", "replace"))
    try:
        data = json.loads(lib.kimg_answer_json(ans).decode("utf-8", "surrogateescape"))
    finally:
        lib.kimg_answer_free(ans)
    return Answer(data)


def module_file(obj):
    """The file of an imported extension module (its ``__file__``), of a
    ``ctypes.CDLL`` (its ``_name``), or a path given as is."""
    if isinstance(obj, (str, bytes)) or hasattr(obj, "__fspath__"):
        return os.fspath(obj)
    if isinstance(obj, ctypes.CDLL):
        name = obj._name
        if not name or os.sep not in name:
            raise ValueError("%r was loaded by name, not path: pass its path" % (obj,))
        return name
    f = getattr(obj, "__file__", None)
    if not f:
        raise ValueError("%r has no file (a built-in or namespace module)" % (obj,))
    if f.endswith((".py", ".pyc", ".pyo")):
        raise ValueError("%s is a Python source, not an extension module: pass the extension "
                         "that holds the GPU code (e.g. torch._C, or a module of its package)" % f)
    return f


def can_run_module(obj, sm="native", driver=None, strict=False, deep=False):
    """can_run for an imported extension module (``import my_ext;
    kimg.can_run_module(my_ext)``), found by its file."""
    return can_run(module_file(obj), sm=sm, driver=driver, strict=strict, deep=deep)


def _record_probe():
    """kimg-probe as pip installed it with this package: its line in the
    dist-info RECORD (relative to the directory above the package)."""
    site = os.path.dirname(_HERE)
    try:
        names = [n for n in os.listdir(site) if n.startswith("kimg-") and n.endswith(".dist-info")]
    except OSError:
        return None
    for n in names:
        try:
            with open(os.path.join(site, n, "RECORD")) as f:
                for line in f:
                    p = line.rsplit(",", 2)[0]
                    if os.path.basename(p) == "kimg-probe":
                        full = os.path.normpath(os.path.join(site, p))
                        if os.access(full, os.X_OK):
                            return full
        except OSError:
            continue
    return None


def probe_path():
    """The kimg-probe that came with this package ($KIMG_PROBE, else the
    one pip installed with it, else the one beside this Python or on
    PATH), or None."""
    env = os.environ.get("KIMG_PROBE")
    if env:
        return env
    found = _record_probe()
    if found:
        return found
    import shutil
    import sysconfig
    for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        p = os.path.join(d or "", "kimg-probe")
        if d and os.access(p, os.X_OK):
            return p
    return shutil.which("kimg-probe")


def check_environment(python=None, sm=None, driver=None, dirs=None):
    """``kimg-probe doctor --json`` as data: the GPUs, the driver, the CUDA
    libraries, the packages with device code and their verdicts, the
    toolchains and JIT caches (docs/json-probe.md). Checks the environment of
    ``python`` (default: this interpreter), or ``dirs``; against ``sm``
    instead of this machine's GPUs when given. The document gains
    ``exit_status`` (doctor's: 0 ok, 1 something cannot run, 2 incomplete:
    no GPU, unreadable input). Raises KimgError when doctor gives no
    document."""
    probe = probe_path()
    if not probe:
        raise KimgError(-2, "kimg-probe not found: reinstall kimg (or set KIMG_PROBE)")
    cmd = [probe, "doctor", "--json"]
    if sm:
        cmd += ["--sm", ",".join(sm) if isinstance(sm, (list, tuple)) else sm]
    if driver:
        cmd += ["--driver", driver]
    if dirs:
        cmd += ["--"] + [os.fspath(d) for d in dirs]
    else:
        cmd[3:3] = ["--python", python or sys.executable]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        doc = json.loads(p.stdout.decode("utf-8", "surrogateescape"))
    except ValueError:
        raise KimgError(-4001, "kimg-probe doctor gave no JSON (exit %d): %s"
                        % (p.returncode, p.stderr.decode("utf-8", "replace").strip()))
    doc["exit_status"] = p.returncode
    return doc
