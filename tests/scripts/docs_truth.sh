#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The docs tell the truth (issue 31): every KIMG_* variable the code reads,
# every kimg-probe option and every exit status is documented where a user
# looks (tests/docs_truth.py, which takes the facts from the code), and a
# planted undocumented variable, option or status fails that check; the
# README's benchmark figures all come from bench/README.md's recorded runs
# (bench/figures.py), and a planted figure fails; the tree goals of the
# benchmarks can be tuned like the others (KIMG_BENCH_GOAL_TREE_*); the
# demo's comment counts the GPUs it checks.
. "$(dirname "$0")/../lib.bash" probe

# lines "ok - ..." / "FAIL - ..." of a checker, counted as this script's
counted() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"FAIL - "*) fail "${line#FAIL - }" ;;
		*) [ -z "$line" ] || printf '     %s\n' "$line" ;;
		esac
	done
}

python3 "$ROOT/tests/docs_truth.py" --probe "$BUILD_DIR/kimg-probe" >"$TMP/truth" 2>&1
rc=$?
counted <"$TMP/truth"
expect_eq "docs_truth.py passes on this tree" 0 "$rc"

# ---- planted: each kind of undocumented fact fails the check ----
code=$TMP/code
mkdir -p "$code/shim/diag"
cp -r "$ROOT/probe" "$ROOT/sys" "$ROOT/scripts" "$ROOT/bench" "$code/"
cp "$ROOT/shim/diag/options.c" "$code/shim/diag/"
python3 - "$code" <<'PY'
import sys
root = sys.argv[1]
def plant(rel, anchor, text):
    p = root + "/" + rel
    s = open(p).read()
    assert anchor in s, (rel, anchor)
    open(p, "w").write(s.replace(anchor, anchor + text, 1))
plant("probe/cmd_check.c", '} else if (strcmp(a, "--strict") == 0) {',
      '\n\t\t} else if (strcmp(a, "--planted-option") == 0) {')
plant("probe/main.c", 'const char *la = getenv("KIMG_LIBARCHIVE");', ' (void)getenv("KIMG_PLANTED_VAR");')
plant("scripts/recipes/kimg-gate.sh", "sm=${KIMG_GATE_SM:-8.0,8.6,8.9,9.0}", '\nplanted=${KIMG_PLANTED_GATE:-}')
plant("probe/probe.h", "#define PROBE_EXIT_ERROR 2", "\n#define PROBE_EXIT_PLANTED 3")
PY
python3 "$ROOT/tests/docs_truth.py" --code-root "$code" --probe "$BUILD_DIR/kimg-probe" >"$TMP/planted" 2>&1
rc=$?
expect_eq "with plants in the code: docs_truth.py fails" 1 "$rc"
for want in "kimg-probe option --planted-option (cmd_check.c) in docs/man/kimg-probe.1" \
	"kimg-probe option --planted-option in kimg-probe check --help" \
	"kimg-probe check takes --planted-option: in its SYNOPSIS line" \
	"kimg-probe variable KIMG_PLANTED_VAR in docs/man/kimg-probe.1" \
	"scripts/recipes/kimg-gate.sh reads KIMG_PLANTED_GATE: in docs/ci.md" \
	"probe/probe.h's exit statuses read: [0, 1, 2, 3]"; do
	if grep -qF -- "FAIL - $want" "$TMP/planted"; then ok "planted fact found: $want"
	else fail "planted fact not found: $want" "$(grep '^FAIL' "$TMP/planted" | head -12)"; fi
done
planted_fails=$(grep -c '^FAIL' "$TMP/planted")
real_fails=$(grep -c '^FAIL' "$TMP/truth")
if [ "$planted_fails" -gt "$real_fails" ]; then ok "the plants add failures ($planted_fails, against $real_fails)"
else fail "plants added no failure: $planted_fails vs $real_fails"; fi

# ---- the README's benchmark figures come from bench/README.md ----
python3 "$ROOT/bench/figures.py" check "$ROOT/README.md" "$ROOT/bench/README.md" >"$TMP/fig" 2>&1
expect_eq "every README benchmark figure is in bench/README.md ($(tail -n1 "$TMP/fig"))" 0 $?
sed 's/^## Benchmarks$/## Benchmarks\n\nA planted claim: the scan takes 12.3 ms here./' "$ROOT/README.md" >"$TMP/README.md"
python3 "$ROOT/bench/figures.py" check "$TMP/README.md" "$ROOT/bench/README.md" >"$TMP/fig2" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -qF "'12.3 ms'" "$TMP/fig2"; then ok "a planted README figure no run recorded fails the check"
else fail "a planted README figure: exit $rc" "$(cat "$TMP/fig2")"; fi
grep -qF 'bench/figures.py' "$ROOT/bench/run.sh" && ok "make bench (bench/run.sh) runs the figures check" ||
	fail "bench/run.sh does not run bench/figures.py"

# ---- the tree goals are tunable, as the README says of every goal ----
mkdir -p "$TMP/tree"
cp "$FX/sm80.cubin" "$FX/multi.fatbin" "$TMP/tree/"
KIMG_BENCH_GOAL_TREE_COLD=0.3 KIMG_BENCH_GOAL_TREE_WARM=0.2 timeout 120 python3 "$ROOT/bench/env_bench.py" \
	"$BUILD_DIR/kimg-probe" "$TMP/tree" --repeat 1 --jobs 2 --evict fadvise --sm 9.0 >"$TMP/bench" 2>&1
expect_match "KIMG_BENCH_GOAL_TREE_COLD=0.3 is the cold goal" 'goal cold: .*\(goal <= 0\.3\)' "$(cat "$TMP/bench")"
expect_match "KIMG_BENCH_GOAL_TREE_WARM=0.2 is the warm goal" 'goal warm: .*\(goal <= 0\.2\)' "$(cat "$TMP/bench")"
KIMG_BENCH_GOAL_TREE_COLD=fast timeout 60 python3 "$ROOT/bench/env_bench.py" "$BUILD_DIR/kimg-probe" "$TMP/tree" \
	--repeat 1 --evict fadvise --sm 9.0 >"$TMP/bench" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q "KIMG_BENCH_GOAL_TREE_COLD='fast': expected a positive number" "$TMP/bench"; then
	ok "a goal that is not a number is refused, naming it"; else fail "KIMG_BENCH_GOAL_TREE_COLD=fast: exit $rc: $(head -c 300 "$TMP/bench")"; fi

# ---- scripts/demo.sh says how many GPUs it checks ----
words=(zero one two three four five six seven eight nine ten)
said=$(sed -n 's/.*checks them against \([a-z]*\) GPUs.*/\1/p' "$ROOT/scripts/demo.sh")
list=$(sed -n 's/.*check --sm "\([^"]*\)".*/\1/p' "$ROOT/scripts/demo.sh" | head -n1)
n=$(tr ',' '\n' <<<"$list" | grep -c .)
expect_eq "scripts/demo.sh's comment counts the GPUs of its --sm list ($list)" "${words[$n]}" "$said"
finish
