#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generated mutants over the product sources (make mutants, make mutants-map).

    mutants.py map   [--build build-cov] [--only TEST...]
                                           coverage map -> tests/mutation/coverage.txt
                                           (--only: those tests mapped again, the rest kept)
    mutants.py run                         sample, plant and judge mutants
    mutants.py list  FILE...               print the mutants of FILE (no build)

Sites are found by rule (RULES below) in every .c file of core/, sys/,
report/, probe/, shim/ and api/, outside comments, strings and preprocessor
lines. `run` draws MUTANTS_N of them (default 60) in an order fixed by
MUTANTS_SEED (default: random, printed; MUTANTS_FILES="core/x.c ..." and
MUTANTS_KEYS="file@hash ..." narrow the pool, e.g. to re-judge survivors),
plants each alone in one scratch
copy of the tree (made once, with build/; fixtures shared), rebuilds the
mutated object and what links it, and runs the tests that executed the
mutated line (coverage.txt, made from gcov by `map`; all tests of the file
for a line gcov does not count or a file changed since; the whole suite for
a file with no entry), quickest first, stopping at the first failure. A mutant that does not
compile, or whose object code equals the original's (the compiler proved it
equivalent), is discarded and replaced by the next site. A surviving mutant
is equivalent when its key (file@hash of the rule, the line before and after
the change and two lines each side) is listed in equivalent.txt with a reason.

Closing line:
    mutants: K killed, S survived, E equivalent of N sampled (seed X): score P%
Score = K / (N - E); exit 1 when below MUTANTS_MIN_SCORE (default 90).
Python 3 standard library only. One file past 500 lines on purpose: the
rules, the map and the run share the site and key format, and CI calls it
as one program; its three parts are marked "----".
"""
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.join(ROOT, "tests", "mutation")
MAP = os.path.join(HERE, "coverage.txt")
EQUIV = os.path.join(HERE, "equivalent.txt")
PRODUCT_DIRS = ("core", "sys", "report", "probe", "shim", "api")
# Tests of the packages in dist/ (built from the unmutated checkout, copied
# as they are): no mutant can change what they see, so they never judge
# one (a run once aborted on deb.sh's baseline).
NOT_JUDGES = {"tests/scripts/deb.sh", "tests/scripts/wheel.sh"}
KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "do", "else", "case", "_Static_assert",
            "static_assert", "alignof", "_Alignof", "typeof", "__typeof__", "defined"}


# ---- sources and sites ----

def product_sources():
    out = []
    for d in PRODUCT_DIRS:
        for base, dirs, files in os.walk(os.path.join(ROOT, d)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(".c"):
                    out.append(os.path.relpath(os.path.join(base, f), ROOT))
    return sorted(out)


def mask_code(text):
    """text with comment bodies and string/char literal contents blanked
    (same length, newlines kept), so that rules see only code."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def close_paren(m, open_at):
    """index of the ')' matching m[open_at] == '(' on the same line, or -1"""
    depth = 0
    for k in range(open_at, len(m)):
        if m[k] == "(":
            depth += 1
        elif m[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return -1


REL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
OPS = re.compile(r"<<=|>>=|<<|>>|->|<=|>=|==|!=|&&|\|\||\|=|&=|[<>!]")
NUM = re.compile(r"(?<![\w.])(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)(?![\w.])")
FLAG_L = re.compile(r"\b([A-Z][A-Z0-9_]{2,})\s*\|(?![|=])\s*")
FLAG_R = re.compile(r"\s*(?<![|])\|(?![|=])\s*([A-Z][A-Z0-9_]{2,})\b")
CALL = re.compile(r"^(\s*)(?:\(void\)\s*)?([A-Za-z_]\w*(?:(?:\.|->)\w+)*)\s*\(")
RET = re.compile(r"^(\s*)return\s+(\S.*?)\s*;\s*$")
IF = re.compile(r"\bif\s*\(")
# Calls whose removal only leaks (memory, a descriptor, a mapping): no
# functional test can see it; the fuzz targets run the core under ASan's
# leak checker instead. Not drawn by call-removed.
RELEASE = re.compile(r"^(?:free|\w*_free\w*|\w*free_\w*|close|fclose|closedir|munmap|dlclose|pthread_\w+_destroy|\w*unmap\w*)$")
ARRAY_DECL = re.compile(r"\b(?:char|int|unsigned|size_t|uint\d+_t|int\d+_t|long|short|bool|struct \w+|\w+_t)\s+\**\w+\s*\[\s*$")


def sites_of_line(m, line):
    """(rule, new line) for each mutant of one code line (m: its masked text)"""
    out = []
    for t in OPS.finditer(m):
        op = t.group(0)
        if op in REL:
            out.append(("relational", line[:t.start()] + REL[op] + line[t.end():]))
        elif op == "&&":
            out.append(("logical", line[:t.start()] + "||" + line[t.end():]))
        elif op == "||":
            out.append(("logical", line[:t.start()] + "&&" + line[t.end():]))
        elif op == "!":
            out.append(("not-dropped", line[:t.start()] + line[t.end():]))
    for t in NUM.finditer(m):
        s = t.group(1)
        v = int(s, 16) if s[:2].lower() == "0x" else int(s, 8) if len(s) > 1 and s[0] == "0" else int(s)
        # an array's size one larger changes no behaviour the program can
        # see (unless through sizeof, rare here): only the smaller size
        in_decl = ARRAY_DECL.search(m[:t.start()]) is not None and m[t.end():].lstrip().startswith("]")
        for d in ((-1,) if in_decl else (1, -1)):
            nv = v + d
            if nv < 0:
                continue
            ns = hex(nv) if s[:2].lower() == "0x" else str(nv)
            out.append(("constant", line[:t.start(1)] + ns + line[t.end(1):]))
    for t in IF.finditer(m):
        o = t.end() - 1
        c = close_paren(m, o)
        if c > o + 1:
            for v in ("1", "0"):
                out.append(("if-" + ("true" if v == "1" else "false"), line[:o + 1] + v + line[c:]))
    cm = CALL.match(m)
    if cm and cm.group(2) not in KEYWORDS and not RELEASE.match(cm.group(2)):
        o = m.index("(", cm.end(2))
        c = close_paren(m, o)
        if c > 0 and re.fullmatch(r"\s*;\s*", m[c + 1:]):
            out.append(("call-removed", cm.group(1) + ";"))
    rm = RET.match(m)
    if rm:
        expr = line[rm.start(2):rm.end(2)]
        e = expr.strip()
        if e.count("(") == e.count(")"):
            repl = {"0": "1", "true": "false", "false": "true", "NULL": None}.get(e, "0")
            if repl is not None:
                out.append(("return-value", line[:rm.start(2)] + repl + line[rm.end(2):]))
    for rx in (FLAG_L, FLAG_R):
        for t in rx.finditer(m):
            out.append(("flag-removed", line[:t.start()] + line[t.end():]))
    seen, uniq = set(), []
    for rule, new in out:
        if new != line and new not in seen:
            seen.add(new)
            uniq.append((rule, new))
    return uniq


def file_mutants(path):
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    lines = text.split("\n")
    masked = mask_code(text).split("\n")
    out, cont = [], False
    for i, (line, m) in enumerate(zip(lines, masked)):
        pre = cont or m.lstrip().startswith("#")
        cont = pre and line.rstrip().endswith("\\")
        if pre or "static_assert" in m.lower() or not m.strip():
            continue
        for rule, new in sites_of_line(m, line):
            out.append({"file": path, "line": i + 1, "rule": rule, "old": line, "new": new,
                        "key": mutant_key(path, rule, lines, i, new)})
    return out


def mutant_key(path, rule, lines, i, new):
    ctx = [l.strip() for l in lines[max(0, i - 2):i]] + ["<" + lines[i].strip(), ">" + new.strip()] + \
        [l.strip() for l in lines[i + 1:i + 3]]
    return path + "@" + hashlib.sha1((rule + "\n" + "\n".join(ctx)).encode("utf-8", "surrogateescape")).hexdigest()[:12]


# ---- the map ----

def all_tests(build):
    """the suite as tests/run.sh runs it: (name, command)"""
    tests = []
    tdir = os.path.join(ROOT, build, "tests")
    for f in sorted(os.listdir(tdir)) if os.path.isdir(tdir) else []:
        p = os.path.join(tdir, f)
        if f.startswith("test_") and os.access(p, os.X_OK) and os.path.isfile(p):
            tests.append(f)
    for d in ("probe", "shim", "api", "scripts"):
        for f in sorted(os.listdir(os.path.join(ROOT, "tests", d))):
            if f.endswith(".sh"):
                tests.append("tests/%s/%s" % (d, f))
    return tests


def test_command(name, build):
    if name.startswith("test_"):
        return [os.path.join(build, "tests", name)]
    return ["bash", name]


def run_test(name, cwd, build, fixtures, limit):
    # Check runs each case in a child of its own process group, which the
    # killpg below does not reach: its own timeout must end a looping case
    # first, or the case outlives the run (orphans found spinning for 29
    # minutes after a seed, each at a third of a core).
    env = dict(os.environ, BUILD=build, KIMG_FIXTURES=fixtures, CK_DEFAULT_TIMEOUT=str(max(10, min(60, int(limit) // 2))))
    env.pop("KIMG_TESTS", None)
    t0 = time.time()
    with open(os.devnull, "w") as null:
        p = subprocess.Popen(test_command(name, build), cwd=cwd, env=env, stdout=null, stderr=null,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            rc = "timeout"
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    return rc, time.time() - t0


def gcov_lines(build):
    """{source: (executed lines, executable lines)} from every .gcda under build"""
    gcdas = []
    for base, _, files in os.walk(os.path.join(ROOT, build)):
        gcdas += [os.path.join(base, f) for f in files if f.endswith(".gcda")]
    out = {}
    for k in range(0, len(gcdas), 40):
        chunk = gcdas[k:k + 40]
        r = subprocess.run(["gcov", "--json-format", "--stdout"] + chunk, cwd=ROOT, capture_output=True, text=True)
        dec, s, pos = json.JSONDecoder(), r.stdout, 0
        while True:
            while pos < len(s) and s[pos].isspace():
                pos += 1
            if pos >= len(s):
                break
            try:
                obj, pos = dec.raw_decode(s, pos)
            except ValueError:
                nl = s.find("\n", pos)
                if nl < 0:
                    break
                pos = nl + 1
                continue
            for f in obj.get("files", []):
                hit, known = out.setdefault(os.path.normpath(f["file"]), (set(), set()))
                for l in f.get("lines", []):
                    known.add(l["line_number"])
                    if l.get("count", 0) > 0:
                        hit.add(l["line_number"])
    return out


def ranges(nums):
    """sorted ints -> "1-4,7,9-10" """
    out, nums = [], sorted(nums)
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else "%d-%d" % (nums[i], nums[j]))
        i = j + 1
    return ",".join(out) or "-"


def unranges(text):
    out = set()
    for part in text.split(","):
        if part and part != "-":
            a, _, b = part.partition("-")
            out.update(range(int(a), int(b or a) + 1))
    return out


def file_digest(path, root=ROOT):
    with open(os.path.join(root, path), "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()[:12]


def cmd_map(args):
    build = args[args.index("--build") + 1] if "--build" in args else "build-cov"
    # --only TEST...: map these tests again and keep the rest of the map as
    # it is (a test added or changed, the product files unchanged since the
    # map: a file changed since reads as changed, as before)
    only = args[args.index("--only") + 1:] if "--only" in args else None
    fixtures = os.environ.get("KIMG_FIXTURES", os.path.join(ROOT, "build", "fixtures"))
    sources = set(product_sources())
    tests = all_tests(build)
    if not tests:
        die("no tests in %s (make mutants-map builds them)" % build)
    durations, covers, hits, executable = {}, {}, {}, {}
    # the content the coverage build was made from: a file edited while the
    # map runs then reads as changed (file-level), not as mapped by line
    digests = {f: file_digest(f) for f in sources}
    unmapped = set()  # --only: files the old map lacks stay out (whole suite)
    if only is not None:
        unknown = [t for t in only if t not in tests]
        if unknown or not only:
            die("--only: not tests of %s: %s" % (build, " ".join(unknown) or "(none named)"))
        old = Map()
        if old.covers is None:
            die("--only needs a map to update (make mutants-map)")
        for t in tests:
            if t not in only:
                rc = old.rcs.get(t, "0")
                durations[t] = (old.durations.get(t, 60.0), int(rc) if rc.lstrip("-").isdigit() else rc)
        unmapped = sources - set(old.digest)
        for f in sources:
            if f in old.digest:
                digests[f] = old.digest[f]
                executable[f] = unranges(old.executable[f])
            for t in old.covers.get(f, []):
                if t not in only and t in durations:
                    covers.setdefault(f, []).append(t)
                    hits[(f, t)] = unranges(old.hits.get((f, t), ""))
    for name in (only if only is not None else tests):
        for base, _, files in os.walk(os.path.join(ROOT, build)):
            for f in files:
                if f.endswith(".gcda"):
                    os.unlink(os.path.join(base, f))
        rc, dt = run_test(name, ROOT, build, fixtures, 900)
        lines = gcov_lines(build)
        files = sorted(f for f in lines if f in sources and lines[f][0])
        durations[name] = (dt, rc)
        for f in sources & set(lines):
            executable.setdefault(f, set()).update(lines[f][1])
        for f in files:
            covers.setdefault(f, []).append(name)
            hits[(f, name)] = lines[f][0]
        print("map: %-36s %6.1fs rc=%s %d files" % (name, dt, rc, len(files)), flush=True)
    order = sorted(tests, key=lambda t: durations[t][0])
    with open(MAP + ".tmp", "w") as out:
        out.write("# Made by `make mutants-map` (tests/mutation/mutants.py map) from gcov: do not edit.\n"
                  "# test NAME SECONDS RC: each test alone in the coverage build (-O0 --coverage)\n"
                  "# file PATH TEST...: the tests that execute a line of PATH, quickest first\n"
                  "# lines PATH SHA1 EXECUTABLE: PATH's content when mapped, the lines gcov counts\n"
                  "# hit PATH TEST LINES: the lines TEST executed (a mutant on an executable line\n"
                  "#   runs only the tests that executed it; elsewhere, or once PATH has changed,\n"
                  "#   all of PATH's tests)\n")
        for t in order:
            out.write("test %s %.1f %s\n" % (t, durations[t][0], durations[t][1]))
        for f in sorted(sources - unmapped):
            out.write("file %s%s\n" % (f, "".join(" " + t for t in order if t in covers.get(f, []))))
        for f in sorted(sources - unmapped):
            out.write("lines %s %s %s\n" % (f, digests[f], ranges(executable.get(f, ()))))
            for t in order:
                if (f, t) in hits:
                    out.write("hit %s %s %s\n" % (f, t, ranges(hits[(f, t)])))
    os.replace(MAP + ".tmp", MAP)
    uncovered = [f for f in sorted(sources) if f not in covers]
    print("map: %d tests, %d of %d files covered -> %s" % (len(tests), len(covers), len(sources),
                                                          os.path.relpath(MAP, ROOT)))
    if uncovered:
        print("map: no test executes: " + " ".join(uncovered))
    failing = [t for t in tests if durations[t][1] != 0]
    if failing:
        print("map: failed in the coverage build (coverage still recorded): " + " ".join(failing))


class Map:
    """coverage.txt: durations, the tests of each file, and by line"""

    def __init__(self):
        self.durations, self.covers, self.digest, self.executable, self.hits = {}, None, {}, {}, {}
        self.rcs = {}
        if not os.path.exists(MAP):
            return
        self.covers = {}
        with open(MAP) as f:
            for line in f:
                w = line.split()
                if not w or w[0].startswith("#"):
                    continue
                if w[0] == "test":
                    self.durations[w[1]] = float(w[2])
                    self.rcs[w[1]] = w[3] if len(w) > 3 else "0"
                elif w[0] == "file":
                    self.covers[w[1]] = w[2:]
                elif w[0] == "lines" and len(w) == 4:
                    self.digest[w[1]], self.executable[w[1]] = w[2], w[3]
                elif w[0] == "hit" and len(w) == 4:
                    self.hits[(w[1], w[2])] = w[3]

    def tests_for(self, path, line, root=ROOT):
        """(tests, how): the tests to run for a mutant of path (as it is
        under root, unmutated) at line, or (None, ...) when the map has no
        entry for path"""
        tests = self.covers.get(path)
        if tests is None:
            return None, "file not in the map"
        if path not in self.digest or self.digest[path] != file_digest(path, root):
            return tests, "file changed since the map"
        if line not in unranges(self.executable[path]):
            return tests, "line gcov does not count"
        return [t for t in tests if line in unranges(self.hits.get((path, t), ""))], "tests executing the line"


def read_equivalents():
    eq = {}
    if os.path.exists(EQUIV):
        with open(EQUIV) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    key, _, why = line.partition(" :: ")
                    eq[key.strip()] = why.strip()
    return eq


# ---- a run ----

def die(msg):
    print("mutants: " + msg, file=sys.stderr)
    sys.exit(2)


def targets_of(test):
    if test.startswith("test_"):
        return ["build/tests/" + test]
    if test.startswith("tests/probe/"):
        return ["build/kimg-probe", "build/tests/kimg-probe-ahead8", "build/libkimg.so"]
    if test == "tests/shim/threads.sh":
        return ["build/libkimg.so", "build/tsan/libkimg.so", "build/kimg-probe"]
    if test == "tests/shim/stack.sh":  # its programs link the core and diagnosis libraries
        return ["build/libkimg.so", "build/kimg-probe", "shim-stack-programs"]
    if test.startswith("tests/shim/"):
        return ["build/libkimg.so", "build/kimg-probe"]
    if test.startswith("tests/api/"):
        return ["all", "build/tests/api_ask"]
    return ["all"]


def make(tree, targets):
    r = subprocess.run(["make", "-s", "-C", tree, "BUILD=build"] + targets, capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


def strip_debug_equal(a, b):
    with tempfile.TemporaryDirectory() as d:
        sa, sb = os.path.join(d, "a.o"), os.path.join(d, "b.o")
        for src, dst in ((a, sa), (b, sb)):
            if subprocess.run(["objcopy", "--strip-debug", src, dst], capture_output=True).returncode:
                return False
        with open(sa, "rb") as fa, open(sb, "rb") as fb:
            return fa.read() == fb.read()


def copy_tree(scratch):
    tree = os.path.join(scratch, "tree")
    os.makedirs(os.path.join(tree, "build"))
    # the tree as git sees it (tracked and untracked, not ignored); without
    # git (a minimal system, a tarball of the sources), all but .git and
    # the build folders
    try:
        r = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "-co", "--exclude-standard"], capture_output=True)
        listed = r.returncode == 0
    except OSError:
        listed = False
    if listed:
        names = [n for n in r.stdout.decode("utf-8", "surrogateescape").split("\0") if n and os.path.lexists(
            os.path.join(ROOT, n))]
    else:
        names = []
        for base, dirs, files in os.walk(ROOT):
            rel = os.path.relpath(base, ROOT)
            if rel == ".":
                dirs[:] = [d for d in dirs if d not in (".git", "build", "dist") and not d.startswith("build-")]
            names += [os.path.normpath(os.path.join(rel, f)) for f in files]
    tar = subprocess.Popen(["tar", "--null", "-T", "-", "-cf", "-"], cwd=ROOT, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
    untar = subprocess.Popen(["tar", "-xf", "-", "-C", tree], stdin=tar.stdout)
    tar.stdin.write("\0".join(names).encode("utf-8", "surrogateescape"))
    tar.stdin.close()
    tar.stdout.close()
    if untar.wait() or tar.wait():
        die("cannot copy the tree")
    b = subprocess.run("tar --exclude=./fixtures --exclude=./fuzz -cf - . | tar -xf - -C '%s/build'" % tree,
                       shell=True, cwd=os.path.join(ROOT, "build"))
    if b.returncode:
        die("cannot copy build/")
    # the packages make wheel / make test built from the checkout (ignored
    # by git, so not listed above): tests/api/python.sh installs the wheel,
    # and without it fails with no mutant planted
    if os.path.isdir(os.path.join(ROOT, "dist")):
        shutil.copytree(os.path.join(ROOT, "dist"), os.path.join(tree, "dist"), symlinks=True)
    return tree


def plant_and_judge(m, tree, scratch, tests, fixtures, durations):
    """plant m alone in tree, run tests (quickest first) until one fails,
    put the original back. Returns (verdict, by, seconds): verdict is
    "unbuildable" (does not compile or a later link fails), "same" (object
    code unchanged), "killed" (by names the test) or "survived"."""
    src = os.path.join(tree, m["file"])
    obj = os.path.join(tree, "build", "obj", m["file"][:-2] + ".o")
    ok, log = make(tree, [os.path.relpath(obj, tree)])
    if not ok:
        die("the unmutated %s does not build:\n%s" % (m["file"], log[-2000:]))
    shutil.copy2(src, os.path.join(scratch, "orig.c"))
    shutil.copy2(obj, os.path.join(scratch, "orig.o"))
    with open(src, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    if lines[m["line"] - 1] != m["old"]:
        die("%s changed under the run" % m["file"])
    lines[m["line"] - 1] = m["new"]
    with open(src, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("\n".join(lines))
    # newer than the object: the last mutant's restore dated the object a
    # second ahead, and a mutant planted within that second (the next of
    # the same file, under MUTANTS_FILES) was not recompiled, so it read
    # as "unchanged object code", and so did every one after it
    t = max(time.time(), os.stat(obj).st_mtime + 1)
    os.utime(src, (t, t))
    try:
        ok, log = make(tree, [os.path.relpath(obj, tree)])
        if not ok:
            return "unbuildable", None, 0.0
        if strip_debug_equal(obj, os.path.join(scratch, "orig.o")):
            return "same", None, 0.0
        # what each test needs is linked just before it runs: most mutants
        # die in the first (quickest) test, so most links are never made
        t1, built = time.time(), set()
        for t in tests:
            need = [x for x in targets_of(t) if x not in built]
            if need:
                ok, log = make(tree, need)
                built.update(need)
                if not ok:
                    # a later link of the mutant failed: not a mutant that builds
                    return "unbuildable", None, 0.0
            rc, _ = run_test(t, tree, "build", fixtures, test_limit(t, durations))
            if rc != 0:
                return "killed", "%s%s" % (t, " (timeout)" if rc == "timeout" else ""), time.time() - t1
        return "survived", None, time.time() - t1
    finally:
        # the original back: the source newer than the mutant's products,
        # the saved object newer still, so make relinks without recompiling
        # it (derived objects are recompiled)
        shutil.copy(os.path.join(scratch, "orig.c"), src)
        shutil.copy(os.path.join(scratch, "orig.o"), obj)
        now = time.time()
        os.utime(src, (now, now))
        os.utime(obj, (now + 1, now + 1))


def test_limit(t, durations):
    """a test's bound in a mutant run: four times its mapped time plus 30 s
    (a mutant that makes it loop is killed by the timeout)"""
    return int(max(60, 4 * durations.get(t, 60.0) + 30))


def show(m):
    return "%s:%d [%s]\n    - %s\n    + %s" % (m["file"], m["line"], m["rule"], m["old"].strip(), m["new"].strip())


def cmd_run(args):
    n_want = int(os.environ.get("MUTANTS_N") or "60")
    seed_env = os.environ.get("MUTANTS_SEED", "")
    seed = int(seed_env) if seed_env else random.SystemRandom().randrange(1, 1 << 31)
    min_score = float(os.environ.get("MUTANTS_MIN_SCORE") or "90")
    # a bound on the run's time (CI's): no mutant is begun past it, and the
    # closing line then counts what was judged
    budget = float(os.environ.get("MUTANTS_BUDGET_S") or "0")
    over_budget = False
    only = os.environ.get("MUTANTS_FILES", "").split()
    keys = set(os.environ.get("MUTANTS_KEYS", "").split())
    fixtures = os.path.realpath(os.environ.get("KIMG_FIXTURES", os.path.join(ROOT, "build", "fixtures")))
    if not os.path.exists(os.path.join(fixtures, "multi.fatbin")):
        die("fixtures missing in %s (make fixtures)" % fixtures)
    cmap = Map()
    durations = cmap.durations
    if cmap.covers is None:
        die("no coverage map %s (make mutants-map)" % os.path.relpath(MAP, ROOT))
    equivalents = read_equivalents()
    suite = all_tests("build")
    t0 = time.time()
    print("mutants: seed %d, %d to sample (MUTANTS_SEED=%d reproduces this run)" % (seed, n_want, seed), flush=True)

    pool = []
    for src in product_sources():
        if not only or src in only:
            pool += [m for m in file_mutants(src) if not keys or m["key"] in keys]
    random.Random(seed).shuffle(pool)

    # ended from outside (CI's timeout, a kill): the finally below still
    # removes the scratch copy
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(3))
    broken = {}
    scratch = tempfile.mkdtemp(prefix="kimg-mutants.")
    try:
        tree = copy_tree(scratch)
        ok, log = make(tree, ["all"])
        if not ok:
            die("the unmutated copy does not build:\n" + log[-2000:])
        killed, survived, equivalent, discarded_build, discarded_same = [], [], [], 0, 0
        verified, sampled = set(), 0
        for m in pool:
            if sampled >= n_want:
                break
            if budget and time.time() - t0 > budget:
                over_budget = True
                break
            # which tests, judged on the unmutated file of the copy
            tests, how = cmap.tests_for(m["file"], m["line"], tree)
            if tests is None:
                # the whole suite, but for the tests that judge packages,
                # not the copy (NOT_JUDGES)
                tests = sorted((t for t in suite if t not in NOT_JUDGES), key=lambda t: durations.get(t, 60.0))
            while True:
                verdict, by, dt = plant_and_judge(m, tree, scratch, [t for t in tests if t not in broken],
                                                  fixtures, durations)
                t = by.split(" ")[0] if by else None
                if verdict != "killed" or t in verified:
                    break
                # a test counts as a kill only once it has passed on the
                # unmutated copy; one that fails there judges nothing (it
                # is named at the end) and the mutant is judged again
                # without it
                ok, log = make(tree, targets_of(t))
                rc, _ = run_test(t, tree, "build", fixtures, test_limit(t, durations))
                if ok and rc == 0:
                    verified.add(t)
                    break
                broken[t] = "does not build" if not ok else "timeout" if rc == "timeout" else "exit %s" % rc
                print("baseline:  %s fails with no mutant planted (%s): not used to judge mutants" %
                      (t, broken[t]), flush=True)
            if verdict == "unbuildable":
                discarded_build += 1
                continue
            if verdict == "same":
                discarded_same += 1
                continue
            sampled += 1
            if verdict == "killed":
                killed.append(m)
                print("killed     %s:%d [%s] by %s (%.0fs)" % (m["file"], m["line"], m["rule"], by, dt),
                      flush=True)
            elif m["key"] in equivalents:
                equivalent.append(m)
                print("equivalent %s:%d [%s] %s: %s" % (m["file"], m["line"], m["rule"], m["key"],
                                                       equivalents[m["key"]]), flush=True)
            else:
                survived.append(m)
                print("SURVIVED   %s (key %s; %d tests: %s, %.0fs)" % (show(m), m["key"], len(tests), how, dt),
                      flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    n, k, s, e = sampled, len(killed), len(survived), len(equivalent)
    score = 100.0 * k / (n - e) if n > e else 0.0
    print("time: %.0fs; discarded: %d not compiling, %d with unchanged object code" %
          (time.time() - t0, discarded_build, discarded_same))
    if survived:
        print("survivors (add a test, or list the key in tests/mutation/equivalent.txt with the reason):")
        for m in survived:
            print("  " + show(m).replace("\n", "\n  ") + "\n    key " + m["key"])
    if over_budget:
        print("mutants: time budget MUTANTS_BUDGET_S=%.0f spent: %d of %d sampled" % (budget, sampled, n_want))
    elif sampled < n_want:
        print("mutants: only %d sites left to sample" % sampled)
    if broken:
        print("mutants: baseline: these tests fail in the copy with no mutant planted, so they judged no mutant "
              "(fix them): " + ", ".join("%s (%s)" % kv for kv in sorted(broken.items())))
    print("mutants: %d killed, %d survived, %d equivalent of %d sampled (seed %d): score %.1f%%" %
          (k, s, e, n, seed, score))
    sys.exit(2 if broken else 0 if score >= min_score and n > 0 else 1)


def cmd_list(args):
    for f in args:
        for m in file_mutants(f):
            print(show(m) + "\n    key " + m["key"])


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("map", "run", "list"):
        print(__doc__)
        sys.exit(2)
    {"map": cmd_map, "run": cmd_run, "list": cmd_list}[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
