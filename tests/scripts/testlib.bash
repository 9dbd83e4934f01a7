# Shared helpers for tests/scripts/*.sh (sourced, not run: tests/run.sh runs
# only *.sh files). Each check prints one "ok"/"FAIL" line saying what it
# pinned; `finish` exits non-zero when any check failed, so a script fails
# loudly instead of stopping at the first problem.
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
case $BUILD in /*) BUILD_DIR=$BUILD ;; *) BUILD_DIR=$ROOT/$BUILD ;; esac
FIX=${KIMG_FIXTURES:-$BUILD_DIR/fixtures}
case $FIX in /*) ;; *) FIX=$ROOT/$FIX ;; esac
LAUNCHER=$ROOT/scripts/kimg-run
T_PASS=0 T_FAIL=0 T_SKIP=0

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kimg-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

ok() { T_PASS=$((T_PASS + 1)); printf 'ok   %s\n' "$1"; }
fail() { T_FAIL=$((T_FAIL + 1)); printf 'FAIL %s\n' "$1"; [ $# -lt 2 ] || printf '     %s\n' "${@:2}"; }

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
# need FILE WHY: a prerequisite built by someone else; missing = a failure
# that says so (the test must not pass silently without having checked).
need() {
	if [ -e "$1" ]; then return 0; fi
	fail "prerequisite $1 missing ($2)"
	return 1
}
# optional WHAT WHY: a tool some checks use is absent: a failure under
# CI=true (scripts/setup-debian.sh installs it there), else a counted skip.
optional() {
	if [ "${CI:-}" = true ]; then fail "prerequisite missing under CI: $1 ($2)"; else
		T_SKIP=$((T_SKIP + 1)); printf 'SKIP %s missing: %s\n' "$1" "$2"; fi
}
# skip_allowed WHAT WHY: a case this machine cannot exercise by its nature.
skip_allowed() { T_SKIP=$((T_SKIP + 1)); printf 'SKIP (allowed) %s: %s\n' "$1" "$2"; }
finish() {
	echo "$T_PASS checks passed, $T_FAIL failed, $T_SKIP skipped"
	[ "$T_PASS" -gt 0 ] || echo "FAIL no check ran"
	[ "$T_FAIL" -eq 0 ] && [ "$T_PASS" -gt 0 ]
}
