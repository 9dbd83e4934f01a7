#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Image layers without libarchive (sys/tar_stream.c): plain, gzip and zstd
# layers are read by kimg itself, so KIMG_LIBARCHIVE naming a library that
# does not exist changes no verdict; only a layer in another format (bzip2
# here) needs libarchive, and then the error names that layer and the others
# are still checked. The oracle: the same image checked with libarchive
# loadable (the output must be identical) and what each layer holds
# (build/fixtures/sm80_exe fails sm_90, multi_exe runs there). Every case of
# tests/probe/images.sh is also run without libarchive, by images.sh itself
# (each of its probe runs twice, compared byte for byte), where this script
# ran all of images.sh a second time.
. "$(dirname "$0")/../lib.bash" probe
command -v zstd >/dev/null || { fail "zstd missing: scripts/setup-debian.sh installs it"; finish; exit; }
MK="python3 $ROOT/tests/probe/src/oci_image.py"
BAD=$FX/sm80_exe GOOD=$FX/multi_exe
NOLA=libkimg-test-absent.so.13
run() { run_capture timeout 60 "$@"; }
spec() { printf '%s' "$2" >"$TMP/$1.json"; rm -rf "$TMP/$1"; $MK "$TMP/$1" "$TMP/$1.json" || fail "oci_image.py $1"; }
have_la=false
for d in /usr/lib/*-linux-gnu /usr/lib64 /lib64 /usr/lib; do [ -e "$d/libarchive.so.13" ] && have_la=true; done

# PAX names (> 100 bytes), links, whiteouts, across plain, gzip and zstd layers
deep=opt/$(printf 'a%.0s' {1..60})/$(printf 'b%.0s' {1..60})
spec mix "{\"images\": [{\"layers\": [
 {\"compress\": \"none\", \"entries\": [[\"dir\", \"usr/lib\"], [\"file\", \"usr/lib/libbad.so\", \"$BAD\"], [\"file\", \"$deep/libgood.so\", \"$GOOD\"]]},
 {\"compress\": \"gzip\", \"entries\": [[\"file\", \"usr/lib/.wh.libbad.so\", \"text:\"], [\"symlink\", \"usr/lib/libg.so\", \"/$deep/libgood.so\"],
   [\"file\", \"srv/libbad2.so\", \"$BAD\"]]},
 {\"compress\": \"zstd\", \"entries\": [[\"hardlink\", \"srv/libbad3.so\", \"srv/libbad2.so\"], [\"file\", \"$deep/libgood2.so\", \"$GOOD\"]]},
 {\"compress\": \"none\", \"entries\": [[\"file\", \"srv/.wh.libbad2.so\", \"text:\"]]}]}]}"
run "$PROBE" check --sm 9.0 --json "$TMP/mix"
cp "$TMP/out" "$TMP/with.json"; with_rc=$rc
KIMG_LIBARCHIVE=$NOLA run "$PROBE" check --sm 9.0 --json "$TMP/mix"
expect_rc 1 "plain, gzip and zstd layers without libarchive (a hard link keeps a deleted bad library)"
expect_json "the files of the final file system, each with its layer (a hard link: the layer of its bytes)" \
	"sorted((x['image']['path'], x['image']['layer']) for x in d['files'] if 'image' in x) == [('/$deep/libgood.so', 1), ('/$deep/libgood2.so', 3), ('/srv/libbad3.so', 2)]"
check "no error and no mention of libarchive" bash -c "! grep -qi 'libarchive\|error' $TMP/err"
if $have_la; then
	check "the same output, byte for byte, with libarchive loadable" cmp -s "$TMP/with.json" "$TMP/out"
	expect_eq "the same exit status with libarchive" "$with_rc" 1
else
	optional libarchive13 "the with-libarchive half of the comparison" 2
fi
run "$PROBE" check --sm 9.0 "$TMP/mix"
cp "$TMP/out" "$TMP/with.txt"
KIMG_LIBARCHIVE=$NOLA run "$PROBE" check --sm 9.0 "$TMP/mix"
check "text output the same without libarchive" cmp -s "$TMP/with.txt" "$TMP/out"

# the same image as an OCI tar and a docker archive (plain layers inside a tar)
for f in oci-tar docker; do
	printf '%s' "$(sed "s/^{/{\"format\": \"$f\", /" "$TMP/mix.json")" >"$TMP/mix-$f.json"
	rm -rf "$TMP/mix-$f"; $MK "$TMP/mix-$f.tar" "$TMP/mix-$f.json" || fail "oci_image.py mix-$f"
	KIMG_LIBARCHIVE=$NOLA run "$PROBE" check --sm 9.0 --json "$TMP/mix-$f.tar"
	expect_rc 1 "$f without libarchive"
	expect_json "$f: the same files" \
		"sorted(x['image']['path'] for x in d['files'] if 'image' in x) == ['/$deep/libgood.so', '/$deep/libgood2.so', '/srv/libbad3.so']"
done

# a bzip2 layer: the one format here that needs libarchive
spec bz "{\"images\": [{\"layers\": [
 {\"compress\": \"gzip\", \"entries\": [[\"file\", \"usr/lib/libgood.so\", \"$GOOD\"]]},
 {\"compress\": \"bzip2\", \"entries\": [[\"file\", \"usr/lib/libbad.so\", \"$BAD\"]]}]}]}"
KIMG_LIBARCHIVE=$NOLA run "$PROBE" check --sm 9.0 "$TMP/bz"
expect_rc 2 "a bzip2 layer without libarchive: an error"
expect_grep "the error names the image and the layer" "$TMP/err" "$TMP/bz: layer 2 of 2 (sha256:"
expect_grep "the error names the format and the library" "$TMP/err" \
	"): a bzip2 layer: cannot read tar archives: $NOLA not found (install libarchive"
expect_grep "the gzip layer is still checked" "$TMP/out" "$TMP/bz:/usr/lib/libgood.so"
if $have_la; then
	run "$PROBE" check --sm 9.0 "$TMP/bz"
	expect_rc 1 "the bzip2 layer through libarchive: its bad library judged"
	expect_grep "the bzip2 layer's file, named in the image" "$TMP/out" "$TMP/bz:/usr/lib/libbad.so"
else
	optional libarchive13 "the bzip2 layer through libarchive" 2
fi

# zlib itself missing: the gzip layer's error names zlib, and does not send
# the user to libarchive (which would not help)
KIMG_ZLIB=libnozlib.so.0 run "$PROBE" check --sm 9.0 "$TMP/mix"
expect_rc 2 "a gzip layer without zlib: an error"
expect_grep "... naming zlib's library" "$TMP/err" "cannot inflate a gzip stream: libnozlib.so.0"
check "... and no hint to install libarchive" bash -c "! grep -q 'install libarchive' $TMP/err"

finish
