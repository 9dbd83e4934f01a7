#!/usr/bin/env bash
# The layer boundary of libkimg.so, read from the objects (nm -u), not from
# the sources: the diagnosis layer (build/libkimgdiag.a, shim/diag/) calls
# neither dlsym/dlvsym nor any CUDA or NVML entry point itself, and of the
# hooks layer it names only the up-calls that shim/diag.h declares. Also: no
# file of shim/hook/ includes a header of shim/diag/ and the reverse, and the
# check itself catches a planted violation.
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$ROOT"
n_ok=0 n_fail=0
ok() { n_ok=$((n_ok + 1)); echo "ok   $*"; }
fail() { n_fail=$((n_fail + 1)); echo "FAIL $*"; }

DIAG=$BUILD/libkimgdiag.a
CORE=$BUILD/libkimgcore.a SYS=$BUILD/libkimgsys.a REPORT=$BUILD/libkimgreport.a
for f in "$DIAG" "$CORE" "$SYS" "$REPORT"; do
	[ -f "$f" ] || { echo "FAIL $f missing (make BUILD=$BUILD all)"; exit 1; }
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

# the check catches a planted violation (an object calling dlsym and a hook table slot)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
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

# headers: neither layer includes the other's private headers
hook_h=$(cd shim/hook && ls *.h) diag_h=$(cd shim/diag && ls *.h)
leak=""
for h in $diag_h; do leak+=$(grep -lE "#include \"$h\"" shim/hook/*.[ch] 2>/dev/null | sed "s|$| includes $h|"); done
for h in $hook_h; do leak+=$(grep -lE "#include \"$h\"" shim/diag/*.[ch] 2>/dev/null | sed "s|$| includes $h|"); done
if [ -z "$leak" ]; then ok "shim/hook and shim/diag include only their own headers, shim/diag.h and shim/shim_pins.h"
else fail "cross-layer include: $leak"; fi

# no include circle among the units of shim/diag/ (a unit: x.c with x.h;
# diag_internal.h is the layer's shared declarations, not a unit)
circle=$(python3 - shim/diag <<'PY'
import os, re, sys
d = sys.argv[1]
units = {f[:-2] for f in os.listdir(d) if f.endswith(".c")}
deps = {u: set() for u in units}
for f in os.listdir(d):
    u = f[:-2]
    if u not in units or not f.endswith((".c", ".h")):
        continue
    for inc in re.findall(r'#include "([a-z_]+)\.h"', open(os.path.join(d, f)).read()):
        if inc in units and inc != u:
            deps[u].add(inc)
state, path = {}, []
def visit(u):
    state[u] = 1; path.append(u)
    for v in sorted(deps[u]):
        if state.get(v) == 1:
            return path[path.index(v):] + [v]
        if v not in state:
            c = visit(v)
            if c: return c
    state[u] = 2; path.pop()
    return None
for u in sorted(units):
    if u not in state:
        c = visit(u)
        if c:
            print(" -> ".join(c)); break
PY
)
if [ -z "$circle" ]; then ok "no include circle among the units of shim/diag/"
else fail "include circle in shim/diag/: $circle"; fi
if grep -qE '#include "(audit|fallback)\.h"' shim/diag/diagnose.c; then fail "diagnose.c includes audit.h or fallback.h"
else ok "diagnose.c includes neither audit.h nor fallback.h (the counters are stats.c)"; fi

echo "$n_ok passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
