#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the code reads and answers, against what the docs say (issue 31
item 4). Every fact is taken from the code, never from a list kept here:

- KIMG_* variables: the rows of the shim's option table
  (shim/diag/options.c kimg_option_table), every getenv/env_size of
  kimg-probe (probe/, sys/), and every variable the scripts read
  (scripts/, bench/: "${KIMG_X", "$KIMG_X", find_tool KIMG_X,
  environ.get("KIMG_X"), env_float/goal/env_goal("KIMG_X")) that the
  script does not set itself. Each must be in the docs (README.md,
  docs/*.md, bench/README.md), and one a shipped tool reads in its man page:
  the shim's in libkimg.7 and in docs/json-shim-report.md's option table,
  kimg-probe's in kimg-probe.1, kimg-run's in kimg-run.1; a CI recipe's
  (scripts/recipes/) in docs/ci.md, one of the project's own CI scripts
  (scripts/ci/) in docs/development.md, a benchmark's in bench/README.md.
- kimg-probe options: every "--x" / "-x" its argument code compares an
  argument with (strcmp/strncmp in probe/*.c): in kimg-probe.1, in the docs,
  and in the --help of a command that takes it (KIMG_PROBE_BIN, run).
  The scripts' options (the "--x)" arms of scripts/kimg-run and
  scripts/recipes/*.sh): kimg-run's in kimg-run.1, the CI recipes' in docs/ci.md.
- Exit statuses: the code's list (PROBE_EXIT_* in probe/probe.h), each in
  kimg-probe.1's EXIT STATUS, docs/json-probe.md's exit-status table and the
  main --help; and per command, each status its code returns, in that
  command's --help, its row of the docs/json-probe.md table, and, for 1, the
  main --help's clause for 1 names the command.

  docs_truth.py [--code-root DIR] [--probe BIN]
Prints "ok - ..." / "FAIL - ..." lines; exits 1 when any failed.
--code-root reads the code from DIR (a copy with something planted) and
the docs from this tree, so the test can show that a plant fails it."""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FAILS = []
OKS = [0]


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def man_text(path):
    """groff source as words a reader sees: fonts dropped, \\- as -."""
    t = read(path)
    t = re.sub(r"\\f(\(..|\[[^]]*\]|.)", "", t)
    t = t.replace("\\-", "-").replace("\\&", "").replace("\\ ", " ").replace("\\(em", "-")
    return t


def has(text, word):
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w])", text) is not None


def check(ok, what, detail=""):
    if ok:
        OKS[0] += 1
    else:
        FAILS.append(what + (": " + detail if detail else ""))


# ---- the facts, from the code ----
def shim_variables(code):
    src = read(os.path.join(code, "shim/diag/options.c"))
    table = src[src.find("kimg_option_table"):]
    return sorted(set(re.findall(r"\[KIMG_OPT_[A-Z_]+\]\s*=\s*\{\s*KIMG_OPT_[A-Z_]+,\s*\"(KIMG_[A-Z0-9_]+)\"", table)))


def probe_variables(code):
    out = set()
    for f in glob.glob(os.path.join(code, "probe", "*.c")) + glob.glob(os.path.join(code, "sys", "*.c")):
        out |= set(re.findall(r"\b(?:secure_)?(?:getenv|env_size)\(\s*\"(KIMG_[A-Z0-9_]+)\"", read(f)))
    return sorted(out)


def script_variables(code):
    """{script path (relative): set of variables it reads and does not set}"""
    files = [os.path.join(code, "scripts", "kimg-run")]
    for pat in ("scripts/*.sh", "scripts/ci/*.sh", "scripts/recipes/*.sh", "scripts/dev/*.sh", "bench/*.sh", "bench/*.py",
                "bench/shim/*.sh", "bench/shim/*.py"):
        files += glob.glob(os.path.join(code, pat))
    out = {}
    for f in sorted(set(files)):
        t = read(f)
        if f.endswith(".py"):
            reads = set(re.findall(r"(?:environ\.get|env_float|env_goal|goal|getenv)\(\s*[\"'](KIMG_[A-Z0-9_]+)[\"']", t))
            reads |= set(re.findall(r"environ\[\s*[\"'](KIMG_[A-Z0-9_]+)[\"']\s*\]", t))
            sets = set()
        else:
            body = "\n".join(l for l in t.splitlines() if not l.lstrip().startswith("#"))
            reads = set(re.findall(r"\$\{?(KIMG_[A-Z0-9_]+)", body)) | set(re.findall(r"find_tool\s+(KIMG_[A-Z0-9_]+)", body))
            sets = set(re.findall(r"^\s*(?:export\s+|local\s+|readonly\s+)?(KIMG_[A-Z0-9_]+)=", body, re.M))
        reads -= sets
        if reads:
            out[os.path.relpath(f, code)] = reads
    return out


def probe_options(code):
    """{option: set of source files comparing an argument with it}"""
    out = {}
    for f in glob.glob(os.path.join(code, "probe", "*.c")):
        for opt in re.findall(r"\bstrn?cmp\(\s*[\w\[\]>.-]+,\s*\"(--?[a-z][a-z0-9-]*)=?\"", read(f)):
            out.setdefault(opt, set()).add(os.path.basename(f))
    return out


def script_options(code, rel):
    t = read(os.path.join(code, rel))
    opts = set()
    for arm in re.findall(r"^\s*([-\w|= \"'*]+)\)", t, re.M):
        for o in arm.split("|"):
            o = o.strip().strip("\"'").rstrip("=*")
            if re.fullmatch(r"--?[a-z][a-z0-9-]*", o) and o not in ("-", "--"):
                opts.add(o)
    return sorted(opts)


def exit_codes(code):
    t = read(os.path.join(code, "probe", "probe.h"))
    return {n: int(v) for n, v in re.findall(r"#define\s+(PROBE_EXIT_[A-Z]+)\s+(\d+)", t)}


# ---- the docs ----
def doc_texts(root):
    docs = {p: read(p) for p in glob.glob(os.path.join(root, "docs", "*.md"))}
    docs[os.path.join(root, "README.md")] = read(os.path.join(root, "README.md"))
    docs[os.path.join(root, "bench", "README.md")] = read(os.path.join(root, "bench", "README.md"))
    return docs


def section(text, start, stop_prefix):
    i = text.find(start)
    if i < 0:
        return ""
    rest = text[i + len(start):]
    j = rest.find(stop_prefix)
    return rest[:j] if j >= 0 else rest


def in_docs(docs, word):
    return [os.path.relpath(p, ROOT) for p, t in docs.items() if has(t, word)]


def help_text(probe, *args):
    try:
        r = subprocess.run([probe] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        return r.stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return "(could not run %s: %s)" % (probe, e)


COMMANDS = ("device", "scan", "check", "summarize", "doctor")
# The source files of each command (args.c: the arguments scan, check and doctor share).
COMMAND_FILES = {"device": ["cmd_device.c"], "scan": ["cmd_scan.c", "args.c"], "check": ["cmd_check.c", "args.c"],
                 "summarize": ["cmd_summarize.c"], "doctor": ["cmd_doctor.c", "args.c"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--code-root", default=ROOT)
    ap.add_argument("--probe", default=os.path.join(ROOT, os.environ.get("BUILD", "build"), "kimg-probe"))
    a = ap.parse_args()
    code = a.code_root
    docs = doc_texts(ROOT)
    man = {n: man_text(os.path.join(ROOT, "docs", "man", n)) for n in ("kimg-probe.1", "kimg-run.1", "libkimg.7")}
    report_opts = section(read(os.path.join(ROOT, "docs", "json-shim-report.md")), "## Options that shape the output", "\n## ")
    ci_md = read(os.path.join(ROOT, "docs", "ci.md"))
    dev_md = read(os.path.join(ROOT, "docs", "development.md"))
    bench_md = read(os.path.join(ROOT, "bench", "README.md"))

    # variables
    shim = shim_variables(code)
    check(len(shim) >= 5, "the shim's option table was read (%d rows)" % len(shim))
    for v in shim:
        check(has(man["libkimg.7"], v), "shim variable %s in docs/man/libkimg.7" % v)
        check(has(report_opts, v), "shim variable %s in docs/json-shim-report.md's option table" % v)
    probe_vars = probe_variables(code)
    check(len(probe_vars) >= 5, "kimg-probe's getenv calls were read (%d)" % len(probe_vars))
    for v in probe_vars:
        check(has(man["kimg-probe.1"], v), "kimg-probe variable %s in docs/man/kimg-probe.1" % v)
        check(bool(in_docs(docs, v)), "kimg-probe variable %s in the docs (README.md, docs/*.md)" % v)
    scripts = script_variables(code)
    check(len(scripts) >= 3, "the scripts' variables were read (%d scripts)" % len(scripts))
    for script, vs in sorted(scripts.items()):
        for v in sorted(vs):
            if v in shim or v in probe_vars:
                continue  # a tool's own variable, passed on: documented with the tool
            check(bool(in_docs(docs, v)), "%s reads %s: in the docs (README.md, docs/*.md, bench/README.md)" % (script, v))
            if script == "scripts/kimg-run":
                check(has(man["kimg-run.1"], v), "%s reads %s: in docs/man/kimg-run.1" % (script, v))
            elif script.startswith("scripts/recipes/"):
                check(has(ci_md, v), "%s reads %s: in docs/ci.md" % (script, v))
            elif script.startswith("scripts/ci/"):
                check(has(dev_md, v), "%s reads %s: in docs/development.md" % (script, v))
            elif script.startswith("bench/"):
                check(has(bench_md, v), "%s reads %s: in bench/README.md" % (script, v))

    # options
    opts = probe_options(code)
    check(len(opts) >= 8, "kimg-probe's options were read (%d)" % len(opts))
    helps = {c: help_text(a.probe, c, "--help") for c in COMMANDS}
    main_help = help_text(a.probe, "--help")
    for opt, files in sorted(opts.items()):
        check(has(man["kimg-probe.1"], opt), "kimg-probe option %s (%s) in docs/man/kimg-probe.1" % (opt, ", ".join(sorted(files))))
        check(bool(in_docs(docs, opt)) or opt in ("-h", "--help"), "kimg-probe option %s in the docs (README.md, docs/*.md)" % opt)
        owners = [c for c in COMMANDS if any(f in COMMAND_FILES[c] for f in files)]
        if "main.c" in files:
            check(has(main_help, opt), "kimg-probe option %s in kimg-probe --help" % opt)
        for c in owners if opt not in ("-h", "--help") else ():  # a command's own help needs not name itself
            check(has(helps[c], opt), "kimg-probe option %s in kimg-probe %s --help" % (opt, c))
    # each command's SYNOPSIS line in kimg-probe.1 names every option the command takes
    synopsis = section(man["kimg-probe.1"], ".SH SYNOPSIS", ".SH ")
    lines = {}
    for chunk in synopsis.split(".br"):
        words = " ".join(re.sub(r"^\.[A-Z]+ ?", "", l) for l in chunk.strip().splitlines())
        m = re.match(r'"?kimg-probe (\w+)', words.strip())
        if m:
            lines[m.group(1)] = words
    alias = {"--jobs": "-j"}
    for c in COMMANDS:
        for opt, files in sorted(opts.items()):
            if opt in ("-h", "--help") or not any(f in COMMAND_FILES[c] for f in files):
                continue
            check(has(lines.get(c, ""), alias.get(opt, opt)),
                  "kimg-probe %s takes %s: in its SYNOPSIS line of kimg-probe.1" % (c, opt), lines.get(c, "(no line)")[:160])
    for rel, manpage, doc_name, doc in (("scripts/kimg-run", "kimg-run.1", None, None),
                                        ("scripts/recipes/kimg-gate.sh", None, "docs/ci.md", ci_md),
                                        ("scripts/recipes/kimg-gpu-test.sh", None, "docs/ci.md", ci_md)):
        sopts = script_options(code, rel)
        check(len(sopts) >= 2, "%s: its options were read (%d)" % (rel, len(sopts)))
        for o in sopts:
            if manpage:
                check(has(man[manpage], o), "%s option %s in docs/man/%s" % (rel, o, manpage))
            if doc is not None:
                check(has(doc, o), "%s option %s in %s" % (rel, o, doc_name))

    # exit statuses
    codes = exit_codes(code)
    check(sorted(codes.values()) == [0, 1, 2], "probe/probe.h's exit statuses read: %s" % sorted(codes.values()))
    man_exit = section(man["kimg-probe.1"], ".SH EXIT STATUS", ".SH ")
    json_exit = section(docs.get(os.path.join(ROOT, "docs", "json-probe.md"), ""), "## Exit status", "\n## ")
    main_exit = main_help[main_help.find("Exit status"):]
    for name, n in sorted(codes.items()):
        check(re.search(r"^\.B %d\s*$" % n, man_exit, re.M) is not None, "exit status %d (%s) in kimg-probe.1 EXIT STATUS" % (n, name))
        check(re.search(r"\| %d \|" % n, json_exit) is not None, "exit status %d (%s) in docs/json-probe.md's exit-status table" % (n, name))
        check(has(main_exit, str(n)), "exit status %d (%s) in kimg-probe --help" % (n, name))
    header = [c.strip() for c in json_exit.split("\n|")[0].strip().strip("|").split("|")] if json_exit else []
    rows = {}
    for line in json_exit.splitlines():
        m = re.match(r"\|\s*`(\w+)`\s*\|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    one = re.search(r"1 (.*?);\s*2 ", " ".join(main_exit.split()))
    for c in COMMANDS:
        used = set()
        for f in COMMAND_FILES[c]:
            if f == "args.c":
                continue
            used |= {codes[n] for n in re.findall(r"\b(PROBE_EXIT_[A-Z]+)\b", read(os.path.join(code, "probe", f))) if n in codes}
        used.add(codes.get("PROBE_EXIT_ERROR", 2))  # every command: usage errors, a failed write
        cmd_exit = helps[c][helps[c].find("Exit status"):]
        for n in sorted(used):
            check(has(cmd_exit, str(n)), "kimg-probe %s can exit %d: said in its --help" % (c, n))
            cells = rows.get(c)
            check(bool(cells) and len(cells) > n and cells[n] not in ("", "—", "-"),
                  "kimg-probe %s can exit %d: its docs/json-probe.md exit-status row says when" % (c, n))
        if codes.get("PROBE_EXIT_FAIL") in used:
            check(bool(one) and has(one.group(1), c),
                  "kimg-probe %s can exit 1: kimg-probe --help's status 1 names it" % c,
                  one.group(0) if one else "no '1 ...; 2' clause in: " + main_exit[:200])

    for f in FAILS:
        print("FAIL - " + f)
    print("ok - docs_truth: %d facts of the code found in the docs" % OKS[0] if not FAILS else
          "docs_truth: %d facts found, %d missing" % (OKS[0], len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
