#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kimg-probe scan: exact module and image lists of the nvcc-built fixtures
# (docs/format.md section 12), archives, directories, wheels, kernel names.
. "$(dirname "$0")/../lib.bash" probe

# docs/format.md section 12: the 9 entries of container B, in file order.
run "$PROBE" scan --json "$FX/multi.fatbin"
expect_rc 0 "scan multi.fatbin"
expect_json "multi.fatbin: one raw module" \
	'len(d["files"]) == 1 and len(d["files"][0]["modules"]) == 1 and d["files"][0]["modules"][0]["origin"] == "raw"'
expect_json "multi.fatbin: the 9 images of section 12, in order" \
	'[(i["kind"], i["arch"], i["ptx_isa"], i["compressed"]) for i in d["files"][0]["modules"][0]["images"]] == [
	("sass","sm_80",None,None), ("sass","sm_90",None,None), ("ptx","compute_90","9.0",None),
	("sass","sm_90a",None,None), ("ptx","compute_90a","9.0",None), ("sass","sm_100a",None,None),
	("sass","sm_100f",None,None), ("ptx","compute_100f","9.0",None), ("sass","sm_120",None,None)]'
expect_json "multi.fatbin: flags of section 7 (sm_90a 0x100011, sm_100f 0x1200011)" \
	'[i["flags"] for i in d["files"][0]["modules"][0]["images"]][3] == 0x100011 and
	 [i["flags"] for i in d["files"][0]["modules"][0]["images"]][6] == 0x1200011'
expect_json "scan without --kernels has no kernels key" \
	'all("kernels" not in i for i in d["files"][0]["modules"][0]["images"])'
expect_json "summary counts" 'd["summary"] == {"files":1,"modules":1,"images":9,"sass":6,"ptx":3,"ltoir":0,"unknown":0,"link_inputs_not_listed":0,"errors":0}'

# Text: one block, aligned columns, the summary line.
run "$PROBE" scan "$FX/multi.fatbin"
expect_rc 0 "scan multi.fatbin (text)"
expect_grep "text summary line" "$TMP/out" "1 file, 1 module, 9 images: 6 sass, 3 ptx; 0 errors"
expect_grep "text PTX row with ISA" "$TMP/out" "    ptx    compute_100f   9.0   -"
# One of each: the singular throughout (sm80.cubin is one sm_80 SASS image).
run "$PROBE" scan "$FX/sm80.cubin"
expect_eq "text summary line, all singular" "1 file, 1 module, 1 image: 1 sass, 0 ptx; 0 errors" "$(tail -n1 "$TMP/out")"

# libtwo.so: tu_a (sm_80) and tu_b (sm_90 + compute_90), after nvcc's link stub.
run "$PROBE" scan --json "$FX/libtwo.so"
expect_rc 0 "scan libtwo.so"
expect_json "libtwo.so: modules in .nv_fatbin with arch sets [stub], [sm_80], [sm_90, compute_90]" \
	'[[i["arch"] for i in m["images"]] for m in d["files"][0]["modules"]][-2:] == [["sm_80"], ["sm_90", "compute_90"]]
	 and all(m["section"] == ".nv_fatbin" for m in d["files"][0]["modules"])'
expect_json "libtwo.so: compute_90 PTX is zstd (nvcc default, section 6)" \
	'd["files"][0]["modules"][-1]["images"][1]["compressed"] == "zstd"'

# Static archive: members named.
run "$PROBE" scan --json "$FX/libtwo.a"
expect_rc 0 "scan libtwo.a"
expect_json "libtwo.a: one module per member, member names kept" \
	'[m["member"] for m in d["files"][0]["modules"]] == ["tu_a.o", "tu_b.o"] and d["files"][0]["kind"] == "archive"'

# Raw cubin / PTX files.
run "$PROBE" scan --json "$FX/sm120.cubin" "$FX/compute80.ptx"
expect_rc 0 "scan raw cubin and PTX"
expect_json "raw cubin sm_120, raw PTX compute_80 with ISA 9.0 (nvcc 13 stamps its own ISA, P5)" \
	'[(f["kind"], f["modules"][0]["images"][0]["arch"], f["modules"][0]["images"][0]["ptx_isa"]) for f in d["files"]]
	 == [("cubin", "sm_120", None), ("ptx", "compute_80", "9.0")]'

# Compression modes (docs/format.md section 6): speed = LZ4 PTX, size = ZSTD everything.
run "$PROBE" scan --json "$FX/compress_speed.fatbin" "$FX/compress_size.fatbin"
expect_json "compress-mode speed: raw cubin, lz4 PTX; size: zstd both" \
	'[[i["compressed"] for i in f["modules"][0]["images"]] for f in d["files"]] == [[None, "lz4"], ["zstd", "zstd"]]'

# --kernels: names from cubins (symtab) and PTX (.entry), through decompression.
run "$PROBE" scan --json --kernels "$FX/multi.fatbin" "$FX/compress_size.fatbin" "$FX/libtwo.so"
expect_rc 0 "scan --kernels"
expect_json "--kernels: every sm_/compute_ image of kern.cu names its 3 kernels" \
	'all(sorted(i["kernels"]) == ["_Z4fillPii", "_Z5scaleIfEvPT_S0_i", "axpy"] for i in d["files"][0]["modules"][0]["images"])'
expect_json "--kernels: zstd cubin and zstd PTX decompressed" \
	'[i["kernels"] for i in d["files"][1]["modules"][0]["images"]] == [["_Z10big_kernelPKfPfi"], ["_Z10big_kernelPKfPfi"]]'
expect_json "--kernels: libtwo.so link stub has no kernels; tu_b kernel in both images" \
	'd["files"][2]["modules"][0]["images"][0]["kernels"] == [] and
	 [i["kernels"] for i in d["files"][2]["modules"][-1]["images"]] == [["_Z11tu_b_kernelPd"], ["_Z11tu_b_kernelPd"]]'
run "$PROBE" scan --kernels "$FX/compute80.ptx"
expect_grep "--kernels text lists PTX entries" "$TMP/out" "kernels: axpy, _Z4fillPii, _Z5scaleIfEvPT_S0_i"

# LTO-IR (section 5: kind 8) in __nv_relfatbin of a -dc object.
run "$PROBE" scan --json "$FX/lto.o"
expect_json "lto.o: one ltoir lto_90 image in __nv_relfatbin" \
	'[(m["section"], [(i["kind"], i["arch"]) for i in m["images"]]) for m in d["files"][0]["modules"]] == [("__nv_relfatbin", [("ltoir", "lto_90")])]'

# Directory recursion: sorted, non-device files skipped silently, symlinked dirs not followed.
mkdir -p "$TMP/tree/a/b" "$TMP/tree/c"
cp "$FX/libtwo.so" "$TMP/tree/a/b/"
cp "$FX/multi.fatbin" "$TMP/tree/c/"
echo "print('hi')" >"$TMP/tree/a/notes.py"
ln -s ../a "$TMP/tree/c/loop"
ln -s ../c/multi.fatbin "$TMP/tree/a/link.fatbin"
run "$PROBE" scan --json "$TMP/tree"
expect_rc 0 "scan directory"
expect_json "directory: files in sorted order, symlinked file read, symlinked dir and .py skipped" \
	'[f["path"][len(f["path"]) - len(f["path"].split("/tree/")[1]):] for f in d["files"]] == ["a/b/libtwo.so", "a/link.fatbin", "c/multi.fatbin"]'

# Wheel read in place: member paths with "!/", non-code members skipped.
python3 - "$FX/libtwo.so" "$TMP/pkg.whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("pkg/__init__.py", "x = 1\n")
    z.write(sys.argv[1], "pkg/lib/libtwo.so")
    z.writestr("pkg-1.0.dist-info/RECORD", "")
PY
run "$PROBE" scan --json "$TMP/pkg.whl"
expect_rc 0 "scan wheel"
expect_json "wheel: only the .so member, shown as pkg.whl!/pkg/lib/libtwo.so, same modules as the file" \
	'[f["path"].endswith("pkg.whl!/pkg/lib/libtwo.so") for f in d["files"]] == [True] and
	 [[i["arch"] for i in m["images"]] for m in d["files"][0]["modules"]][-2:] == [["sm_80"], ["sm_90", "compute_90"]]'
run "$PROBE" scan "$TMP/pkg.whl"
expect_grep "wheel text: member path" "$TMP/out" "pkg.whl!/pkg/lib/libtwo.so: elf, 3 modules"

# Wheels are read with zlib (no libarchive needed). Without zlib, the deflated
# wheel is not read: one line names it and how to get it read; the rest goes on; exit 2.
KIMG_LIBARCHIVE=libkimg-no-such-archive.so.13 run "$PROBE" scan "$TMP/pkg.whl"
expect_rc 0 "wheel without libarchive: read through zlib"
expect_grep "wheel without libarchive: member listed" "$TMP/out" "pkg.whl!/pkg/lib/libtwo.so: elf, 3 modules"
KIMG_ZLIB=libkimg-no-such-zlib.so.1 run "$PROBE" scan "$TMP/pkg.whl" "$FX/multi.fatbin"
expect_rc 2 "wheel without zlib"
expect_grep "missing zlib: one line naming the archive and the remedy" "$TMP/err" \
	"kimg-probe: 1 archive not read (cannot inflate: libkimg-no-such-zlib.so.1 not found; install zlib (Debian: zlib1g) or name it with KIMG_ZLIB): $TMP/pkg.whl"
expect_grep "scan goes on after the wheel" "$TMP/out" "1 file, 1 module, 9 images"

# --deep (docs/format.md section 1): blobs stored as plain data in .rodata, loaded with
# cuModuleLoadData, are listed only on request; by default the modules are cuobjdump's.
run "$PROBE" scan --json "$FX/embedded.o"
expect_rc 0 "scan embedded.o"
expect_json "embedded.o without --deep: no module (cuobjdump lists none)" \
	'd["files"][0]["modules"] == [] and d["summary"]["modules"] == 0'
run "$PROBE" scan --json --deep "$FX/embedded.o" "$FX/wrapped.so" "$FX/libtwo.so"
expect_rc 0 "scan --deep"
expect_json "--deep: the .rodata blob (origin scan, 9 images); wrapped.so's blob once, through its wrapper; libtwo.so unchanged" \
	'[[(m["origin"], m["section"], len(m["images"])) for m in f["modules"]] for f in d["files"][:2]] ==
	 [[("scan", ".rodata", 9)], [("wrapper", ".rodata", 9)]] and
	 [m["origin"] for m in d["files"][2]["modules"]] == ["nv_fatbin"] * 3'
run "$PROBE" scan --deep "$FX/embedded.o"
expect_grep "--deep text: module place names .rodata" "$TMP/out" "module 1 at 0x40 in .rodata: fatbin, 9 images"
run "$PROBE" check --sm 9.0 --json "$FX/embedded.o"
expect_json "check without --deep: nothing to check in embedded.o" 'd["files"][0]["modules"] == []'
run "$PROBE" check --sm 9.0 --json --deep "$FX/embedded.o"
expect_rc 0 "check --deep"
expect_json "check --deep: the blob runs on 9.0 from its sm_90 cubin" \
	'[[(m["origin"], [v["outcome"] for v in m["verdicts"]]) for m in f["modules"]] for f in d["files"]] == [[("scan", ["sass"])]]'

# A walk decides from each file's first bytes whether to open it (4 KiB,
# up to 64 KiB of leading blank space and comments): what it finds is what
# reading every file whole finds. The oracle is each file named alone on
# the command line, where the whole file is read.
pre=$TMP/prefilter
mkdir -p "$pre/sub"
{ printf '/*'; head -c 6000 /dev/zero | tr '\0' ' '; printf '*/\n'; cat "$FX/compute80.ptx"; } >"$pre/long_comment.ptx"
{ head -c 5000 /dev/zero | tr '\0' '\n'; cat "$FX/compute80.ptx"; } >"$pre/sub/blank_first"
{ head -c 70000 /dev/zero | tr '\0' ' '; cat "$FX/compute80.ptx"; } >"$pre/past_64k.txt"
{ printf '/* .version 8.0 never closed'; head -c 9000 /dev/zero | tr '\0' ' '; } >"$pre/open_comment.txt"
cp "$FX/sm80.cubin" "$pre/sub/renamed.dat"
printf '\177ELF' >"$pre/elf_magic_only"
: >"$pre/empty"
mkfifo "$pre/fifo"
ln -s "$(cd "$FX" && pwd)/sm100f.cubin" "$pre/link_to_cubin"
ln -s "$(cd "$FX" && pwd)" "$pre/link_to_dir"
# Two workers: the directories are listed on them.
run "$PROBE" scan --json -j 2 "$pre"
expect_json "prefilter: found in a walk exactly the inputs a whole read finds (PTX behind 6 KB of comment and 5 KB of blank lines, a renamed cubin, a linked cubin; 4 bytes of ELF magic as an error; not PTX past 64 KiB, an open comment, an empty file, a FIFO, a linked directory)" \
	'[f["path"].split("/prefilter/")[1] for f in d["files"]] == ["elf_magic_only", "link_to_cubin", "long_comment.ptx", "sub/blank_first", "sub/renamed.dat"] and
	 d["files"][0]["error"].startswith("host ELF: 4 bytes") and
	 [f["modules"][0]["images"][0]["kind"] for f in d["files"][1:]] == ["sass", "ptx", "ptx", "sass"]'
for f in long_comment.ptx sub/blank_first sub/renamed.dat past_64k.txt open_comment.txt; do
	"$PROBE" scan --json "$pre/$f" >"$TMP/one" 2>/dev/null
	printf '%s %s\n' "$f" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["files"][0]["kind"])' "$TMP/one")"
done >"$TMP/alone"
if [ "$(cat "$TMP/alone")" = "$(printf 'long_comment.ptx ptx\nsub/blank_first ptx\nsub/renamed.dat cubin\npast_64k.txt unknown\nopen_comment.txt unknown')" ]; then
	ok "prefilter: the same files named alone (whole read) have those kinds"
else
	fail "prefilter: files named alone: $(tr '\n' ';' <"$TMP/alone")"
fi

# Files named as Python, C/C++ source or docs are not opened in a walk
# (--every-file opens them); named on the command line they are read. The
# oracle: a cubin copied under such names is found only where promised.
src=$TMP/named_as_source
mkdir -p "$src"
for n in k.py k.pyc k.h k.cuh k.cpp README.md notes.rst x.cmake; do cp "$FX/sm80.cubin" "$src/$n"; done
cp "$FX/sm80.cubin" "$src/k.cubin.txt"
run "$PROBE" scan --json "$src"
expect_json "named as source: a walk opens only the file whose name does not say source or docs" \
	'[f["path"].rsplit("/", 1)[1] for f in d["files"]] == ["k.cubin.txt"]'
run "$PROBE" scan --json --every-file -j 3 "$src"
expect_json "named as source: --every-file opens all nine" \
	'sorted(f["path"].rsplit("/", 1)[1] for f in d["files"]) == sorted(["k.py", "k.pyc", "k.h", "k.cuh", "k.cpp", "README.md", "notes.rst", "x.cmake", "k.cubin.txt"]) and all(f["kind"] == "cubin" for f in d["files"])'
run "$PROBE" check --json --sm 8.0 "$src/k.py"
expect_json "named as source: named on the command line, k.py is read and checked" \
	'd["files"][0]["kind"] == "cubin" and d["files"][0]["modules"][0]["verdicts"][0]["outcome"] == "sass"'

# Pipes are inputs too (read(), not mmap).
"$PROBE" scan --json /dev/stdin <"$FX/multi.fatbin" >"$TMP/out" 2>"$TMP/err"; rc=$?
expect_rc 0 "scan from a pipe"
expect_json "pipe: the same 9 images" 'len(d["files"][0]["modules"][0]["images"]) == 9'

finish
