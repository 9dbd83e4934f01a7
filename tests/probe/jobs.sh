#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kimg-probe -j N (worker threads): the output of every thread count is the
# one-thread output byte for byte (stdout, stderr, exit status), on the
# fixtures tree and on a tree of many copies with problems mixed in
# (unreadable entries, a dangling link, garbage named explicitly, a zip);
# a file cut while a worker reads it is an error of that file alone; bad
# -j / KIMG_JOBS values are usage errors. The oracle is -j 1, the walk
# without threads (the code path of kimg before threads).
. "$(dirname "$0")/../lib.bash" probe
# LD_PRELOAD helpers that cut a file while the probe reads it (built by make)
SHRINK_ON_MAP=$BUILD_DIR/tests/shrink_on_map.so SHRINK_ON_THREAD=$BUILD_DIR/tests/shrink_on_thread.so

# ---- a tree of many copies, with problems in it ----
tree=$TMP/tree
mkdir -p "$tree"
mapfile -t small < <(find "$(cd "$FX" && pwd -P)" -maxdepth 1 -type f -size -400k | sort)
for i in $(seq -w 0 39); do
	mkdir -p "$tree/d$i/sub"
	# every small fixture, copied (one folder in four) or linked by its name
	if [ $((10#$i % 4)) -eq 0 ]; then cp -t "$tree/d$i" "${small[@]}"; else ln -s -t "$tree/d$i" "${small[@]}"; fi
	cp "$FX/multi_exe" "$tree/d$i/sub/exe$i"
	printf 'not device code %s\n' "$i" >"$tree/d$i/sub/notes.txt"
done
ln -s "$TMP/nowhere" "$tree/d07/dangling"          # listing problem: between files of d07
ln -s "$tree/d03" "$tree/d05/loop"                 # symlinked directory: not followed
python3 - "$tree/d11/pkg.whl" "$FX/multi_exe" "$FX/sm80.cubin" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[2], "pkg/lib/libm.so")
    z.write(sys.argv[3], "pkg/k.cubin")
PY
printf 'garbage' >"$TMP/garbage.bin"
n_files=$(find "$tree" \( -type f -o -type l \) | wc -l)
[ "$n_files" -gt 400 ] && ok "tree of many copies: $n_files files" || fail "tree too small: $n_files files"

# same_runs WHAT ARGS...: -j 1 is the oracle; -j 2, -j 4, -j 7 and KIMG_JOBS=3 must match it.
same_runs() {
	local what=$1; shift
	"$PROBE" "$@" -j 1 >"$TMP/o1" 2>"$TMP/e1"
	local rc1=$? diff=""
	case " $* " in *" --json "*) json_collect "$1" "$TMP/o1" "$what" ;; esac
	for j in 2 4 7; do
		"$PROBE" "$@" -j "$j" >"$TMP/oN" 2>"$TMP/eN"
		local rcN=$?
		cmp -s "$TMP/o1" "$TMP/oN" || diff="$diff stdout(-j $j)"
		cmp -s "$TMP/e1" "$TMP/eN" || diff="$diff stderr(-j $j)"
		[ "$rc1" -eq "$rcN" ] || diff="$diff exit(-j $j: $rcN, -j 1: $rc1)"
	done
	KIMG_JOBS=3 "$PROBE" "$@" >"$TMP/oN" 2>"$TMP/eN"
	cmp -s "$TMP/o1" "$TMP/oN" && cmp -s "$TMP/e1" "$TMP/eN" || diff="$diff KIMG_JOBS=3"
	# the access advice changes what is read ahead, never what is found
	KIMG_READAHEAD=kernel "$PROBE" "$@" -j 4 >"$TMP/oN" 2>"$TMP/eN"
	cmp -s "$TMP/o1" "$TMP/oN" && cmp -s "$TMP/e1" "$TMP/eN" || diff="$diff KIMG_READAHEAD=kernel"
	KIMG_READAHEAD=none "$PROBE" "$@" -j 3 >"$TMP/oN" 2>"$TMP/eN"
	cmp -s "$TMP/o1" "$TMP/oN" && cmp -s "$TMP/e1" "$TMP/eN" || diff="$diff KIMG_READAHEAD=none"
	if [ -z "$diff" ]; then ok "$what: -j 2/4/7, KIMG_JOBS=3, KIMG_READAHEAD=kernel/none identical to -j 1 ($(wc -c <"$TMP/o1") bytes, exit $rc1)"
	else fail "$what: differs from -j 1:$diff"; fi
}

for tgt in "$FX" "$tree $TMP/garbage.bin $TMP/missing $FX/sm80.cubin"; do
	name=$([ "$tgt" = "$FX" ] && echo fixtures || echo "many copies")
	# shellcheck disable=SC2086
	{
		same_runs "$name: scan" scan $tgt
		same_runs "$name: scan --json" scan --json $tgt
		same_runs "$name: scan --kernels --all" scan --kernels --all $tgt
		same_runs "$name: scan --json --kernels --deep" scan --json --kernels --deep $tgt
		same_runs "$name: check" check --sm 8.0,9.0 $tgt
		same_runs "$name: check --json" check --json --sm 8.0,12.0 $tgt
		same_runs "$name: check --json --all --strict" check --json --all --strict --sm 10.0 $tgt
	}
done

# The listers' back-pressure (probe/tree.c stops listing ahead at
# TREE_AHEAD_MAX entries): a probe built with a window of 8 waits for the
# visit in nearly every directory of the tree; its output is -j 1's.
AHEAD8=$BUILD/tests/kimg-probe-ahead8
if need "$AHEAD8" "make BUILD=$BUILD test builds it"; then
	for how in "scan --json" "check --sm 8.0,12.0"; do
		# shellcheck disable=SC2086
		"$PROBE" $how -j 1 "$tree" "$TMP/garbage.bin" >"$TMP/o1" 2>"$TMP/e1"
		rc1=$? diff=""
		for j in 2 4 7; do
			# shellcheck disable=SC2086
			"$AHEAD8" $how -j $j "$tree" "$TMP/garbage.bin" >"$TMP/oN" 2>"$TMP/eN"
			rcN=$?
			cmp -s "$TMP/o1" "$TMP/oN" && cmp -s "$TMP/e1" "$TMP/eN" && [ "$rc1" -eq "$rcN" ] || diff="$diff -j $j"
		done
		if [ -z "$diff" ]; then ok "$how: 8 entries listed ahead at most, -j 2/4/7 identical to -j 1 ($(wc -c <"$TMP/o1") bytes)"
		else fail "$how with 8 entries ahead at most differs from -j 1:$diff"; fi
	done
fi

# The oracle's own sanity: the many-copies JSON lists every file with
# device code once, in sorted walk order, and the problems are there.
run "$PROBE" scan --json -j 4 "$tree" "$TMP/garbage.bin"
expect_rc 2 "many copies: exit 2 (the garbage named on the command line)"
expect_json "many copies: 40 copies of multi_exe, in walk order" \
	"[f['path'] for f in d['files'] if f['path'].endswith('/sub/exe' + f['path'][-2:])] == ['$tree/d%02d/sub/exe%02d' % (i, i) for i in range(40)]"
expect_json "many copies: the zip's members read" \
	"sum(1 for f in d['files'] if f['path'].startswith('$tree/d11/pkg.whl!/')) == 2"
expect_json "many copies: the garbage is an error, the dangling link inside the tree is not (issue 22)" \
	"[f['path'] for f in d['files'] if f['error']] == ['$TMP/garbage.bin']"
expect_grep "many copies: the dangling link counted on stderr" "$TMP/err" "1 symbolic link inside the directories leads nowhere"
expect_json "many copies: paths sorted as the walk lists them" \
	"(lambda ps: len(ps) > 300 and ps == sorted(ps, key=lambda p: p.split('/')))([f['path'] for f in d['files'] if f['path'].startswith('$tree/') and '!/' not in f['path']])"

# ---- a file cut while a worker reads it ----
mkdir -p "$TMP/shrink"
if need "$SHRINK_ON_MAP" "make BUILD=$BUILD test-programs"; then
	cp "$FX/multi_exe" "$TMP/shrink/victim"
	for how in "scan" "check --json --sm 9.0"; do
		for j in 1 4; do
			cp "$FX/multi_exe" "$TMP/shrink/victim"
			# shellcheck disable=SC2086
			SHRINK_PATH="$TMP/shrink/victim" SHRINK_TO=4096 LD_PRELOAD="$SHRINK_ON_MAP" \
				"$PROBE" $how -j $j "$tree/d00" "$TMP/shrink/victim" "$tree/d01" >"$TMP/shrink/o$j" 2>"$TMP/shrink/e$j"
			echo "exit $?" >>"$TMP/shrink/o$j"
		done
		if cmp -s "$TMP/shrink/o1" "$TMP/shrink/o4" && cmp -s "$TMP/shrink/e1" "$TMP/shrink/e4" &&
			grep -qF "kimg-probe: $TMP/shrink/victim: file changed while it was read" "$TMP/shrink/e4" &&
			grep -qx "exit 2" "$TMP/shrink/o4"; then
			ok "$how: a file cut while a worker reads it: its error alone, output as -j 1"
		else
			fail "$how: cut file under -j 4 differs from -j 1 or lacks its error: $(tail -c 300 "$TMP/shrink/e4")"
		fi
	done
fi

# ---- a large CUDA library: identified on a helper beside its module walk ----
# From 32 MiB up, a CUDA library whose .rodata is searched for the release
# banner (NVRTC, nvJitLink) has its version read on a second thread while
# the worker walks its modules. multi_exe named libnvrtc.so.13 and
# padded with zeros past its ELF contents (nothing the reader looks at
# moves) is such a library; its modules are those of multi_exe itself.
mkdir -p "$TMP/biglib"
cp "$FX/multi_exe" "$TMP/biglib/libnvrtc.so.13"
truncate -s 40M "$TMP/biglib/libnvrtc.so.13"
same_runs "large CUDA library: check" check --sm 9.0,12.0 --driver 12.4 "$TMP/biglib"
same_runs "large CUDA library: check --json" check --json --sm 9.0 --driver 12.4 "$TMP/biglib"
"$PROBE" check --json --sm 9.0 -j 1 "$FX/multi_exe" >"$TMP/small.json" 2>/dev/null
run "$PROBE" check --json --sm 9.0 --driver 12.4 -j 4 "$TMP/biglib"
expect_json "large CUDA library: named NVRTC 13.x, with multi_exe's modules" \
	'(lambda f, small: (f["cuda_library"]["library"], f["cuda_library"]["cuda_version"], len(f["modules"])) ==
	  ("nvrtc", "13.x", len(small["files"][0]["modules"])) and len(f["modules"]) > 0)(d["files"][0],
	  __import__("json").load(open("'"$TMP/small.json"'")))'
if [ -f "$SHRINK_ON_MAP" ]; then
	for j in 1 4; do
		cp "$FX/multi_exe" "$TMP/biglib/libnvrtc.so.13"
		truncate -s 40M "$TMP/biglib/libnvrtc.so.13"
		SHRINK_PATH="$TMP/biglib/libnvrtc.so.13" SHRINK_TO=4096 LD_PRELOAD="$SHRINK_ON_MAP" \
			"$PROBE" check --json --sm 9.0 -j $j "$TMP/biglib" "$tree/d00" >"$TMP/shrink/b$j" 2>"$TMP/shrink/f$j"
		echo "exit $?" >>"$TMP/shrink/b$j"
	done
	if cmp -s "$TMP/shrink/b1" "$TMP/shrink/b4" && cmp -s "$TMP/shrink/f1" "$TMP/shrink/f4" &&
		grep -qF "kimg-probe: $TMP/biglib/libnvrtc.so.13: file changed while it was read" "$TMP/shrink/f4"; then
		ok "large CUDA library cut while both threads read it: its error alone, output as -j 1"
	else
		fail "cut large library under -j 4 differs from -j 1 or lacks its error: $(tail -c 300 "$TMP/shrink/f4")"
	fi
else
	fail "$SHRINK_ON_MAP missing: the cut large library is not checked"
fi

# ---- packages: the by-package table and CUDA libraries, as -j 1 ----
# Six pip packages with device code and a CUDA runtime by name; owners are
# looked up by the workers (one at a time) and counted in walk order.
sp=$TMP/site/lib/python3.12/site-packages
for i in 1 2 3 4 5 6; do
	mkdir -p "$sp/pkg$i/lib" "$sp/pkg$i-0.$i.dist-info"
	cp "$FX/sm80.cubin" "$sp/pkg$i/lib/k$i.cubin"
	cp "$FX/libtwo.so" "$sp/pkg$i/lib/libtwo$i.so"
	printf 'pkg%s/lib/k%s.cubin,,\npkg%s/lib/libtwo%s.so,,\n' $i $i $i $i >"$sp/pkg$i-0.$i.dist-info/RECORD"
	echo pip >"$sp/pkg$i-0.$i.dist-info/INSTALLER"
done
mkdir -p "$sp/nvidia/cuda_runtime/lib"
cp "$FX/libtwo.so" "$sp/nvidia/cuda_runtime/lib/libcudart.so.13"
cp "$FX/multi_exe" "$sp/unowned_exe"
same_runs "packages: check (by-package table)" check --sm 9.0,12.0 --driver 12.4 "$TMP/site"
same_runs "packages: check --json" check --json --sm 9.0 --driver 12.4 "$TMP/site"
run "$PROBE" check --sm 9.0 --driver 12.4 -j 4 "$TMP/site"
expect_grep "packages: the table names the packages" "$TMP/out" "pkg6"

# ---- one large input: its link-stub tests on helper threads ----
# 48 modules in one static archive (12 of them device-link stubs, 24 that
# cannot run on 12.0): above the 16 tests that make a worker spread them.
mkdir -p "$TMP/ar"
for i in $(seq -w 0 11); do
	cp "$FX/tu_a.o" "$TMP/ar/a$i.o"
	cp "$FX/tu_b.o" "$TMP/ar/b$i.o"
	cp "$FX/sm80_exe" "$TMP/ar/x$i.o"
done
(cd "$TMP/ar" && ar rc many.a a*.o b*.o x*.o)
run "$PROBE" check --json --sm 12.0 -j 1 "$TMP/ar/many.a"
expect_json "many-module archive: 48 modules, 12 stubs, 24 that cannot run (-j 1)" \
	"(len(d['files'][0]['modules']), sum(m['link_stub'] for m in d['files'][0]['modules']), sum(any(v['outcome'] == 'cannot_run' for v in m['verdicts']) for m in d['files'][0]['modules'])) == (48, 12, 24)"
same_runs "many-module archive: check" check --sm 12.0 "$TMP/ar/many.a" "$FX/sm80.cubin"
same_runs "many-module archive: check --json" check --json --sm 12.0,9.0 "$TMP/ar/many.a" "$FX/sm80.cubin"

# The archive is cut after its headers were read, just before the first
# helper starts (thread 4 under -j 4: the package-index thread and one
# worker per input first, pool.c starting workers as jobs come; no tree
# listers, the inputs are files): the helpers meet
# the change, and the archive ends as "file changed", the next file is read.
if need "$SHRINK_ON_THREAD" "make BUILD=$BUILD test-programs"; then
	for how in "check --sm 12.0" "check --json --sm 12.0"; do
		cp "$TMP/ar/many.a" "$TMP/ar/victim.a"
		# detect_leaks=0 (make asan-test): the SIGBUS guard leaves the frames
		# of the abandoned input by siglongjmp (sys/file.h), and what they had
		# allocated with them, once per file changed under the walk
		# shellcheck disable=SC2086
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		SHRINK_PATH="$TMP/ar/victim.a" SHRINK_AT_THREAD=4 SHRINK_TO=4096 LD_PRELOAD="$SHRINK_ON_THREAD" \
			run "$PROBE" $how -j 4 "$TMP/ar/victim.a" "$FX/sm120.cubin"
		expect_rc 2 "$how: archive cut under its helpers"
		expect_grep "$how: the archive named" "$TMP/err" "kimg-probe: $TMP/ar/victim.a: file changed while it was read"
		[ "$(stat -c %s "$TMP/ar/victim.a")" -eq 4096 ] && ok "$how: the cut happened" || fail "$how: the file was not cut"
		case $how in
		*--json*) expect_json "$how: JSON valid, the archive an error, the next file read" \
			"d['files'][0]['error'] == 'file changed while it was read' and d['files'][-1]['path'].endswith('sm120.cubin') and d['files'][-1]['error'] is None" ;;
		*) expect_grep "$how: the next file is read" "$TMP/out" "$FX/sm120.cubin: 1 module" ;;
		esac
	done
fi

# ---- bad thread counts ----
for arg in "-j 0" "-j x" "--jobs=300" "-j -3" "-j1x"; do
	# shellcheck disable=SC2086
	run "$PROBE" scan $arg "$FX/sm80.cubin"
	expect_rc 2 "scan $arg refused"
	expect_grep "scan $arg: the message" "$TMP/err" "-j takes a number of threads from 1 to 256"
done
run "$PROBE" check --sm 9.0 "$FX/sm80.cubin" -j
expect_rc 2 "check with -j last, no N"
expect_grep "check -j without N: the message" "$TMP/err" "-j needs a number of threads"
for v in 0 many -2; do
	KIMG_JOBS=$v run "$PROBE" scan "$FX/sm80.cubin"
	expect_rc 2 "KIMG_JOBS=$v refused"
	expect_grep "KIMG_JOBS=$v: the message" "$TMP/err" "KIMG_JOBS='$v': expected a number of threads"
done
KIMG_READAHEAD=always run "$PROBE" scan "$FX/sm80.cubin"
expect_rc 2 "KIMG_READAHEAD=always refused"
expect_grep "KIMG_READAHEAD=always: the message" "$TMP/err" "KIMG_READAHEAD='always': expected a size read ahead of each header (default none), 'none' or 'kernel'"
run "$PROBE" scan --jobs=3 "$FX/sm80.cubin"
expect_rc 0 "scan --jobs=3 accepted"
run "$PROBE" scan -j3 "$FX/sm80.cubin"
expect_rc 0 "scan -j3 accepted"

# No thread to be had (probe/thread.c runs the work on the caller): with
# pthread_create refused from the first call, or after 1 or 3 granted,
# -j 4 still prints -j 1's output. The log shows the refusals happened.
NO_THREADS=$BUILD/tests/no_threads.so
mkdir -p "$TMP/nothreads-lib" # a helper beside the module walk (probe_input_beside), as above: NVRTC, whose .rodata is searched for the release banner
cp "$FX/multi_exe" "$TMP/nothreads-lib/libnvrtc.so.13"
truncate -s 40M "$TMP/nothreads-lib/libnvrtc.so.13"
if [ -n "${KIMG_QEMU_USER:-}" ]; then
	# tests/aarch64/run.sh: the probe runs under qemu-user there, and the
	# host's no_threads.so cannot be preloaded into an aarch64 program.
	skip_allowed "no threads" "not under $KIMG_QEMU_USER: no aarch64 build of tests/probe/src/no_threads.c"
elif [ "${SANITIZE:-}" = asan ] || [ "${BUILD##*/}" = asan ]; then
	# make asan-test: no_threads.so is built with ASan too, and preloading
	# it into the probe (ASan linked statically) stops at once with "Your
	# application is linked against incompatible ASan runtimes".
	skip_allowed "no threads" "not in the sanitizer build: an ASan-built preload cannot enter an executable with its own static ASan runtime"
elif [ -f "$NO_THREADS" ]; then
	for what in "scan --json --kernels --deep: many copies" "check --sm 8.0,9.0: many copies and fixtures" \
		"check --json --all --strict --sm 10.0: fixtures" "check --sm 9.0,12.0: a large CUDA library"; do
		grants="0 1 3"
		case $what in
		scan*) args="scan --json --kernels --deep $tree" ;;
		"check --sm 8.0"*) args="check --sm 8.0,9.0 $tree $FX" ;;
		# one file: two threads (the package index, the helper beside its
		# module walk), no worker (pool.c runs a lone job on the submitter)
		*library) args="check --sm 9.0,12.0 --driver 12.4 $TMP/nothreads-lib" grants="0 1" ;;
		*) args="check --json --all --strict --sm 10.0 $FX" ;;
		esac
		# shellcheck disable=SC2086
		"$PROBE" $args -j 1 >"$TMP/o1" 2>"$TMP/e1"
		rc1=$? diff=""
		for g in $grants; do
			rm -f "$TMP/refused"
			# shellcheck disable=SC2086
			NO_THREADS_GRANT=$g NO_THREADS_LOG=$TMP/refused LD_PRELOAD=$NO_THREADS "$PROBE" $args -j 4 >"$TMP/oN" 2>"$TMP/eN"
			rcN=$?
			cmp -s "$TMP/o1" "$TMP/oN" && cmp -s "$TMP/e1" "$TMP/eN" && [ "$rc1" -eq "$rcN" ] || diff="$diff grant=$g"
			[ -s "$TMP/refused" ] || diff="$diff grant=$g(nothing refused)"
		done
		[ -z "$diff" ] && ok "no threads: $what: -j 4 with threads refused after ${grants// //} identical to -j 1 ($(wc -c <"$TMP/o1") bytes, exit $rc1)" ||
			fail "no threads: $what: differs from -j 1:$diff"
	done
	# One input starts no idle thread (issue 27): every create refused and
	# logged, the count is the threads the run asked for. scan of one file:
	# none; of a directory of one file: none (no lister, no worker); check
	# of one large CUDA library: the package index and the helper beside
	# its module walk, no worker.
	for case in "scan --json -j 4 $FX/multi_exe:0" "scan -j 4 $TMP/nothreads-lib:0" \
		"check --sm 9.0 -j 4 $TMP/nothreads-lib/libnvrtc.so.13:2"; do
		rm -f "$TMP/refused"
		# shellcheck disable=SC2086
		NO_THREADS_GRANT=0 NO_THREADS_LOG=$TMP/refused LD_PRELOAD=$NO_THREADS "$PROBE" ${case%:*} >/dev/null 2>&1
		asked=$( [ -f "$TMP/refused" ] && wc -l <"$TMP/refused" || echo 0)
		expect_eq "one input: ${case%:*} asks for ${case##*:} threads" "${case##*:}" "$((asked))"
	done
else
	fail "$NO_THREADS missing (make test builds it)"
fi

# "Where it may run" of one zip whose members fail on different GPUs: the
# member files are one job, whose placement rows must add up, not keep the
# last member's (before issue 30 -j 4 listed 12.1 as running what -j 1
# said it does not).
python3 - "$TMP/members.zip" "$FX/sm80_exe" "$FX/libdispatch.so" "$FX/multi_exe" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for f in sys.argv[2:]:
        z.write(f, os.path.basename(f))
PY
"$PROBE" check --sm all -j 1 "$TMP/members.zip" >"$TMP/p1" 2>&1
rc1=$?
"$PROBE" check --sm all -j 4 "$TMP/members.zip" >"$TMP/p4" 2>&1
rc4=$?
if [ "$rc1" = 1 ] && [ "$rc4" = 1 ] && cmp -s "$TMP/p1" "$TMP/p4" && grep -q "does not run on 12.1" "$TMP/p1"; then
	ok "check --sm all: a zip's members add up in 'Where it may run', -j 4 as -j 1 (exit 1)"
else
	fail "check --sm all over a zip's members: -j 4 (exit $rc4) differs from -j 1 (exit $rc1)" "$(diff "$TMP/p1" "$TMP/p4" | head -5)"
fi

finish
