#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Archive budgets (issue 22 items 4, 5): a zip whose directory points
# thousands of entries at one member (each within the size and ratio caps)
# must not inflate it once per entry; a small compressed tarball (.tar.gz,
# .tar.zst, a .conda holding one) must not hold gigabytes in memory. Oracle:
# the clock, the peak memory (/usr/bin/time or Python's resource module,
# not kimg), and archives built here whose shape is known.
. "$(dirname "$0")/../lib.bash" probe

# peak KB of a command: its exit status in $rc, its peak RSS in $kb, its time in $ms
measure() {
	local t0; t0=$(date +%s%N)
	python3 - "$@" >"$TMP/out" 2>"$TMP/err" <<'PY'
import resource, subprocess, sys
p = subprocess.run(["timeout", "-k", "2", "60"] + sys.argv[1:], stdout=sys.stdout, stderr=sys.stderr)
print("rc=%d kb=%d" % (p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), file=open(sys.argv[0] + ".m", "w") if False else sys.__stderr__)
PY
	ms=$((($(date +%s%N) - t0) / 1000000))
	local m; m=$(grep -a '^rc=' "$TMP/err" | tail -1)
	rc=${m#rc=}; rc=${rc%% *}; kb=${m##*kb=}
	sed -i '/^rc=[0-9]* kb=[0-9]*$/d' "$TMP/err"
}

# ---- item 4: 5000 directory entries, one 8 MiB member (below the 16 MiB
# ratio floor, so no per-member ratio applies), deflated to a few KB ----
python3 - "$TMP/bomb.whl" <<'PY'
import struct, sys, zlib
data = b"\x7fELF\x02\x01\x01" + bytes(8 * 1024 * 1024 - 7)  # a 64-bit ELF's first bytes: wanted by its head
c = zlib.compressobj(9, zlib.DEFLATED, -15)
comp = c.compress(data) + c.flush()
crc = zlib.crc32(data)
name = b"pkg/lib0.so"
local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 8, 0, 0, crc, len(comp), len(data), len(name), 0) + name + comp
cd = b""
n = 5000
for i in range(n):
    nm = b"pkg/lib%d.so" % i
    cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 8, 0, 0, crc, len(comp), len(data), len(nm), 0, 0, 0, 0, 0, 0) + nm
end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, n, n, len(cd), len(local), 0)
open(sys.argv[1], "wb").write(local + cd + end)
PY
echo "  (bomb.whl: $(stat -c %s "$TMP/bomb.whl") bytes, 5000 entries on one 8 MiB member)"
measure "$PROBE" scan "$TMP/bomb.whl"
check "a wheel of 5000 entries over one member: scan ends in ${ms} ms (not once per entry: 40 GB)" test "$ms" -lt 20000 -a "$rc" != 124
expect_rc 2 "... and says it is damaged: exit 2"
expect_eq "... each entry refused as overlapping another" 5000 "$(grep -c "overlap another member's (a zip bomb's shape): not read" "$TMP/err")"
measure "$PROBE" check --sm 9.0 -j 4 "$TMP/bomb.whl"
check "check -j 4 too: ${ms} ms" test "$ms" -lt 20000 -a "$rc" = 2
# the same member once, twice over distinct copies: no overlap, read
python3 - "$TMP/two.whl" <<'PY'
import sys, zipfile
data = b"\x7fELF\x02\x01\x01" + bytes(1024 * 1024)
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("pkg/a.so", data)
    z.writestr("pkg/b.so", data)
PY
run "$PROBE" scan "$TMP/two.whl"
check "two distinct members of the same bytes: read, not called overlapping" bash -c "! grep -q overlap '$TMP/err'"
# many distinct members within their caps: the archive's total budget
# (written by hand as bomb.whl above, the member deflated once for all 40:
# zipfile deflating 600 MiB took most of this script's time)
python3 - "$TMP/many.whl" <<'PY'
import struct, sys, zlib
data = b"\x7fELF\x02\x01\x01" + bytes(15 * 1024 * 1024)  # 15 MiB each, below the ratio floor
c = zlib.compressobj(9, zlib.DEFLATED, -15)
comp = c.compress(data) + c.flush()
crc = zlib.crc32(data)
out, cd = b"", b""
for i in range(40):
    nm = b"pkg/lib%d.so" % i
    cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 8, 0, 0, crc, len(comp), len(data), len(nm), 0, 0, 0, 0, 0, len(out)) + nm
    out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 8, 0, 0, crc, len(comp), len(data), len(nm), 0) + nm + comp
end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 40, 40, len(cd), len(out), 0)
open(sys.argv[1], "wb").write(out + cd + end)
PY
echo "  (many.whl: $(stat -c %s "$TMP/many.whl") bytes, 40 distinct members of 15 MiB)"
measure "$PROBE" scan "$TMP/many.whl"
expect_rc 2 "40 members of 15 MiB in a $(($(stat -c %s "$TMP/many.whl") / 1024)) KB wheel: past its total budget, exit 2"
expect_grep "... the budget named" "$TMP/err" "passes what the archive may inflate in all (200 times its size plus 16 MiB"
check "... the first members were read, the rest refused" test "$(grep -c 'passes what the archive may inflate' "$TMP/err")" -ge 30

# ---- item 5: tar members get the same cap, per archive ----
python3 - "$TMP/big.tar" <<'PY'
import io, sys, tarfile
class Zeros(io.RawIOBase):  # an ELF's first bytes (wanted by its head), then zeros
    def __init__(self, n): self.left = n; self.head = b"\x7fELF\x02\x01\x01"
    def readable(self): return True
    def readinto(self, b):
        k = min(len(b), self.left); b[:k] = bytes(k)
        if self.head: h = self.head[:k]; b[:len(h)] = h; self.head = self.head[len(h):]
        self.left -= k; return k
with tarfile.open(sys.argv[1], "w") as t:
    i = tarfile.TarInfo("pkg/lib/k.cubin"); i.size = 600 * 1024 * 1024
    t.addfile(i, io.BufferedReader(Zeros(i.size)))
PY
zstd -q -19 --rm "$TMP/big.tar" -o "$TMP/big.tar.zst" 2>/dev/null || zstd -q --rm "$TMP/big.tar" -o "$TMP/big.tar.zst"
echo "  (big.tar.zst: $(stat -c %s "$TMP/big.tar.zst") bytes, one 600 MiB member)"
measure "$PROBE" scan "$TMP/big.tar.zst"
expect_rc 2 "a small .tar.zst holding a 600 MiB 'cubin': refused, exit 2"
expect_grep "... the archive's budget named" "$TMP/err" "passes what the archive may hold in all (200 times its size plus 16 MiB"
check "... peak memory ${kb} KB, under 200 MB (not the member's 600 MiB)" test "${kb:-999999999}" -lt 200000
# the same inside a .conda (a zip holding pkg-*.tar.zst, stored)
(cd "$TMP" && python3 -c '
import zipfile
with zipfile.ZipFile("pkg-1.0-0.conda", "w", zipfile.ZIP_STORED) as z:
    z.writestr("metadata.json", "{}")
    z.write("big.tar.zst", "pkg-pkg-1.0-0.tar.zst")')
measure "$PROBE" check --sm 9.0 -j 8 "$TMP/pkg-1.0-0.conda" "$TMP/pkg-1.0-0.conda" "$TMP/big.tar.zst" "$TMP/big.tar.zst"
expect_rc 2 "four at once under -j 8 (.conda, .tar.zst): refused, exit 2"
check "... peak memory ${kb} KB, under 400 MB" test "${kb:-999999999}" -lt 400000
finish
