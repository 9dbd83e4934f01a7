#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The host process must not change because kimg is in it (issue 12, the
# shim's items): two copies of libkimg.so, a closed stderr pipe (SIGPIPE),
# a full disk under KIMG_LOG, fork() with KIMG_LOG=...%p, a KIMG_LOG that
# cannot be opened, a malformed KIMG_FALLBACK glob. The oracle is the
# program's own behaviour without kimg (exit status) and the files and
# lines the scripts can see, never libkimg's own account.
. "$(dirname "$0")/../lib.bash" shim
CUBIN=$FIX/sm80.cubin
[ -e "$CUBIN" ] || { echo "FAIL - $CUBIN missing (make fixtures)"; exit 1; }
[ -x "$PROGS/fork" ] || { echo "FAIL - $PROGS/fork missing (make shim-tests)"; exit 1; }
plain() { env -u LD_PRELOAD LD_LIBRARY_PATH="$FAKE" "$@"; }
count() { grep -c "returned 209" "$1"; }

# ---- item 1: two copies in one process ----
cp "$LIB" "$TMP/copy.so"
ABS_LIB=$(cd "$(dirname "$LIB")" && pwd -P)/$(basename "$LIB")
plain "$PROGS/drv_dl" default lib "$CUBIN" axpy >"$TMP/c0.out" 2>&1; want=$?
for order in "$TMP/copy.so $ABS_LIB" "$ABS_LIB $TMP/copy.so"; do
	for access in default dlsym gpa; do
		env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$order" KIMG_VERBOSE=1 "$PROGS/drv_dl" $access lib "$CUBIN" axpy \
			>"$TMP/c.out" 2>"$TMP/c.err"
		rc=$?
		check "two copies ($access, first ${order%% *}): exit $rc, the program's own ($want)" test "$rc" = "$want"
		check "... one report, not two" test "$(count "$TMP/c.err")" = 1
		check "... one summary line" test "$(grep -c 'failed to load' "$TMP/c.err")" = 1
	done
	check "the later copy says it stays inactive for ${order%% *} (KIMG_VERBOSE)" \
		grep -q "stays inactive: another copy of libkimg (${order%% *}) was loaded first" "$TMP/c.err"
done
# two copies with a shared runtime that loads the driver after registering
# its fatbins (cudart 13 [V]): the acting copy must not take the later
# copy's exported cuGetProcAddress for the driver's (resolve.c). It did,
# and then saw no driver call: on the H200 no report at all; here only the
# runtime hook's, without the driver's lines.
for order in "$TMP/copy.so $ABS_LIB" "$ABS_LIB $TMP/copy.so"; do
	env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$order" FAKE_CUDART_LAZY=1 KIMG_FORMAT=json KIMG_LOG="$TMP/lazy2.jsonl" \
		"$PROGS/rtsym" "$FIX/consttab_sm80.fatbin" >/dev/null 2>&1
	check "two copies, lazy shared runtime (first ${order%% *}): one report, from the driver call, with the driver's lines" \
		python3 -c 'import json, sys
R = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
sys.exit(not (len(R) == 1 and R[0]["call"] == "cuLibraryGetGlobal" and R[0].get("driver_log")))' "$TMP/lazy2.jsonl"
	rm -f "$TMP/lazy2.jsonl"
done
# kimg-run with another copy already in LD_PRELOAD
env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$TMP/copy.so" KIMG_LIB="$ABS_LIB" scripts/kimg-run \
	"$PROGS/drv_dl" gpa lib "$CUBIN" axpy >/dev/null 2>"$TMP/r.err"
check "kimg-run over a preloaded copy: one report" test "$(count "$TMP/r.err")" = 1

# ---- item 2: SIGPIPE from the report write ----
# stderr is a pipe whose reader is gone before the report is written
piped() { (sleep 0.3; exec "$@" >/dev/null) 2>&1 | true; echo "${PIPESTATUS[0]}"; }
a=$(piped env -u LD_PRELOAD LD_LIBRARY_PATH="$FAKE" "$PROGS/drv_dl" gpa lib "$CUBIN" axpy)
b=$(piped env LD_PRELOAD="$LIB" LD_LIBRARY_PATH="$FAKE" KIMG_LOG= "$PROGS/drv_dl" gpa lib "$CUBIN" axpy)
check "stderr a closed pipe: exit $b, as without kimg ($a), not 141 (SIGPIPE)" test "$a" = "$b"
b=$(piped env LD_PRELOAD="$LIB" LD_LIBRARY_PATH="$FAKE" KIMG_LOG= KIMG_VERBOSE=1 KIMG_FORMAT=json \
	"$PROGS/drv_dl" gpa lib "$CUBIN" axpy)
check "... with banner and JSON too: exit $b" test "$a" = "$b"
# a FIFO as KIMG_LOG whose reader leaves
mkfifo "$TMP/fifo"
(exec 0<"$TMP/fifo"; exec 0<&-) &
b=$(env LD_PRELOAD="$LIB" LD_LIBRARY_PATH="$FAKE" KIMG_LOG="$TMP/fifo" "$PROGS/drv_dl" gpa lib "$CUBIN" axpy \
	>/dev/null 2>"$TMP/fifo.err"; echo $?)
: <>"$TMP/fifo" # frees the reader if kimg never opened the FIFO
wait
check "KIMG_LOG a FIFO without reader: exit $b, the program's own ($a)" test "$a" = "$b"

# ---- item 4: KIMG_LOG on a full file system ----
under_kimg KIMG_LOG=/dev/full "$PROGS/drv_dl" gpa lib "$CUBIN" axpy >/dev/null 2>"$TMP/full.err"
check "full disk: one line naming the file and the reason" \
	test "$(grep -c '^kimg: warning: cannot write KIMG_LOG file /dev/full: No space left on device; reporting to stderr from now on$' "$TMP/full.err")" = 1
check "... the report itself reaches stderr, whole" grep -q "^kimg:   fix: " "$TMP/full.err"
check "... and the summary" grep -qx "kimg: 1 kernel in 1 module failed to load (see above)" "$TMP/full.err"

# ---- item 6: fork ----
rm -f "$TMP"/k-*.log
under_kimg KIMG_FORMAT=json KIMG_LOG="$TMP/k-%p.log" "$PROGS/fork" "$CUBIN" axpy >"$TMP/fork.out" 2>"$TMP/fork.err"
check "fork program: both processes saw 209" test $? = 0
ppid=$(sed -n 's/^parent: //p' "$TMP/fork.out")
for f in "$TMP"/k-*.log; do json_collect report-lines "$f" "fork: $f"; done
cpid=$(sed -n 's/^child: //p' "$TMP/fork.out")
check "fork: the parent's log is k-$ppid.log, one report of pid $ppid" python3 - "$TMP/k-$ppid.log" "$ppid" <<'PY'
import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(R) == 1 and R[0]["process"]["pid"] == int(sys.argv[2]) else 1)
PY
check "fork: the child has its own log k-$cpid.log with its own report (pid $cpid)" python3 - "$TMP/k-$cpid.log" "$cpid" <<'PY'
import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(R) == 1 and R[0]["process"]["pid"] == int(sys.argv[2]) else 1)
PY
check "fork: two logs, no other" test "$(ls "$TMP"/k-*.log | wc -l)" = 2
check "fork: one summary per process that failed" test "$(grep -c 'failed to load' "$TMP/fork.err")" = 2
# fork before cuInit, as a real driver requires (tests/gpu/hardening_gpu.sh
# runs this mode on the GPU): each process its own log and report
rm -f "$TMP"/k-*.log
under_kimg KIMG_FORMAT=json KIMG_LOG="$TMP/k-%p.log" "$PROGS/fork" "$CUBIN" axpy early >"$TMP/fork3.out" 2>/dev/null
check "fork before cuInit: both processes saw 209" test $? = 0
check "fork before cuInit: two logs" test "$(ls "$TMP"/k-*.log | wc -l)" = 2
for p in $(sed -n 's/^\(parent\|child\): //p' "$TMP/fork3.out"); do
	check "fork before cuInit: k-$p.log holds one report of pid $p" \
		test "$(grep -c "\"pid\":${p}[,}]" "$TMP/k-$p.log" 2>/dev/null)" = 1
done
# a child that fails in nothing prints no summary of its parent's failures
under_kimg KIMG_LOG= "$PROGS/fork" "$CUBIN" axpy quiet >/dev/null 2>"$TMP/fork2.err"
check "fork: a child that failed in nothing repeats no summary of its parent's" \
	test "$(grep -c 'failed to load' "$TMP/fork2.err")" = 1

# a fork while another thread is inside its report (holding kimg's report
# lock): the parent's log is a FIFO kept full, so that report's write
# blocks until the script drains it; the child must report, not hang
mkdir -p "$TMP/busy"
cat >"$TMP/busy/start" <<'SH'
#!/usr/bin/env bash
# $1 dir, then the command: the parent's %p log is a FIFO, held open and
# filled to the brim on fd 7 (a reader that never reads)
mkfifo "$1/k-$$.log" && exec 7<>"$1/k-$$.log" || exit 2
python3 -c '
import os
os.set_blocking(7, False)
for chunk in (4096, 1):
    try:
        while True:
            os.write(7, b"x" * chunk)
    except BlockingIOError:
        pass
' || exit 2
shift
exec "$@"
SH
under_kimg KIMG_FORMAT=json KIMG_LOG="$TMP/busy/k-%p.log" bash "$TMP/busy/start" "$TMP/busy" \
	"$PROGS/fork" "$CUBIN" axpy busy >"$TMP/busy.out" 2>"$TMP/busy.err" &
busy_pid=$!
for _ in $(seq 100); do grep -q '^child: ' "$TMP/busy.out" && break; sleep 0.1; done
child_done=$(grep -c '^child: ' "$TMP/busy.out")
fifo=$(find "$TMP/busy" -type p)
# drain: the parent's report goes on (since issue 22 kimg drops a report
# that the full FIFO would block rather than wait, so the program may be
# gone already and no writer ever comes: the drain is time-limited)
[ -n "$fifo" ] && timeout 10 cat "$fifo" >/dev/null 2>&1 &
forked=$(sed -n 's/^forked: //p' "$TMP/busy.out")
[ "$child_done" = 1 ] || { [ -n "$forked" ] && kill -9 "$forked" 2>/dev/null; }
wait "$busy_pid"; busy_rc=$?
check "fork during a report on another thread: the child reports instead of hanging" test "$child_done" = 1
check "... its own log holds its report" grep -q '"code": *209' "$TMP/busy/k-$forked.log"
check "... and the program exits 0" test "$busy_rc" = 0

# ---- item 15: KIMG_LOG that cannot be opened, a malformed glob ----
under_kimg KIMG_LOG="$TMP" "$PROGS/drv_dl" gpa lib "$CUBIN" axpy >/dev/null 2>"$TMP/dir.err"
check "KIMG_LOG a directory: path and reason" \
	grep -qx "kimg: warning: cannot open KIMG_LOG file $TMP: Is a directory; reporting to stderr" "$TMP/dir.err"
check "... the report on stderr" test "$(count "$TMP/dir.err")" = 1
under_kimg KIMG_LOG="$TMP/no/such/dir/k.log" "$PROGS/drv_dl" gpa lib "$CUBIN" axpy >/dev/null 2>"$TMP/nodir.err"
check "KIMG_LOG in a missing directory: path and reason" \
	grep -qx "kimg: warning: cannot open KIMG_LOG file $TMP/no/such/dir/k.log: No such file or directory; reporting to stderr" "$TMP/nodir.err"
under_kimg "KIMG_FALLBACK=force-ptx:[" "$PROGS/drv_dl" gpa lib "$CUBIN" axpy >/dev/null 2>"$TMP/glob.err"
check "KIMG_FALLBACK=force-ptx:[ is refused, saying why" \
	grep -q "^kimg: warning: KIMG_FALLBACK=force-ptx:\[: GLOB has an unclosed '\['" "$TMP/glob.err"
finish
