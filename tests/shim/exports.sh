#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libkimg.so exports exactly the symbols listed in shim/libkimg.map (docs/design.md
# section 9), each with its version: every KIMG_1.0 name as name@@KIMG_1.0,
# dlsym in both versions (dlsym@@GLIBC_2.34 and the base dlsym@GLIBC_2.2.5,
# GLIBC_2.17 on aarch64,
# docs/loading.md section 7.1), and every shared-runtime hook (cuda* and
# __cuda* names) also as name@<node> for each libcudart.so.* node of the map
# (references made against the real, versioned libcudart bind only to
# those; hook_runtime.c). The hooks layer requires no glibc symbol version
# newer than the base one. The pass-through dlsym is a tail jump, so glibc
# sees the caller's return address.
. "$(dirname "$0")/../lib.bash" shim
# The base glibc version and the tail jump are the library's architecture's
# (its ELF header, not the host: the aarch64 build runs here under qemu).
case $(readelf -h "$LIB" | awk '/Machine:/ {print $2}') in
AArch64) base=GLIBC_2.17 disasm=aarch64-linux-gnu-objdump nm=aarch64-linux-gnu-nm plant_cc=aarch64-linux-gnu-gcc tailjump='br[[:space:]]+x[0-9]+' ;;
*) base=GLIBC_2.2.5 disasm=objdump nm=nm plant_cc=${CC:-cc} tailjump='jmpq?[[:space:]]+\*%r' ;; # binutils < 2.38 print jmpq
esac
map=$(sed 's#/\*.*\*/##' shim/libkimg.map | sed '/\/\*/,/\*\//d')
kimg=$(echo "$map" | awk '/^KIMG_1\.0 \{/ {on = 1; next} on && /local:/ {on = 0} on' |
	grep -oE '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*;' | tr -d ' \t;')
nodes=$(echo "$map" | grep -oE '^libcudart\.so\.[0-9.]+' | sort -u)
runtime=$(echo "$kimg" | grep -E '^(__)?cuda')
want=$( {
	echo "dlsym@@GLIBC_2.34"
	echo "dlsym@$base"
	for s in $kimg; do echo "$s@@KIMG_1.0"; done
	for s in $runtime; do for n in $nodes; do echo "$s@$n"; done; done
} | sort -u)
got=$(readelf --dyn-syms -W "$LIB" | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $4 != "OBJECT" {print $8}' |
	sort -u)
check "map read: 3 libcudart nodes, 27 runtime hooks, 59 KIMG_1.0 names" \
	test "$(echo "$nodes" | wc -l) $(echo "$runtime" | wc -l) $(echo "$kimg" | wc -l)" = "3 27 59"
check "exported functions, with versions == version script list + runtime names per libcudart node ($(echo "$want" | wc -l))" \
	test "$want" = "$got"
[ "$want" = "$got" ] || diff <(echo "$want") <(echo "$got") | sed 's/^/   /'
check "cudaLaunchKernel@libcudart.so.13 exported (a non-default version)" bash -c \
	"readelf --dyn-syms -W '$LIB' | grep -q ' cudaLaunchKernel@libcudart.so.13$'"
check "no kimg_ internals exported" bash -c "! readelf --dyn-syms -W '$LIB' | awk '\$7 != \"UND\"' | grep -q ' kimg_'"
# Versions the hooks layer itself requires (its objects, not the rest):
# every dl* it calls pinned to the base version (shim/shim_pins.h), none
# newer. glibc_violations OBJ... prints each offending reference, and fails
# when an object cannot be read: an empty or unreadable list is an error,
# never a pass (issue 23: a stale glob once made this check empty).
glibc_violations() {
	local syms
	[ $# -gt 0 ] || { echo "no objects"; return 1; }
	syms=$($nm -u "$@") || { echo "nm -u failed"; return 1; }
	echo "$syms" | awk -v base="@$base" '$2 ~ /^dl/ && index($2, "@") == 0 {print $2 " (unpinned)"}
		$2 ~ /@GLIBC_/ {v = substr($2, index($2, "@")); if (v != base) print $2}'
}
hook_src=$(ls shim/hook/*.c | wc -l)
hookobj=()
# make asan-test builds the shim plain, in $BUILD/plain (see the Makefile)
hookdir=$BUILD/obj/shim/hook
[ -d "$BUILD/plain/obj/shim/hook" ] && hookdir=$BUILD/plain/obj/shim/hook
for c in shim/hook/*.c; do hookobj+=("$hookdir/$(basename "${c%.c}").o"); done
check "hooks layer: one object per shim/hook/*.c ($hook_src), each present" \
	bash -c 'for o; do [ -s "$o" ] || exit 1; done' _ "${hookobj[@]}"
bad=$(glibc_violations "${hookobj[@]}"; echo "rc=$?")
check "hooks layer references only base-version glibc symbols (dl*: @$base)" test "$bad" = "rc=0"
[ "$bad" = "rc=0" ] || echo "$bad" | sed 's/^/   /'
# the check itself catches a planted newer version, an unpinned dl*, and
# an unreadable object (compiled here: they are the check's own inputs)
plant=$(mktemp -d)
printf '%s\n' '#include <dlfcn.h>' '__asm__(".symver dlopen,dlopen@GLIBC_2.34");' \
	'void *kimg_plant(void) { return dlopen("x", 0); }' >"$plant/newer.c"
printf '%s\n' '#include <dlfcn.h>' 'void *kimg_plant(void) { return dlopen("x", 0); }' >"$plant/unpinned.c"
: >"$plant/empty.o"
$plant_cc -c -o "$plant/newer.o" "$plant/newer.c" 2>/dev/null
$plant_cc -c -o "$plant/unpinned.o" "$plant/unpinned.c" 2>/dev/null
expect_match "planted dlopen@GLIBC_2.34 is reported" 'dlopen@GLIBC_2\.34' "$(glibc_violations "$plant/newer.o")"
expect_match "planted unpinned dlopen is reported" 'dlopen \(unpinned\)' "$(glibc_violations "$plant/unpinned.o")"
expect_match "an unreadable object fails the check (glibc_violations)" 'nm -u failed' "$(glibc_violations "$plant/empty.o" 2>/dev/null)"
expect_match "no object at all fails the check" 'no objects' "$(glibc_violations)"
rm -rf "$plant"
echo "   glibc versions libkimg.so requires (objdump -T; informative):" \
	$(objdump -T "$LIB" | awk '$2 != "g" && /\*UND\*/' | grep -oE 'GLIBC_[0-9.]+' | sort -uV | tr '\n' ' ')
check "dlsym pass-through ends in a tail jump (x86-64: jmp *%rax; aarch64: br x16)" bash -c \
	"$disasm -d --no-show-raw-insn '$LIB' | awk '/<dlsym@@GLIBC_2.34>:/,/^\$/' | grep -qE '$tailjump'"
finish
