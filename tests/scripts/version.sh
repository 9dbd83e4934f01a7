#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One version: the file VERSION is the only place it is written, and every
# reader gives the same one. The oracle is that file; each reader is asked
# the way a user asks it (kimg-probe --version, the KIMG_VERBOSE banner,
# kimg-run --version, the man pages' .TH, the wheel's name, METADATA and
# kimg.__version__, the .deb's control, every --json document's and every
# shim report's kimg_version, the README's install lines). Fails when any
# differs, and when the version is written anywhere else in the product
# sources (a second copy would drift).
. "$(dirname "$0")/../lib.bash"
unset KIMG_LIB
V=$(cat "$ROOT/VERSION")
expect_match "VERSION holds one line, MAJOR.MINOR.PATCH" '^[0-9]+\.[0-9]+\.[0-9]+$' "$V"
expect_eq "VERSION is one line" 1 "$(wc -l <"$ROOT/VERSION")"

# No second copy: the version's digits in no product source, script or man
# page (docs/man hold @KIMG_VERSION@, scripts/kimg-run reads VERSION).
# (grep -r, not git grep: an unpacked sdist has no git; the folders hold
# no build output.)
copies=$(cd "$ROOT" && grep -rn -F "\"$V\"" core sys report probe shim packaging scripts docs/man
	cd "$ROOT" && grep -rn -E "(^|[^0-9.])$(sed 's/\./\\./g' <<<"$V")([^0-9.]|$)" scripts docs/man shim probe packaging)
expect_eq "the version is written nowhere in the sources but VERSION" "" "$copies"

PROBE=$BUILD_DIR/kimg-probe
if need "$PROBE" "make"; then
	expect_eq "kimg-probe --version" "kimg-probe $V" "$("$PROBE" --version 2>&1)"
	j() { python3 -c 'import json, sys; print(json.load(sys.stdin).get("kimg_version"))' 2>&1; }
	if need "$FIX/sm80.cubin" "make fixtures"; then
		expect_eq "scan --json: kimg_version" "$V" "$("$PROBE" scan --json "$FIX/sm80.cubin" 2>/dev/null | j)"
		expect_eq "check --json: kimg_version" "$V" "$("$PROBE" check --sm 9.0 --json "$FIX/sm80.cubin" 2>/dev/null | j)"
	fi
	: >"$TMP/empty.jsonl"
	expect_eq "summarize --json: kimg_version" "$V" "$("$PROBE" summarize --json "$TMP/empty.jsonl" 2>/dev/null | j)"
	if need "$FAKE/libcuda.so.1" "make shim-tests"; then
		h200() { FAKE_CUDA_SM=90 FAKE_CUDA_DRIVER=13000 LD_LIBRARY_PATH="$FAKE" "$@"; }
		expect_eq "device --json: kimg_version" "$V" "$(h200 "$PROBE" device --json 2>/dev/null | j)"
		mkdir -p "$TMP/env"
		expect_eq "doctor --json: kimg_version" "$V" "$(h200 "$PROBE" doctor --json "$TMP/env" 2>/dev/null | j)"
	fi
fi

# The library: its banner and its reports (image report, driver mismatch).
LIB=$BUILD_DIR/libkimg.so
if need "$LIB" "make" && need "$BUILD_DIR/shim-tests/drv_dl" "make shim-tests" && need "$FAKE/libcuda.so.1" "make shim-tests"; then
	banner=$(env -u KIMG_DISABLE KIMG_VERBOSE=1 KIMG_LOG= LD_PRELOAD="$LIB" sh -c : 2>&1)
	expect_match "KIMG_VERBOSE banner: kimg $V" "^kimg $(sed 's/\./\\./g' <<<"$V"): loaded into " "$banner"
	if need "$FIX/sm80.cubin" "make fixtures"; then
		env -u KIMG_DISABLE LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" KIMG_FORMAT=json KIMG_LOG="$TMP/r.jsonl" \
			FAKE_CUDA_SM=90 "$BUILD_DIR/shim-tests/drv_dl" dlsym load "$FIX/sm80.cubin" >/dev/null 2>&1
		env -u KIMG_DISABLE LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" KIMG_FORMAT=json KIMG_LOG="$TMP/m.jsonl" \
			FAKE_CUDA_SM=80 FAKE_CUDA_DRIVER=12020 "$BUILD_DIR/shim-tests/drv_dl" gpa load "$FIX/sm80.cubin" >/dev/null 2>&1
		for f in r m; do
			expect_eq "shim report ($f: $([ $f = r ] && echo image || echo driver_mismatch)): one report, kimg_version $V" "1 $V" \
				"$(python3 -c 'import json, sys; R = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]; print(len(R), " ".join(sorted({r.get("kimg_version") or "none" for r in R})))' "$TMP/$f.jsonl" 2>&1)"
		done
	fi
fi

# kimg-run: the checkout's (reads VERSION) and the built one (written in).
expect_eq "scripts/kimg-run --version" "kimg-run $V" "$(sh "$ROOT/scripts/kimg-run" --version 2>&1)"
if need "$BUILD_DIR/kimg-run" "make"; then
	expect_eq "$BUILD/kimg-run --version (as installed)" "kimg-run $V" "$(cd / && env -u BUILD sh "$BUILD_DIR/kimg-run" --version 2>&1)"
fi
# The man pages, as built.
for p in kimg-probe.1 kimg-run.1 libkimg.7; do
	need "$BUILD_DIR/man/$p" "make" &&
		expect_match "$p: .TH names kimg $V" "^\.TH [A-Z-]+ [17] [0-9]+ \"kimg $V\"" "$(grep '^\.TH' "$BUILD_DIR/man/$p")"
done

# The wheel: its name, METADATA, kimg.__version__, kimg-run, man pages.
WHEEL=$ROOT/dist/kimg-$V-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
if need "$WHEEL" "make wheel (its name carries the version)"; then
	zr() { python3 -c 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())' "$WHEEL" "$1" 2>&1; }
	expect_match "wheel METADATA: Version: $V" "^Version: $V\$" "$(zr "kimg-$V.dist-info/METADATA")"
	expect_match "wheel kimg/__init__.py: __version__ = \"$V\"" "^__version__ = \"$V\"\$" "$(zr kimg/__init__.py)"
	expect_match "wheel kimg/kimg-run: KIMG_RUN_VERSION=$V" "^KIMG_RUN_VERSION=$V\$" "$(zr kimg/kimg-run)"
	expect_match "wheel man page: .TH names kimg $V" "\"kimg $V\"" "$(zr "kimg-$V.data/data/share/man/man1/kimg-probe.1" | grep '^\.TH')"
fi
DEB=$ROOT/dist/kimg_${V}-1_amd64.deb
if need "$DEB" "make deb (its name carries the version)"; then
	expect_eq ".deb control: Version: $V-1" "$V-1" "$(dpkg-deb -f "$DEB" Version 2>&1)"
	mkdir -p "$TMP/deb"
	dpkg-deb -x "$DEB" "$TMP/deb"
	expect_eq ".deb kimg-run --version" "kimg-run $V" "$(sh "$TMP/deb/usr/bin/kimg-run" --version 2>&1)"
	expect_match ".deb man page: .TH names kimg $V" "\"kimg $V\"" "$(zcat "$TMP/deb/usr/share/man/man7/libkimg.7.gz" | grep '^\.TH')"
fi

# The README's install lines name the packages make builds.
readme=$(grep -oE 'dist/kimg[-_][0-9][0-9a-z.]*' "$ROOT/README.md" | sort -u)
expect_match "README names versioned packages" . "$readme"
expect_eq "README's package names carry VERSION" "" "$(grep -vxE "dist/kimg[-_]$(sed 's/\./\\./g' <<<"$V")" <<<"$readme")"
finish
