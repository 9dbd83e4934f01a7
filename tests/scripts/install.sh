#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make install PREFIX=/usr DESTDIR=$tmp: the layout (bin, lib, man1, man7),
# that the installed kimg-run finds the installed library and the installed
# kimg-probe runs, and that make uninstall removes every file again.
. "$(dirname "$0")/../lib.bash"
unset KIMG_LIB
DEST=$TMP/dest
P=$DEST/usr

out=$(make -C "$ROOT" --no-print-directory BUILD="$BUILD" PREFIX=/usr DESTDIR="$DEST" install 2>&1); rc=$?
expect_eq "make install PREFIX=/usr DESTDIR=... exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 15

for f in bin/kimg-run bin/kimg-probe lib/libkimg.so lib/libkimgapi.so.1; do
	expect_eq "installs $f, mode 755" 755 "$(file_mode "$P/$f")"
done
for f in share/man/man1/kimg-run.1 share/man/man1/kimg-probe.1 share/man/man7/libkimg.7; do
	expect_eq "installs $f, mode 644" 644 "$(file_mode "$P/$f")"
	if [ -f "$P/$f" ] && cmp -s "$P/$f" "$BUILD_DIR/man/${f##*/}"; then ok "$f is $BUILD/man/${f##*/}"; else fail "$f is $BUILD/man/${f##*/}"; fi
done
expect_eq "installs include/kimg.h, mode 644" 644 "$(file_mode "$P/include/kimg.h")"
expect_eq "lib/libkimgapi.so links to libkimgapi.so.1 (for -lkimgapi)" libkimgapi.so.1 "$(readlink "$P/lib/libkimgapi.so" 2>&1)"
expect_eq "nothing else is installed" \
	"bin/kimg-probe bin/kimg-run include/kimg.h lib/libkimg.so lib/libkimgapi.so.1 share/man/man1/kimg-probe.1 share/man/man1/kimg-run.1 share/man/man7/libkimg.7" \
	"$(cd "$P" 2>/dev/null && find . -type f | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"

# The installed launcher: finds ../lib/libkimg.so by itself, even with a
# BUILD variable in the environment (it is not in a checkout).
expect_eq "installed kimg-run finds the installed lib" "$P/lib/libkimg.so" "$(env -u BUILD "$P/bin/kimg-run" --print-lib 2>&1)"
expect_eq "installed kimg-run ignores BUILD=$BUILD_DIR" "$P/lib/libkimg.so" "$(BUILD=$BUILD_DIR "$P/bin/kimg-run" --print-lib 2>&1)"
got=$("$P/bin/kimg-run" sh -c 'printf "%s\n" "$LD_PRELOAD"; exit 4' 2>&1); rc=$?
expect_eq "installed kimg-run preloads the installed lib and keeps the status" "4 $P/lib/libkimg.so" "$rc $got"
if [ -f "$P/lib/libkimg.so" ]; then
	# The real library in a process without CUDA: loads, stays silent, changes nothing.
	got=$("$P/bin/kimg-run" sh -c 'echo hello; exit 3' 2>&1); rc=$?
	expect_eq "the installed library loads into a non-CUDA program silently" "3 hello" "$rc $got"
	got=$("$P/bin/kimg-run" --verbose true 2>&1); rc=$?
	expect_match "--verbose: the installed library prints its banner (it is really loaded)" '^kimg' "$got"
	expect_no_match "no ld.so error preloading the installed lib" 'ld\.so|cannot be preloaded' "$got"
fi
# A symlink in another bin directory still resolves to the prefix.
mkdir -p "$TMP/otherbin"
ln -s "$P/bin/kimg-run" "$TMP/otherbin/kimg-run"
expect_eq "a symlink to the installed kimg-run finds the installed lib" "$P/lib/libkimg.so" \
	"$(env -u BUILD PATH="$TMP/otherbin:$PATH" kimg-run --print-lib 2>&1)"

# The installed kimg-probe.
out=$("$P/bin/kimg-probe" --help 2>&1); rc=$?
expect_eq "installed kimg-probe --help exits 0" 0 "$rc"
expect_match "installed kimg-probe --help prints its usage" '^usage: kimg-probe COMMAND' "$out"
if need "$FIX/sm80.cubin" "fixtures: make fixtures"; then
	"$P/bin/kimg-probe" check --sm 9.0 "$FIX/sm80.cubin" >/dev/null 2>&1; rc=$?
	expect_eq "installed kimg-probe check: sm80.cubin on 9.0 -> exit 1" 1 "$rc"
fi

# man finds the installed pages through MANPATH.
if command -v man >/dev/null; then
	for pg in "1 kimg-run" "1 kimg-probe" "7 libkimg"; do
		set -- $pg
		expect_eq "man -w $1 $2 finds the installed page" "$P/share/man/man$1/$2.$1" \
			"$(MANPATH=$P/share/man man -w "$1" "$2" 2>&1)"
	done
else
	optional man "man-db (scripts/setup-debian.sh installs it): 3 man -w checks not run"
fi

out=$(make -C "$ROOT" --no-print-directory BUILD="$BUILD" PREFIX=/usr DESTDIR="$DEST" uninstall 2>&1); rc=$?
expect_eq "make uninstall exits 0" 0 "$rc"
expect_eq "make uninstall removes every installed file" "" "$(find "$DEST" -type f 2>/dev/null)"
finish
