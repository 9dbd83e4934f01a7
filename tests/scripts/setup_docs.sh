#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The set-up the README promises is the set-up that runs: every package
# scripts/setup-debian.sh installs is named in the README's set-up
# paragraph, every command .ci/run runs besides fuzzing is the README's test
# command, and fresh-root.sh finds the README's two commands.
. "$(dirname "$0")/../lib.bash"
setup=$ROOT/scripts/setup-debian.sh readme=$ROOT/README.md
need "$setup" "set-up script" && need "$readme" "README" || { finish; exit; }

pkgs=$(sed -n '/^pkgs="/,/"$/p' "$setup" | tr -d '"\\' | sed 's/^pkgs=//' | tr -s ' \n\t' '\n' | grep -v '^$')
expect_match "setup-debian.sh: a package list was found" '^build-essential$' "$pkgs"
intro=$(sed -n '1,/^## What it is for/p' "$readme" | tr -d '`' | tr -s ' \n' ' ')
for p in $pkgs; do
	if grep -Fqw -- "$p" <<<"$intro"; then ok "README names $p"; else fail "README names $p" "setup-debian.sh installs it"; fi
done
expect_no_match "setup-debian.sh installs no zstd/lz4 -dev package" 'lib(zstd|lz4)-dev' "$pkgs"

cmds=$(sed -n '/^```sh/,/^```/{/^```/d;p}' "$readme" | sed -n '1,2s/ *#.*//p')
expect_eq "README starts with the demo and the test command" \
	"./scripts/setup-debian.sh && make demo
./scripts/setup-debian.sh && make test" "$cmds"
expect_match ".ci/run runs the README's test command" '^\./scripts/setup-debian\.sh && make test$' "$(cat "$ROOT/.ci/run")"
expect_match "README documents the fresh-root check" 'scripts/ci/fresh-root\.sh' "$(cat "$readme")"
help=$(bash "$ROOT/scripts/ci/fresh-root.sh" --help)
expect_match "fresh-root.sh --help describes itself" 'debootstrap --variant=minbase' "$help"
finish
