#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The repository's documentation is self-contained: no tracked file cites a
# document the repository does not hold. Checked in every tracked file
# (every file, outside a git work tree): no citation of the five reference
# documents kept outside the repository (the fatbin format, compatibility
# rules, CUDA loading and user-case notes, and the style guide); every
# docs/*.md path cited exists; every "docs/<name>.md §N" (or "section N") names a
# heading N of that document; every "docs/rules.md P4"-style rule key is a
# key of docs/rules.md; the index docs/README.md names every docs/*.md and
# every relative Markdown link resolves. The patterns below are written so that this file
# does not match them itself.
. "$(dirname "$0")/../lib.bash"
cd "$ROOT"

files=()
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -d '' files < <(git ls-files -z)
else
	mapfile -d '' files < <(find . -path ./.git -prune -o -type f -print0 | sed -z 's|^\./||')
fi
texts=()
for f in "${files[@]}"; do
	[ -f "$f" ] && [ ! -L "$f" ] && grep -qI . "$f" 2>/dev/null && texts+=("$f")
done
expect_match "text files found" '[0-9]' "${#texts[@]}"

# 1. foreign documents: the five names with .md, two of them also with a
# bare rule key or section sign after the name, and the out-of-tree folder
# they lived in
foreign='(fatbin-forma[t]|compat-rule[s]|cuda-loadin[g]|user-case[s]|STYL[E])\.md|compat-rule[s] [PS][0-9]|STYL[E] §|shared/referenc[e]/|/work/share[d]'
hits=$(grep -nIE -- "$foreign" "${texts[@]}" /dev/null 2>/dev/null || true)
if [ -z "$hits" ]; then ok "no file cites a document kept outside the repository"; else
	fail "files cite documents kept outside the repository ($(wc -l <<<"$hits") lines)" "${hits//$'\n'/$'\n'     }"; fi

# 2. cited docs/*.md paths exist
missing=""
while IFS= read -r hit; do
	f=${hit%%:*} rest=${hit#*:} line=${rest%%:*} path=${rest#*:}
	path=docs/${path#*docs/}
	[ -e "$path" ] || missing+="$f:$line: $path"$'\n'
done < <(grep -noIE '(^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9_./-]+\.md' "${texts[@]}" /dev/null 2>/dev/null || true)
if [ -z "$missing" ]; then ok "every cited docs/*.md exists"; else
	fail "cited docs/*.md missing" "${missing//$'\n'/$'\n'     }"; fi

# 3. section numbers and rule keys cited with a document exist in it
num='[0-9]+(\.[0-9]+)?'
cite="docs/[a-z-]+\.md,? (§|sections? )$num((-| to | and |, §?|/§?)$num)*"
badsec="" nsec=0
while IFS= read -r hit; do
	f=${hit%%:*} rest=${hit#*:} line=${rest%%:*} c=${rest#*:}
	doc=${c%%.md*}.md
	[ -f "$doc" ] || continue
	for n in $(grep -oE "$num" <<<"${c#*.md}"); do
		nsec=$((nsec + 1))
		grep -qE "^#{2,4} ${n//./\\.}\.? " "$doc" || badsec+="$f:$line: $doc has no section $n"$'\n'
	done
done < <(grep -noIE -- "$cite" "${texts[@]}" /dev/null 2>/dev/null || true)
while IFS= read -r hit; do
	f=${hit%%:*} rest=${hit#*:} line=${rest%%:*} key=${rest##* }
	nsec=$((nsec + 1))
	grep -qE "^\| ($key|[A-Z][0-9], )*$key[ ,]" docs/rules.md || badsec+="$f:$line: docs/rules.md has no rule $key"$'\n'
done < <(grep -noIE -- 'docs/rules\.md [LPS][0-9]' "${texts[@]}" /dev/null 2>/dev/null || true)
if [ -z "$badsec" ]; then ok "every cited section and rule key exists ($nsec citations)"; else
	fail "cited sections or rule keys missing" "${badsec//$'\n'/$'\n'     }"; fi

# 4. the index (docs/README.md) names every document of docs/, and every
# relative link of the Markdown files leads to a file that exists
unlisted=""
for d in docs/*.md; do
	b=${d#docs/}
	[ "$b" = README.md ] || grep -qF "]($b)" docs/README.md || unlisted+=" $b"
done
if [ -z "$unlisted" ]; then ok "docs/README.md lists every docs/*.md"; else fail "docs/README.md does not list:$unlisted"; fi
md=()
for f in "${texts[@]}"; do case $f in *.md) md+=("$f") ;; esac; done
broken=$(python3 - "${md[@]}" <<'PY'
import os, re, sys
for f in sys.argv[1:]:
    for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = os.path.normpath(os.path.join(os.path.dirname(f), target.split("#")[0]))
            if not os.path.exists(path):
                print("%s:%d: %s" % (f, n, target))
PY
)
if [ -z "$broken" ]; then ok "every relative link of the Markdown files resolves (${#md[@]} files)"; else
	fail "relative links lead nowhere" "${broken//$'\n'/$'\n'     }"; fi

finish
