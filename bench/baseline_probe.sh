#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The probe of an earlier commit (default 498579e, 2026-11-30: the last one
# before the worker pool), built from git for a benchmark in the same run:
# a scratch worktree under /tmp (git worktree add), its kimg-probe built
# there and copied to OUT, the worktree removed. Prints nothing on success;
# on failure one line saying why, exit 2 (no git checkout, commit absent,
# build failed).
# Usage: baseline_probe.sh OUT [COMMIT]
set -u
out=$1 commit=${2:-${KIMG_BENCH_BASE_COMMIT:-498579e}}
root=$(cd "$(dirname "$0")/.." && pwd)
git -C "$root" rev-parse --git-dir >/dev/null 2>&1 || { echo "no git checkout at $root to build $commit from"; exit 2; }
git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null || { echo "commit $commit is not in this checkout"; exit 2; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kimg-bench-base.XXXXXX")
cleanup() { git -C "$root" worktree remove --force "$scratch/tree" >/dev/null 2>&1; rm -rf "$scratch"; git -C "$root" worktree prune >/dev/null 2>&1; }
trap cleanup EXIT
git -C "$root" worktree add --detach "$scratch/tree" "$commit" >/dev/null 2>&1 || { echo "git worktree add $commit failed"; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)
if ! make -C "$scratch/tree" -j"$jobs" build/kimg-probe >"$scratch/build.log" 2>&1; then
	echo "building kimg-probe of $commit failed: $(tail -n 1 "$scratch/build.log")"
	exit 2
fi
mkdir -p "$(dirname "$out")"
cp "$scratch/tree/build/kimg-probe" "$out"
