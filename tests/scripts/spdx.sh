#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The licence line in every file header: each tracked source file, script,
# makefile and man page carries "SPDX-License-Identifier: Apache-2.0" in the
# comment form of its type, first or right after its #! line (the oracle is
# the rule below, written here, not scripts/dev/spdx.sh's). Then the script
# itself on a sample tree: each form exactly as expected, shebang and
# coding lines kept first, modes kept, data and docs untouched, and a
# second run changes no byte (idempotent); --check's exit status.
. "$(dirname "$0")/../lib.bash"
ID='SPDX-License-Identifier: Apache-2.0'

# The files: git's tracked ones, or, outside a git checkout (an unpacked
# sdist), every file but the build outputs.
tracked() {
	if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$ROOT" ls-files -z
	else
		(cd "$ROOT" && find . \( -path ./.git -o -path ./build -o -path ./dist \) -prune -o -type f -printf '%P\0')
	fi
}
got=$(cd "$ROOT" && tracked | python3 -c '
import os, re, sys
ID = "SPDX-License-Identifier: Apache-2.0"
forms = {"c": "/* %s */" % ID, "hash": "# %s" % ID, "roff": ".\\\" %s" % ID}
def form(path):
    base = os.path.basename(path)
    if base.endswith(".md") or base in ("LICENSE", "VERSION"):
        return None
    if re.search(r"\.(c|h|cu|cuh|map)$", base):
        return "c"
    if re.search(r"\.(sh|bash|py|mk)$", base) or base in ("Makefile", "GNUmakefile"):
        return "hash"
    if re.search(r"(^|/)man/[^/]+\.[1-9]$", path):
        return "roff"
    with open(path, "rb") as f:
        return "hash" if f.read(2) == b"#!" else None
bad, n = [], 0
for path in sys.stdin.read().split("\0"):
    if not path or not os.path.isfile(path) or os.path.islink(path):
        continue
    k = form(path)
    if k is None:
        continue
    n += 1
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")[:3]
    want = forms[k]
    at = 1 if lines and lines[0].startswith("#!") else 0
    if len(lines) <= at or lines[at] != want:
        bad.append(path)
print(n)
print(" ".join(bad[:20]) + (" ... (%d in all)" % len(bad) if len(bad) > 20 else ""))
')
n=$(sed -n 1p <<<"$got")
missing=$(sed -n 2p <<<"$got")
expect_match "tracked sources, scripts, makefiles and man pages found (more than 300)" '^[0-9]{3,}$' "$n"
expect_eq "every one carries '$ID' first (after #!), in its comment form (scripts/dev/spdx.sh adds it)" "" "$missing"

# ---- scripts/dev/spdx.sh on a sample tree ----
S=$TMP/sample
mkdir -p "$S/src" "$S/docs/man" "$S/bin"
printf 'int x;\n' >"$S/src/a.c"
printf '/* h */\n#define H 1\n' >"$S/src/a.h"
printf '#!/bin/sh\necho hi\n' >"$S/bin/tool"
chmod 0750 "$S/bin/tool"
printf '#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n"""doc"""\n' >"$S/src/p.py"
printf '"""doc"""\n' >"$S/src/q.py"
printf 'all:\n\ttrue\n' >"$S/Makefile"
printf '.TH X 1\n' >"$S/docs/man/x.1"
printf "'\\\\\" t\n.TH Y 7\n" >"$S/docs/man/y.7"
printf '/* SPDX-License-Identifier: MIT */\nint y;\n' >"$S/src/has.c"
printf '# notes\n' >"$S/README.md"
printf 'data 1.0\n' >"$S/src/table.txt"
printf '\177ELF\0\0\0' >"$S/src/blob.bin"
printf 'no newline' >"$S/src/b.sh"
: >"$S/src/empty.h"
cp -a "$S" "$TMP/orig"

out=$(bash "$ROOT/scripts/dev/spdx.sh" --check "$S" 2>&1); rc=$?
expect_eq "--check on a tree lacking the line: exit 1" 1 "$rc"
expect_eq "--check lists the 10 files that lack it (not has.c, docs, data)" \
	"Makefile bin/tool docs/man/x.1 docs/man/y.7 src/a.c src/a.h src/b.sh src/empty.h src/p.py src/q.py" \
	"$(grep -v '^spdx:' <<<"$out" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
out=$(bash "$ROOT/scripts/dev/spdx.sh" "$S" 2>&1); rc=$?
expect_eq "first run: exit 0, 10 files" "0 spdx: added the line to 10 files" "$rc $out"
expect_eq "C: the line first" "/* $ID */|int x;|" "$(tr '\n' '|' <"$S/src/a.c")"
expect_eq "header: the line first, its comment after" "/* $ID */|/* h */|#define H 1|" "$(tr '\n' '|' <"$S/src/a.h")"
expect_eq "script without extension: after #!" "#!/bin/sh|# $ID|echo hi|" "$(tr '\n' '|' <"$S/bin/tool")"
expect_eq "script: mode kept" 750 "$(file_mode "$S/bin/tool")"
expect_eq "Python: after #! and the coding line" "#!/usr/bin/env python3|# -*- coding: utf-8 -*-|# $ID|\"\"\"doc\"\"\"|" "$(tr '\n' '|' <"$S/src/p.py")"
expect_eq "Python without #!: first, before the docstring" "# $ID|\"\"\"doc\"\"\"|" "$(tr '\n' '|' <"$S/src/q.py")"
expect_eq "Makefile: first" "# $ID|all:|	true|" "$(tr '\n' '|' <"$S/Makefile")"
expect_eq "man page: a roff comment first" ".\\\" $ID|.TH X 1|" "$(tr '\n' '|' <"$S/docs/man/x.1")"
expect_eq "man page with a preprocessor line: after it" "'\\\" t|.\\\" $ID|.TH Y 7|" "$(tr '\n' '|' <"$S/docs/man/y.7")"
expect_eq "no final newline: kept so" "# $ID|no newline" "$(tr '\n' '|' <"$S/src/b.sh")"
expect_eq "empty header: the line alone" "/* $ID */|" "$(tr '\n' '|' <"$S/src/empty.h")"
for f in src/has.c README.md src/table.txt src/blob.bin; do
	expect_eq "$f untouched (another SPDX line, docs, data)" "" "$(cmp "$TMP/orig/$f" "$S/$f" 2>&1)"
done
cp -a "$S" "$TMP/once"
out=$(bash "$ROOT/scripts/dev/spdx.sh" "$S" 2>&1); rc=$?
expect_eq "second run: exit 0, nothing added" "0 spdx: added the line to 0 files" "$rc $out"
expect_eq "second run: no byte changed (diff -r)" "" "$(diff -r "$TMP/once" "$S" 2>&1)"
out=$(bash "$ROOT/scripts/dev/spdx.sh" --check "$S" 2>&1); rc=$?
expect_eq "--check afterwards: exit 0, nothing listed" "0 " "$rc $out"

# The script adding the line to itself, as it does in a tree without it:
# bash must not read on at a shifted offset (a syntax error, files skipped).
mkdir -p "$TMP/self/scripts/dev"
grep -v '^# SPDX-License-Identifier:' "$ROOT/scripts/dev/spdx.sh" >"$TMP/self/scripts/dev/spdx.sh"
printf 'int z;\n' >"$TMP/self/z.c"
out=$(bash "$TMP/self/scripts/dev/spdx.sh" "$TMP/self" 2>&1); rc=$?
expect_eq "a copy without the line, run on its own tree: exit 0, both files" "0 spdx: added the line to 2 files" "$rc $out"
expect_eq "... and the copy got the line after its #!" "# $ID" "$(sed -n 2p "$TMP/self/scripts/dev/spdx.sh")"

# In a git work tree: tracked and new files, never ignored ones.
G=$TMP/git
mkdir -p "$G/build"
printf 'int a;\n' >"$G/a.c"
printf 'int n;\n' >"$G/new.c"
printf 'int o;\n' >"$G/build/out.c"
printf 'build/\n' >"$G/.gitignore"
git -C "$G" init -q && git -C "$G" add a.c .gitignore
bash "$ROOT/scripts/dev/spdx.sh" "$G" >/dev/null 2>&1
expect_eq "git tree: tracked and untracked files get it, ignored ones do not" "/* $ID */ /* $ID */ int o;" \
	"$(head -n1 "$G/a.c") $(head -n1 "$G/new.c") $(head -n1 "$G/build/out.c")"
finish
