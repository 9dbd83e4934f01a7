#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fresh-root.sh: prove that a fresh clone passes on a truly fresh system.
#
# Usage: scripts/ci/fresh-root.sh [--suite S] [--cache DIR] [--keep] [--shell]
#                                 [--with PATH]... [--] [COMMAND]
#
# Builds (once, cached) a minimal Debian root with
# `debootstrap --variant=minbase`, unpacks a pristine copy of it for this run,
# copies in a fresh clone of this repository's HEAD (committed work only, no
# build outputs), bind-mounts the CUDA toolkit read-only at /usr/local/cuda,
# and runs COMMAND inside it with chroot, as root, from the clone's top
# directory. The default COMMAND is `CI=true bash .ci/run`; the README's two
# set-up commands are run the same way with `--readme`.
#
#   --suite S    Debian suite (default bookworm; bullseye gives glibc 2.31)
#   --cache DIR  where the pristine root tarball is kept (default
#                ${XDG_CACHE_HOME:-~/.cache}/kimg-fresh-root)
#   --readme     run the README's two commands instead of .ci/run
#   --keep       leave the run's root behind (its path is printed)
#   --shell      open a shell in the root instead of running COMMAND
#   --with PATH  also copy PATH (relative to the checkout's top: a build
#                output such as dist or build/fixtures) into the clone,
#                at the same place (scripts/ci/old-glibc.sh uses it)
#
# Needs root, debootstrap and network access to the Debian mirror (the first
# run only, and for the apt-get that the project's own set-up does). Exit
# status: COMMAND's; 2 for usage or set-up errors.
# The whole script is one braced block, so bash has read all of it before it
# runs: editing this file during a run (as a developer does) cannot change it.
{
set -euo pipefail
me=fresh-root
. "$(dirname "$0")/../lib.sh"

suite=bookworm
cache=${XDG_CACHE_HOME:-$HOME/.cache}/kimg-fresh-root
keep=0 shell=0 readme=0
with=()
mirror=${KIMG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cuda=${CUDA_HOME:-/usr/local/cuda}
while [ $# -gt 0 ]; do
	case $1 in
	--suite) suite=${2:?}; shift 2 ;;
	--cache) cache=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--shell) shell=1; shift ;;
	--readme) readme=1; shift ;;
	--with) with+=("${2:?}"); shift 2 ;;
	-h | --help) show_help "$0"; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) break ;;
	esac
done
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install debootstrap)"
[ -x "$cuda/bin/nvcc" ] || echo "$me: warning: no CUDA toolkit at $cuda; the fixtures will not build" >&2
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)

base=$cache/$suite-minbase.tar
if [ ! -f "$base" ]; then
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/.build-XXXXXX")
	echo "$me: building a minimal $suite root (once; cached in $base)"
	debootstrap --variant=minbase "$suite" "$tmp/root" "$mirror" >"$tmp/log" 2>&1 ||
		{ tail -20 "$tmp/log" >&2; die "debootstrap failed (log: $tmp/log)"; }
	tar -C "$tmp/root" -cf "$base.part" . && mv "$base.part" "$base"
	rm -rf "$tmp"
fi

root=$(mktemp -d /var/tmp/kimg-fresh-XXXXXX)
mounts=()
cleanup() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
	if [ "$keep" = 1 ]; then echo "$me: root kept at $root"; else rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
tar -C "$root" -xf "$base"
bind() { # bind SRC DST [ro]
	mkdir -p "$root$2"
	mount --bind "$1" "$root$2"
	mounts+=("$root$2")
	[ "${3:-}" != ro ] || mount -o remount,bind,ro "$root$2"
}
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
bind /dev /dev
bind /dev/pts /dev/pts
bind /sys /sys
[ ! -d "$cuda" ] || bind "$(readlink -f "$cuda")" /usr/local/cuda ro
cp -L /etc/resolv.conf "$root/etc/resolv.conf"

# A fresh clone: what is committed at HEAD, nothing from this checkout's build.
git clone -q --no-local --no-hardlinks "$top" "$root/src/kimg"
echo "$me: $suite root at $root, clone of $(git -C "$top" rev-parse --short HEAD)"
for p in ${with[@]+"${with[@]}"}; do
	case $p in /* | *..*) die "--with $p: a path inside the checkout, relative to its top" ;; esac
	[ -e "$top/$p" ] || die "--with $p: no such file or directory in $top"
	mkdir -p "$root/src/kimg/$p"
	if [ -d "$top/$p" ]; then cp -a "$top/$p/." "$root/src/kimg/$p/"; else rmdir "$root/src/kimg/$p"; cp -a "$top/$p" "$root/src/kimg/$p"; fi
	echo "$me: copied $p into the clone"
done

if [ "$shell" = 1 ]; then
	chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c 'cd /src/kimg && exec bash -i'
	exit
fi
# run_in_root COMMAND: one command in the root, timed; sets rc.
run_in_root() {
	local start
	echo "$me: running: $1"
	start=$(date +%s)
	set +e
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "cd /src/kimg && $1"
	rc=$?
	set -e
	echo "$me: exit $rc after $(($(date +%s) - start)) s: $1 ($suite, minbase, fresh clone)"
}
if [ $# -gt 0 ]; then
	run_in_root "$*"
elif [ "$readme" = 1 ]; then
	# The README's two commands, exactly as the first lines of its first
	# code block show them, one after the other in the same root.
	mapfile -t cmds < <(sed -n '/^```sh/,/^```/{/^```/d;p}' "$root/src/kimg/README.md" | sed -n '1,2s/ *#.*//p')
	[ ${#cmds[@]} -eq 2 ] || die "expected two set-up commands at the top of README.md, found ${#cmds[@]}"
	status=0
	for c in "${cmds[@]}"; do
		run_in_root "$c"
		[ "$rc" -eq 0 ] || status=$rc
	done
	rc=$status
else
	run_in_root 'CI=true bash .ci/run'
fi
exit "$rc"
}
