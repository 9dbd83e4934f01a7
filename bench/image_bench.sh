#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make bench, part 4: kimg-probe check of a generated container image (an OCI
# layout of at least 2 GB of layer content: this machine's CUDA libraries, one
# half in a gzip layer, the other in a zstd layer, and a third layer whiting
# one of them out), against its baseline measured in the same run:
# decompressing every layer once (gzip -dc, zstd -dc to /dev/null).
# Goals: check <= 1.2x the baseline; peak RSS <= 256 MiB (/usr/bin/time -v).
# The GPU part of the issue (an image of a whole Python environment against
# `native`) needs the GPU machine: tests/gpu/image_gpu.sh.
set -u
PROBE=${1:-build/kimg-probe}
src=${KIMG_BENCH_IMAGE_LIBS:-${CUDA_HOME:-/usr/local/cuda}/lib64}
for t in gzip zstd sha256sum /usr/bin/time; do command -v $t >/dev/null || { echo "image bench: NOT MEASURED ($t missing)"; exit 2; }; done
work=$(mktemp -d "${TMPDIR:-/tmp}/kimg-image-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mapfile -t libs < <(cd "$src" && ls -S lib*.so.* 2>/dev/null | while read -r f; do [ -L "$f" ] || echo "$f"; done)
[ ${#libs[@]} -ge 2 ] || { echo "image bench: NOT MEASURED (no libraries in $src)"; exit 2; }
half=() other=()
for i in "${!libs[@]}"; do if [ $((i % 2)) -eq 0 ]; then half+=("${libs[$i]}"); else other+=("${libs[$i]}"); fi; done
mkdir -p "$work/oci/blobs/sha256" "$work/l1/usr/local/cuda/lib64" "$work/l3/usr/local/cuda/lib64"
blob() { local h; h=$(sha256sum "$1" | cut -d' ' -f1); mv "$1" "$work/oci/blobs/sha256/$h"; echo "$h"; }
tar -C "$src" --transform 's,^,usr/local/cuda/lib64/,' -cf - "${half[@]}" | gzip -1 >"$work/b1"
tar -C "$src" --transform 's,^,usr/local/cuda/lib64/,' -cf - "${other[@]}" | zstd -q -1 -T1 >"$work/b2"
: >"$work/l3/usr/local/cuda/lib64/.wh.${other[0]}"
tar -C "$work/l3" -cf - usr | gzip -1 >"$work/b3"
raw=$(( $(cd "$src" && du -cbL "${libs[@]}" | tail -1 | cut -f1) ))
h1=$(blob "$work/b1") h2=$(blob "$work/b2") h3=$(blob "$work/b3")
sz() { stat -c %s "$work/oci/blobs/sha256/$1"; }
printf '{"architecture":"amd64","os":"linux","config":{"Env":["CUDA_VERSION=13.0.0"]},"rootfs":{"type":"layers","diff_ids":[]}}' >"$work/cfg"
hc=$(blob "$work/cfg")
printf '{"schemaVersion":2,"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s},{"mediaType":"application/vnd.oci.image.layer.v1.tar+zstd","digest":"sha256:%s","size":%s},{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
	"$hc" "$(sz "$hc")" "$h1" "$(sz "$h1")" "$h2" "$(sz "$h2")" "$h3" "$(sz "$h3")" >"$work/man"
hm=$(blob "$work/man")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s}]}' "$hm" "$(sz "$hm")" >"$work/oci/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$work/oci/oci-layout"
blobs=$(( $(sz "$h1") + $(sz "$h2") + $(sz "$h3") ))
b=$work/oci/blobs/sha256
cat "$b/$h1" "$b/$h2" >/dev/null # both runs start from the page cache
t0=$(date +%s.%N)
/usr/bin/time -f "%U %S" -o "$work/base.cpu" bash -c 'gzip -dc "$1" >/dev/null && zstd -q -dc "$2" >/dev/null && gzip -dc "$3" >/dev/null' \
	_ "$b/$h1" "$b/$h2" "$b/$h3"
t1=$(date +%s.%N)
/usr/bin/time -v "$PROBE" check --sm 9.0 -j 1 "$work/oci" >"$work/out" 2>"$work/err"
rc=$?
t2=$(date +%s.%N)
# For the record, not a goal: the same decompression with zlib's inflate (what
# libarchive uses; gzip(1) has its own, slower one) and libzstd, after the
# check. kimg-probe inflates each layer that holds a file to judge twice
# (pass one: headers, pass two: the surviving files; probe/image.c says why
# not once), without gzip's CRC-32 (the blob's SHA-256 is checked instead).
t3=$(date +%s.%N)
python3 -c 'import sys, zlib
for p in sys.argv[1:]:
    d = zlib.decompressobj(31)
    with open(p, "rb", buffering=0) as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            d.decompress(b)' "$b/$h1" "$b/$h3" && zstd -q -dc "$b/$h2" >/dev/null
t4=$(date +%s.%N)
base=$(echo "$t1 - $t0" | bc) check=$(echo "$t2 - $t1" | bc) zbase=$(echo "$t4 - $t3" | bc)
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/err")
ratio=$(echo "scale=2; $check / $base" | bc)
# CPU time (user + system), for the record: on a shared machine the wall
# clock of either side stretches with the others' load, its CPU time less.
base_cpu=$(awk '{ print $1 + $2 }' "$work/base.cpu")
check_cpu=$(awk -F': ' '/User time|System time/ { t += $2 } END { print t }' "$work/err")
echo "image: ${#libs[@]} libraries, $raw bytes of layer content, $blobs bytes of blobs (gzip $(sz "$h1"), zstd $(sz "$h2"), whiteout layer $(sz "$h3"))"
echo "image: decompress every layer once ${base}s; kimg-probe check -j 1 ${check}s (exit $rc); ratio ${ratio}x (goal <= 1.2x); peak RSS $((rss / 1024)) MiB (goal <= 256 MiB)"
echo "image (for the record): CPU time: decompress ${base_cpu}s, check ${check_cpu}s, ratio $(echo "scale=2; $check_cpu / $base_cpu" | bc)x; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "image (for the record): decompress with zlib and libzstd once ${zbase}s; check / that $(echo "scale=2; $check / $zbase" | bc)x"
grep -E "^[0-9]+ files?," "$work/out" || tail -3 "$work/err"
ok=0
[ "$(echo "$ratio <= 1.2" | bc)" = 1 ] && echo "image ratio: PASS" || { echo "image ratio: FAIL"; ok=1; }
[ "$rss" -le $((256 * 1024)) ] && echo "image RSS: PASS" || { echo "image RSS: FAIL"; ok=1; }
echo "image on the GPU machine (a whole Python environment against native): not part of make bench; tests/gpu/image_gpu.sh runs it there"
exit $ok
