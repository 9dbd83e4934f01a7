#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Safe to enable site-wide (issue 16, docs/site-wide.md):
# - a setuid program (owned by nobody, run by root, so AT_SECURE is set)
#   with libkimg preloaded through /etc/ld.so.preload, inside a throw-away
#   root entered with chroot: KIMG_LOG names a file the program could
#   write, and it stays untouched; KIMG_ON_ERROR changes nothing; no kimg
#   line on stderr. The same root without the setuid bit writes the log,
#   so the setup itself is shown to work.
# - KIMG_LOG a symbolic link, a file of another user, a file with a second
#   hard link: not written, stderr instead, one line saying why;
#   a new log file has mode 0600; /dev/stderr works.
# - the report holds no argument or environment value planted by the test.
# Root is needed for chown and chroot: CI runs as root, so there a
# non-root run is a failure; elsewhere it skips those parts, saying so.
. "$(dirname "$0")/../lib.bash" shim
CUBIN=$FIX/sm80.cubin
for f in "$CUBIN" "$PROGS/secure"; do
	[ -e "$f" ] || { echo "FAIL - $f missing (make fixtures shim-tests)"; exit 1; }
done
FAILS=("$PROGS/drv_dl" gpa lib "$CUBIN" axpy)
NOBODY=65534
is_root=0
[ "$(id -u)" = 0 ] && is_root=1
# needs_root WHAT: false (and a skip or, under CI, a failure) when not root
needs_root() {
	[ "$is_root" = 1 ] && return 0
	if [ "${CI:-}" = true ]; then fail "$1: needs root, and CI runs as root"; else
		echo "skip - $1: needs root (chown to uid $NOBODY, chroot); run the tests as root to cover it"; fi
	return 1
}

# ---- the log file ----
umask 022
under_kimg KIMG_LOG="$TMP/new.log" "${FAILS[@]}" >/dev/null 2>"$TMP/new.err"
check "a new log file gets the report" grep -q "returned 209" "$TMP/new.log"
check "... and has mode 0600 (umask 022)" test "$(stat -c %a "$TMP/new.log")" = 600
check "... nothing said on stderr but the summary" test "$(grep -vc 'failed to load' "$TMP/new.err")" = 0
echo "earlier line" >"$TMP/own.log"
under_kimg KIMG_LOG="$TMP/own.log" "${FAILS[@]}" >/dev/null 2>&1
check "an existing file of this user is appended to" \
	bash -c "head -1 '$TMP/own.log' | grep -qx 'earlier line' && grep -q 'returned 209' '$TMP/own.log'"

printf 'precious\n' >"$TMP/victim"
cp "$TMP/victim" "$TMP/victim.orig"
ln -s "$TMP/victim" "$TMP/link.log"
under_kimg KIMG_LOG="$TMP/link.log" "${FAILS[@]}" >/dev/null 2>"$TMP/link.err"
check "KIMG_LOG a symbolic link: its target is not written" cmp -s "$TMP/victim" "$TMP/victim.orig"
check "... stderr says why, once" test "$(grep -c "^kimg: warning: KIMG_LOG file $TMP/link.log is not used: it is a symbolic link; reporting to stderr$" "$TMP/link.err")" = 1
check "... and gets the report" grep -q "returned 209" "$TMP/link.err"
ln -s "$TMP/nothing-here" "$TMP/dangling.log"
under_kimg KIMG_LOG="$TMP/dangling.log" "${FAILS[@]}" >/dev/null 2>"$TMP/dangling.err"
check "a dangling symbolic link: its target is not created" test ! -e "$TMP/nothing-here"
check "... said why" grep -q "dangling.log is not used: it is a symbolic link" "$TMP/dangling.err"

cp "$TMP/victim" "$TMP/linked.log"
ln "$TMP/linked.log" "$TMP/second-name"
under_kimg KIMG_LOG="$TMP/linked.log" "${FAILS[@]}" >/dev/null 2>"$TMP/hard.err"
check "a file with another hard link is not written" cmp -s "$TMP/linked.log" "$TMP/victim.orig"
check "... said why" grep -q "linked.log is not used: it has other hard links" "$TMP/hard.err"

under_kimg KIMG_LOG=/dev/stderr "${FAILS[@]}" >/dev/null 2>"$TMP/stderr.err"
check "KIMG_LOG=/dev/stderr: the report on stderr, no warning" \
	bash -c "grep -q 'returned 209' '$TMP/stderr.err' && ! grep -q warning '$TMP/stderr.err'"

if needs_root "a file of another user"; then
	cp "$TMP/victim" "$TMP/other.log"
	chown "$NOBODY" "$TMP/other.log"
	under_kimg KIMG_LOG="$TMP/other.log" "${FAILS[@]}" >/dev/null 2>"$TMP/other.err"
	check "KIMG_LOG a file of another user (uid $NOBODY), writable by root: not written" \
		cmp -s "$TMP/other.log" "$TMP/victim.orig"
	check "... said why" grep -q "other.log is not used: it belongs to another user (uid $NOBODY); reporting to stderr" "$TMP/other.err"
fi

# ---- no secrets in a report ----
ARG_SECRET=kimg-planted-argument-5f1c9e
ENV_SECRET=kimg-planted-environment-b27d40
for fmt in json text; do
	under_kimg KIMG_FORMAT=$fmt KIMG_LOG="$TMP/secret.$fmt" KIMG_SECRET_NOT_AN_OPTION=$ENV_SECRET \
		API_TOKEN=$ENV_SECRET HOME="/home/$ENV_SECRET" "${FAILS[@]}" "$ARG_SECRET" >/dev/null 2>"$TMP/secret.$fmt.err"
	check "$fmt report written (the check below is not vacuous)" grep -q "209" "$TMP/secret.$fmt"
	check "$fmt report and stderr hold neither the planted argument nor the environment value" \
		bash -c "! grep -qF -e '$ARG_SECRET' -e '$ENV_SECRET' '$TMP/secret.$fmt' '$TMP/secret.$fmt.err'"
done
python3 - "$TMP/secret.json" <<'PY' && ok "JSON process.program is the program name alone" || fail "JSON process.program is the program name alone"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][0]
sys.exit(0 if r["process"]["program"] == "drv_dl" else 1)
PY

# ---- issue 22: every kind of KIMG_LOG target, its whole path, %r ----
plain_rc=$(env -u LD_PRELOAD LD_LIBRARY_PATH="$FAKE" "${FAILS[@]}" >/dev/null 2>&1; echo $?)
# kimg_t SECONDS VAR=VALUE... -- CMD: under kimg with a time limit (timeout
# cannot run a shell function); the status in $rc
kimg_t() { local t=$1; shift; timeout -k 2 "$t" env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" "$@"; rc=$?; }

# item 1: a FIFO of this user whose reader holds it open and never reads:
# the pipe is full, and a blocking write would stop the program for good
mkfifo "$TMP/stuck.fifo"
exec 8<>"$TMP/stuck.fifo"
python3 -c '
import os
os.set_blocking(8, False)
for chunk in (4096, 1):
    try:
        while True:
            os.write(8, b"x" * chunk)
    except BlockingIOError:
        pass'
t0=$(date +%s%N)
kimg_t 20 KIMG_LOG="$TMP/stuck.fifo" "${FAILS[@]}" >/dev/null 2>"$TMP/stuck.err"
ms=$((($(date +%s%N) - t0) / 1000000))
exec 8<&-
check "KIMG_LOG a full FIFO whose reader never reads: the program ends (exit $rc, its own $plain_rc), in ${ms} ms" \
	test "$rc" = "$plain_rc" -a "$ms" -lt 5000
check "... and kimg says at exit what it dropped" grep -Eq "^kimg: warning: [0-9]+ reports? not written to KIMG_LOG file $TMP/stuck.fifo: its reader was not reading" "$TMP/stuck.err"
# the same with the json format and more than one report (a second kernel)
mkfifo "$TMP/stuck2.fifo"
exec 8<>"$TMP/stuck2.fifo"
python3 -c '
import os
os.set_blocking(8, False)
try:
    while True:
        os.write(8, b"x")
except BlockingIOError:
    pass'
kimg_t 20 KIMG_FORMAT=json KIMG_LOG="$TMP/stuck2.fifo" "${FAILS[@]}" >/dev/null 2>"$TMP/stuck2.err"
exec 8<&-
check "... json format too: exit $rc, not held" test "$rc" != 124 -a "$rc" != 137
if needs_root "a FIFO of another user"; then
	f=$TMP/other.fifo
	mkfifo "$f"
	chown "$NOBODY" "$f"
	exec 9<>"$f" # the reader, there before the program starts
	kimg_t 20 KIMG_LOG="$f" "${FAILS[@]}" >/dev/null 2>"$TMP/other.fifo.err"
	python3 -c '
import os
os.set_blocking(9, False)
try:
    print(os.read(9, 1 << 20).decode(errors="replace"), end="")
except BlockingIOError:
    pass' >"$TMP/other.got"
	exec 9<&-
	check "KIMG_LOG a FIFO of another user (uid $NOBODY) with a reader, root's program: nothing reaches it" \
		test ! -s "$TMP/other.got"
	check "... said why: it belongs to another user" \
		grep -q "other.fifo is not used: it belongs to another user (uid $NOBODY); reporting to stderr" "$TMP/other.fifo.err"
	check "... the report is on stderr" grep -q "returned 209" "$TMP/other.fifo.err"
fi

# item 6: files of this user on pseudo file systems are controls, not
# logs. /proc/self is itself a link (refused for that); /proc/%p/ is the
# program's own directory reached without one: a report written to its
# comm would rename the program (the kernel takes the first 15 bytes).
for f in comm clear_refs attr/current; do
	[ -e "/proc/self/$f" ] || continue
	kimg_t 20 KIMG_LOG="/proc/%p/$f" "${FAILS[@]}" >/dev/null 2>"$TMP/pseudo.err"
	check "KIMG_LOG=/proc/%p/$f: not written, one line saying why (a pseudo file system, proc)" \
		test "$(grep -c "^kimg: warning: KIMG_LOG file /proc/[0-9]*/$f is not used: it is on a pseudo file system (proc), not an ordinary one; reporting to stderr$" "$TMP/pseudo.err")" = 1
	check "... the report is on stderr, whole" grep -q "^kimg:   fix: " "$TMP/pseudo.err"
done
kimg_t 20 KIMG_LOG=/proc/self/comm "${FAILS[@]}" >/dev/null 2>"$TMP/self.err"
check "KIMG_LOG=/proc/self/comm: not used (a link on the way), the report on stderr" \
	bash -c "grep -q 'KIMG_LOG file /proc/self/comm is not used' '$TMP/self.err' && grep -q 'returned 209' '$TMP/self.err'"

# item 7: a symbolic link anywhere on the path, not just at its end
mkdir -p "$TMP/real/sub"
ln -s "$TMP/real" "$TMP/dirlink"
ln -s real "$TMP/rellink"
for spec in "$TMP/dirlink/k.log" "$TMP/dirlink/sub/k.log" "$TMP/rellink/sub/k.log" "$TMP/real/../dirlink/k.log"; do
	kimg_t 20 KIMG_LOG="$spec" "${FAILS[@]}" >/dev/null 2>"$TMP/dirlink.err"
	check "KIMG_LOG=$spec (a directory link on the way): nothing created behind it" \
		test -z "$(find "$TMP/real" -name k.log)"
	check "... said why" grep -q "KIMG_LOG file $spec is not used: a directory on its path is a symbolic link" "$TMP/dirlink.err"
done
ABS_FAILS=("$(cd "$PROGS" && pwd -P)/drv_dl" "${FAILS[@]:1}")
(cd "$TMP" && kimg_t 20 KIMG_LOG=rellink/k.log "${ABS_FAILS[@]}" >/dev/null 2>"$TMP/dirlink.err")
check "a relative KIMG_LOG through a link: nothing created, said why" \
	bash -c "[ -z \"\$(find '$TMP/real' -name k.log)\" ] && grep -q 'rellink/k.log is not used: a directory on its path' '$TMP/dirlink.err'"
(cd "$TMP" && kimg_t 20 KIMG_LOG=real/sub/k.log "${ABS_FAILS[@]}" >/dev/null 2>&1)
check "a relative KIMG_LOG with no link on the way is written" grep -q "returned 209" "$TMP/real/sub/k.log"
if needs_root "a directory link planted by another user"; then
	mkdir -p "$TMP/chosen"
	ln -s "$TMP/chosen" "$TMP/planted"
	chown -h "$NOBODY" "$TMP/planted"
	kimg_t 20 KIMG_LOG="$TMP/planted/kimg-%p.log" "${FAILS[@]}" >/dev/null 2>"$TMP/planted.err"
	check "a directory link of uid $NOBODY: root's report is not created where it points" \
		test -z "$(ls -A "$TMP/chosen")"
fi

# item 8: %r is a number or nothing
mkdir -p "$TMP/r/a/logs"
for var in RANK OMPI_COMM_WORLD_RANK PMI_RANK SLURM_PROCID; do
	rm -f "$TMP/r/evil.log" "$TMP/r/a/logs/"*
	kimg_t 20 "$var=../../evil" KIMG_LOG="$TMP/r/a/logs/%r.log" "${FAILS[@]}" >/dev/null 2>"$TMP/rank.err"
	check "$var=../../evil with KIMG_LOG=.../logs/%r.log: nothing outside logs/" test ! -e "$TMP/r/evil.log"
	check "... the report is in logs/0.log, and a line says why" \
		bash -c "grep -q 'returned 209' '$TMP/r/a/logs/0.log' && grep -q '$var=../../evil: not a number' '$TMP/rank.err'"
done
kimg_t 20 RANK=3 KIMG_LOG="$TMP/r/a/logs/%r.log" "${FAILS[@]}" >/dev/null 2>&1
check "RANK=3: logs/3.log" grep -q "returned 209" "$TMP/r/a/logs/3.log"

# ---- setuid inside a throw-away root ----
if needs_root "setuid program under /etc/ld.so.preload (AT_SECURE)"; then
	SROOT=$BUILD/tests/secure-root
	rm -rf "$SROOT"
	mkdir -p "$SROOT/etc" "$SROOT/usr/bin" "$SROOT/usr/lib" "$SROOT/data" "$SROOT/tmp"
	chmod 1777 "$SROOT/tmp"
	# what the loader needs: the interpreter and every library ldd names
	# for the program, libkimg.so and the stand-in libcuda
	libs=$(ldd "$PROGS/secure" "$LIB" "$FAKE/libcuda.so.1" |
		awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u)
	for l in $libs; do mkdir -p "$SROOT$(dirname "$l")"; cp -L "$l" "$SROOT$l"; done
	libdir=$(dirname "$(ldd "$PROGS/secure" | awk '$1 == "libc.so.6" {print $3}')")
	# no LD_LIBRARY_PATH in secure mode: the driver sits in a system directory
	cp -L "$FAKE/libcuda.so.1" "$SROOT$libdir/libcuda.so.1"
	cp -L "$LIB" "$SROOT/usr/lib/libkimg.so"
	cp "$CUBIN" "$SROOT/data/sm80.cubin"
	echo /usr/lib/libkimg.so >"$SROOT/etc/ld.so.preload"
	cp "$PROGS/secure" "$SROOT/usr/bin/secure"
	cp "$PROGS/secure" "$SROOT/usr/bin/plain"
	chown "$NOBODY" "$SROOT/usr/bin/secure" "$SROOT/usr/bin/plain"
	chmod 4755 "$SROOT/usr/bin/secure"
	# log files the program (euid nobody) can write
	for f in setuid.log control.log; do : >"$SROOT/tmp/$f"; chown "$NOBODY" "$SROOT/tmp/$f"; chmod 0644 "$SROOT/tmp/$f"; done
	touch -d '2001-01-01 00:00' "$SROOT/tmp/setuid.log"
	before=$(stat -c '%s %Y %a %u' "$SROOT/tmp/setuid.log")
	CHROOT=$(command -v chroot || echo /usr/sbin/chroot)

	# control: the same program without the setuid bit, run as nobody
	env -i PATH=/usr/bin KIMG_LOG=/tmp/control.log KIMG_FORMAT=json \
		"$CHROOT" --userspec=$NOBODY:$NOBODY "$SROOT" /usr/bin/plain /data/sm80.cubin axpy \
		>"$TMP/control.out" 2>"$TMP/control.err"
	echo $? >"$TMP/control.rc"
	check "control (no setuid): not secure" grep -qx "secure: 0" "$TMP/control.out"
	check "control: kimg, preloaded by /etc/ld.so.preload, writes the report to KIMG_LOG" \
		grep -q '"code": *209' "$SROOT/tmp/control.log"
	[ -s "$SROOT/tmp/control.log" ] || sed 's/^/   | /' "$TMP/control.out" "$TMP/control.err" | head -20

	env -i PATH=/usr/bin KIMG_LOG=/tmp/setuid.log KIMG_FORMAT=json KIMG_ON_ERROR=exit:77 KIMG_VERBOSE=1 \
		KIMG_AUDIT=1 KIMG_FALLBACK=ptx "$CHROOT" "$SROOT" /usr/bin/secure /data/sm80.cubin axpy \
		>"$TMP/setuid.out" 2>"$TMP/setuid.err"
	rc=$?
	check "setuid program run by root: AT_SECURE is set, euid is $NOBODY" \
		bash -c "grep -qx 'secure: 1' '$TMP/setuid.out' && grep -qx 'euid: $NOBODY' '$TMP/setuid.out'"
	grep -qx 'secure: 1' "$TMP/setuid.out" || echo "   (setuid had no effect: a nosuid mount or no_new_privs?)"
	check "... the program got the driver's 209 and exited 1 (KIMG_ON_ERROR=exit:77 ignored)" \
		bash -c "grep -qx 'cuLibraryGetKernel: 209' '$TMP/setuid.out' && [ $rc = 1 ]"
	check "... KIMG_LOG file untouched (size, mtime, mode, owner: $before)" \
		test "$(stat -c '%s %Y %a %u' "$SROOT/tmp/setuid.log")" = "$before"
	check "... no other file written in the root's /tmp" \
		test "$(ls "$SROOT/tmp" | sort | tr '\n' ' ')" = "control.log setuid.log "
	check "... nothing from kimg on stderr (no banner, no report, no warning)" \
		bash -c "! grep -q kimg '$TMP/setuid.err'"
	rm -rf "$SROOT"
fi
finish
