#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The aarch64 wheel (make ARCH=aarch64 wheel), run by tests/aarch64/run.sh
# with V (its qemu view of the build): every ELF file in it is aarch64 and
# needs no glibc version newer than 2.17 (objdump -p); the shim defines the
# pre-2.34 dlsym at aarch64's base version GLIBC_2.17; pip installs it for
# that platform (--platform, --target, --no-index), and the installed
# kimg-probe (under qemu) lists a fixture and the installed libkimg.so,
# preloaded into the stand-in driver's program, reports its 209.
. "$(dirname "$0")/../lib.bash"
version=$(cat "$ROOT/VERSION")
WHEEL=$ROOT/dist/kimg-$version-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl
need "$WHEEL" "make ARCH=aarch64 wheel" || { finish; exit; }
: "${V:?set by tests/aarch64/run.sh}"

mkdir -p "$TMP/x"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$WHEEL" "$TMP/x"
for rel in kimg-$version.data/scripts/kimg-probe kimg/libkimg.so; do
	f=$TMP/x/$rel
	expect_eq "$rel: aarch64 ELF (e_machine 183)" 183 "$(od -An -j18 -N2 -tu2 "$f" | tr -d ' ')"
	needs=$(objdump -p "$f" | awk '/^Version References:/ {on=1; next} /^[^ ]/ {on=0} on && $NF ~ /^GLIBC_[0-9]/ {print $NF}' | sort -uV)
	expect_eq "$rel: requires no glibc version but GLIBC_2.17" "GLIBC_2.17" "$(tr '\n' ' ' <<<"$needs" | sed 's/ $//')"
done
expect_eq "libkimg.so defines dlsym@GLIBC_2.17 and dlsym@@GLIBC_2.34" "dlsym@@GLIBC_2.34 dlsym@GLIBC_2.17" \
	"$(readelf --dyn-syms -W "$TMP/x/kimg/libkimg.so" | awk '$7 != "UND" && $8 ~ /^dlsym@/ {print $8}' | sort | tr '\n' ' ' | sed 's/ $//')"

T=$TMP/target
python3 -m venv "$TMP/venv" >/dev/null 2>&1 || { fail "python3 -m venv works (python3-venv)"; finish; exit; }
if "$TMP/venv/bin/pip" install -q --no-index --disable-pip-version-check --platform manylinux_2_17_aarch64 \
	--only-binary=:all: --target "$T" "$WHEEL" >"$TMP/pip.log" 2>&1; then
	ok "pip accepts the wheel for manylinux_2_17_aarch64 (--platform, --target, --no-index)"
else
	fail "pip accepts the wheel for manylinux_2_17_aarch64" "$(tail -3 "$TMP/pip.log")"
	finish; exit
fi
expect_eq "kimg-run (installed) uses the package's library" "$T/kimg/libkimg.so" \
	"$(env -u KIMG_LIB PYTHONPATH="$T" "$T/bin/kimg-run" --print-lib 2>&1)"
cp "$V/../qemu_exec" "$TMP/kimg-probe" && ln -s "$T/bin/kimg-probe" "$TMP/kimg-probe.aarch64"
got=$("$TMP/kimg-probe" scan "$V/fixtures/multi_exe" 2>&1)
expect_match "the installed kimg-probe (qemu) lists the aarch64 multi_exe" 'multi_exe: elf, 2 modules' "$got"
got=$(env LD_LIBRARY_PATH="$V/fake_cuda" LD_PRELOAD="$T/kimg/libkimg.so" KIMG_FORMAT=json KIMG_LOG="$TMP/r.jsonl" \
	"$V/shim-tests/drv_dl" dlsym load "$V/fixtures/sm80.cubin" 2>&1)
expect_match "the stand-in driver's program still gets its 209" '^cuModuleLoadData: 209$' "$got"
expect_eq "the installed libkimg.so reported it: 209, sm_80, device 9.0" "209 sm_80 9.0" \
	"$(python3 -c 'import json, sys; r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]; print(len(r) == 1 and "%d %s %s" % (r[0]["error"]["code"], r[0]["module"]["images"][0]["arch"], r[0]["device"]["sm"]))' "$TMP/r.jsonl" 2>&1)"
finish
