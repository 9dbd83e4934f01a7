# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# Shared by the scripts of scripts/ci (the project's own CI) and
# scripts/recipes (recipes for users' CI): sourced, not run. Each
# script sets $me (its name in messages) before sourcing this file.
me=${me:-kimg-ci}

# die MESSAGE: "$me: MESSAGE" on stderr, exit 2 (the scripts' usage-error status).
die() { printf '%s: %s\n' "$me" "$1" >&2; exit 2; }

# show_help SCRIPT: the script's leading comment block, without the "# ".
show_help() { sed -n '2,/^[^#]/{/^# SPDX-License-Identifier:/d;s/^# \{0,1\}//p}' "$1"; }

# find_tool VAR NAME FALLBACK: sets $tool to the program named by $VAR,
# else NAME found on PATH, else FALLBACK (a path inside this checkout);
# dies when that is not executable. One lookup order for every kimg tool,
# so an installed kimg and a plain checkout behave the same.
find_tool() {
	eval "tool=\${$1:-}"
	if [ -z "$tool" ] && ! tool=$(command -v "$2" 2>/dev/null); then
		tool=$3
	fi
	[ -x "$tool" ] || die "$2 not found ($tool); install kimg or set $1"
}

# gh_error TITLE MESSAGE: a GitHub Actions error annotation, so the reason
# shows on the job page; nothing elsewhere.
gh_error() {
	[ "${GITHUB_ACTIONS:-}" != true ] || printf '::error title=%s::%s\n' "$1" "$2"
}
