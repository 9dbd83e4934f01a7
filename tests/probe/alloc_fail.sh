#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One allocation failing, each in turn (tests/probe/src/fail_alloc.c fails
# the Nth malloc, calloc or realloc of the process, for every N the run
# makes): kimg-probe never dies of a signal or hangs, and a failure never
# makes a run look better than the unfailed one: its exit status is never
# lower (a tree listed short of entries once gave "0 files ... 0 errors"
# and exit 0). The oracle is the unfailed run of the same command and the
# exit statuses of docs/man/kimg-probe.1 (0 all run, 1 some cannot run, 2
# errors), and every failure which changes the output is said (exit 2):
# none ends with the unfailed run's status and a shorter output. A dpkg database of no packages
# (KIMG_DPKG_DIR) keeps the count of allocations the tree's own, not the
# machine's. In make mutants-map's coverage build it fails: gcov's own
# dump at exit dies when one of its allocations fails (the runs that do
# not fail one of those still record their coverage).
. "$(dirname "$0")/../lib.bash" probe

# Under qemu-user (tests/aarch64/run.sh leaves this script out: no
# aarch64 build of the preload) and in the sanitizer build (ASan's
# allocator is not glibc's, and an ASan-built preload cannot enter the
# probe), the failing runs cannot be made: there the unfailed runs of the
# same tree are checked alone (exit 0 or 1, nothing on stderr), so the
# script still checks something and says what it left out.
FAIL_ALLOC=$BUILD_DIR/tests/fail_alloc.so
sanitized=""
if [ "${SANITIZE:-}" = asan ] || [ "${BUILD##*/}" = asan ]; then
	sanitized=1
else
	need "$FAIL_ALLOC" "the allocation-failing preload (make test-programs)" || finish
fi

# A tree of each kind of input: an executable, a library, an archive, a
# thin archive and its members (../obj), a cubin, PTX, a fatbin, a wheel.
mkdir -p "$TMP/tree/lib" "$TMP/tree/obj" "$TMP/dpkg"
cp "$FX/multi_exe" "$FX/libtwo.a" "$FX/sm80.cubin" "$FX/compute80.ptx" "$FX/multi.fatbin" "$TMP/tree/lib/"
cp "$FX/tu_a.o" "$FX/tu_b.o" "$TMP/tree/obj/"
cp "$ROOT/tests/fixtures/committed/thin_two.a" "$TMP/tree/lib/"
python3 - "$FX" "$TMP/tree/lib/w-1.0-py3-none-any.whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[1] + "/sm80.cubin", "pkg/k.cubin")
    z.write(sys.argv[1] + "/multi.fatbin", "pkg/m.fatbin")
PY
export KIMG_DPKG_DIR=$TMP/dpkg

for args in "check --sm 9.0 -j 1" "scan --json -j 1"; do
	# shellcheck disable=SC2086
	"$PROBE" $args "$TMP/tree" >"$TMP/o0" 2>"$TMP/e0"
	rc0=$?
	if [ -n "$sanitized" ]; then
		[ "$rc0" -le 1 ] && [ ! -s "$TMP/e0" ] && ok "$args: the unfailed run under the sanitizers (exit $rc0, stderr empty)" ||
			fail "$args: the unfailed run under the sanitizers: exit $rc0" "$(head -c 600 "$TMP/e0")"
		skip_allowed "$args: one allocation failing" "not in the sanitizer build: ASan's allocator is not glibc's"
		continue
	fi
	rm -f "$TMP/count"
	# shellcheck disable=SC2086
	FAIL_ALLOC_COUNT=$TMP/count LD_PRELOAD=$FAIL_ALLOC "$PROBE" $args "$TMP/tree" >/dev/null 2>&1
	n=$(cat "$TMP/count" 2>/dev/null || echo 0)
	if [ "$rc0" -gt 1 ] || [ "$n" -lt 20 ]; then
		fail "$args: the unfailed run: exit $rc0, $n allocations" "$(head -c 300 "$TMP/e0")"
		continue
	fi
	crashed="" better="" unsaid="" differed=0
	for i in $(seq 1 "$n"); do
		# shellcheck disable=SC2086
		FAIL_ALLOC_AT=$i LD_PRELOAD=$FAIL_ALLOC timeout 30 "$PROBE" $args "$TMP/tree" >"$TMP/oi" 2>"$TMP/ei"
		rc=$?
		if [ "$rc" -gt 2 ]; then
			crashed="$crashed $i(exit $rc)"
		elif [ "$rc" -eq "$rc0" ] && cmp -s "$TMP/oi" "$TMP/o0" && cmp -s "$TMP/ei" "$TMP/e0"; then
			:
		elif [ "$rc" -lt "$rc0" ]; then
			better="$better $i(exit $rc)"
		elif [ "$rc" -ne 2 ]; then
			unsaid="$unsaid $i"
		else
			differed=$((differed + 1))
		fi
	done
	[ -z "$crashed" ] && ok "$args: no signal or hang with any one of $n allocations failing" ||
		fail "$args: allocation failures that killed or hung the probe:$crashed"
	[ -z "$better" ] && ok "$args: no failure ended with an exit below the unfailed run's $rc0 ($differed said with exit 2)" ||
		fail "$args: allocation failures that made the run look better than exit $rc0:$better"
	# a module's section or member, a directory's entry, a file's package
	# or its by-package row lost for want of memory is said: exit 2
	[ -z "$unsaid" ] && ok "$args: every failure that changed the output said so (exit 2)" ||
		fail "$args: failures that changed the output without saying so (exit $rc0), allocation:$unsaid"
done
finish
