#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layer boundary of libkimg.so, read from the objects (nm -u), not from
# the sources: the diagnosis layer (build/libkimgdiag.a, shim/diag/) calls
# neither dlsym/dlvsym nor any CUDA or NVML entry point itself, and of the
# hooks layer it names only the up-calls that shim/diag.h declares. Also: no
# file of shim/hook/ includes a header of shim/diag/ and the reverse, no
# include or call circle between the files of a layer (tests/scripts/
# cycles.py), and each check itself catches a planted violation.
. "$(dirname "$0")/../lib.bash"
cd "$ROOT"

DIAG=$BUILD/libkimgdiag.a
CORE=$BUILD/libkimgcore.a SYS=$BUILD/libkimgsys.a REPORT=$BUILD/libkimgreport.a
for f in "$DIAG" "$CORE" "$SYS" "$REPORT"; do
	require "$f" "make BUILD=$BUILD all"
done

# The up-calls: every kimg_driver_real / kimg_real_* function shim/diag.h declares.
upcalls=$(grep -oE '\b(kimg_driver_real|kimg_real_[A-Za-z_0-9]+)\(' shim/diag.h | tr -d '(' | sort -u)
[ -n "$upcalls" ] || fail "no up-call found in shim/diag.h"

undefined() { nm -u "$@" 2>/dev/null | awk 'NF == 2 || NF == 1 { print $NF }' | grep -v ':$' | sed 's/@.*//' | sort -u; }
defined() { nm --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u; }

# forbidden NAMES...: names (one a line, on stdin) that break the boundary
forbidden() {
	grep -E '^(dlsym|dlvsym|cu[A-Z][A-Za-z_0-9]*|cuda[A-Z][A-Za-z_0-9]*|__cuda[A-Za-z_0-9]*|nvml[A-Z][A-Za-z_0-9]*|kimg_hook_[a-z_0-9]*|kimg_w_[A-Za-z_0-9]*)$'
}
# foreign: kimg_* names used but defined neither in the given objects nor
# below (core, sys, report) nor among the up-calls
foreign() {
	comm -23 <(undefined "$@" | grep '^kimg_') <( { defined "$@" "$CORE" "$SYS" "$REPORT"; echo "$upcalls"; } | sort -u)
}

bad=$(undefined "$DIAG" | forbidden)
if [ -z "$bad" ]; then ok "shim/diag objects call no dlsym, dlvsym, cu*, cuda*, nvml* or hook symbol themselves"
else fail "shim/diag objects reference: $(echo $bad)"; fi

bad=$(foreign "$DIAG")
if [ -z "$bad" ]; then ok "shim/diag names of the hooks layer only the up-calls of shim/diag.h ($(echo $upcalls))"
else fail "shim/diag names hooks-layer symbols beyond shim/diag.h: $(echo $bad)"; fi

# the check catches a planted violation (an object calling dlsym and a hook
# table slot), compiled here: it is the test's own input, not a test program
tmp=$TMP
cat >"$tmp/bad.c" <<'C'
#include <dlfcn.h>
extern void *kimg_hook_real[];
void *bad(void);
void *bad(void) { return kimg_hook_real[0] ? kimg_hook_real[0] : dlsym(RTLD_NEXT, "cuInit"); }
C
gcc -c -o "$tmp/bad.o" "$tmp/bad.c" || fail "cannot compile the planted violation"
planted=$( { undefined "$tmp/bad.o" | forbidden; foreign "$tmp/bad.o"; } | sort -u | tr '\n' ' ')
if [ "$planted" = "dlsym kimg_hook_real " ]; then ok "a planted dlsym and hook-table reference are caught"
else fail "planted violation not caught as expected (got: $planted)"; fi

# the per-folder libraries: each needs only itself and the layers below
# (core; sys and report on the core; the diagnosis on all three), so an
# upward call fails here, as it fails to link in the unit tests
needs_above() { # LIB BELOW...: kimg_* names LIB uses that neither it nor BELOW define
	comm -23 <(undefined "$1" | grep '^kimg_') <(defined "$@" | sort -u)
}
for layer in "core:$CORE" "sys:$SYS $CORE" "report:$REPORT $CORE"; do
	name=${layer%%:*} libs=${layer#*:}
	bad=$(needs_above $libs)
	if [ -z "$bad" ]; then ok "$name library needs nothing above it"
	else fail "$name library calls upwards: $(echo $bad)"; fi
done
# libkimgapi.so (api/) is a front end on core, sys and report alone: none
# of the probe's or the shim's code is in it
api_objs=$(ls "$BUILD"/obj/api/*.o 2>/dev/null)
if [ -z "$api_objs" ]; then fail "objects of api/ missing under $BUILD/obj (make BUILD=$BUILD all)"
else
	bad=$(comm -23 <(undefined $api_objs | grep '^kimg_') <(defined $api_objs "$CORE" "$SYS" "$REPORT" | sort -u))
	if [ -z "$bad" ]; then ok "api/ needs only core, sys and report"
	else fail "api/ calls into the probe or the shim: $(echo $bad)"; fi
fi

# headers: neither layer includes the other's private headers
hook_h=$(cd shim/hook && ls *.h) diag_h=$(cd shim/diag && ls *.h)
leak=""
for h in $diag_h; do leak+=$(grep -lE "#include \"$h\"" shim/hook/*.[ch] 2>/dev/null | sed "s|$| includes $h|"); done
for h in $hook_h; do leak+=$(grep -lE "#include \"$h\"" shim/diag/*.[ch] 2>/dev/null | sed "s|$| includes $h|"); done
if [ -z "$leak" ]; then ok "shim/hook and shim/diag include only their own headers, shim/diag.h and shim/shim_pins.h"
else fail "cross-layer include: $leak"; fi

# no include circle among the units of shim/diag/, core/, sys/ and report/
# (a unit: x.c with x.h; a header without a .c counts as what it
# includes), and no call circle among the objects of shim/diag/, core/,
# sys/ and report/ (tests/scripts/cycles.py; the fatbin container walk that
# both input.c and input_elf.c need is input_walk.c's).
CYCLES="python3 tests/scripts/cycles.py"
if circle=$($CYCLES includes . shim/diag core sys report); then ok "no include circle among the units of shim/diag/, core/, sys/, report/"
else fail "include circle: $circle"; fi
diag_objs=$(ls "$BUILD"/obj/shim/diag/*.o "$BUILD"/obj/core/*.o "$BUILD"/obj/sys/*.o "$BUILD"/obj/report/*.o 2>/dev/null)
n_objs=$(echo "$diag_objs" | grep -c .)
if [ "$n_objs" -lt 20 ]; then fail "objects of shim/diag, core, sys, report missing under $BUILD/obj (make BUILD=$BUILD all)"
elif circle=$($CYCLES calls $diag_objs); then ok "no call circle among the $n_objs objects of shim/diag/, core/, sys/, report/"
else fail "call circle: $circle"; fi
# ... and the checks catch planted circles: diagnose.c including audit.h
# while audit.c includes diagnose.h (a copy of the tree's headers), and two
# objects calling each other
mkdir -p "$tmp/tree"
cp -r shim core sys report "$tmp/tree/"
echo '#include "audit.h"' >>"$tmp/tree/shim/diag/diagnose.c"
echo '#include "diagnose.h"' >>"$tmp/tree/shim/diag/audit.c"
: >"$tmp/tree/shim/diag/diagnose.h"
planted=$($CYCLES includes "$tmp/tree" shim/diag core sys report)
if [ "$planted" = "shim/diag/audit -> shim/diag/diagnose -> shim/diag/audit" ]; then ok "a planted include circle is caught ($planted)"
else fail "planted include circle not caught as expected (got: $planted)"; fi
printf 'void pong(int);\nvoid ping(int n);\nvoid ping(int n) { if (n) pong(n - 1); }\n' >"$tmp/ping.c"
printf 'void ping(int);\nvoid pong(int n);\nvoid pong(int n) { if (n) ping(n - 1); }\n' >"$tmp/pong.c"
gcc -c -o "$tmp/ping.o" "$tmp/ping.c" && gcc -c -o "$tmp/pong.o" "$tmp/pong.c" || fail "cannot compile the planted call circle"
planted=$($CYCLES calls "$tmp/ping.o" "$tmp/pong.o" "$BUILD/obj/shim/diag/stats.o")
if [ "$planted" = "$tmp/ping -> $tmp/pong -> $tmp/ping" ]; then ok "a planted call circle is caught"
else fail "planted call circle not caught as expected (got: $planted)"; fi
if grep -qE '#include "(audit|fallback)\.h"' shim/diag/diagnose.c; then fail "diagnose.c includes audit.h or fallback.h"
else ok "diagnose.c includes neither audit.h nor fallback.h (the counters are stats.c)"; fi

finish
