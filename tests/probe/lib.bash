# Shared helpers for the kimg-probe integration tests (sourced, not run:
# tests/run.sh runs only *.sh). Each check prints "ok - what" or
# "FAIL - what"; finish() exits non-zero if any check failed.
set -u
BUILD=${BUILD:-build}
PROBE=${PROBE:-$BUILD/kimg-probe}
FX=${KIMG_FIXTURES:-$BUILD/fixtures}
fails=0 checks=0 skips=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kimg-probe-test.XXXXXX")
trap 'chmod -R u+rwx "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT

[ -x "$PROBE" ] || { echo "FAIL - $PROBE not built"; exit 1; }
[ -f "$FX/multi.fatbin" ] || { echo "FAIL - fixtures missing in $FX (make fixtures)"; exit 1; }

ok() { checks=$((checks + 1)); echo "ok - $1"; }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL - $1"; }
# missing WHAT WHY: a prerequisite is absent: a failure under CI=true (the
# CI machine has everything scripts/setup-debian.sh installs), else a
# counted skip.
missing() {
	if [ "${CI:-}" = true ]; then bad "prerequisite missing under CI: $1 ($2)"; else
		skips=$((skips + 1)); echo "SKIP - $1 missing: $2"; fi
}
# skip_allowed WHAT WHY: a case this machine cannot exercise by its nature
# (not a missing package); printed with the reason, counted, not a failure.
skip_allowed() { skips=$((skips + 1)); echo "SKIP (allowed) - $1: $2"; }

# run NAME CMD...: runs CMD with stdout in $TMP/out, stderr in $TMP/err, status in $rc
run() {
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# expect_rc WANT WHAT
expect_rc() {
	if [ "$rc" -eq "$1" ]; then ok "$2: exit $1"; else bad "$2: exit $rc, want $1 (stderr: $(head -c 300 "$TMP/err"))"; fi
}

# expect_json WHAT PYTHON-EXPR: the expression sees the parsed stdout as `d`
# and must be true; on failure its value is printed.
expect_json() {
	local what=$1 expr=$2 res
	if res=$(python3 - "$TMP/out" "$expr" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
expr = sys.argv[2]
v = eval("(" + expr + ")")
if v is not True:
    print("expression was", repr(v))
    sys.exit(1)
PY
	); then ok "$what"; else bad "$what: $expr ($res)"; fi
}

# expect_grep WHAT FILE PATTERN (fixed string)
expect_grep() {
	if grep -qF -- "$3" "$2"; then ok "$1"; else bad "$1: '$3' not in $(basename "$2"): $(head -c 400 "$2")"; fi
}

finish() {
	echo "$((checks - fails)) of $checks checks passed, $skips skipped"
	if [ "$checks" -eq 0 ]; then echo "FAIL - no check ran"; return 1; fi
	[ "$fails" -eq 0 ]
}
