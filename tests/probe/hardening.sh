#!/usr/bin/env bash
# kimg-probe against inputs a hostile or unlucky user gives it (issue 12):
# 32-bit ELF files in trees, GNU thin archives, sparse and huge-ratio
# inputs, control bytes in names, files that shrink while they are read.
. "$(dirname "$0")/lib.bash"

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
	ok "the crafted file is a 32-bit ELF for file(1)"; else bad "crafted 32-bit ELF: $(file "$TMP/lib32/vgpreload-x86-linux.so")"; fi
run "$PROBE" scan "$TMP/lib32"
expect_rc 0 "scan of a tree with 32-bit ELF files and archives of them"
expect_grep "the fatbin and the (device-code-free) archive, no error" "$TMP/out" "2 files, 1 module, 9 images: 6 sass, 3 ptx; 0 errors"
if [ -s "$TMP/err" ]; then bad "32-bit files reported in a walk: $(cat "$TMP/err")"; else ok "nothing on stderr for 32-bit files in a walk"; fi
run "$PROBE" scan "$TMP/lib32/vgpreload-x86-linux.so"
expect_rc 2 "scan of a 32-bit ELF named alone"
expect_grep "32-bit ELF named alone: a clear error" "$TMP/err" \
	"kimg-probe: $TMP/lib32/vgpreload-x86-linux.so: 32-bit ELF file (class 1): kimg reads 64-bit little-endian ELF only"
run "$PROBE" check --sm 9.0 "$TMP/lib32/vgpreload-x86-linux.so"
expect_rc 2 "check of a 32-bit ELF named alone"

finish
