#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The package builders are deterministic: packaging/make_wheel.py and
# packaging/make_deb.sh run twice on the same inputs, in different
# directories and a second apart, write the same bytes (cmp); every time
# stamp in them is SOURCE_DATE_EPOCH, owners are root, modes 755/644, and
# entries are in name order. make sdist twice gives the same bytes, its
# members owned by root with the commit's time. (The whole build twice from
# clean clones: scripts/dev/repro.sh, run by hand and by make release's
# users; it takes a minute.)
. "$(dirname "$0")/../lib.bash"
PKG=$BUILD_DIR/pkg
if [ "${KIMG_SANITIZE:-}" = asan ]; then
	# make asan-test: as wheel.sh, the sanitizer build makes no package (packaging/packaging.mk)
	skip_allowed "the package builders" "the sanitizer build makes no package (packaging/packaging.mk)"
	ok "nothing to check in the sanitizer build"
	finish
	exit
fi
for f in "$PKG/kimg-probe" "$PKG/libkimg.so" "$BUILD_DIR/kimg-run" "$BUILD_DIR/man/kimg-probe.1"; do
	need "$f" "make wheel deb" || { finish; exit; }
done
V=$(cat "$ROOT/VERSION")
export SOURCE_DATE_EPOCH=1700000000 TZ=UTC

wheel() { # wheel OUTDIR
	python3 "$ROOT/packaging/make_wheel.py" --version "$V" --arch x86_64 --probe "$PKG/kimg-probe" --lib "$PKG/libkimg.so" \
		--run "$BUILD_DIR/kimg-run" --man "$BUILD_DIR/man" --readme "$ROOT/packaging/README.pypi.md" \
		--python "$ROOT/packaging/python" --licence "$ROOT/LICENSE" --licence-name Apache-2.0 --out "$1" >/dev/null
}
deb() { # deb STAGE OUT
	"$ROOT/packaging/make_deb.sh" --version "$V" --arch amd64 --probe "$PKG/kimg-probe" --lib "$PKG/libkimg.so" \
		--run "$BUILD_DIR/kimg-run" --man "$BUILD_DIR/man" --licence "$ROOT/LICENSE" --licence-name Apache-2.0 \
		--stage "$1" --out "$2" >/dev/null
}
wheel "$TMP/w1" && sleep 1 && (umask 077 && cd "$TMP" && wheel "$TMP/second/w2")
W=kimg-$V-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
expect_eq "make_wheel.py twice: the same bytes" "" "$(cmp "$TMP/w1/$W" "$TMP/second/w2/$W" 2>&1)"
expect_eq "wheel: every entry dated SOURCE_DATE_EPOCH (2023-11-14 22:13:20), in name order, .dist-info last, RECORD at the end, modes 644/755" "ok" \
	"$(python3 - "$TMP/w1/$W" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
inf = z.infolist()
names = [i.filename for i in inf]
bad = [i.filename for i in inf if i.date_time != (2023, 11, 14, 22, 13, 20)]
bad += [i.filename for i in inf if (i.external_attr >> 16) not in (0o100644, 0o100755)]
body = [n for n in names if ".dist-info/" not in n]
info = [n for n in names if ".dist-info/" in n]
if names != body + info or body != sorted(body) or info[-1].split("/")[-1] != "RECORD" or info[:-1] != sorted(info[:-1]):
    bad.append("order: %s" % names)
print("ok" if not bad else bad)
PY
)"

deb "$TMP/s1" "$TMP/d1.deb" && sleep 1 && (umask 077 && deb "$TMP/other/stage2" "$TMP/other/d2.deb")
expect_eq "make_deb.sh twice (another stage, another umask): the same bytes" "" "$(cmp "$TMP/d1.deb" "$TMP/other/d2.deb" 2>&1)"
expect_eq "deb: ar members dated SOURCE_DATE_EPOCH" "1700000000 1700000000 1700000000" \
	"$(python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"!<arch>\n"
i, t = 8, []
while i + 60 <= len(d):
    h = d[i:i + 60]; t.append(int(h[16:28])); n = int(h[48:58]); i += 60 + n + (n & 1)
print(*t)' "$TMP/d1.deb" 2>&1)"
listing=$(dpkg-deb --fsys-tarfile "$TMP/d1.deb" | tar -tv --full-time)
expect_eq "deb: every member owned root/root, dated SOURCE_DATE_EPOCH" "" \
	"$(awk '$2 != "root/root" || $4 " " $5 != "2023-11-14 22:13:20"' <<<"$listing")"
expect_eq "deb: members in name order" "$(awk '{print $NF}' <<<"$listing" | LC_ALL=C sort)" "$(awk '{print $NF}' <<<"$listing")"
expect_eq "deb: modes 755 (directories, programs) and 644" "" \
	"$(awk '$1 != "drwxr-xr-x" && $1 != "-rwxr-xr-x" && $1 != "-rw-r--r--"' <<<"$listing")"

# make sdist: git archive of HEAD, twice (tracked files only; a work tree
# change does not reach it).
if git -C "$ROOT" rev-parse HEAD >/dev/null 2>&1; then
	for d in s1 s2; do
		make -C "$ROOT" --no-print-directory -s DIST="$TMP/$d" sdist >/dev/null 2>&1 || fail "make sdist DIST=$TMP/$d"
		sleep 1
	done
	S=kimg-$V.tar.gz
	expect_eq "make sdist twice: the same bytes" "" "$(cmp "$TMP/s1/$S" "$TMP/s2/$S" 2>&1)"
	t=$(git -C "$ROOT" log -1 --format=%ct)
	expect_eq "sdist: gzip header without name or time (gzip -n)" "0 0" \
		"$(python3 -c 'import sys; h = open(sys.argv[1], "rb").read(10); print(int.from_bytes(h[4:8], "little"), h[3] & 8)' "$TMP/s1/$S")"
	expect_eq "sdist: members owned root, dated the last commit" "" \
		"$(tar -tzv --full-time --numeric-owner -f "$TMP/s1/$S" | awk -v t="$(date -u -d "@$t" '+%Y-%m-%d %H:%M:%S')" '$2 != "0/0" || $4 " " $5 != t' | head -3)"
else
	missing "make sdist" "not a git checkout" 3
fi
finish
