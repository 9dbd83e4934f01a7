# Sourced by the tests/shim scripts (not a test itself: run.sh runs *.sh).
# Runs programs under LD_PRELOAD=libkimg.so with the fake driver and
# checks their output and kimg's JSON report (one object per line).
set -u
BUILD=${BUILD:-build}
FIX=${KIMG_FIXTURES:-$BUILD/fixtures}
LIB=${KIMG_LIB:-$BUILD/libkimg.so}
# absolute: a relative LD_PRELOAD breaks in any child that changes directory
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
FAKE=$BUILD/fake_cuda
PROGS=$BUILD/shim-tests
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n_ok=0 n_fail=0 n_skip=0

for f in "$LIB" "$FAKE/libcuda.so.1" "$PROGS/drv_dl"; do
	[ -e "$f" ] || { echo "FAIL - $f missing (make shim-tests)"; exit 1; }
done

ok() { n_ok=$((n_ok + 1)); echo "ok - $*"; }
fail() { n_fail=$((n_fail + 1)); echo "FAIL - $*"; }
# missing WHAT WHY: a prerequisite of some checks is absent. Under CI=true
# (where scripts/setup-debian.sh installs every prerequisite) a failure;
# elsewhere a skip that is counted and printed, never a silent pass.
missing() {
	if [ "${CI:-}" = true ]; then fail "prerequisite missing under CI: $1 ($2)"; else
		n_skip=$((n_skip + 1)); echo "SKIP - $1 missing: $2"; fi
}
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

# "Not loaded" is told from "silent" in two steps. Once: $LIB must print
# its KIMG_VERBOSE banner in a plain program, or nothing here means
# anything (a wrong KIMG_LIB, a library that fails to initialise). Per run:
# the loader's "cannot be preloaded" on stderr marks kimg as not loaded in
# that process, and an inherited KIMG_DISABLE is removed.
banner=$(env -u KIMG_DISABLE LD_PRELOAD="$LIB" KIMG_VERBOSE=1 KIMG_LOG= "$PROGS/hello" 2>&1 >/dev/null)
if ! grep -qE '^kimg [0-9][^ ]*: loaded into ' <<<"$banner"; then
	echo "FAIL - $LIB prints no banner under KIMG_VERBOSE=1: it is not kimg, or it does not load ($(head -c 300 <<<"$banner"))"
	exit 1
fi

# run NAME [VAR=VALUE...] -- CMD...: under kimg; output in $TMP/NAME.out,
# report in $TMP/NAME.jsonl, exit status in $TMP/NAME.rc.
run() {
	local name=$1; shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	rm -f "$TMP/$name.jsonl"
	env -u KIMG_DISABLE LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" KIMG_FORMAT=json KIMG_LOG="$TMP/$name.jsonl" \
		${envs[@]+"${envs[@]}"} "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}

# loaded NAME: the loader did not refuse libkimg in that run
loaded() { ! grep -q "cannot be preloaded" "$TMP/$1.err"; }

# has NAME LINE: the program printed exactly LINE
has() { grep -qxF -- "$2" "$TMP/$1.out" || { echo "   (output of $1:)"; sed 's/^/   | /' "$TMP/$1.out" | head -40; false; }; }

# report NAME PYTHON-EXPR: the expression holds over R, the list of reports
# (lines of the log that are JSON objects; anything else is ignored).
# A run whose kimg did not load fails here, whatever the expression: its
# "no reports" would prove nothing.
report() {
	if ! loaded "$1"; then
		echo "   kimg did not load in run $1: $(grep -m1 "cannot be preloaded" "$TMP/$1.err")"
		return 1
	fi
	python3 - "$TMP/$1.jsonl" "$2" <<'PY'
import json, os, sys
path, expr = sys.argv[1], sys.argv[2]
R = []
if os.path.exists(path):
    R = [json.loads(l) for l in open(path) if l.lstrip().startswith("{")]
def first(call=None, code=None):
    for r in R:
        if (call is None or r["call"] == call) and (code is None or r["error"]["code"] == code):
            return r
    return None
def archs(r):
    return sorted(i["arch"] for i in r["module"]["images"])
try:
    ok = bool(eval("(" + expr + ")"))
except Exception as e:
    ok = False
    print("   exception:", repr(e))
if not ok:
    print("   reports:", json.dumps(R)[:1500])
sys.exit(0 if ok else 1)
PY
}

# Fails when any check failed or when none ran (a script that checked
# nothing must not pass).
finish() {
	echo "$n_ok passed, $n_fail failed, $n_skip skipped"
	if [ "$n_ok" -eq 0 ]; then echo "FAIL - no check ran"; exit 1; fi
	[ "$n_fail" -eq 0 ]
	exit $?
}
