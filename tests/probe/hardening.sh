#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kimg-probe against inputs a hostile or unlucky user gives it (issue 12):
# 32-bit ELF files in trees, GNU thin archives, sparse and huge-ratio
# inputs, control bytes in names, files that shrink while they are read.
. "$(dirname "$0")/../lib.bash" probe

# elf32 FILE: a 32-bit x86 ELF header, as valgrind's x86 objects start
# (class 1, little-endian, ET_DYN, EM_386); `file` is the oracle.
elf32() {
	python3 - "$1" <<'PY'
import struct, sys
ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
hdr = ident + struct.pack("<HHIIIIIHHHHHH", 3, 3, 1, 0, 0, 0, 0, 52, 0, 0, 40, 0, 0)
open(sys.argv[1], "wb").write(hdr + bytes(200))
PY
}

# ---- item 8: 32-bit ELF files are skipped in walks, an error when named ----
mkdir -p "$TMP/lib32"
elf32 "$TMP/lib32/vgpreload-x86-linux.so"
elf32 "$TMP/x86.o"
( cd "$TMP" && ar rc "$TMP/lib32/libvex-x86-linux.a" x86.o )
cp "$FX/multi.fatbin" "$TMP/lib32/"
if file "$TMP/lib32/vgpreload-x86-linux.so" | grep -q "ELF 32-bit LSB"; then
	ok "the crafted file is a 32-bit ELF for file(1)"; else fail "crafted 32-bit ELF: $(file "$TMP/lib32/vgpreload-x86-linux.so")"; fi
run "$PROBE" scan "$TMP/lib32"
expect_rc 0 "scan of a tree with 32-bit ELF files and archives of them"
expect_grep "the fatbin and the (device-code-free) archive, no error" "$TMP/out" "2 files, 1 module, 9 images: 6 sass, 3 ptx; 0 errors"
if [ -s "$TMP/err" ]; then fail "32-bit files reported in a walk: $(cat "$TMP/err")"; else ok "nothing on stderr for 32-bit files in a walk"; fi
run "$PROBE" scan "$TMP/lib32/vgpreload-x86-linux.so"
expect_rc 2 "scan of a 32-bit ELF named alone"
expect_grep "32-bit ELF named alone: a clear error" "$TMP/err" \
	"kimg-probe: $TMP/lib32/vgpreload-x86-linux.so: 32-bit ELF file (class 1): kimg reads 64-bit little-endian ELF only"
run "$PROBE" check --sm 9.0 "$TMP/lib32/vgpreload-x86-linux.so"
expect_rc 2 "check of a 32-bit ELF named alone"

# ---- item 9: GNU thin archives (ar rcT): members read from the files they name ----
mkdir -p "$TMP/thin/obj" "$TMP/thin/lib"
cp "$FX/tu_a.o" "$FX/tu_b.o" "$TMP/thin/obj/"
( cd "$TMP/thin" && ar rcT lib/libthin.a obj/tu_a.o obj/tu_b.o )
if head -c 8 "$TMP/thin/lib/libthin.a" | grep -q '!<thin>'; then ok "ar rcT made a thin archive"; else fail "ar rcT: no thin archive"; fi
run "$PROBE" scan --json "$TMP/thin/lib/libthin.a" "$FX/libtwo.a"
expect_rc 0 "scan of a thin archive"
# Oracle: the regular archive of the same two objects (libtwo.a) and ar t.
expect_json "thin archive: the modules of libtwo.a, members named as ar t names them (relative to lib/)" \
	"[(m['member'], [i['arch'] for i in m['images']]) for m in d['files'][0]['modules']] == [('../obj/tu_a.o', ['sm_80']), ('../obj/tu_b.o', ['sm_90', 'compute_90'])] and [[i['arch'] for i in m['images']] for m in d['files'][1]['modules']] == [['sm_80'], ['sm_90', 'compute_90']] and d['files'][0]['kind'] == 'archive'"
run "$PROBE" scan "$TMP/thin"
expect_grep "thin archive found inside a directory walk" "$TMP/out" "$TMP/thin/lib/libthin.a: archive, 2 modules"
run "$PROBE" check --sm 9.0 "$TMP/thin/lib/libthin.a"
expect_rc 1 "check of a thin archive: tu_a (sm_80 only) cannot run on 9.0"
expect_grep "check names the thin member" "$TMP/out" "of member ../obj/tu_a.o"
# A member gone, a member changed since archived: errors naming the member.
cp "$TMP/thin/lib/libthin.a" "$TMP/thin/lib/gone.a"
mv "$TMP/thin/obj/tu_b.o" "$TMP/thin/obj/tu_b.o.moved"
run "$PROBE" scan "$TMP/thin/lib/gone.a"
expect_rc 2 "thin archive with a missing member"
expect_grep "missing member named" "$TMP/err" "member ../obj/tu_b.o: $TMP/thin/lib/../obj/tu_b.o: No such file or directory"
expect_grep "the other member still read" "$TMP/out" "1 module"
mv "$TMP/thin/obj/tu_b.o.moved" "$TMP/thin/obj/tu_b.o"
printf 'x' >>"$TMP/thin/obj/tu_a.o"
run "$PROBE" scan "$TMP/thin/lib/libthin.a"
expect_rc 2 "thin archive whose member changed"
expect_grep "changed member named" "$TMP/err" "member ../obj/tu_a.o: file is"
# A thin archive naming itself: not followed, no loop.
python3 - "$TMP/thin/lib/loop.a" <<'PY'
import sys
name = b"loop.a/\n"
longnames = b"//" + b" " * 46 + b"%-10d" % len(name) + b"`\n" + name
hdr = b"/0" + b" " * 14 + b"0" + b" " * 11 + b"0     0     644     " + b"%-10d" % 4096 + b"`\n"
open(sys.argv[1], "wb").write(b"!<thin>\n" + longnames + hdr)
PY
run timeout 10 "$PROBE" scan "$TMP/thin/lib/loop.a"
expect_rc 2 "thin archive naming itself"
expect_grep "self-reference: not followed" "$TMP/err" "a thin archive inside a thin archive: not followed"

# ---- item 14: names from inputs cannot drive the terminal or split lines ----
# A file, an archive member and a zip member whose names hold ESC sequences,
# a newline, a C1 CSI (U+009B) and a byte that is not UTF-8; one broken file
# with such a name. Oracle: no control byte reaches stdout/stderr, each
# problem stays one line, and the escapes are the documented \xNN forms.
mkdir -p "$TMP/names"
evil=$(printf 'a\033[2Jb\nc\302\233d\377e')
cp "$FX/multi.fatbin" "$TMP/names/$evil.fatbin"
head -c 100 "$FX/multi.fatbin" >"$TMP/names/bad-$evil.fatbin"
cp "$FX/tu_a.o" "$TMP/$evil.o" && ( cd "$TMP" && ar rc "$TMP/names/members.a" "$evil.o" )
# (ASCII only: sys/zip.c shows names libarchive cannot convert in the C locale as "?")
python3 - "$TMP/names/pkg.whl" "$FX/sm80.cubin" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("lib/a\x1b[2Jb\nc.cubin", open(sys.argv[2], "rb").read())
PY
run "$PROBE" scan "$TMP/names"
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$TMP/out" "$TMP/err"; then
	fail "a control byte reached the output: $(od -c "$TMP/out" "$TMP/err" | grep -m3 '033')"
else ok "no control byte from a name reaches stdout or stderr"; fi
expect_grep "file name escaped in the text output" "$TMP/out" \
	"$TMP/names/a\\x1b[2Jb\\nc\\xc2\\x9bd\\xffe.fatbin: fatbin, 1 module"
expect_grep "archive member name escaped" "$TMP/out" "of member a\\x1b[2Jb\\nc\\xc2\\x9bd\\xffe.o"
expect_grep "broken file: one escaped problem line" "$TMP/err" \
	"kimg-probe: $TMP/names/bad-a\\x1b[2Jb\\nc\\xc2\\x9bd\\xffe.fatbin: "
if [ "$(grep -c '^kimg-probe: ' "$TMP/err")" -eq "$(wc -l <"$TMP/err")" ]; then
	ok "every stderr line is a whole problem line"; else fail "stderr lines split: $(cat "$TMP/err")"; fi
run "$PROBE" check --sm 8.0 "$TMP/names"
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$TMP/out" "$TMP/err"; then
	fail "check: a control byte reached the output"; else ok "check: no control byte from a name reaches the output"; fi
expect_grep "check: file name escaped" "$TMP/out" "$TMP/names/a\\x1b[2Jb\\nc\\xc2\\x9bd\\xffe.fatbin: 1 module"
if [ -n "${CI:-}" ] || ldconfig -p 2>/dev/null | grep -q 'libarchive\.so\.13 '; then
	expect_grep "zip member name escaped" "$TMP/out" "pkg.whl!/lib/a\\x1b[2Jb\\nc.cubin: 1 module"
else
	missing "libarchive.so.13" "the zip member name case (CI installs it)"
fi

# libkimg.so's text report escapes the same way (report/text_escape.c): a
# module file whose name holds ESC and a newline, loaded through the fake
# driver (tests/fake_cuda) by drv_dl (make shim-tests).
LIB=$BUILD/libkimg.so DRV=$BUILD/shim-tests/drv_dl
if [ -e "$LIB" ] && [ -e "$FAKE/libcuda.so.1" ] && [ -e "$DRV" ]; then
	cp "$FX/sm80.cubin" "$TMP/names/$evil.cubin"
	env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" FAKE_CUDA_SM=90 "$DRV" dlsym path "$TMP/names/$evil.cubin" \
		>/dev/null 2>"$TMP/shim.err"
	expect_grep "shim text report: module path escaped" "$TMP/shim.err" \
		"kimg:   module: $TMP/names/a\\x1b[2Jb\\nc\\xc2\\x9bd\\xffe.cubin"
	if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$TMP/shim.err"; then
		fail "shim text report: a control byte reached stderr"; else ok "shim text report: no control byte from a name"; fi
	if grep -v '^kimg:' "$TMP/shim.err" | grep -q .; then
		fail "shim text report: a line not starting with kimg: (a name split it): $(grep -v '^kimg:' "$TMP/shim.err" | head -2)"
	else ok "shim text report: every line starts with kimg:"; fi
else
	fail "$LIB, $FAKE/libcuda.so.1 or $DRV missing (make all shim-tests)"
fi

# ---- item 3: a file that shrinks while it is read: an error, not SIGBUS ----
# tests/probe/src/shrink_on_map.c cuts the file right after the probe maps
# it, so every run meets the pages that vanished (without the guard: 135).
# make builds it (test-programs).
SHRINK_ON_MAP=$BUILD_DIR/tests/shrink_on_map.so
mkdir -p "$TMP/shrink"
if need "$SHRINK_ON_MAP" "make BUILD=$BUILD test-programs"; then
	for how in "scan" "scan --json" "scan --kernels --deep" "check --sm 9.0" "check --sm 9.0 --json"; do
		for to in 0 4096 20000; do
			cp "$FX/multi_exe" "$TMP/shrink/victim"
			cp "$FX/sm80.cubin" "$TMP/shrink/after"
			SHRINK_PATH="$TMP/shrink/victim" SHRINK_TO=$to LD_PRELOAD="$SHRINK_ON_MAP" \
				run "$PROBE" $how "$TMP/shrink/victim" "$TMP/shrink/after"
			expect_rc 2 "$how, file cut to $to bytes while read"
			expect_grep "$how, cut to $to: the message" "$TMP/err" \
				"kimg-probe: $TMP/shrink/victim: file changed while it was read"
			case $how in
			*--json*) expect_json "$how, cut to $to: JSON still valid, the next file read" \
				"d['files'][-1]['path'].endswith('/after') and d['files'][-1]['error'] is None and any(f['error'] == 'file changed while it was read' for f in d['files'])" ;;
			*) expect_grep "$how, cut to $to: the next file is read" "$TMP/out" "$TMP/shrink/after:" ;;
			esac
		done
	done
	# summarize: a log truncated (rotated) while it is read
	python3 - "$TMP/shrink/ranks.log" <<'PY'
import json, sys
line = json.dumps({"error": {"code": 209, "name": "CUDA_ERROR_NO_BINARY_FOR_GPU"}, "module": {"file": "/x.so", "offset": 0}})
open(sys.argv[1], "w").write((line + "\n") * 2000)
PY
	SHRINK_PATH="$TMP/shrink/ranks.log" SHRINK_TO=4096 LD_PRELOAD="$SHRINK_ON_MAP" \
		run "$PROBE" summarize --json "$TMP/shrink/ranks.log"
	expect_rc 2 "summarize of a log truncated while read"
	expect_grep "summarize names the log" "$TMP/err" "kimg-probe: $TMP/shrink/ranks.log: file changed while it was read"
	expect_json "summarize: what was read before is kept, the JSON is whole" "d['reports'] > 0"
	# a wheel cut while its members are inflated
	python3 - "$TMP/shrink/pkg.whl" "$FX/multi_exe" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for i in range(4):
        z.writestr("lib/x%d.so" % i, open(sys.argv[2], "rb").read())
    # stored, so the wheel is mapped (files under 64 KiB are read whole),
    # whatever the size of this architecture's fixtures
    z.writestr("data/pad.bin", bytes(range(256)) * 1024, zipfile.ZIP_STORED)
PY
	# cut to half its size
	SHRINK_PATH="$TMP/shrink/pkg.whl" SHRINK_TO=$(($(stat -c %s "$TMP/shrink/pkg.whl") / 2)) LD_PRELOAD="$SHRINK_ON_MAP" \
		run "$PROBE" scan "$TMP/shrink/pkg.whl"
	if [ "$rc" -eq 2 ] && grep -qF "kimg-probe: $TMP/shrink/pkg.whl" "$TMP/err"; then
		ok "wheel cut while read: exit 2, the wheel named"; else fail "wheel cut while read: exit $rc: $(head -c 300 "$TMP/err")"; fi
fi

# ---- item 10: inputs that cost far more than their size ----
# measure LIMIT_S LIMIT_MB CMD...: run with stdout/stderr in $TMP, then
# $rc, $wall (s) and $maxrss (MiB, of the child) from python's rusage.
measure() {
	local limit_s=$1 limit_mb=$2
	shift 2
	read -r rc wall maxrss < <(python3 - "$TMP/out" "$TMP/err" "$limit_s" "$@" <<'PY'
import resource, subprocess, sys, time
out, err, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
t = time.monotonic()
try:
    rc = subprocess.run(sys.argv[4:], stdout=open(out, "wb"), stderr=open(err, "wb"), timeout=limit).returncode
except subprocess.TimeoutExpired:
    rc = 124
wall = time.monotonic() - t
print(rc, "%.2f" % wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
	)
	if [ "$rc" != 124 ] && [ "$maxrss" -le "$limit_mb" ]; then
		ok "${*:2}: ${wall} s, ${maxrss} MiB (limits ${limit_s} s, ${limit_mb} MiB)"
	else fail "${*:2}: exit $rc, ${wall} s, ${maxrss} MiB (limits ${limit_s} s, ${limit_mb} MiB)"; fi
}

# Sparse files: a fatbin, then a hole to 4 GiB / 1 TiB; two fatbins with a
# 2 GiB hole between them. The holes are skipped (SEEK_HOLE), not read.
mkdir -p "$TMP/sparse"
cp "$FX/multi.fatbin" "$TMP/sparse/4g.fatbin" && truncate -s 4G "$TMP/sparse/4g.fatbin"
cp "$FX/multi.fatbin" "$TMP/sparse/1t.fatbin" && truncate -s 1T "$TMP/sparse/1t.fatbin" 2>/dev/null
cp "$FX/multi.fatbin" "$TMP/sparse/middle.fatbin" &&
	dd if="$FX/multi.fatbin" of="$TMP/sparse/middle.fatbin" bs=1M seek=2048 conv=notrunc status=none
holes=$(python3 - "$TMP/sparse/4g.fatbin" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print("yes" if os.lseek(fd, 0, os.SEEK_HOLE) < os.fstat(fd).st_size else "no")
PY
)
if [ "$holes" != yes ]; then
	fail "the file system of $TMP reports no holes (SEEK_HOLE): the sparse cases cannot run (set TMPDIR elsewhere)"
else
	measure 10 64 "$PROBE" scan "$TMP/sparse/4g.fatbin"
	expect_grep "4 GiB sparse: the one container, no error" "$TMP/out" "1 file, 1 module, 9 images: 6 sass, 3 ptx; 0 errors"
	if [ -n "${KIMG_QEMU_USER:-}" ]; then
		# tests/aarch64/run.sh: qemu-user keeps its own per-page records of a
		# mapping, GiBs for 1 TiB, which the 64 MiB limit would count.
		skip_allowed "1 TiB sparse" "not run under $KIMG_QEMU_USER (its page records for a 1 TiB mapping cost GiBs); the 4 GiB and 2 GiB cases run"
	elif [ -s "$TMP/sparse/1t.fatbin" ]; then
		measure 10 64 "$PROBE" scan --json "$TMP/sparse/1t.fatbin"
		expect_json "1 TiB sparse: the one container" "d['summary']['modules'] == 1 and d['summary']['errors'] == 0 and d['files'][0]['size'] == 1 << 40"
		measure 10 64 "$PROBE" check --sm 9.0 "$TMP/sparse/1t.fatbin"
	else
		fail "truncate -s 1T failed on this file system"
	fi
	measure 10 64 "$PROBE" scan --json "$TMP/sparse/middle.fatbin"
	expect_json "hole between two containers: both found, the second at 2 GiB" \
		"[m['offset'] for m in d['files'][0]['modules']] == [0, 2 << 30]"
fi

# Decompression bounds: an entry whose declared size is 1024x its stored
# size is refused before anything is allocated; $KIMG_PAYLOAD_LIMIT caps the
# absolute size (here below the fixture's 80640-byte PTX).
python3 - "$FX/compress_size.fatbin" "$TMP/bomb.fatbin" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
# first entry header at 16: stored size at +0x10 (u32), uncompressed size at +0x38 (u64)
stored = struct.unpack_from("<I", b, 16 + 0x10)[0]
struct.pack_into("<Q", b, 16 + 0x38, stored * 4096)
open(sys.argv[2], "wb").write(b)
PY
measure 10 64 "$PROBE" scan --kernels "$TMP/bomb.fatbin"
expect_grep "ratio bomb refused with the reason" "$TMP/out" "past the 1024:1 ratio kimg decompresses"
KIMG_PAYLOAD_LIMIT=64K run "$PROBE" scan --kernels "$FX/compress_size.fatbin"
expect_grep "KIMG_PAYLOAD_LIMIT=64K: the 80640-byte PTX is over it" "$TMP/out" \
	"declared size 80640 over the 65536-byte limit (\$KIMG_PAYLOAD_LIMIT)"
KIMG_PAYLOAD_LIMIT=1M run "$PROBE" scan --kernels "$FX/compress_size.fatbin"
if grep -q "unreadable" "$TMP/out"; then fail "KIMG_PAYLOAD_LIMIT=1M refused a payload: $(grep unreadable "$TMP/out")"; else ok "KIMG_PAYLOAD_LIMIT=1M: every payload read"; fi
KIMG_PAYLOAD_LIMIT=lots run "$PROBE" scan "$FX/multi.fatbin"
expect_rc 2 "KIMG_PAYLOAD_LIMIT=lots"
expect_grep "bad KIMG_PAYLOAD_LIMIT named" "$TMP/err" "KIMG_PAYLOAD_LIMIT='lots': expected a size in bytes"
# past 2^64 - 1 (strtoull's ERANGE): refused, not read as the largest size
KIMG_PAYLOAD_LIMIT=18446744073709551616 run "$PROBE" scan "$FX/multi.fatbin"
expect_rc 2 "KIMG_PAYLOAD_LIMIT=2^64: out of range, refused"
expect_grep "2^64 named" "$TMP/err" "KIMG_PAYLOAD_LIMIT='18446744073709551616': expected a size in bytes"

finish
