#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The repository's documentation is self-contained: no tracked file cites a
# document the repository does not hold. Checked in every tracked file
# (every file, outside a git work tree): no citation of the five reference
# documents kept outside the repository (the fatbin format, compatibility
# rules, CUDA loading and user-case notes, and the style guide); every
# docs/*.md path cited exists; every "docs/<name>.md §N" (or "section N") names a
# heading N of that document; every "docs/rules.md P4"-style rule key is a
# key of docs/rules.md. The patterns below are written so that this file
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

finish
