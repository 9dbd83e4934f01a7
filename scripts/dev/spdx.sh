#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Adds the licence line, SPDX-License-Identifier: Apache-2.0, to every source
# file, script, makefile and man page of a tree that lacks one, in the
# comment form of its type; safe to run on any tree, any number of times.
#
# usage: scripts/dev/spdx.sh [--check] [TREE]
#   TREE     the tree (default: the checkout this script is in); its files
#            are `git ls-files --cached --others --exclude-standard` when it
#            is a git work tree (tracked and new, not ignored), else every
#            regular file under it
#   --check  change nothing; list the files that lack the line
# Exit status: 0 nothing lacks it (after adding, or in --check); 1 --check
# found files without it; 2 usage error.
#
# What counts, and the form (the line goes first, after a #! line, and a
# Python coding line or a roff preprocessor line when one follows it):
#   *.c *.h *.cu *.cuh *.map (ld version script)   /* SPDX-... */
#   *.sh *.bash *.py *.mk Makefile, and any file    # SPDX-...
#     whose first line is #! (scripts/kimg-run, .ci/run)
#   man pages: *.1 ... *.9 under a man/ folder      .\" SPDX-...
# Not counted: documentation (*.md), data (fixtures, *.txt, *.tsv, *.json,
# binaries), LICENSE and VERSION. A file with an SPDX line (any identifier)
# among its first 5 lines is left alone, so nothing is ever added twice; the file's
# mode and owner are kept (rewritten in place). tests/scripts/spdx.sh fails
# on a file of those kinds without the line.
# One braced block, read whole before it runs: the script adds the line to
# itself too, which would shift what bash reads next.
{
set -euo pipefail
check=0
tree=
for a in "$@"; do
	case $a in
	--check) check=1 ;;
	-h | --help) sed -n '2,/^set -eu/{/^set -eu/d;/^# SPDX-License-Identifier:/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	-*) echo "spdx: unknown option $a" >&2; exit 2 ;;
	*) [ -z "$tree" ] || { echo "spdx: one TREE only" >&2; exit 2; }; tree=$a ;;
	esac
done
tree=${tree:-$(cd "$(dirname "$0")/../.." && pwd -P)}
[ -d "$tree" ] || { echo "spdx: $tree: not a directory" >&2; exit 2; }
cd "$tree"
ID='SPDX-License-Identifier: Apache-2.0'

# comment_form FILE: "c", "hash", "roff" or "" (not counted).
comment_form() {
	case $1 in
	*.md | LICENSE | VERSION | */LICENSE | */VERSION) return ;;
	*.c | *.h | *.cu | *.cuh | *.map) echo c; return ;;
	*.sh | *.bash | *.py | *.mk | Makefile | */Makefile | GNUmakefile | */GNUmakefile) echo hash; return ;;
	man/*.[1-9] | */man/*.[1-9]) echo roff; return ;;
	esac
	local first
	IFS= read -r first <"$1" 2>/dev/null || true
	case $first in '#!'*) echo hash ;; esac
}

list_files() {
	if [ "$(git rev-parse --is-inside-work-tree 2>/dev/null)" = true ] && [ "$(git rev-parse --show-prefix)" = "" ]; then
		git ls-files -z --cached --others --exclude-standard
	else
		find . -type f -not -path './.git/*' -printf '%P\0'
	fi
}

# add FILE FORM: the line inserted after the lines that must stay first.
add() {
	local f=$1 form=$2 line keep=0 l1 l2
	case $form in
	c) line="/* $ID */" ;;
	hash) line="# $ID" ;;
	roff) line=".\\\" $ID" ;;
	esac
	l1=$(sed -n 1p "$f") l2=$(sed -n 2p "$f")
	case $l1 in
	'#!'*)
		keep=1
		case $f in *.py) case $l2 in '#'*coding[:=]*) keep=2 ;; esac ;; esac ;;
	"'\\\""*) [ "$form" = roff ] && keep=1 ;;
	esac
	local tmp
	tmp=$(mktemp)
	{
		[ "$keep" -eq 0 ] || head -n "$keep" "$f"
		printf '%s\n' "$line"
		tail -n +"$((keep + 1))" "$f"
	} >"$tmp"
	cat "$tmp" >"$f" # in place: mode and owner stay
	rm -f "$tmp"
}

lacking=0 added=0
while IFS= read -r -d '' f; do
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	form=$(comment_form "$f")
	[ -n "$form" ] || continue
	# A line of its own (a comment leader, then the tag), not prose naming it.
	head -n 5 "$f" | grep -qE '^[^[:alnum:]]{1,4} ?SPDX-License-Identifier:' && continue
	if [ "$check" = 1 ]; then
		echo "$f"
		lacking=$((lacking + 1))
	else
		add "$f" "$form"
		added=$((added + 1))
	fi
done < <(list_files)
if [ "$check" = 1 ]; then
	[ "$lacking" -eq 0 ] || { echo "spdx: $lacking files lack '$ID' (scripts/dev/spdx.sh adds it)" >&2; exit 1; }
else
	echo "spdx: added the line to $added files"
fi
exit 0
}
