#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make wheel: the x86-64 wheel's contents and RECORD, that no ELF file in it
# needs a glibc symbol version newer than 2.17 (objdump -p), and that it
# installs offline (pip install --no-index) into a fresh venv, where its
# kimg-probe lists a fixture, its kimg-run preloads the package's libkimg.so
# (the stand-in driver then gets a report), python -m kimg finds the library,
# and pip uninstall removes every file again.
. "$(dirname "$0")/../lib.bash"
unset KIMG_LIB
version=$(cat "$ROOT/VERSION")
WHEEL=$ROOT/dist/kimg-$version-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
if [ "${KIMG_SANITIZE:-}" = asan ]; then
	# make asan-test: the package holds the plain build's binaries, checked by make test
	skip_allowed "the wheel package" "the sanitizer build makes no package (packaging/packaging.mk)"
	ok "nothing to check in the sanitizer build"
	finish
fi
need "$WHEEL" "make wheel" || { finish; exit; }

# Contents: exactly these names (the oracle is this list, not the builder).
data=kimg-$version.data info=kimg-$version.dist-info
expect_eq "the wheel holds the package, the programs, the library, the man pages, the metadata" \
	"$data/data/share/man/man1/kimg-probe.1 $data/data/share/man/man1/kimg-run.1 $data/data/share/man/man7/libkimg.7 $data/scripts/kimg-probe $info/METADATA $info/RECORD $info/WHEEL $info/entry_points.txt $info/licenses/LICENSE $info/top_level.txt kimg/__init__.py kimg/__main__.py kimg/_api.py kimg/kimg-run kimg/libkimg.so kimg/libkimgapi.so" \
	"$(python3 -c 'import sys, zipfile; print(" ".join(sorted(zipfile.ZipFile(sys.argv[1]).namelist())))' "$WHEEL")"
# RECORD: every other file with its urlsafe-base64 sha256 and size (PEP 376/427).
got=$(python3 - "$WHEEL" <<'PY'
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
rec = [r for r in csv.reader(io.TextIOWrapper(z.open([n for n in z.namelist() if n.endswith("/RECORD")][0])))]
bad = []
for name, h, size in rec:
    if name.endswith("/RECORD"):
        if h or size: bad.append(name + ": RECORD lists a hash for itself")
        continue
    b = z.read(name)
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
    if h != want or int(size) != len(b): bad.append(name)
missing = set(z.namelist()) - {r[0] for r in rec}
print("ok" if not bad and not missing and len(rec) == len(z.namelist()) else "bad %s missing %s" % (bad, sorted(missing)))
PY
)
expect_eq "RECORD lists every file with its sha256 and size" ok "$got"
meta=$(unzip -p "$WHEEL" "$info/METADATA" 2>/dev/null || python3 -c 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())' "$WHEEL" "$info/METADATA")
expect_match "METADATA: name and version" "^Version: $version\$" "$meta"
expect_match "METADATA: core metadata 2.4 (PEP 639)" '^Metadata-Version: 2\.4$' "$meta"
expect_match "METADATA: License-Expression: Apache-2.0" '^License-Expression: Apache-2\.0$' "$meta"
expect_match "METADATA: License-File: LICENSE" '^License-File: LICENSE$' "$meta"
expect_no_match "METADATA: no legacy License field beside the expression" '^License:' "$meta"
expect_eq "$info/licenses/LICENSE is the Apache-2.0 text, unchanged" "" \
	"$(python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$WHEEL" "$info/licenses/LICENSE" | cmp - /usr/share/common-licenses/Apache-2.0 2>&1)"
expect_match "METADATA: the README follows as the description" '^# kimg' "$meta"
wheelfile=$(python3 -c 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())' "$WHEEL" "$info/WHEEL")
expect_match "WHEEL: platform wheel with both manylinux tags" \
	'Root-Is-Purelib: false.*Tag: py3-none-manylinux_2_17_x86_64.*Tag: py3-none-manylinux2014_x86_64' "$(tr '\n' ' ' <<<"$wheelfile")"

# Every ELF file: the versions it requires (objdump -p "Version References").
mkdir -p "$TMP/x"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$WHEEL" "$TMP/x"
n_elf=0
while IFS= read -r -d '' f; do
	[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
	n_elf=$((n_elf + 1))
	rel=${f#"$TMP/x/"}
	needs=$(objdump -p "$f" | awk '/^Version References:/ {on=1; next} /^[^ ]/ {on=0} on && $NF ~ /^GLIBC_[0-9]/ {print $NF}' | sort -uV)
	newest=$(tail -n1 <<<"$needs")
	newer=$(for v in $needs; do IFS=. read -r _ a b _ <<<"${v/GLIBC_/x.}"; [ "$a" -gt 2 ] || [ "$b" -gt 17 ] && echo "$v"; done)
	expect_eq "$rel: no required glibc version newer than 2.17 (newest: ${newest:-none})" "" "$newer"
done < <(find "$TMP/x" -type f -print0)
expect_eq "ELF files checked: kimg-probe, libkimg.so and libkimgapi.so" 3 "$n_elf"
expect_eq "kimg/kimg-run is $BUILD/kimg-run (scripts/kimg-run, the version written in)" "" "$(cmp "$TMP/x/kimg/kimg-run" "$BUILD_DIR/kimg-run" 2>&1)"

# Offline install into a fresh venv.
if ! fresh_venv "$TMP/venv"; then
	fail "python3 -m venv works (python3-venv, scripts/setup-debian.sh)" "$(tail -3 "$TMP/venv.log")"
	finish; exit
fi
V=$TMP/venv
out=$("$V/bin/python" -m pip install --no-index --disable-pip-version-check "$WHEEL" 2>&1); rc=$?
expect_eq "pip install --no-index of the wheel exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || { printf '%s\n' "$out" | tail -5; finish; exit; }
PKG=$("$V/bin/python" -c 'import kimg, os; print(os.path.dirname(kimg.__file__))')
for f in bin/kimg-probe bin/kimg-run; do
	if [ -x "$V/$f" ]; then ok "installed $f, executable"; else fail "installed $f, executable"; fi
done
for f in libkimg.so libkimgapi.so _api.py kimg-run; do
	if [ -f "$PKG/$f" ]; then ok "installed kimg/$f in site-packages"; else fail "installed kimg/$f in site-packages ($PKG)"; fi
done
for f in share/man/man1/kimg-probe.1 share/man/man1/kimg-run.1 share/man/man7/libkimg.7; do
	if cmp -s "$V/$f" "$BUILD_DIR/man/${f##*/}"; then ok "installed $f is $BUILD/man/${f##*/}"; else fail "installed $f is $BUILD/man/${f##*/}"; fi
done
if [ -f "$FIX/multi.fatbin" ]; then
	got=$(env -u BUILD "$V/bin/kimg-probe" scan --json "$FIX/multi.fatbin" 2>&1); rc=$?
	expect_eq "installed kimg-probe scans a fixture: exit 0" 0 "$rc"
	# The fixture's recipe (tests/fixtures/fixtures.mk, GEN_MULTI) is the oracle.
	expect_eq "installed kimg-probe lists the fixture's images" \
		"compute_100f compute_90 compute_90a sm_100a sm_100f sm_120 sm_80 sm_90 sm_90a" \
		"$(python3 -c 'import json, sys; d = json.load(sys.stdin); print(" ".join(sorted(i["arch"] for f in d["files"] for m in f["modules"] for i in m["images"])))' <<<"$got" 2>&1)"
else
	fail "fixture $FIX/multi.fatbin present (make fixtures)"
fi
expect_eq "installed kimg-run uses the package's lib" "$PKG/libkimg.so" "$(env -u BUILD -u KIMG_LIB "$V/bin/kimg-run" --print-lib 2>&1)"
expect_eq "installed kimg-run: a KIMG_LIB of the caller still wins" "$ROOT/README.md" "$(KIMG_LIB=$ROOT/README.md "$V/bin/kimg-run" --print-lib 2>&1)"
got=$(cd "$TMP" && "$V/bin/kimg-run" -- sh -c 'printf "%s\n" "$LD_PRELOAD"; exit 6' 2>&1); rc=$?
expect_eq "installed kimg-run CMD: the lib preloaded, the status kept" "6 $PKG/libkimg.so" "$rc $got"
expect_eq "python -m kimg --libpath prints the package's lib" "$PKG/libkimg.so" "$("$V/bin/python" -m kimg --libpath 2>&1)"
got=$(cd "$TMP" && "$V/bin/python" -m kimg sh -c 'printf "%s\n" "$LD_PRELOAD"; exit 5' 2>&1); rc=$?
expect_eq "python -m kimg CMD runs kimg-run: the lib preloaded, the status kept" "5 $PKG/libkimg.so" "$rc $got"
expect_match "kimg-run --version through the wheel" "^kimg-run $version\$" "$("$V/bin/kimg-run" --version 2>&1)"
expect_match "python -m kimg --help shows --libpath and kimg-run's help" 'libpath.*Usage: kimg-run' "$("$V/bin/python" -m kimg --help 2>&1 | tr '\n' ' ')"
# The library really loads and reports: the stand-in driver refuses an sm_80 cubin on 9.0.
if need "$BUILD_DIR/shim-tests/drv_dl" "make shim-tests" && need "$FAKE/libcuda.so.1" "make shim-tests" &&
	need "$FIX/sm80.cubin" "make fixtures"; then
	got=$(LD_LIBRARY_PATH=$FAKE "$V/bin/kimg-run" --json --log "$TMP/r.jsonl" "$BUILD_DIR/shim-tests/drv_dl" dlsym load "$FIX/sm80.cubin" 2>&1)
	expect_match "under the installed kimg-run the program still gets its 209" '^cuModuleLoadData: 209$' "$got"
	expect_eq "the installed libkimg.so wrote one report: 209, sm_80 image, device 9.0" "209 sm_80 9.0" \
		"$(python3 -c 'import json, sys; r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]; print(len(r) == 1 and "%d %s %s" % (r[0]["error"]["code"], r[0]["module"]["images"][0]["arch"], r[0]["device"]["sm"]))' "$TMP/r.jsonl" 2>&1)"
fi

# The can-it-run API from the installed wheel (docs/api.md), with nothing
# of the source tree: the package's libkimgapi.so and kimg-probe. The
# oracle is docs/rules.md (S1: sm_80 SASS on 9.0 is error 209; 8.6 runs it).
if need "$FIX/sm80.cubin" "make fixtures"; then
	got=$(cd "$TMP" && env -u KIMG_API_LIB -u KIMG_PROBE "$V/bin/python" - "$FIX/sm80.cubin" <<'PY' 2>&1
import sys, kimg
a, b = kimg.can_run(sys.argv[1], sm="9.0"), kimg.can_run(sys.argv[1], sm="8.6")
print(a.runs, a.error, a.modules[0]["verdicts"][0]["rule"], b.runs, b.error, kimg._api._library_path() == kimg._api._HERE + "/libkimgapi.so")
PY
)
	expect_eq "installed kimg.can_run: sm_80 cubin fails on 9.0 with 209 [S1], runs on 8.6; the package's libkimgapi.so" \
		"False 209 S1 True None True" "$got"
	(cd "$TMP" && env -u KIMG_PROBE "$V/bin/python" -m kimg check --json --sm 9.0 "$FIX/sm80.cubin" >"$TMP/pym.out" 2>&1; echo "rc $?" >>"$TMP/pym.out")
	(cd "$TMP" && "$V/bin/kimg-probe" check --json --sm 9.0 "$FIX/sm80.cubin" >"$TMP/probe.out" 2>&1; echo "rc $?" >>"$TMP/probe.out")
	if cmp -s "$TMP/pym.out" "$TMP/probe.out" && grep -qx "rc 1" "$TMP/probe.out"; then
		ok "python -m kimg check is the installed kimg-probe check: same output, same exit status (1)"
	else
		fail "python -m kimg check is the installed kimg-probe check" "$(diff "$TMP/pym.out" "$TMP/probe.out" | head -5)"
	fi
	mkdir -p "$TMP/envdir" && cp "$FIX/sm80.cubin" "$TMP/envdir/"
	got=$(cd "$TMP" && env -u KIMG_PROBE "$V/bin/python" -c 'import sys, kimg; d = kimg.check_environment(sm="9.0", dirs=[sys.argv[1]]); print(d["exit_status"], d["ok"], d["summary"]["cannot_run"])' "$TMP/envdir" 2>&1)
	expect_eq "installed kimg.check_environment: doctor's verdict as data (exit 1, not ok, 1 cannot run)" "1 False 1" "$got"
fi

# pip install --target (no prefix at all): the library stays with the package.
if "$V/bin/python" -m pip install -q --no-index --disable-pip-version-check --target "$TMP/target" "$WHEEL" >/dev/null 2>&1; then
	expect_eq "pip --target: kimg-run (PYTHONPATH=target) uses target/kimg/libkimg.so" "$TMP/target/kimg/libkimg.so" \
		"$(env -u KIMG_LIB PYTHONPATH="$TMP/target" "$TMP/target/bin/kimg-run" --print-lib 2>&1)"
else
	fail "pip install --no-index --target DIR of the wheel"
fi
if [ -f "$FIX/sm80.cubin" ] && [ -d "$TMP/target/kimg" ]; then
	expect_eq "pip --target: kimg.can_run (PYTHONPATH=target) uses target/kimg/libkimgapi.so" "209" \
		"$(cd "$TMP" && env -u KIMG_API_LIB PYTHONPATH="$TMP/target" python3 -c 'import sys, kimg; print(kimg.can_run(sys.argv[1], sm="9.0").error)' "$FIX/sm80.cubin" 2>&1)"
fi

# pip uninstall takes every installed file with it.
before=$(cd "$V" && find . -type f | LC_ALL=C sort)
"$V/bin/python" -m pip uninstall -y -q kimg >/dev/null 2>&1
after=$(cd "$V" && find . -type f | LC_ALL=C sort)
expect_eq "pip uninstall removes kimg-probe, kimg-run, the man pages" \
	"./bin/kimg-probe ./bin/kimg-run ./share/man/man1/kimg-probe.1 ./share/man/man1/kimg-run.1 ./share/man/man7/libkimg.7" \
	"$(comm -23 <(echo "$before") <(echo "$after") | grep -v '/site-packages/\|__pycache__' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "pip uninstall leaves no kimg file in site-packages" "" "$(cd "$V" && find . -path '*site-packages/kimg*')"
finish
