# SPDX-License-Identifier: Apache-2.0
# The one helper library of the shell tests (sourced, not run: tests/run.sh
# runs only *.sh files). Every tests/{probe,shim,scripts}/*.sh sources it:
#
#   . "$(dirname "$0")/../lib.bash" [probe|shim]
#
# Each check prints one line, "ok - WHAT" or "FAIL - WHAT" (details
# indented below it), a skip "SKIP - WHAT: WHY"; `finish` prints
# "N passed, N failed, N skipped" and exits non-zero when a check failed or
# none ran, so a script fails loudly instead of stopping at the first
# problem and never passes without having checked anything.
#
# Paths for every test: ROOT (the source tree), BUILD (as given, default
# build), BUILD_DIR (BUILD, absolute), FIX (the nvcc-built fixtures,
# absolute; KIMG_FIXTURES overrides), TMP (a scratch folder, removed at
# exit), LAUNCHER (scripts/kimg-run); the stand-ins of tests/fake_cuda/fake.mk:
# FAKE (the folder of the fake libcuda.so.1 and libcudart.so.13, with the
# versioned runtimes in $FAKE/v<node>/), FAKE_NVML (the folder of the fake
# libnvidia-ml.so.1), each built by make, never by a test.
#
# The profile adds what one kind of test needs and checks its prerequisites
# (a missing one ends the script with a failure):
#   probe  PROBE (kimg-probe), FX (= FIX); run CMD... captures stdout, stderr
#          and the exit status; expect_rc, expect_json, expect_grep
#   shim   LIB (libkimg.so, absolute; KIMG_LIB overrides), PROGS (the shim test
#          programs); run NAME [VAR=VALUE...] -- CMD... runs CMD under kimg with
#          the fake driver; loaded, has, report
#
# Every JSON document a test makes is checked against its schema
# (docs/schema/, tests/schema_check.py): `run` collects each kimg-probe
# --json output and each libkimg.so log, json_collect SCHEMA FILE any other,
# and `finish` validates them all in one go (one "ok - schema ..." line per
# schema, a failure per invalid document). json_valid SCHEMA FILE WHAT checks
# one at once.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) BUILD_DIR=$BUILD ;; *) BUILD_DIR=$ROOT/$BUILD ;; esac
FIX=${KIMG_FIXTURES:-$BUILD_DIR/fixtures}
case $FIX in /*) ;; *) FIX=$ROOT/$FIX ;; esac
LAUNCHER=$ROOT/scripts/kimg-run
FAKE=$BUILD_DIR/fake_cuda
FAKE_NVML=$BUILD_DIR/fake_nvml
T_PASS=0 T_FAIL=0 T_SKIP=0

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kimg-test.XXXXXX")
trap 'chmod -R u+rwx "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT

# python3 as the interpreter itself, not a wrapper in front of it: where
# python3 on PATH is a version manager's shim (pyenv's is a shell script
# that costs about 60 ms of CPU a call, and a script calls python3 dozens of
# times), a link to the interpreter the shim picks now goes first on PATH.
# tests/run.sh does this once for all its tests and names the python3 it
# put first in KIMG_PYTHON3: then no python3 is started here.
if [ -z "${KIMG_PYTHON3:-}" ] || [ "$(command -v python3)" != "$KIMG_PYTHON3" ]; then
	PY_REAL=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
	if [ -n "$PY_REAL" ] && [ -x "$PY_REAL" ] && [ "$PY_REAL" != "$(command -v python3)" ]; then
		mkdir -p "$TMP/.python" && ln -s "$PY_REAL" "$TMP/.python/python3" && PATH=$TMP/.python:$PATH
	fi
fi
# The checks below that need only the standard library (json) run python3 -S:
# no site module, so no .pth file of site-packages runs at each start (on
# this project's development machine one imports certifi: 50 ms of CPU of
# the 60 a start costs, and the probe and shim scripts start some 500).

# ---- checks and their lines ----
ok() { T_PASS=$((T_PASS + 1)); printf 'ok - %s\n' "$1"; }
# fail WHAT [DETAIL...]: a failed check; each detail on its own line
fail() { T_FAIL=$((T_FAIL + 1)); printf 'FAIL - %s\n' "$1"; [ $# -lt 2 ] || printf '     %s\n' "${@:2}"; }
# bad: fail's name in the probe tests' former library, kept so that a test
# written against it still counts its failures
bad() { fail "$@"; }
# check WHAT CMD...: ok when CMD succeeds (`check WHAT eval 'EXPR'` for an expression)
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	if [ "$2" == "$3" ]; then ok "$1"; else fail "$1" "expected: $2" "actual:   $3"; fi
}
# expect_match WHAT EXTENDED-REGEX TEXT
expect_match() {
	if grep -Eq -- "$2" <<<"$3"; then ok "$1"; else fail "$1" "no match for /$2/ in:" "$3"; fi
}
# expect_no_match WHAT EXTENDED-REGEX TEXT
expect_no_match() {
	if grep -Eq -- "$2" <<<"$3"; then fail "$1" "unexpected /$2/ in:" "$3"; else ok "$1"; fi
}

# file_mode PATH: its permission bits in octal, or "missing"
file_mode() { stat -c %a "$1" 2>/dev/null || echo missing; }

# ---- prerequisites and skips ----
# need FILE WHY: a prerequisite built by someone else; missing = a failure
# that says so (the test must not pass silently without having checked).
need() {
	if [ -e "$1" ]; then return 0; fi
	fail "prerequisite $1 missing ($2)"
	return 1
}
# require FILE WHY: as need, and the script cannot go on without it.
require() { need "$@" || finish; }
# missing WHAT WHY [N]: a tool some checks use is absent: a failure under
# CI=true (scripts/setup-debian.sh installs it there), else a counted skip
# (of N checks, default 1), said.
missing() {
	if [ "${CI:-}" = true ]; then fail "prerequisite missing under CI: $1 ($2)"; else
		T_SKIP=$((T_SKIP + ${3:-1})); printf 'SKIP - %s missing: %s\n' "$1" "$2"; fi
}
optional() { missing "$@"; }
# skip_allowed WHAT WHY: a case this machine cannot exercise by its nature
# (not a missing package); printed with the reason, counted, not a failure.
skip_allowed() { T_SKIP=$((T_SKIP + 1)); printf 'SKIP (allowed) - %s: %s\n' "$1" "$2"; }

# ---- JSON documents against their schemas (docs/schema/) ----
# (JSON_DOCS=DIR from outside keeps them, for writing a schema: schema_check.py --paths)
JSON_DOCS=${JSON_DOCS:-$TMP/json-docs}
# json_collect SCHEMA FILE [WHAT]: FILE (copied now) is checked by finish
# against docs/schema/SCHEMA.schema.json; SCHEMA report-lines: a libkimg.so
# log, each '{' line a report.
json_collect() {
	local n
	[ -e "$2" ] || return 0
	mkdir -p "$JSON_DOCS"
	n=1; [ ! -f "$JSON_DOCS/list" ] || n=$(($(wc -l <"$JSON_DOCS/list") + 1))
	cp "$2" "$JSON_DOCS/$n" || { fail "json_collect: cannot keep $2 for the schema check"; return 0; }
	printf '%s\t%s\t%s\n' "$1" "$JSON_DOCS/$n" "$(printf '%s' "${3:-$2}" | tr '\t\n' '  ' | head -c 300)" >>"$JSON_DOCS/list"
}
# The schemas' own check against the metaschema, done once for the same
# bytes (tests/schema_check.py)
export KIMG_SCHEMA_CACHE=${KIMG_SCHEMA_CACHE-$BUILD_DIR/tests/schema-cache}
# json_valid SCHEMA FILE WHAT: one check, now (status 3: jsonschema missing)
json_valid() {
	local res rc=0
	res=$(python3 "$ROOT/tests/schema_check.py" "$1" "$2" 2>&1) || rc=$?
	if [ $rc -eq 3 ]; then missing python3-jsonschema "validating $3 against docs/schema/$1.schema.json"
	elif [ $rc -eq 0 ]; then ok "$3: valid against docs/schema/$1.schema.json"
	else fail "$3: not valid against docs/schema/$1.schema.json" "$res"; fi
}
# json_collect_probe CMD...: when CMD runs kimg-probe COMMAND --json, its
# stdout ($TMP/out) is that command's document. A script that runs the
# probe through a function of its own (P() { timeout 120 "$PROBE" "$@"; })
# names it in JSON_PROBE_WRAPPERS ("P"), so its documents are checked too.
json_collect_probe() {
	local a prev="" cmd="" json=false
	for a in "$@"; do
		if [ -z "$cmd" ]; then
			case $prev in *kimg-probe | "${PROBE:-/nonexistent}") cmd=$a ;; esac
			if [ -n "$prev" ] && [[ " ${JSON_PROBE_WRAPPERS:-} " == *" $prev "* ]]; then cmd=$a; fi
			prev=$a
			continue
		fi
		case $a in --) break ;; --json) json=true ;; --help | -h) return 0 ;; esac
	done
	case $cmd in device | scan | check | summarize | doctor) ;; *) return 0 ;; esac
	if $json; then json_collect "$cmd" "$TMP/out" "kimg-probe $cmd (exit $rc): ${*: -3}"; fi
}
# The collected documents, validated (from finish).
json_finish() {
	local res line rc=0
	[ -s "$JSON_DOCS/list" ] || return 0
	res=$(python3 "$ROOT/tests/schema_check.py" --manifest "$JSON_DOCS/list" 2>&1) || rc=$?
	if [ $rc -eq 3 ]; then
		missing python3-jsonschema "the JSON documents of this script against docs/schema/"
		return 0
	fi
	while IFS= read -r line; do
		case $line in
		"ok - "*) T_PASS=$((T_PASS + 1)); printf '%s\n' "$line" ;;
		"FAIL - "*) T_FAIL=$((T_FAIL + 1)); printf '%s\n' "$line" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done <<<"$res"
}

# Ends the script: the totals, and the status. EXPECTED_CHECKS=N (set by a
# script whose number of checks is fixed) fails a run that made another
# number of checks (passed, failed and skipped), so a case that silently
# ran fewer cannot pass.
finish() {
	local ran=$((T_PASS + T_FAIL + T_SKIP))
	if [ -n "${EXPECTED_CHECKS:-}" ] && [ "$ran" -ne "$EXPECTED_CHECKS" ]; then
		fail "ran $ran checks, expected $EXPECTED_CHECKS"
	fi
	json_finish
	echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
	if [ "$T_PASS" -eq 0 ]; then echo "FAIL - no check ran"; exit 1; fi
	[ "$T_FAIL" -eq 0 ]
	exit $?
}

# fresh_venv DIR: a new venv with pip at DIR (its pip run as DIR/bin/python
# -m pip); output in $TMP/venv.log, status 1 when none could be made. A copy
# of the one make builds once ($BUILD/tests/venv, Makefile TEST_VENV):
# python3 -m venv installing pip takes some 4 s of CPU. Its bin/pip* would
# run the original's python (their #! line), so the copy has none.
fresh_venv() {
	if [ -f "$BUILD_DIR/tests/venv/pyvenv.cfg" ] && cp -a "$BUILD_DIR/tests/venv" "$1" 2>"$TMP/venv.log" &&
		rm -f "$1"/bin/pip* && [ -x "$1/bin/python" ]; then
		return 0
	fi
	rm -rf "$1"
	python3 -m venv "$1" >"$TMP/venv.log" 2>&1
}

# ---- the stand-ins (tests/fake_cuda/fake.mk) ----
# fake_standin FILE: the path of a stand-in make built under $BUILD (ends
# the script with a failure when it is missing: a test never builds one).
fake_standin() {
	require "$1" "the stand-ins are built by make (make BUILD=$BUILD shim-tests)"
}

# ---- profile: probe (kimg-probe) ----
lib_probe() {
	PROBE=${PROBE:-$BUILD/kimg-probe}
	FX=$FIX
	[ -x "$PROBE" ] || { fail "$PROBE not built"; finish; }
	[ -f "$FX/multi.fatbin" ] || { fail "fixtures missing in $FX (make fixtures)"; finish; }
}

# run CMD...: CMD with stdout in $TMP/out, stderr in $TMP/err, status in $rc
run_capture() {
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	json_collect_probe "$@"
}

# expect_rc WANT WHAT
expect_rc() {
	if [ "$rc" -eq "$1" ]; then ok "$2: exit $1"; else fail "$2: exit $rc, want $1 (stderr: $(head -c 300 "$TMP/err"))"; fi
}

# expect_json WHAT PYTHON-EXPR: the expression sees the parsed stdout as `d`
# and must be true; on failure its value is printed.
expect_json() {
	local what=$1 expr=$2 res
	if res=$(python3 -S - "$TMP/out" "$expr" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
expr = sys.argv[2]
v = eval("(" + expr + ")")
if v is not True:
    print("expression was", repr(v))
    sys.exit(1)
PY
	); then ok "$what"; else fail "$what: $expr ($res)"; fi
}

# expect_grep WHAT FILE PATTERN (fixed string)
expect_grep() {
	if grep -qF -- "$3" "$2"; then ok "$1"; else fail "$1: '$3' not in $(basename "$2"): $(head -c 400 "$2")"; fi
}

# ---- profile: shim (libkimg.so under LD_PRELOAD with the fake driver) ----
lib_shim() {
	LIB=${KIMG_LIB:-$BUILD/libkimg.so}
	# absolute: a relative LD_PRELOAD breaks in any child that changes directory
	case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
	PROGS=$BUILD/shim-tests
	for f in "$LIB" "$FAKE/libcuda.so.1" "$PROGS/drv_dl"; do
		[ -e "$f" ] || { fail "$f missing (make shim-tests)"; finish; }
	done
	# "Not loaded" is told from "silent" in two steps. Once: $LIB must print
	# its KIMG_VERBOSE banner in a plain program, or nothing here means
	# anything (a wrong KIMG_LIB, a library that fails to initialise). Per run:
	# the loader's "cannot be preloaded" on stderr marks kimg as not loaded in
	# that process, and an inherited KIMG_DISABLE is removed.
	local banner
	banner=$(env -u KIMG_DISABLE LD_PRELOAD="$LIB" KIMG_VERBOSE=1 KIMG_LOG= "$PROGS/hello" 2>&1 >/dev/null)
	if ! grep -qE '^kimg [0-9][^ ]*: loaded into ' <<<"$banner"; then
		fail "$LIB prints no banner under KIMG_VERBOSE=1: it is not kimg, or it does not load ($(head -c 300 <<<"$banner"))"
		finish
	fi
}

# run NAME [VAR=VALUE...] -- CMD...: under kimg; output in $TMP/NAME.out,
# report in $TMP/NAME.jsonl, exit status in $TMP/NAME.rc.
run_kimg() {
	local name=$1; shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	rm -f "$TMP/$name.jsonl"
	env -u KIMG_DISABLE LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" KIMG_FORMAT=json KIMG_LOG="$TMP/$name.jsonl" \
		${envs[@]+"${envs[@]}"} "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
	json_collect report-lines "$TMP/$name.jsonl" "run $name: $*"
}

# under_kimg [VAR=VALUE...] CMD...: CMD under libkimg.so with the fake
# driver, its output where the caller puts it
under_kimg() { env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" "$@"; }

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
	python3 -S - "$TMP/$1.jsonl" "$2" <<'PY'
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

# ---- the profile asked for: `run` is its runner ----
case ${1:-} in
probe) run() { run_capture "$@"; }; lib_probe ;;
shim) run() { run_kimg "$@"; }; lib_shim ;;
'') ;;
*) fail "tests/lib.bash: unknown profile $1 (probe, shim)"; finish ;;
esac
