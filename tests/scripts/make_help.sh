#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make help: it prints the target list at the top of the Makefile, every
# target named there is one make knows, and every phony target of the
# Makefile itself (its .PHONY line) is named there. The oracle is make's
# own database (make -p), not the list.
. "$(dirname "$0")/../lib.bash"
cd "$ROOT" || exit 1
help=$(make --no-print-directory help 2>&1)
rc=$?
[ "$rc" -eq 0 ] && [ -n "$help" ] && ok "make help: exit 0, $(printf '%s\n' "$help" | wc -l) lines" ||
	fail "make help: exit $rc" "$help"
db=$(make --no-print-directory -pq -f Makefile 2>/dev/null)
unknown=""
for t in $(printf '%s\n' "$help" | sed -n 's/^make \([a-z][a-z0-9-]*\).*/\1/p'); do
	printf '%s\n' "$db" | grep -q "^$t:" || unknown="$unknown $t"
done
[ -z "$unknown" ] && ok "make help: every target it names is one make knows" ||
	fail "make help names targets make does not know:$unknown"
missing=""
for t in $(sed -n 's/^\.PHONY: //p' Makefile); do
	[ "$t" = all ] && continue # plain `make`
	printf '%s\n' "$help" | grep -q "^make $t\b" || missing="$missing $t"
done
[ -z "$missing" ] && ok "make help: every phony target of the Makefile is listed" ||
	fail "make help lacks:$missing"
finish
