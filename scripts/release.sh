#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# release.sh (make release): every artifact of a release, its checksums, and
# a check of each.
#
#   scripts/release.sh [--allow-dirty]
#
# Builds into dist/: the x86-64 and aarch64 wheels, the amd64 and arm64
# .debs and the sdist (the tracked tree at HEAD), with SOURCE_DATE_EPOCH
# the last commit's time (packaging/packaging.mk); writes dist/SHA256SUMS
# (those five, sha256sum's format) and checks it with sha256sum -c. Then
# each artifact as its user meets it:
#   x86-64 wheel  tests/scripts/wheel.sh (contents, RECORD, glibc 2.17,
#                 pip install --no-index into a fresh venv, its tools run)
#   amd64 .deb    tests/scripts/deb.sh (dpkg -i into a private root, run,
#                 --purge)
#   both          tests/scripts/version.sh (one version everywhere)
#   aarch64 wheel pip install --platform manylinux_2_17_aarch64 --target,
#                 aarch64 ELF files, the licence and version in METADATA;
#                 kimg-probe --version under qemu-aarch64-static if present
#   arm64 .deb    dpkg -i --force-architecture into a private root, its
#                 files, kimg-run --version; kimg-probe under qemu likewise
#   sdist         its names are git ls-tree HEAD's under kimg-V/, and the
#                 unpacked tree builds (make -j2) a kimg-probe of VERSION
# The x86-64 checks need what make test builds for them (fixtures, the
# stand-in driver); release.sh builds those too. A tree with uncommitted
# changes is refused (the sdist would not be what the packages were built
# from) unless --allow-dirty. Last line: "release: N passed, N failed";
# exit 0 only when nothing failed.
set -uo pipefail
me=release
die() { echo "$me: $*" >&2; exit 2; }
allow_dirty=0
case ${1:-} in
--allow-dirty) allow_dirty=1 ;;
-h | --help) sed -n '2,/^set -u/{/^set -u/d;/^# SPDX-License-Identifier:/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
'') ;;
*) die "unknown argument $1" ;;
esac
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel) || die "not in a git checkout"
cd "$top"
if [ -n "$(git status --porcelain --untracked-files=no)" ] && [ "$allow_dirty" = 0 ]; then
	die "uncommitted changes: commit them (the sdist is HEAD) or pass --allow-dirty"
fi
V=$(cat VERSION)
MAKE=${MAKE:-make}
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; [ $# -lt 2 ] || printf '     %s\n' "${@:2}"; }

WHEEL_X=kimg-$V-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
WHEEL_A=kimg-$V-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl
DEB_X=kimg_$V-1_amd64.deb
DEB_A=kimg_$V-1_arm64.deb
SDIST=kimg-$V.tar.gz
ARTIFACTS="$WHEEL_X $WHEEL_A $DEB_X $DEB_A $SDIST"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kimg-release.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
build() { # build WHAT MAKE-ARGS...
	local what=$1; shift
	if "$MAKE" -j2 "$@" >"$tmp/build.log" 2>&1; then ok "built: $what"; else bad "built: $what" "$(tail -15 "$tmp/build.log")"; fi
}
rm -f dist/SHA256SUMS
for a in $ARTIFACTS; do rm -f "dist/$a"; done
build "x86-64 wheel and amd64 .deb, what their checks need" all wheel deb fixtures shim-tests
build "aarch64 wheel and arm64 .deb" ARCH=aarch64 all wheel deb
build "sdist" sdist
for a in $ARTIFACTS; do [ -f "dist/$a" ] || bad "dist/$a built"; done
[ "$failed" -eq 0 ] || { echo "$me: $passed passed, $failed failed"; exit 1; }

(cd dist && sha256sum $ARTIFACTS >SHA256SUMS)
if out=$(cd dist && sha256sum -c SHA256SUMS 2>&1); then ok "dist/SHA256SUMS: 5 artifacts, sha256sum -c passes"; else bad "dist/SHA256SUMS checks" "$out"; fi
expect_eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "expected: $2" "actual:   $3"; fi; }

# The x86-64 packages: the existing tests, which install and run them.
for t in wheel deb version; do
	if out=$(bash "tests/scripts/$t.sh" 2>&1); then ok "tests/scripts/$t.sh: $(tail -n1 <<<"$out")"; else bad "tests/scripts/$t.sh" "$(grep -A3 '^FAIL' <<<"$out" | head -20)"; fi
done

# The aarch64 wheel: pip takes it for its platform; its ELF files are aarch64.
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if python3 -m venv "$tmp/venv" >/dev/null 2>&1 &&
	"$tmp/venv/bin/pip" install -q --no-index --disable-pip-version-check --platform manylinux_2_17_aarch64 \
		--only-binary=:all: --target "$tmp/aw" "dist/$WHEEL_A" >"$tmp/pip.log" 2>&1; then
	ok "aarch64 wheel: pip install --platform manylinux_2_17_aarch64 --target --no-index"
	for f in bin/kimg-probe kimg/libkimg.so; do
		expect_eq "aarch64 wheel: $f is an aarch64 ELF file (e_machine 183)" 183 "$(od -An -j18 -N2 -tu2 "$tmp/aw/$f" | tr -d ' ')"
	done
	expect_eq "aarch64 wheel: kimg-run --version" "kimg-run $V" "$(sh "$tmp/aw/kimg/kimg-run" --version 2>&1)"
	meta=$(cat "$tmp"/aw/kimg-"$V".dist-info/METADATA 2>&1)
	expect_eq "aarch64 wheel METADATA: 2.4, Version, License-Expression, License-File" \
		"Metadata-Version: 2.4|Version: $V|License-Expression: Apache-2.0|License-File: LICENSE" \
		"$(grep -E '^(Metadata-Version|Version|License-Expression|License-File):' <<<"$meta" | tr '\n' '|' | sed 's/|$//')"
	if cmp -s "$tmp/aw/kimg-$V.dist-info/licenses/LICENSE" LICENSE; then ok "aarch64 wheel: licenses/LICENSE is LICENSE"; else bad "aarch64 wheel: licenses/LICENSE is LICENSE"; fi
	if [ -n "$qemu" ] && [ -d /usr/aarch64-linux-gnu ]; then
		expect_eq "aarch64 wheel: kimg-probe --version under $(basename "$qemu")" "kimg-probe $V" \
			"$("$qemu" -L /usr/aarch64-linux-gnu "$tmp/aw/bin/kimg-probe" --version 2>&1)"
	else
		echo "note - aarch64 kimg-probe not run: no qemu-aarch64-static or /usr/aarch64-linux-gnu (scripts/setup-debian.sh --aarch64)"
	fi
else
	bad "aarch64 wheel: pip install --platform manylinux_2_17_aarch64" "$(tail -3 "$tmp/pip.log" 2>/dev/null)"
fi

# The arm64 .deb into a private root (the architecture forced: this host's
# dpkg is amd64), then purged.
R=$tmp/root A=$tmp/admin
mkdir -p "$R" "$A/info" "$A/updates" "$A/triggers" && : >"$A/status"
dp() { dpkg --instdir="$R" --admindir="$A" --force-not-root --force-depends --force-architecture --log=/dev/null "$@"; }
expect_eq "arm64 .deb control: Package Version Architecture" "kimg $V-1 arm64" \
	"$(dpkg-deb -f "dist/$DEB_A" Package Version Architecture | sed 's/^[A-Za-z-]*: //' | tr '\n' ' ' | sed 's/ $//')"
if out=$(dp -i "dist/$DEB_A" 2>&1); then
	ok "arm64 .deb: dpkg -i into a private root"
	expect_eq "arm64 .deb: usr/bin/kimg-probe is aarch64 (e_machine 183)" 183 "$(od -An -j18 -N2 -tu2 "$R/usr/bin/kimg-probe" | tr -d ' ')"
	expect_eq "arm64 .deb: kimg-run --version" "kimg-run $V" "$(sh "$R/usr/bin/kimg-run" --version 2>&1)"
	expect_eq "arm64 .deb: copyright names Apache-2.0 for Files: *" "* Apache-2.0" \
		"$(awk -F': ' '/^Files:/ {f=$2} /^License:/ && f {print f, $2; exit}' "$R/usr/share/doc/kimg/copyright")"
	if [ -n "$qemu" ] && [ -d /usr/aarch64-linux-gnu ]; then
		expect_eq "arm64 .deb: kimg-probe --version under $(basename "$qemu")" "kimg-probe $V" \
			"$("$qemu" -L /usr/aarch64-linux-gnu "$R/usr/bin/kimg-probe" --version 2>&1)"
	fi
	dp --purge kimg >/dev/null 2>&1
	expect_eq "arm64 .deb: dpkg --purge leaves nothing" "" "$(cd "$R" && find . -type f)"
else
	bad "arm64 .deb: dpkg -i into a private root" "$(tail -5 <<<"$out")"
fi

# The sdist: exactly the tracked tree at HEAD, and it builds.
expect_eq "sdist: its files are git ls-tree HEAD's, under kimg-$V/" \
	"$(git ls-tree -r --name-only HEAD | sed "s|^|kimg-$V/|" | LC_ALL=C sort)" \
	"$(tar -tzf "dist/$SDIST" | grep -v '/$' | LC_ALL=C sort)"
mkdir -p "$tmp/sdist"
tar -C "$tmp/sdist" -xzf "dist/$SDIST"
if "$MAKE" -C "$tmp/sdist/kimg-$V" -j2 all >"$tmp/sdist.log" 2>&1; then
	expect_eq "sdist: builds (make), its kimg-probe --version" "kimg-probe $V" "$("$tmp/sdist/kimg-$V/build/kimg-probe" --version 2>&1)"
else
	bad "sdist: builds (make)" "$(tail -10 "$tmp/sdist.log")"
fi

echo "$me: dist/SHA256SUMS:"
sed 's/^/  /' dist/SHA256SUMS
echo "$me: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
