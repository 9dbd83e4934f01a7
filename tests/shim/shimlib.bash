# Sourced by the tests/shim scripts (not a test itself: run.sh runs *.sh).
# Runs programs under LD_PRELOAD=libkimg.so with the fake driver and
# checks their output and kimg's JSON report (one object per line).
set -u
BUILD=${BUILD:-build}
FIX=${KIMG_FIXTURES:-$BUILD/fixtures}
LIB=${KIMG_LIB:-$BUILD/libkimg.so}
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

# run NAME [VAR=VALUE...] -- CMD...: under kimg; output in $TMP/NAME.out,
# report in $TMP/NAME.jsonl, exit status in $TMP/NAME.rc. KIMG_VERBOSE=1
# (unless the caller sets it) makes kimg print its banner: it goes to
# $TMP/NAME.banner, out of NAME.err, and proves kimg loaded, so that "no
# report" means "kimg was silent", not "kimg never ran".
run() {
	local name=$1; shift
	local envs=() v
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	rm -f "$TMP/$name.jsonl" "$TMP/$name.expect_unloaded"
	for v in ${envs[@]+"${envs[@]}"}; do
		case $v in KIMG_DISABLE=1 | KIMG_VERBOSE=*) : >"$TMP/$name.expect_unloaded" ;; esac
	done
	env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" KIMG_FORMAT=json KIMG_LOG="$TMP/$name.jsonl" KIMG_VERBOSE=1 \
		${envs[@]+"${envs[@]}"} "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
	grep -E '^kimg [0-9][^ ]*: loaded into ' "$TMP/$name.err" >"$TMP/$name.banner"
	grep -vE '^kimg [0-9][^ ]*: loaded into ' "$TMP/$name.err" >"$TMP/$name.err2"
	mv "$TMP/$name.err2" "$TMP/$name.err"
}

# loaded NAME: kimg's banner came out of that run
loaded() { [ -s "$TMP/$1.banner" ]; }

# has NAME LINE: the program printed exactly LINE
has() { grep -qxF -- "$2" "$TMP/$1.out" || { echo "   (output of $1:)"; sed 's/^/   | /' "$TMP/$1.out" | head -40; false; }; }

# report NAME PYTHON-EXPR: the expression holds over R, the list of reports
# (lines of the log that are JSON objects; anything else is ignored).
# A run whose kimg did not load fails here, whatever the expression: its
# "no reports" would prove nothing (KIMG_DISABLE=1 / an explicit
# KIMG_VERBOSE are exempt: the caller knows there is no banner).
report() {
	if [ ! -e "$TMP/$1.expect_unloaded" ] && ! loaded "$1"; then
		echo "   kimg did not load in run $1 (no banner on stderr): $(head -c 300 "$TMP/$1.err")"
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
