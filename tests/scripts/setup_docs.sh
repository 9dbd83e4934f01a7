#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The set-up the README promises is the set-up that runs: every package
# scripts/setup-debian.sh installs is named in the set-up section of
# docs/development.md (where the README points), .ci/run runs the README's
# test command, and fresh-root.sh finds the README's two commands.
. "$(dirname "$0")/../lib.bash"
setup=$ROOT/scripts/setup-debian.sh readme=$ROOT/README.md dev=$ROOT/docs/development.md
need "$setup" "set-up script" && need "$readme" "README" && need "$dev" "docs/development.md" || { finish; exit; }

pkgs=$(sed -n '/^pkgs="/,/"$/p' "$setup" | tr -d '"\\' | sed 's/^pkgs=//' | tr -s ' \n\t' '\n' | grep -v '^$')
expect_match "setup-debian.sh: a package list was found" '^build-essential$' "$pkgs"
intro=$(sed -n '/^## 1\. Set-up/,/^## 2\./p' "$dev" | tr -d '`' | tr -s ' \n' ' ')
expect_match "docs/development.md has its set-up section" 'setup-debian' "$intro"
for p in $pkgs; do
	if grep -Fqw -- "$p" <<<"$intro"; then ok "docs/development.md names $p"; else fail "docs/development.md names $p" "setup-debian.sh installs it"; fi
done
expect_match "the README points to the set-up details" 'docs/development\.md' "$(sed -n '1,12p' "$readme")"
expect_no_match "setup-debian.sh installs no zstd/lz4 -dev package" 'lib(zstd|lz4)-dev' "$pkgs"

cmds=$(sed -n '/^```sh/,/^```/{/^```/d;p}' "$readme" | sed -n '1,2s/ *#.*//p')
expect_eq "README starts with the demo and the test command" \
	"./scripts/setup-debian.sh && make demo
./scripts/setup-debian.sh && make test" "$cmds"
expect_match ".ci/run runs the README's test command" '^\./scripts/setup-debian\.sh && make test$' "$(cat "$ROOT/.ci/run")"
expect_match "docs/development.md documents the fresh-root check" 'scripts/ci/fresh-root\.sh' "$(cat "$dev")"
help=$(bash "$ROOT/scripts/ci/fresh-root.sh" --help)
expect_match "fresh-root.sh --help describes itself" 'debootstrap --variant=minbase' "$help"
finish
