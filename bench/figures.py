#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The README's benchmark figures come from bench/README.md, the record of
`make bench` runs (issue 31): they cannot drift from what was measured.

  figures.py check README.md bench/README.md
      every table row of README.md's "## Benchmarks" section, and every
      measured figure in its prose (a number with a unit: ms, µs, s, GB, MB,
      KiB, ×, bytes, files; a ratio with two or more decimals), appears in
      bench/README.md; exit 1 naming each
      one that does not. make bench and tests/scripts/docs_truth.sh run it.
  figures.py record LABEL OUTPUT bench/README.md
      writes the result lines of one `make bench` run (OUTPUT, what
      bench/run.sh printed) into bench/README.md as the run LABEL, replacing
      an earlier record of that label (make bench KIMG_BENCH_RECORD=LABEL).
"""
import re
import sys
import time

FIGURE = re.compile(r"(?<![\w.,])(?:\d[\d,]*(?:\.\d+)?\s?(?:ms|µs|s|GB|MB|KiB|MiB|KB|×|x|bytes|files)(?![\w])"
                    r"|\d+\.\d{2,}(?![\w.]))")
RESULT = re.compile(r"^\s*(PASS|FAIL|NOT MEASURED|ERROR|ok|file:|kimg-probe scan|read once|cat FILE|goal|"
                    r"threads:|==|bench:|\S.*(cold s|read-all|check -j|readahead=)|tree|\d+ passed)")


def section(text, title):
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line.strip() == title
            continue
        if inside:
            out.append(line)
    return out


def check(readme, record):
    lines = section(open(readme, encoding="utf-8").read(), "## Benchmarks")
    source = open(record, encoding="utf-8").read()
    flat = " ".join(source.split())
    missing = []
    if not lines:
        missing.append("%s has no '## Benchmarks' section" % readme)
    for line in lines:
        s = line.strip()
        if s.startswith("|") and re.search(r"\d", s) and not re.fullmatch(r"[|\-: ]+", s):
            if s not in source:
                missing.append("table row: " + s[:160])
            continue
        for m in FIGURE.finditer(line):
            if m.group(0) not in flat:
                missing.append("figure %r in: %s" % (m.group(0), s[:140]))
    for m in missing:
        print("%s: not in %s: %s" % (readme, record, m))
    if missing:
        print("figures: %d of the README's benchmark figures are not in %s (copy them from a recorded run)"
              % (len(missing), record))
        return 1
    print("figures: every benchmark figure of %s is in %s" % (readme, record))
    return 0


def record(label, output, path):
    run = [l.rstrip() for l in open(output, encoding="utf-8", errors="replace") if RESULT.match(l)]
    text = open(path, encoding="utf-8").read()
    begin, end = "<!-- run %s -->" % label, "<!-- end run %s -->" % label
    block = "%s\n%s, `make bench`:\n\n```\n%s\n```\n%s" % (
        begin, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "\n".join(run), end)
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    open(path, "w", encoding="utf-8").write(text)
    print("figures: this run recorded in %s as %s" % (path, label))
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "record":
        return record(argv[2], argv[3], argv[4])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
