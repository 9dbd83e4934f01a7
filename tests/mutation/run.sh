#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make mutation: plants each bug of tests/mutation/mutants.txt, one at a
# time, in a scratch copy of the tree, rebuilds what the named tests need
# (the prebuilt objects are copied along, so one file recompiles; fixtures
# are shared through KIMG_FIXTURES, so nvcc never runs) and runs those tests.
# A mutant is caught when one of its tests fails. The closing line is
#   mutations: K caught, M missed
# with each miss named. It fails when any mutant is missed, when a mutant's
# pattern no longer matches its file ("stale": the code moved; fix the
# line), when a mutant does not compile ("broken"), or when a test fails
# before any bug is planted (baseline).
#
#   MUTANTS="name ..."   run only these mutants
#   MUTANTS_FILE=path    another list (same format)
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) BUILD_DIR=$BUILD ;; *) BUILD_DIR=$ROOT/$BUILD ;; esac
FIX=${KIMG_FIXTURES:-$BUILD_DIR/fixtures}
case $FIX in /*) ;; *) FIX=$ROOT/$FIX ;; esac
LIST=${MUTANTS_FILE:-$ROOT/tests/mutation/mutants.txt}
ONLY=" ${MUTANTS:-} "
T0=$(date +%s)

die() { echo "mutation: $*" >&2; exit 2; }
[ -f "$FIX/multi.fatbin" ] || die "fixtures missing in $FIX (make fixtures)"
[ -x "$BUILD_DIR/kimg-probe" ] && [ -f "$BUILD_DIR/libkimg.so" ] || die "$BUILD_DIR not built (make all unit shim-tests)"
[ -f "$LIST" ] || die "no mutant list $LIST"

S=$(mktemp -d "${TMPDIR:-/tmp}/kimg-mutation.XXXXXX")
trap 'rm -rf "$S"' EXIT
TREE=$S/tree
mkdir -p "$TREE/build"
# The working tree as git sees it (tracked and untracked, not ignored), and
# the build outputs, both with their timestamps: make finds them up to date.
# Without git (a minimal system, a tarball of the sources) the whole tree
# but .git and the build folders is copied instead.
if command -v git >/dev/null 2>&1 && git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$ROOT" && git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
		[ -e "$f" ] && printf '%s\0' "$f"; done | tar --null -T - -cf -) | tar -xf - -C "$TREE" || die "cannot copy the tree"
else
	(cd "$ROOT" && tar --exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./dist -cf - .) |
		tar -xf - -C "$TREE" || die "cannot copy the tree"
fi
[ -f "$TREE/tests/probe/check.sh" ] || die "the copy of the tree in $TREE is incomplete"
(cd "$BUILD_DIR" && tar --exclude=./fixtures --exclude=./fuzz -cf - .) | tar -xf - -C "$TREE/build" || die "cannot copy $BUILD_DIR"

# ---- the list ----
names=() files=() exprs=() tests=()
while IFS= read -r line; do
	case $line in '' | '#'*) continue ;; esac
	rest=$line
	name=${rest%% :: *} rest=${rest#* :: }
	file=${rest%% :: *} rest=${rest#* :: }
	expr=${rest%% :: *} tlist=${rest#* :: }
	[ "$tlist" != "$rest" ] || die "bad line (want NAME :: FILE :: SED :: TESTS): $line"
	name=$(echo $name) file=$(echo $file) tlist=$(echo $tlist)
	[ -n "$name" ] && [ -n "$file" ] && [ -n "$expr" ] && [ -n "$tlist" ] || die "bad line: $line"
	[ "$ONLY" = "  " ] || [[ $ONLY == *" $name "* ]] || continue
	names+=("$name") files+=("$file") exprs+=("$expr") tests+=("$tlist")
done <"$LIST"
[ ${#names[@]} -gt 0 ] || die "no mutant selected"

# what a test needs built, and how it runs (inside the scratch tree)
targets_of() {
	case $1 in
	unit/*) echo "build/tests/${1#unit/}" ;;
	probe/*) echo build/kimg-probe ;;
	shim/threads.sh) echo build/libkimg.so build/tsan/libkimg.so build/fake_cuda/libcuda.so.1 ;;
	shim/stack.sh) echo build/libkimg.so build/fake_cuda/libcuda.so.1 shim-stack-programs ;; # linked with the core and diag
	shim/*) echo build/libkimg.so build/fake_cuda/libcuda.so.1 ;;
	scripts/*) echo build/kimg-probe build/libkimg.so ;;
	api/*) echo build/kimg-probe build/libkimgapi.so build/tests/api_ask build/fake_cuda/libcuda.so.1 ;;
	*) die "unknown test $1" ;;
	esac
}
run_test() {
	local t=$1
	(cd "$TREE" && export BUILD=build KIMG_FIXTURES="$FIX" CK_DEFAULT_TIMEOUT=60 &&
		case $t in
		unit/*) timeout 300 "build/tests/${t#unit/}" ;;
		*) timeout 300 bash "tests/$t" ;;
		esac) >"$S/test.log" 2>&1
}

# ---- baseline: every test used passes before any bug is planted ----
all_tests=$(printf '%s\n' "${tests[@]}" | tr ' ' '\n' | sort -u)
for t in $all_tests; do targets_of "$t" >/dev/null; done
for t in $all_tests; do
	if ! run_test "$t"; then
		tail -n 20 "$S/test.log"
		die "baseline: $t fails with no bug planted"
	fi
done
echo "baseline: $(echo $all_tests | wc -w) tests pass unmutated ($(($(date +%s) - T0))s)"

# ---- one mutant at a time ----
caught=0 missed=() stale=() broken=()
for i in "${!names[@]}"; do
	name=${names[$i]} file=${files[$i]} expr=${exprs[$i]}
	f=$TREE/$file
	if [ ! -f "$f" ]; then
		stale+=("$name"); echo "STALE   $name: $file is gone"; continue
	fi
	cp -p "$f" "$S/orig"
	if ! sed -e "$expr" "$S/orig" >"$f" 2>"$S/sed.err" || cmp -s "$S/orig" "$f"; then
		cp -p "$S/orig" "$f"
		stale+=("$name"); echo "STALE   $name: '$expr' changes nothing in $file $(head -c 200 "$S/sed.err")"; continue
	fi
	targets=$(for t in ${tests[$i]}; do targets_of "$t"; done | sort -u)
	by=""
	if ! make -C "$TREE" -s BUILD=build $targets >"$S/make.log" 2>&1; then
		broken+=("$name"); echo "BROKEN  $name: does not build: $(grep -m1 error "$S/make.log")"
	else
		for t in ${tests[$i]}; do
			if ! run_test "$t"; then by=$t; break; fi
		done
		if [ -n "$by" ]; then
			caught=$((caught + 1)); echo "caught  $name (by $by)"
		else
			missed+=("$name"); echo "MISSED  $name: $file '$expr' passes ${tests[$i]}"
		fi
	fi
	# restore, and make the original newer than the mutant's objects
	cp -p "$S/orig" "$f"
	touch "$f"
done
echo "time: $(($(date +%s) - T0))s for ${#names[@]} mutants"
[ ${#stale[@]} -eq 0 ] || echo "stale (pattern no longer matches; update tests/mutation/mutants.txt): ${stale[*]}"
[ ${#broken[@]} -eq 0 ] || echo "broken (mutant does not compile): ${broken[*]}"
miss_names=""
[ ${#missed[@]} -eq 0 ] || miss_names=": ${missed[*]}"
echo "mutations: $caught caught, ${#missed[@]} missed$miss_names"
[ ${#missed[@]} -eq 0 ] && [ ${#stale[@]} -eq 0 ] && [ ${#broken[@]} -eq 0 ]
