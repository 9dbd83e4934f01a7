#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Archives in real trees (probe/walk.c, sys/zip.c, sys/tar.c, core/zip_dir.c):
# which archives a walk opens (wheels, zips holding code, conda packages; not
# numpy .npz, not data zips), archives inside archives (bounded depth), the
# empty zip, the inflation limits, and one line for archives a missing
# library kept from being read.
. "$(dirname "$0")/../lib.bash" probe
command -v zstd >/dev/null || { fail "zstd (the command) missing: scripts/setup-debian.sh installs it"; finish; exit; }

# A site-packages-like tree: code next to numpy .npz data and a web-files zip.
mkdir -p "$TMP/site/pkg" "$TMP/site/data"
cp "$FX/libdispatch.so" "$TMP/site/pkg/"
python3 - "$TMP/site" "$FX/libtwo.so" <<'PY'
import sys, zipfile, os
site, so = sys.argv[1], sys.argv[2]
for name in ("weights.npz", "arrays.npz"):
    with zipfile.ZipFile(os.path.join(site, "data", name), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.npy", b"\x93NUMPY" + bytes(2000))
with zipfile.ZipFile(os.path.join(site, "data", "webfiles.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("index.html", "<html></html>")
    z.writestr("app.js", "x=1")
# a .npz that does hold an ELF: still never opened in a walk (numpy data by name)
with zipfile.ZipFile(os.path.join(site, "data", "odd.npz"), "w") as z:
    z.write(so, "libtwo.so")
# an egg (a zip holding a shared object) is read
with zipfile.ZipFile(os.path.join(site, "old.egg"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("EGG-INFO/PKG-INFO", "Name: old\n")
    z.write(so, "old/_ext.so")
PY
KIMG_LIBARCHIVE=libkimg-no-such-archive.so.13 run "$PROBE" check --sm 9.0 --json "$TMP/site"
expect_rc 1 "tree check: libtwo.so in the egg fails on 9.0, nothing else is an error"
expect_json "tree: only the .so and the egg's .so are files; no .npz, no webfiles.zip; no errors" \
	'sorted(f["path"].split("/site/")[1] for f in d["files"]) == ["old.egg!/old/_ext.so", "pkg/libdispatch.so"] and d["summary"]["errors"] == 0'
expect_json "tree: libdispatch.so on 9.0: 1 runs, 1 dispatched (sm_100a), 0 fail" \
	'[(t["runs"], t["dispatched"], t["fails"], t["dispatched_targets"]) for f in d["files"] if f["path"].endswith("libdispatch.so") for t in f["per_target"]] == [(1, 1, 0, ["sm_100a"])]'
[ ! -s "$TMP/err" ] && ok "tree: nothing on stderr (no archive errors)" || fail "tree: stderr not empty: $(head -c 300 "$TMP/err")"
rm "$TMP/site/old.egg"
run "$PROBE" check --sm 9.0 "$TMP/site"
expect_rc 0 "tree of code and .npz data passes on 9.0"
expect_grep "tree text: dispatched count in the summary" "$TMP/out" "1 dispatched for other GPUs, 0 cannot run; 1 device-link stub not checked; 0 errors"

# Named on the command line, a .npz is opened (and holds no code here): no error.
run "$PROBE" scan "$TMP/site/data/weights.npz"
expect_rc 0 "explicit .npz: read, nothing found"

# Nested: a wheel inside a zip is read, member paths chain with !/.
python3 - "$FX/libtwo.so" "$TMP" <<'PY'
import sys, zipfile, os, io
so, tmp = sys.argv[1], sys.argv[2]
def wheel():
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(so, "pkg/lib/libtwo.so")
    return b.getvalue()
with zipfile.ZipFile(os.path.join(tmp, "bundle.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("wheels/pkg-1.0-py3-none-any.whl", wheel())
# five levels: zip in zip in zip in zip holding the wheel
data = wheel(); name = "pkg.whl"
for i in range(4):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr(name, data)
    data, name = b.getvalue(), "level%d.zip" % i
open(os.path.join(tmp, "deep.zip"), "wb").write(data)
# an empty zip (end record only)
zipfile.ZipFile(os.path.join(tmp, "empty.zip"), "w").close()
PY
mkdir -p "$TMP/nest" && cp "$TMP/bundle.zip" "$TMP/nest/"
run "$PROBE" scan --json "$TMP/nest"
expect_rc 0 "zip holding a wheel, in a directory"
expect_json "nested wheel read: bundle.zip!/wheels/pkg-1.0-py3-none-any.whl!/pkg/lib/libtwo.so, 3 modules" \
	'[(f["path"].split("/nest/")[1], len(f["modules"])) for f in d["files"]] == [("bundle.zip!/wheels/pkg-1.0-py3-none-any.whl!/pkg/lib/libtwo.so", 3)]'
run "$PROBE" scan "$TMP/deep.zip"
expect_rc 2 "archives nested five deep"
expect_grep "too deep: named, not read" "$TMP/err" "level0.zip!/pkg.whl: archive nested 5 levels deep, more than 4: not read"
run "$PROBE" check --sm 9.0 "$TMP/empty.zip"
expect_rc 2 "empty zip"
expect_grep "empty zip message" "$TMP/err" "empty.zip: empty zip archive: no members, nothing to check"
mkdir -p "$TMP/withempty" && cp "$TMP/empty.zip" "$FX/libdispatch.so" "$TMP/withempty/"
run "$PROBE" check --sm 9.0 "$TMP/withempty"
expect_rc 0 "an empty zip inside a tree is skipped (it holds no code)"

# Inflation limits: absolute (KIMG_ZIP_MAX_MEMBER) and by ratio (KIMG_ZIP_MAX_RATIO).
python3 - "$TMP/bomb.whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("pkg/libbomb.so", b"\x7fELF" + bytes(64 << 20))
PY
run "$PROBE" scan "$TMP/bomb.whl"
expect_rc 2 "64 MiB of zeros in a wheel: refused by ratio"
expect_grep "ratio limit message" "$TMP/err" "more than 200 times (limit)"
KIMG_ZIP_MAX_RATIO=100000 run "$PROBE" scan "$TMP/bomb.whl"
if grep -q "(limit)" "$TMP/err"; then fail "KIMG_ZIP_MAX_RATIO=100000 still refused: $(cat "$TMP/err")"; else ok "KIMG_ZIP_MAX_RATIO raises the ratio limit (member inflated, then judged as ELF)"; fi
python3 - "$FX/libtwo.so" "$TMP/pkg.whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[1], "pkg/lib/libtwo.so")
PY
KIMG_ZIP_MAX_MEMBER=100K run "$PROBE" scan "$TMP/pkg.whl"
expect_rc 2 "member above KIMG_ZIP_MAX_MEMBER"
expect_grep "absolute limit message" "$TMP/err" "is larger than the limit (102400 bytes)"
KIMG_ZIP_MAX_MEMBER=lots run "$PROBE" scan "$TMP/pkg.whl"
expect_rc 2 "bad KIMG_ZIP_MAX_MEMBER"

# Conda packages: .tar.bz2 and .conda (a zip holding pkg-*.tar.zst), read through libarchive.
mkdir -p "$TMP/conda/pkgroot/lib" && cp "$FX/libtwo.so" "$TMP/conda/pkgroot/lib/"
tar -C "$TMP/conda/pkgroot" -cjf "$TMP/conda/pkg-1.0-0.tar.bz2" lib
tar -C "$TMP/conda/pkgroot" -cf - lib | zstd -q -o "$TMP/pkg-1.0-0.tar.zst"
(cd "$TMP" && python3 -c "
import zipfile
with zipfile.ZipFile('conda/pkg-1.0-0.conda', 'w') as z:
    z.writestr('metadata.json', '{}')
    z.write('pkg-1.0-0.tar.zst', 'pkg-pkg-1.0-0.tar.zst')
")
rm -rf "$TMP/conda/pkgroot"
run "$PROBE" scan --json "$TMP/conda"
expect_rc 0 "conda packages in a directory"
expect_json "both conda formats read: the .so inside each, 3 modules" \
	'[(f["path"].split("/conda/")[1], len(f["modules"])) for f in d["files"]] == [("pkg-1.0-0.conda!/pkg-pkg-1.0-0.tar.zst!/lib/libtwo.so", 3), ("pkg-1.0-0.tar.bz2!/lib/libtwo.so", 3)]'
KIMG_LIBARCHIVE=libkimg-no-such-archive.so.13 run "$PROBE" scan "$TMP/conda" "$FX/multi.fatbin"
expect_rc 2 "conda packages without libarchive"
expect_grep "one line for both packages, with the remedy" "$TMP/err" \
	"kimg-probe: 2 archives not read (cannot read tar archives: libkimg-no-such-archive.so.13 not found; install libarchive (Debian: libarchive13) or name it with KIMG_LIBARCHIVE): $TMP/conda/pkg-1.0-0.conda!/pkg-pkg-1.0-0.tar.zst, $TMP/conda/pkg-1.0-0.tar.bz2"
expect_grep "the readable input still listed" "$TMP/out" "1 file, 1 module, 9 images"
KIMG_ZIP_MAX_MEMBER=100K run "$PROBE" scan "$TMP/conda/pkg-1.0-0.tar.bz2"
expect_rc 2 "tar member above KIMG_ZIP_MAX_MEMBER"
expect_grep "tar members share the limit" "$TMP/err" "member larger than the limit (102400 bytes)"
[ "$(grep -c 'kimg-probe:' "$TMP/err")" -eq 1 ] && ok "exactly one stderr line" || fail "more than one stderr line: $(cat "$TMP/err")"
# A tar named on the command line is read by its compression's magic,
# whatever its name (walk_archive.c): gzip (RFC 1952: 1f 8b) and xz (xz
# file format 1.0.4: fd 37 7a 58 5a 00), each holding libtwo.so (3 modules).
mkdir -p "$TMP/ctar/root/lib" && cp "$FX/libtwo.so" "$TMP/ctar/root/lib/"
tar -C "$TMP/ctar/root" -czf "$TMP/ctar/layer-gz" lib
tar -C "$TMP/ctar/root" -cJf "$TMP/ctar/layer-xz" lib
rm -rf "$TMP/ctar/root"
run "$PROBE" scan --json "$TMP/ctar/layer-gz" "$TMP/ctar/layer-xz"
expect_rc 0 "gzip and xz tars named without a tar suffix"
expect_json "both read by their magic: the .so inside each, 3 modules" \
	'[(f["path"].split("/ctar/")[1], len(f["modules"])) for f in d["files"]] == [("layer-gz!/lib/libtwo.so", 3), ("layer-xz!/lib/libtwo.so", 3)]'

# Only ar(5)'s whole 8-byte magic "!<arch>\n" makes a member a static
# archive worth reading: one that begins "!<arch>" and then goes on with
# other bytes is data, passed over without an error, as a data file is.
python3 - "$TMP/armagic.zip" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("data.bin", b"!<arch>X" + bytes(200))
    z.writestr("empty.a", b"!<arch>\n")
PY
run "$PROBE" scan --json "$TMP/armagic.zip"
expect_rc 0 "a member that only begins like an ar magic: no error"
expect_json "only the real (empty) static archive is read" \
	'[(f["path"].split("!/")[1], f["kind"]) for f in d["files"]] == [("empty.a", "archive")] and d["summary"]["errors"] == 0'
finish
