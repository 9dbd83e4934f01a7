#!/usr/bin/env bash
# Runs every built libFuzzer target ($BUILD/fuzz/fuzz_*) for $FUZZ_SECONDS
# each, seeded from the nvcc fixtures and tests/fixtures/committed. Builds
# nothing (make fuzz does). Exits non-zero if any target finds a crash;
# the input is left as $BUILD/fuzz/crash-<target>-* (commit a small copy
# under tests/fixtures/committed/ with a unit test expecting its error).
set -u
BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
FIX=${KIMG_FIXTURES:-$BUILD/fixtures}
status=0 ran=0

seed_dir() { # $1 target name -> directory of seed inputs
	local d="$BUILD/fuzz/seeds-$1"
	rm -rf "$d" && mkdir -p "$d"
	case $1 in
	fuzz_payload) cp "$FIX"/compress_*.fatbin "$d"/ 2>/dev/null ;;
	fuzz_fatbin) cp "$FIX"/*.fatbin "$FIX"/*.cubin "$FIX"/*.ptx "$d"/ 2>/dev/null ;;
	*) cp "$FIX"/* "$d"/ 2>/dev/null ;;
	esac
	if [ -d tests/fixtures/committed ]; then cp tests/fixtures/committed/* "$d"/ 2>/dev/null; fi
	echo "$d"
}

for bin in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$bin" ] && [ -f "$bin" ] || continue
	name=$(basename "$bin")
	corpus="$BUILD/fuzz/corpus-$name"
	mkdir -p "$corpus"
	seeds=$(seed_dir "$name")
	echo "== $name: ${FUZZ_SECONDS}s, seeds from $seeds"
	ran=$((ran + 1))
	if ! "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=4096 -max_len=2000000 \
		-print_final_stats=1 -artifact_prefix="$BUILD/fuzz/crash-$name-" "$corpus" "$seeds" \
		>"$BUILD/fuzz/$name.log" 2>&1; then
		echo "FAIL $name: see $BUILD/fuzz/$name.log"
		grep -E 'ERROR|SUMMARY|Test unit written' "$BUILD/fuzz/$name.log" | head -5
		status=1
	else
		grep -E 'stat::number_of_executed_units' "$BUILD/fuzz/$name.log" | sed "s/^/   /"
	fi
done
if [ "$ran" -eq 0 ]; then
	echo "no fuzz targets in $BUILD/fuzz (run make fuzz)"
	exit 1
fi
exit $status
