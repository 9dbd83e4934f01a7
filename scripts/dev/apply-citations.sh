#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rewrites citations of documents the repository does not hold into citations
# of its own docs, from the map docs/.citations.tsv (one row a line: the old
# text exactly as it appears, a tab, the replacement), then checks that no
# such citation is left and that every cited docs/*.md exists.
#
# usage: scripts/dev/apply-citations.sh [--check] [TREE]
#   TREE     the tree to rewrite (default: the checkout this script is in);
#            its files are `git ls-files` when it is a git work tree, else
#            every regular file under it (e.g. a `git archive` copy)
#   --check  only run the check, change nothing
# Exit status: 0 done and clean; 1 citations of missing documents remain
# (listed as FILE:LINE: TEXT); 2 usage error or no map.
#
# Rows are applied longest first, so a row and a shorter one that is its
# prefix (`X.md section 11`, `X.md`) never fight; both sides are literal
# text (the sed metacharacters are escaped). The map, this script and the
# test that pins the result (tests/scripts/docs_self_contained.sh) are not
# rewritten: they name the old documents on purpose.
set -euo pipefail
export LC_ALL=C

check_only=0
case ${1-} in
--check) check_only=1; shift ;;
-h|--help) sed -n '2,/^set -e/{/^set -e/d;/^# SPDX-License-Identifier:/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
-*) echo "apply-citations.sh: unknown option $1" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: apply-citations.sh [--check] [TREE]" >&2; exit 2; }
tree=${1:-$(cd "$(dirname "$0")/../.." && pwd -P)}
cd "$tree"
map=docs/.citations.tsv
[ -f "$map" ] || { echo "apply-citations.sh: $tree/$map missing" >&2; exit 2; }

self_files=("$map" scripts/dev/apply-citations.sh tests/scripts/docs_self_contained.sh)
list_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z
	else
		find . -path ./.git -prune -o -type f -print0 | sed -z 's|^\./||'
	fi | grep -zvxF "${self_files[@]/#/-e}" || true
}

# old texts, for the final check (the map's own first column: whatever it
# rewrites must be gone afterwards)
old_texts=$(cut -f1 "$map" | grep -v '^$')

if [ "$check_only" -eq 0 ]; then
	script=$(mktemp)
	trap 'rm -f "$script"' EXIT
	# escape: in the pattern \ . [ ] * ^ $ and the | delimiter; in the
	# replacement \ & and |
	awk -F'\t' 'NF >= 2 && $1 != "" { print length($1) "\t" $0 }' "$map" | sort -t"$(printf '\t')" -k1,1nr -s |
		cut -f2- | while IFS=$'\t' read -r old new; do
			o=$(printf '%s' "$old" | sed -e 's/[]\\.*^$[|]/\\&/g')
			n=$(printf '%s' "$new" | sed -e 's/[\\&|]/\\&/g')
			printf 's|%s|%s|g\n' "$o" "$n"
		done >"$script"
	changed=0
	while IFS= read -r -d '' f; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		grep -qIF -- "$old_texts" "$f" 2>/dev/null || continue
		sed -i -f "$script" -- "$f"
		changed=$((changed + 1))
	done < <(list_files)
	echo "apply-citations.sh: $(grep -c . "$map") rows, $changed files rewritten"
fi

# The check: no old text left, no citation of a docs/*.md that is absent.
bad=0
while IFS= read -r -d '' f; do
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	if hits=$(grep -nIF -- "$old_texts" "$f" 2>/dev/null); then
		sed "s|^|$f:|" <<<"$hits"
		bad=1
	fi
	while IFS= read -r hit; do
		[ -n "$hit" ] || continue
		path=${hit#*:}
		path=docs/${path#*docs/}
		[ -e "$path" ] || { echo "$f:${hit%%:*}: $path does not exist"; bad=1; }
	done < <(grep -noIE '(^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9_./-]+\.md' "$f" 2>/dev/null || true)
done < <(list_files)
if [ "$bad" -ne 0 ]; then
	echo "apply-citations.sh: citations of missing documents remain (above)" >&2
	exit 1
fi
echo "apply-citations.sh: no citation of a missing document"
