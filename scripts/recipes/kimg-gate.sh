#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# kimg-gate.sh: fail a CI job when built artifacts (wheels, shared objects,
# executables, directories of them) carry no device code that runs on the
# GPUs you ship for. docs/ci.md runs exactly this; tests/scripts/ci_recipes.sh
# runs it on nvcc-built fixtures.
#
# Usage: kimg-gate.sh [--sm LIST] [--driver X.Y] [--strict] [--json-out FILE] PATH...
#   --sm LIST        comma-separated targets as kimg-probe check takes them
#                    (9.0, 90, sm_90, a GPU name, native); default
#                    $KIMG_GATE_SM or 8.0,8.6,8.9,9.0
#   --driver X.Y     the oldest driver CUDA version you support (limits PTX JIT)
#   --strict         every module must run on every listed SM: none is excused
#                    as dispatched for other GPUs (for your own libraries)
#   --json-out FILE  also write the JSON verdicts there (an artifact to keep)
# Exit status is kimg-probe check's: 0 every module runs on every listed SM,
# 1 some module cannot run on some SM (fails the job), 2 usage error or a
# file that could not be read.
# kimg-probe is $KIMG_PROBE, else the one on PATH, else ../../$BUILD/kimg-probe.
me=kimg-gate
here=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source=../lib.sh
. "$here/../lib.sh" || exit 2
sm=${KIMG_GATE_SM:-8.0,8.6,8.9,9.0}
driver='' json_out='' strict=''

while [ $# -gt 0 ]; do
	case $1 in
	--sm) [ $# -ge 2 ] || die "--sm needs a LIST"; sm=$2; shift ;;
	--sm=*) sm=${1#*=} ;;
	--driver) [ $# -ge 2 ] || die "--driver needs X.Y"; driver=$2; shift ;;
	--driver=*) driver=${1#*=} ;;
	--strict) strict=--strict ;;
	--json-out) [ $# -ge 2 ] || die "--json-out needs a FILE"; json_out=$2; shift ;;
	--json-out=*) json_out=${1#*=} ;;
	-h | --help) show_help "$0"; exit 0 ;;
	--) shift; break ;;
	-?*) die "unknown option: $1" ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || die "no PATH to check (did a glob such as dist/*.whl match nothing?)"
[ -n "$sm" ] || die "--sm LIST is empty"

b=${BUILD:-build}
case $b in /*) ;; *) b=$here/../../$b ;; esac
find_tool KIMG_PROBE kimg-probe "$b/kimg-probe"
probe=$tool

# An unmatched glob reaches us as the literal pattern: say so plainly.
for p in "$@"; do
	[ -e "$p" ] || die "$p: no such file (did a glob match nothing?)"
done

check() { "$probe" check --sm "$sm" ${driver:+--driver "$driver"} $strict "$@"; }

printf '+ kimg-probe check --sm %s%s%s %s\n' "$sm" "${driver:+ --driver $driver}" "${strict:+ $strict}" "$*"
check "$@"
rc=$?
if [ -n "$json_out" ]; then
	# Same check again, as JSON, for the job's artifacts (the check reads
	# only headers, so running it twice costs little).
	check --json "$@" >"$json_out"
	jrc=$?
	[ "$jrc" = "$rc" ] || { printf '%s: the JSON run exited %s, the text run %s\n' "$me" "$jrc" "$rc" >&2; [ "$rc" -ge "$jrc" ] || rc=$jrc; }
fi
case $rc in
0) printf '%s: passed: every module runs on SM %s\n' "$me" "$sm" ;;
1) msg="failed: some module cannot run on one of SM $sm (see above)"
	printf '%s: %s\n' "$me" "$msg" >&2
	gh_error "kimg gate" "$msg" ;;
*) printf '%s: error: kimg-probe check exited %s\n' "$me" "$rc" >&2 ;;
esac
exit "$rc"
