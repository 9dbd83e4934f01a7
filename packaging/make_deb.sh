#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make_deb.sh: kimg's Debian package, with dpkg-deb (no debhelper needed).
#
#   make_deb.sh --version V --arch A --probe FILE --lib FILE --run FILE
#               --man DIR --licence FILE --licence-name NAME --stage DIR --out FILE.deb
#               [--api-lib FILE --header FILE]
#
# Installs under /usr as `make install PREFIX=/usr` does: /usr/bin/kimg-probe,
# /usr/bin/kimg-run, /usr/lib/libkimg.so (kimg-run's bin/../lib), man pages
# in /usr/share/man (gzip -9n), /usr/share/doc/kimg/copyright (DEP-5, the
# licence's full text in its License paragraph); with --api-lib and --header
# the can-it-run API (docs/api.md): /usr/lib/libkimgapi.so.1, its link
# libkimgapi.so, /usr/include/kimg.h. Depends only on libc6 (>= 2.17); the
# libraries kimg opens when present are Suggests.
# Reproducible: every time stamp is SOURCE_DATE_EPOCH (required), owners
# root (--root-owner-group), modes 755/644, dpkg-deb sorts the members, and
# Installed-Size is summed from the file sizes, not from the file system.
set -euo pipefail
die() { echo "make_deb: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	--version) version=$2 ;; --arch) arch=$2 ;; --probe) probe=$2 ;; --lib) lib=$2 ;;
	--run) run=$2 ;; --man) man=$2 ;; --licence) licence=$2 ;; --licence-name) licence_name=$2 ;;
	--stage) stage=$2 ;; --out) out=$2 ;; --api-lib) api_lib=$2 ;; --header) header=$2 ;;
	*) die "unknown argument $1" ;;
	esac
	shift 2
done
for v in version arch probe lib run man licence licence_name stage out; do
	[ -n "${!v:-}" ] || die "--${v/_/-} missing"
done
command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
[ -n "${SOURCE_DATE_EPOCH:-}" ] || die "SOURCE_DATE_EPOCH not set (the Makefile sets it from git log)"

rm -rf "$stage"
umask 022
install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/lib" "$stage/usr/share/man/man1" \
	"$stage/usr/share/man/man7" "$stage/usr/share/doc/kimg"
install -m 0755 "$probe" "$stage/usr/bin/kimg-probe"
install -m 0755 "$run" "$stage/usr/bin/kimg-run"
install -m 0644 "$lib" "$stage/usr/lib/libkimg.so"
if [ -n "${api_lib:-}" ]; then
	install -d "$stage/usr/include"
	install -m 0644 "$api_lib" "$stage/usr/lib/libkimgapi.so.1"
	ln -s libkimgapi.so.1 "$stage/usr/lib/libkimgapi.so"
	install -m 0644 "${header:?--header is needed with --api-lib}" "$stage/usr/include/kimg.h"
fi
for page in "$man"/*.1 "$man"/*.7; do
	sec=${page##*.}
	gzip -9n <"$page" >"$stage/usr/share/man/man$sec/${page##*/}.gz"
	chmod 0644 "$stage/usr/share/man/man$sec/${page##*/}.gz"
done
{
	echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
	echo "Upstream-Name: kimg"
	echo
	echo "Files: *"
	echo "Copyright: 2026 kimg developers"
	echo "License: $licence_name"
	echo
	echo "License: $licence_name"
	# The text, one space in; an empty line is " ." (DEP-5, like control).
	sed 's/[[:space:]]*$//; s/^$/./; s/^/ /' "$licence"
} >"$stage/usr/share/doc/kimg/copyright"
chmod 0644 "$stage/usr/share/doc/kimg/copyright"

# Installed-Size as dpkg-gencontrol counts it: KiB per file, rounded up,
# and 1 per directory.
size=$(cd "$stage" && find usr -type f -printf '%s\n' | awk '{ k += int(($1 + 1023) / 1024) } END { print k }')
size=$((size + $(cd "$stage" && find usr -type d | wc -l)))
cat >"$stage/DEBIAN/control" <<CONTROL
Package: kimg
Version: $version-1
Architecture: $arch
Maintainer: kimg developers <kimg@invalid>
Installed-Size: $size
Depends: libc6 (>= 2.17)
Suggests: libzstd1, liblz4-1, libarchive13
Section: devel
Priority: optional
Description: explains CUDA "no kernel image is available" (error 209)
 kimg names the module behind a CUDA image error (209 and its relatives),
 the SASS and PTX images it carries, the device, why none fits, and the
 build fix (nvcc -gencode, CMAKE_CUDA_ARCHITECTURES, TORCH_CUDA_ARCH_LIST).
 .
 kimg-run runs a command with libkimg.so preloaded, which reports such
 errors where they happen; kimg-probe lists and checks the GPU code in
 executables, libraries, objects, archives, fatbins, cubins, PTX and wheels
 without a GPU.
CONTROL
(cd "$stage" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"
find "$stage" -depth -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$(dirname "$out")"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out" >/dev/null
echo "$out"
