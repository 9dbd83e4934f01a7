#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# repro.sh: are the release artifacts reproducible? Builds every one of them
# twice from the same commit and compares the bytes.
#
#   scripts/dev/repro.sh [--out DIR] [COMMIT]
#
# Two clones of COMMIT (default HEAD; committed work only), in directories
# of different names and depths, so a build path that leaked into a binary
# shows; in each `make wheel deb sdist` and `make ARCH=aarch64 wheel deb`
# (-j2), SOURCE_DATE_EPOCH from each clone's own git log. Prints one line
# per artifact, "cmp: same NAME SHA256" or "cmp: DIFFERENT NAME" with cmp's
# first difference; that no build path is in the unstripped binaries;
# then "repro: N same, N different". --out DIR keeps the
# first build's artifacts there (to compare with a build elsewhere, such as
# scripts/ci/fresh-root.sh's). Exit status: 0 all same; 1 any differs or is
# missing; 2 usage or build errors. Needs git, gcc, gcc-aarch64-linux-gnu,
# python3, dpkg-deb.
set -euo pipefail
die() { echo "repro: $*" >&2; exit 2; }
out=
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=${2:?--out DIR}; shift 2 ;;
	-h | --help) sed -n '2,/^set -e/{/^set -e/d;/^# SPDX-License-Identifier:/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
commit=$(git -C "$top" rev-parse --verify "${1:-HEAD}^{commit}") || die "${1:-HEAD}: not a commit"
[ -z "$(git -C "$top" status --porcelain --untracked-files=no)" ] ||
	echo "repro: note: uncommitted changes in $top are not built (commit $commit only)" >&2

work=$(mktemp -d "${TMPDIR:-/tmp}/kimg-repro.XXXXXX")
trap 'rm -rf "$work"' EXIT
dirs=("$work/a/kimg" "$work/second-build/src/kimg")
for d in "${dirs[@]}"; do
	git clone -q --no-local --no-hardlinks --no-checkout "$top" "$d"
	git -C "$d" checkout -q --detach "$commit"
	echo "repro: building $(git -C "$d" rev-parse --short HEAD) in $d"
	{ make -C "$d" -j2 wheel deb sdist && make -C "$d" -j2 ARCH=aarch64 wheel deb; } >"$d.log" 2>&1 ||
		{ tail -20 "$d.log" >&2; die "the build in $d failed (log above)"; }
done

same=0 different=0
names=$(cd "${dirs[0]}/dist" && ls | LC_ALL=C sort)
[ -n "$names" ] || die "no artifacts in ${dirs[0]}/dist"
expect=5
[ "$(wc -l <<<"$names")" -eq "$expect" ] || { echo "repro: expected $expect artifacts, got: $names" >&2; different=$((different + 1)); }
for n in $names; do
	a=${dirs[0]}/dist/$n b=${dirs[1]}/dist/$n
	if r=$(cmp "$a" "$b" 2>&1); then
		echo "cmp: same $n $(sha256sum <"$a" | cut -d' ' -f1)"
		same=$((same + 1))
	else
		echo "cmp: DIFFERENT $n: $r"
		different=$((different + 1))
	fi
done
# No build path in any binary, with its debug information (not stripped).
leaks=0
for d in "${dirs[@]}"; do
	for f in build/kimg-probe build/libkimg.so build/aarch64/kimg-probe build/aarch64/libkimg.so; do
		if grep -qaF "$work" "$d/$f"; then
			echo "path: DIFFERENT $f of $d holds the build path $work"
			leaks=$((leaks + 1))
		fi
	done
done
different=$((different + leaks))
[ "$leaks" -gt 0 ] || echo "path: no build path in kimg-probe and libkimg.so (both builds, both architectures, debug info kept)"
if [ -n "$out" ]; then
	mkdir -p "$out"
	cp "${dirs[0]}"/dist/* "$out/"
	echo "repro: the first build's artifacts are in $out"
fi
echo "repro: $same same, $different different"
[ "$different" -eq 0 ]
