#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU machine: the host-safety cases of tests/shim/hardening.sh against the
# real driver and cudart (static, as nvcc builds by default, and shared):
# two copies of libkimg.so in one process (issue 12 item 1: was a
# segfault / a doubled report), stderr a closed pipe (item 2: was SIGPIPE,
# 141), KIMG_LOG=/dev/full (item 4), fork with KIMG_LOG=...%p (item 6,
# tests/shim/progs/fork.c against the real libcuda). The setuid case needs
# no GPU and runs in CI (tests/shim/security.sh).
# The oracle is the program's own exit status without kimg.
# Usage: BUILD=build WORK=build/gpu-hardening bash tests/gpu/hardening_gpu.sh
# Prints "N passed, N failed"; exit 1 on a failure.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${BUILD:-build}
WORK=${WORK:-$BUILD/gpu-hardening}
LIB=$(cd "$BUILD" && pwd -P)/libkimg.so
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd -P)
# checks and totals: tests/lib.bash (finish fails a run of another number of checks)
. "$(dirname "$0")/../lib.bash"
EXPECTED_CHECKS=18 # 2 cudarts x (2 orders x 2 + closed pipe + full disk) + fork early 2 + one per process 2 + fork quiet 2
[ -f "$LIB" ] || { fail "$LIB missing (make)"; finish; }
# SASS of another major than the device's (nvidia-smi), so every load fails with 209
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -n 1 | tr -d ' ')
# no reading, no guess: sm_80 would not be "another major" on an 8.x GPU
case $cc in
[0-9]*.[0-9]*) ;;
*) fail "nvidia-smi gave no compute capability for GPU 0 ('$cc'): the wrong-arch builds need it"; finish ;;
esac
wrong=80; [ "${cc%%.*}" = 8 ] && wrong=90
for kind in static shared; do
	exe=$WORK/wrong_$kind
	flags=(); [ $kind = shared ] && flags=(-cudart shared)
	[ -x "$exe" ] || nvcc -gencode arch=compute_$wrong,code=sm_$wrong "${flags[@]}" -o "$exe" tests/gpu/src/wrong_arch.cu ||
		{ fail "build $exe"; continue; }
	env -u LD_PRELOAD "$exe" >/dev/null 2>&1; want=$?
	cp "$LIB" "$WORK/copy.so"
	for order in "$WORK/copy.so $LIB" "$LIB $WORK/copy.so"; do
		env LD_PRELOAD="$order" KIMG_LOG= "$exe" >"$WORK/two.out" 2>"$WORK/two.err"; rc=$?
		check "$kind: two copies (${order%% *} first): exit $rc = $want without kimg" test "$rc" = "$want"
		n=$(grep -c ' returned 209 ' "$WORK/two.err")
		check "$kind: two copies: one report ($n)" test "$n" = 1
		[ "$n" = 1 ] || grep -E '^kimg: ' "$WORK/two.err" | head -n 30 | sed 's/^/   /'
	done
	rc=$( (sleep 0.5; exec env LD_PRELOAD="$LIB" KIMG_LOG= "$exe" >/dev/null) 2>&1 | true; echo "${PIPESTATUS[0]}")
	check "$kind: stderr a closed pipe: exit $rc = $want (not 141)" test "$rc" = "$want"
	env LD_PRELOAD="$LIB" KIMG_LOG=/dev/full "$exe" >/dev/null 2>"$WORK/full.err"; rc=$?
	check "$kind: KIMG_LOG=/dev/full: exit $rc, warning and report on stderr" \
		bash -c "[ $rc = $want ] && grep -q 'cannot write KIMG_LOG file /dev/full' '$WORK/full.err' && grep -q ' returned 209 ' '$WORK/full.err'"
done
# fork against the real driver: the child's own report in its own %p log
gcc -std=gnu11 -D_GNU_SOURCE -Itests/shim/progs -o "$WORK/fork" tests/shim/progs/fork.c -ldl &&
	nvcc -cubin -gencode arch=compute_$wrong,code=sm_$wrong -o "$WORK/sm80.cubin" tests/fixtures/src/kern.cu || fail "build the fork program and the sm_$wrong cubin"
# A real driver does not let a forked child use its parent's CUDA context,
# so each process initialises CUDA after the fork ("early"); and a child
# that only exits after its parent's report must write nothing ("quiet").
rm -f "$WORK"/k-*.log
env LD_PRELOAD="$LIB" KIMG_FORMAT=json KIMG_LOG="$WORK/k-%p.log" "$WORK/fork" "$WORK/sm80.cubin" axpy early >"$WORK/fork.out" 2>&1
check "fork (before cuInit): both processes saw 209" test $? = 0
check "fork: two logs, one per process" test "$(ls "$WORK"/k-*.log 2>/dev/null | wc -l)" = 2
for p in $(sed -n 's/^\(parent\|child\): //p' "$WORK/fork.out"); do
	check "fork: k-$p.log holds one report of pid $p" \
		bash -c "[ \$(grep -c '\"pid\":$p' '$WORK/k-$p.log') = 1 ] && [ \$(wc -l <'$WORK/k-$p.log') = 1 ]"
done
rm -f "$WORK"/k-*.log
env LD_PRELOAD="$LIB" KIMG_FORMAT=json KIMG_LOG="$WORK/k-%p.log" "$WORK/fork" "$WORK/sm80.cubin" axpy quiet >"$WORK/fork.out" 2>&1
check "fork (child only exits): the parent saw 209" test $? = 0
check "fork: one log, the parent's; the child wrote nothing" test "$(ls "$WORK"/k-*.log 2>/dev/null | wc -l)" = 1
finish
