#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/ci.md recipes, run through the very scripts the recipes call
# (scripts/recipes/kimg-gate.sh, scripts/recipes/kimg-gpu-test.sh) on nvcc-built
# fixtures: the wheel/build-output gate and the GPU test job.
. "$(dirname "$0")/../lib.bash"
unset KIMG_LIB KIMG_FORMAT KIMG_LOG KIMG_ON_ERROR KIMG_PROBE KIMG_RUN GITHUB_ACTIONS KIMG_GATE_SM KIMG_LOG_DIR
GATE=$ROOT/scripts/recipes/kimg-gate.sh
GPUTEST=$ROOT/scripts/recipes/kimg-gpu-test.sh
PROBE=$BUILD_DIR/kimg-probe

# ---- the recipes name the scripts the test runs (docs and scripts cannot drift apart) ----
doc=$(cat "$ROOT/docs/ci.md")
expect_match "docs/ci.md: the gate command as documented" 'kimg-probe check --sm 8\.0,8\.6,8\.9,9\.0 dist/\*\.whl' "$doc"
expect_match "docs/ci.md: the GitHub job runs scripts/recipes/kimg-gate.sh" 'scripts/recipes/kimg-gate\.sh" --sm 8\.0,8\.6,8\.9,9\.0' "$doc"
expect_match "docs/ci.md: the GPU job runs scripts/recipes/kimg-gpu-test.sh" 'scripts/recipes/kimg-gpu-test\.sh" --log-dir kimg-logs --exit-code 86' "$doc"
for v in 'KIMG_ON_ERROR=exit:86' "KIMG_LOG='kimg-logs/kimg-%p.log'" 'KIMG_FORMAT=json' 'LD_PRELOAD=' 'upload-artifact'; do
	expect_match "docs/ci.md mentions $v" "$(sed 's/[.*]/\\&/g' <<<"$v")" "$doc"
done

# ---- 1. the gate ----
gate() { KIMG_PROBE=$PROBE "$GATE" "$@"; }
if need "$PROBE" "kimg-probe: make BUILD=$BUILD" && need "$FIX/sm80_exe" "fixtures: make BUILD=$BUILD fixtures"; then
	out=$(gate --sm 9.0 "$FIX/sm80_exe" 2>&1); rc=$?
	expect_eq "gate: sm80_exe on --sm 9.0 -> exit 1 (fails the job)" 1 "$rc"
	expect_match "gate: prints the command it runs" "^\+ kimg-probe check --sm 9\.0 $FIX/sm80_exe$" "$out"
	expect_match "gate: says why it failed" "^kimg-gate: failed: some module cannot run on one of SM 9\.0" "$out"
	out=$(gate "$FIX/multi_exe" 2>&1); rc=$?
	expect_eq "gate: multi_exe on the default 8.0,8.6,8.9,9.0 -> exit 0" 0 "$rc"
	expect_match "gate: default SM list is 8.0,8.6,8.9,9.0" "^\+ kimg-probe check --sm 8\.0,8\.6,8\.9,9\.0 " "$out"
	out=$(gate --sm 8.6 "$FIX/sm80_exe" 2>&1); rc=$?
	expect_eq "gate: sm80_exe on 8.6 (same major, higher minor) -> exit 0" 0 "$rc"
	out=$(gate --sm 9.0 "$FIX/libdispatch.so" 2>&1); rc=$?
	expect_eq "gate: libdispatch.so on 9.0 (its sm_100a module dispatched) -> exit 0" 0 "$rc"
	out=$(gate --sm 9.0 --strict "$FIX/libdispatch.so" 2>&1); rc=$?
	expect_eq "gate --strict: libdispatch.so on 9.0 -> exit 1" 1 "$rc"
	expect_match "gate --strict: passed on to kimg-probe check" "^\+ kimg-probe check --sm 9\.0 --strict $FIX/libdispatch.so$" "$out"

	# Wheels made here with Python's zipfile, as a build would leave them in dist/.
	mkdir -p "$TMP/dist-bad/dist" "$TMP/dist-good/dist"
	python3 - "$TMP" "$FIX" <<'EOF'
import sys, zipfile
tmp, fix = sys.argv[1], sys.argv[2]
def wheel(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
        for name, src in members:
            z.write(src, name)
# libtwo.so: tu_a has sm_80 only (cannot run on 9.0), tu_b sm_90 + compute_90.
wheel(f"{tmp}/dist-bad/dist/demo-1.0-cp310-cp310-linux_x86_64.whl", [("demo/libtwo.so", f"{fix}/libtwo.so")])
wheel(f"{tmp}/dist-good/dist/demo-1.0-cp310-cp310-linux_x86_64.whl", [("demo/_C.so", f"{fix}/multi_exe")])
EOF
	# kimg-probe reads wheels through zlib (libz.so.1), loaded at run time.
	if "$PROBE" scan "$TMP/dist-good/dist/"*.whl 2>&1 >/dev/null | grep -q 'archives\? not read'; then
		fail "prerequisite libz.so.1 missing (apt-get install zlib1g): wheel gate not tested"
	else
	(cd "$TMP/dist-bad" && KIMG_PROBE=$PROBE "$GATE" --json-out gate.json dist/*.whl >out.txt 2>&1); rc=$?
	json_collect check "$TMP/dist-bad/gate.json" "kimg-gate.sh --json-out"
	expect_eq "wheel gate: libtwo.so (one module sm_80 only) on 8.0,8.6,8.9,9.0 -> exit 1" 1 "$rc"
	expect_eq "wheel gate: the documented command gives the same status" 1 \
		"$(cd "$TMP/dist-bad" && "$PROBE" check --sm 8.0,8.6,8.9,9.0 dist/*.whl >/dev/null 2>&1; echo $?)"
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["ok"] is False else 1)' "$TMP/dist-bad/gate.json" 2>/dev/null
	then ok "wheel gate: --json-out wrote JSON with \"ok\": false"
	else fail "wheel gate: --json-out wrote JSON with \"ok\": false" "$(head -c 400 "$TMP/dist-bad/gate.json")"; fi
	(cd "$TMP/dist-good" && KIMG_PROBE=$PROBE "$GATE" dist/*.whl >/dev/null 2>&1); rc=$?
	expect_eq "wheel gate: multi_exe in a wheel on 8.0,8.6,8.9,9.0 -> exit 0" 0 "$rc"
	expect_eq "wheel gate: the documented command gives the same status" 0 \
		"$(cd "$TMP/dist-good" && "$PROBE" check --sm 8.0,8.6,8.9,9.0 dist/*.whl >/dev/null 2>&1; echo $?)"
	fi

	out=$(GITHUB_ACTIONS=true KIMG_PROBE=$PROBE "$GATE" --sm 9.0 "$FIX/sm80_exe" 2>/dev/null)
	expect_match "gate under GitHub Actions: ::error annotation" '^::error title=kimg gate::failed: some module cannot run on one of SM 9\.0' "$out"
fi
out=$(cd "$TMP" && KIMG_PROBE=/bin/true "$GATE" 'nodist/*.whl' 2>&1); rc=$?
expect_eq "gate: a glob that matched nothing -> exit 2" 2 "$rc"
expect_eq "gate: a glob that matched nothing -> message" "kimg-gate: nodist/*.whl: no such file (did a glob match nothing?)" "$out"
out=$(KIMG_PROBE=/bin/true "$GATE" 2>&1); rc=$?
expect_eq "gate: no PATH -> exit 2 + message" "2 kimg-gate: no PATH to check (did a glob such as dist/*.whl match nothing?)" "$rc $out"
out=$(KIMG_PROBE=$TMP/none "$GATE" "$TMP" 2>&1); rc=$?
expect_eq "gate: kimg-probe missing -> exit 2 + message" "2 kimg-gate: kimg-probe not found ($TMP/none); install kimg or set KIMG_PROBE" "$rc $out"

# ---- 2. the GPU test job, with a stand-in libkimg.so (tests the script alone) ----
# a shared object that is not kimg, built by make (test-programs)
if need "$BUILD_DIR/tests/empty.so" "make BUILD=$BUILD test-programs"; then cp "$BUILD_DIR/tests/empty.so" "$TMP/stand-in.so"; fi
gputest() { KIMG_LIB=$TMP/stand-in.so KIMG_RUN=$LAUNCHER "$GPUTEST" "$@"; }
cd "$TMP" || exit 1
out=$(gputest --log-dir logs1 -- sh -c 'echo "$KIMG_FORMAT|$KIMG_LOG|$KIMG_ON_ERROR|${LD_PRELOAD%%:*}"' 2>&1); rc=$?
expect_eq "gpu job: runs the command with the documented variables, status 0" \
	"0 json|$TMP/logs1/kimg-%p.log|exit:86|$TMP/stand-in.so" "$rc $(tail -n1 <<<"$out")"
expect_match "gpu job: prints the command it runs" \
	"^\+ KIMG_FORMAT=json KIMG_LOG=$TMP/logs1/kimg-%p.log kimg-run --exit-code 86 -- sh -c " "$out"
gputest --log-dir logs2 -- sh -c 'exit 3' >/dev/null 2>&1; rc=$?
expect_eq "gpu job: the command's failure status is returned (3)" 3 "$rc"
# A process that reported an image error but whose status was swallowed
# (the report is written the way the library writes it: one JSON line).
report='{"error":{"code":209,"name":"CUDA_ERROR_NO_BINARY_FOR_GPU"},"call":"cuLibraryGetKernel"}'
out=$(gputest --log-dir logs3 -- sh -c 'f=$(printf %s "$KIMG_LOG" | sed "s/%p/$$/"); printf "%s\n" "$1" >"$f"' sh "$report" 2>&1); rc=$?
expect_eq "gpu job: command passed but a report was written -> exit 86" 86 "$rc"
expect_match "gpu job: says how many reports and where" "^kimg-gpu-test: 1 kimg report\(s\) in $TMP/logs3: " "$out"
out=$(gputest --log-dir logs3 --exit-code 9 -- true 2>&1); rc=$?
expect_eq "gpu job: reports left by an earlier run in the same dir are not counted" 0 "$rc"
gputest --log-dir logs4 --exit-code 42 -- sh -c 'f=$(printf %s "$KIMG_LOG" | sed "s/%p/$$/"); printf "%s\n" "$1" >"$f"; exit 42' sh "$report" >/dev/null 2>&1; rc=$?
expect_eq "gpu job: --exit-code 42 and the process exited 42 -> 42" 42 "$rc"
gputest --log-dir logs5 -- sh -c 'f=$(printf %s "$KIMG_LOG" | sed "s/%p/$$/"); echo "kimg: libkimg 0.1.0 banner" >"$f"' >/dev/null 2>&1; rc=$?
expect_eq "gpu job: a log without a report (banner only) does not fail the job" 0 "$rc"
out=$(gputest --exit-code 0 -- true 2>&1); rc=$?
expect_eq "gpu job: --exit-code 0 is refused (a failure must not look like success)" "2 kimg-gpu-test: --exit-code: expected 1 to 255, got '0'" "$rc $out"
out=$(gputest --log-dir logs6 2>&1); rc=$?
expect_eq "gpu job: no command -> 2" "2 kimg-gpu-test: no COMMAND given" "$rc $out"
cd "$ROOT" || exit 1

# ---- 2b. end to end: the real libkimg.so under the GPU job ----
# With a real GPU (not SM 8.x) sm80_exe itself is run; without one, a
# driver-API program (tests/shim/progs/drv.c, driver functions by dlsym:
# hook coverage is tests/shim's job, this checks the recipe) loads sm80.cubin through the
# fake driver of tests/fake_cuda set to SM 9.0, both built here from source.
# Either way the job must end with status 86 and one JSON report for 209.
e2e_check() { # what log-dir expect-file-basename-or-"-" expect-sm
	local got
	got=$(python3 - "$2" <<'EOF'
import glob, json, sys
reps = []
for f in sorted(glob.glob(sys.argv[1] + "/kimg-*.log")):
    for l in open(f):
        if l.startswith("{"):
            reps.append(json.loads(l))
r = reps[0] if reps else {}
g = lambda k: r.get(k) or {}
print(len(reps), g("error").get("code"), r.get("call"), g("device").get("sm"),
      (g("module").get("file") or "-").rsplit("/", 1)[-1])
EOF
)
	expect_eq "$1: one JSON report: error.code, call, device.sm, module.file" "1 209 cuLibraryGetKernel $4 $3" "$got"
}
gpu_sm=""
if [ -x "$PROBE" ] && "$PROBE" device --json >"$TMP/dev.json" 2>/dev/null; then
	gpu_sm=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["cc"])' "$TMP/dev.json" 2>/dev/null)
fi
if [ -n "$gpu_sm" ] && [[ $gpu_sm != 8.* ]] && need "$BUILD_DIR/libkimg.so" "libkimg.so" && need "$FIX/sm80_exe" "fixtures"; then
	(cd "$TMP" && KIMG_LIB=$BUILD_DIR/libkimg.so KIMG_RUN=$LAUNCHER "$GPUTEST" --log-dir e2e-gpu --exit-code 86 -- "$FIX/sm80_exe" >/dev/null 2>&1); rc=$?
	expect_eq "e2e (real GPU, SM $gpu_sm): sm80_exe under the GPU job -> exit 86" 86 "$rc"
	e2e_check "e2e (real GPU)" "$TMP/e2e-gpu" sm80_exe "$gpu_sm"
fi
# the stand-in driver and drv_dl, built by make (tests/fake_cuda/fake.mk, tests/shim/shim.mk)
if need "$BUILD_DIR/libkimg.so" "libkimg.so: make BUILD=$BUILD" &&
	need "$FAKE/libcuda.so.1" "the stand-in driver: make BUILD=$BUILD shim-tests" &&
	need "$BUILD_DIR/shim-tests/drv_dl" "the driver-API test program: make BUILD=$BUILD shim-tests" &&
	need "$FIX/sm80.cubin" "fixtures"; then
	(cd "$TMP" && LD_LIBRARY_PATH=$FAKE FAKE_CUDA_SM=90 KIMG_LIB=$BUILD_DIR/libkimg.so KIMG_RUN=$LAUNCHER \
		"$GPUTEST" --log-dir e2e-fake --exit-code 86 -- "$BUILD_DIR/shim-tests/drv_dl" dlsym lib "$FIX/sm80.cubin" axpy \
		>"$TMP/e2e.out" 2>&1); rc=$?
	expect_eq "e2e (fake driver, SM 9.0): sm80.cubin loaded under the GPU job -> exit 86" 86 "$rc"
	[ "$rc" -eq 86 ] || tail -n 20 "$TMP/e2e.out"
	# module.file is null: drv passes the bytes from its heap, no file behind them.
	e2e_check "e2e (fake driver)" "$TMP/e2e-fake" - 9.0
fi
finish
