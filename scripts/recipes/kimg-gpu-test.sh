#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# kimg-gpu-test.sh: run a GPU test command with libkimg.so preloaded, JSON
# reports written per process into a log directory, and the job failed when
# any process hit an image error. docs/ci.md runs exactly this;
# tests/scripts/ci_recipes.sh runs it on fixtures through a fake driver.
#
# Usage: kimg-gpu-test.sh [--log-dir DIR] [--exit-code N] [--] COMMAND [ARGS...]
#   --log-dir DIR   where the reports go, as DIR/kimg-<pid>.log
#                   (default $KIMG_LOG_DIR or kimg-logs); upload it as an artifact
#   --exit-code N   status of a process that hits an image error (default 86)
#                   kimg-*.log files already in DIR are left alone and not counted
# Sets KIMG_FORMAT=json, KIMG_LOG=DIR/kimg-%p.log, KIMG_ON_ERROR=exit:N and
# runs COMMAND through kimg-run ($KIMG_RUN, else kimg-run on PATH, else the
# one in this checkout).
# Exit status: COMMAND's when it failed; N when it succeeded but some process
# wrote a report (a test runner that swallowed a child's failure must not pass
# the job); 0 otherwise; 2 on a usage error.
me=kimg-gpu-test
here=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source=../lib.sh
. "$here/../lib.sh" || exit 2
log_dir=${KIMG_LOG_DIR:-kimg-logs}
code=86

while [ $# -gt 0 ]; do
	case $1 in
	--log-dir) [ $# -ge 2 ] || die "--log-dir needs a DIR"; log_dir=$2; shift ;;
	--log-dir=*) log_dir=${1#*=} ;;
	--exit-code) [ $# -ge 2 ] || die "--exit-code needs N"; code=$2; shift ;;
	--exit-code=*) code=${1#*=} ;;
	-h | --help) show_help "$0"; exit 0 ;;
	--) shift; break ;;
	-?*) die "unknown option: $1" ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || die "no COMMAND given"
case $code in '' | *[!0-9]*) die "--exit-code: expected 1 to 255, got '$code'" ;; esac
{ [ "${#code}" -le 3 ] && [ "$code" -ge 1 ] && [ "$code" -le 255 ]; } || die "--exit-code: expected 1 to 255, got '$code'"

find_tool KIMG_RUN kimg-run "$here/../kimg-run"
run=$tool

mkdir -p "$log_dir" || die "$log_dir: cannot create the log directory"
# Absolute, because the tests may change directory.
log_dir=$(cd "$log_dir" && pwd -P)
# Logs left by an earlier run in the same directory are not this run's
# failures: remember them and count only the others.
old_logs=" $(cd "$log_dir" && echo kimg-*.log) "

printf '+ KIMG_FORMAT=json KIMG_LOG=%s/kimg-%%p.log kimg-run --exit-code %s -- %s\n' "$log_dir" "$code" "$*"
KIMG_FORMAT=json KIMG_LOG=$log_dir/kimg-%p.log "$run" --exit-code "$code" -- "$@"
rc=$?

# One JSON object per line; reports are the lines with an "error" object
# (a KIMG_VERBOSE banner or other lines are not counted).
reports=0
for f in "$log_dir"/kimg-*.log; do
	[ -f "$f" ] || continue
	case $old_logs in *" ${f##*/} "*) continue ;; esac
	n=$(grep -c '"error"[[:space:]]*:[[:space:]]*{' "$f")
	[ "$n" -eq 0 ] || printf '%s: %s: %s report(s)\n' "$me" "$f" "$n" >&2
	reports=$((reports + n))
done

if [ "$reports" -gt 0 ]; then
	printf '%s: %s kimg report(s) in %s: a module has no device code for this GPU\n' "$me" "$reports" "$log_dir" >&2
	gh_error kimg "$reports CUDA image error report(s); see the kimg-logs artifact"
	if [ "$rc" -eq 0 ]; then
		printf '%s: the command exited 0 but a process reported an image error: exiting %s\n' "$me" "$code" >&2
		rc=$code
	fi
fi
exit "$rc"
