#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make deb: the package's fields and file list (dpkg-deb), then a real
# dpkg install into a private root (--instdir, --admindir): the files land
# under /usr with their modes, the installed kimg-run finds the installed
# library, the installed kimg-probe runs; dpkg --purge removes every file.
. "$(dirname "$0")/../lib.bash"
unset KIMG_LIB
version=$(cat "$ROOT/VERSION")
DEB=$ROOT/dist/kimg_$version-1_amd64.deb
if [ "${KIMG_SANITIZE:-}" = asan ]; then
	# make asan-test: the package holds the plain build's binaries, checked by make test
	skip_allowed "the deb package" "the sanitizer build makes no package (packaging/packaging.mk)"
	ok "nothing to check in the sanitizer build"
	finish
fi
need "$DEB" "make deb" || { finish; exit; }
command -v dpkg-deb >/dev/null || { fail "dpkg-deb present"; finish; exit; }

expect_eq "control: package, version, architecture, depends" "kimg $version-1 amd64 libc6 (>= 2.17)" \
	"$(dpkg-deb -f "$DEB" Package Version Architecture Depends | sed 's/^[A-Za-z-]*: //' | tr '\n' ' ' | sed 's/ $//')"
FILES="usr/bin/kimg-probe usr/bin/kimg-run usr/include/kimg.h usr/lib/libkimg.so usr/lib/libkimgapi.so.1 usr/share/doc/kimg/copyright usr/share/man/man1/kimg-probe.1.gz usr/share/man/man1/kimg-run.1.gz usr/share/man/man7/libkimg.7.gz"
expect_eq "dpkg-deb -c: the files, under /usr" "$FILES" \
	"$(dpkg-deb -c "$DEB" | awk '$1 !~ /^[dl]/ {sub(/^\.\//, "", $NF); print $NF}' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "dpkg-deb -c: the one link, libkimgapi.so to libkimgapi.so.1" "./usr/lib/libkimgapi.so -> libkimgapi.so.1" \
	"$(dpkg-deb -c "$DEB" | awk '$1 ~ /^l/ {print $(NF-2), $(NF-1), $NF}')"
expect_eq "dpkg-deb -c: owned by root" "" "$(dpkg-deb -c "$DEB" | awk '$2 != "root/root"')"
lic=$(dpkg-deb --fsys-tarfile "$DEB" | tar -xOf - ./usr/share/doc/kimg/copyright)
# DEP-5 (copyright-format 1.0): the Format line, a Files: * paragraph with
# its Copyright and License, and a stand-alone License paragraph holding the
# text; the oracle for the text is Debian's own copy.
expect_eq "copyright: DEP-5 Format line first" "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" "$(head -n1 <<<"$lic")"
expect_eq "copyright: paragraphs (fields of each)" "Format Upstream-Name | Files Copyright License | License" \
	"$(awk '/^$/ {printf " |"; next} /^[A-Za-z-]+:/ {sub(/:.*/, ""); printf " %s", $0} END {print ""}' <<<"$lic" | sed 's/^ //')"
expect_eq "copyright: Files: * under License: Apache-2.0" "* Apache-2.0" \
	"$(awk -F': ' '/^Files:/ {f=$2} /^License:/ && f {print f, $2; exit}' <<<"$lic")"
expect_eq "copyright: the License paragraph's text is the Apache-2.0 text" "" \
	"$(awk 'p && /^ / {sub(/^ /, ""); if ($0 == ".") $0 = ""; print; next} p {exit} /^License: Apache-2.0$/ {n++; if (n == 2) p=1}' <<<"$lic" |
		cmp - <(sed 's/[[:space:]]*$//' /usr/share/common-licenses/Apache-2.0) 2>&1)"

# A real dpkg install into a private root.
R=$TMP/root A=$TMP/admin
mkdir -p "$R" "$A/info" "$A/updates" "$A/triggers"
: >"$A/status"
dp() { dpkg --instdir="$R" --admindir="$A" --force-not-root --force-depends --log=/dev/null "$@"; }
out=$(dp -i "$DEB" 2>&1); rc=$?
expect_eq "dpkg -i into a private root exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -5
expect_eq "installed modes: kimg-probe, kimg-run 755; libkimg.so, man pages 644" "755 755 644 644 644 644" \
	"$(for f in usr/bin/kimg-probe usr/bin/kimg-run usr/lib/libkimg.so usr/share/man/man1/kimg-probe.1.gz usr/share/man/man1/kimg-run.1.gz usr/share/man/man7/libkimg.7.gz; do file_mode "$R/$f"; done | tr '\n' ' ' | sed 's/ $//')"
if zcat "$R/usr/share/man/man1/kimg-probe.1.gz" 2>/dev/null | cmp -s - "$BUILD_DIR/man/kimg-probe.1"; then
	ok "installed kimg-probe.1.gz is $BUILD/man/kimg-probe.1"; else fail "installed kimg-probe.1.gz is $BUILD/man/kimg-probe.1"; fi
expect_eq "dpkg -L lists the package's files" "$FILES" \
	"$(dp -L kimg 2>/dev/null | sed 's|^/||' | while read -r f; do [ -f "$R/$f" ] && [ ! -L "$R/$f" ] && echo "$f"; done | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "installed kimg-run finds the installed lib" "$R/usr/lib/libkimg.so" "$(env -u BUILD "$R/usr/bin/kimg-run" --print-lib 2>&1)"
got=$("$R/usr/bin/kimg-run" --verbose sh -c 'exit 3' 2>&1); rc=$?
expect_match "the installed library loads (banner) and the status is kept" "^3 kimg " "$rc $got"
expect_match "installed kimg-probe --help prints its usage" '^usage: kimg-probe COMMAND' "$("$R/usr/bin/kimg-probe" --help 2>&1)"

out=$(dp --purge kimg 2>&1); rc=$?
expect_eq "dpkg --purge exits 0" 0 "$rc"
expect_eq "nothing of the package is left in the root" "" "$(cd "$R" && find . -type f -o -type l)"
expect_eq "dpkg no longer knows the package" "" "$(dp -l kimg 2>/dev/null | awk '/^[a-z][a-z] +kimg / && $1 != "un" && $1 != "pn"')"
finish
