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
AArch64) base=GLIBC_2.17 disasm=aarch64-linux-gnu-objdump tailjump='br[[:space:]]+x[0-9]+' ;;
*) base=GLIBC_2.2.5 disasm=objdump tailjump='jmpq?[[:space:]]+\*%r' ;; # binutils < 2.38 print jmpq
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
check "map read: 3 libcudart nodes, 15 runtime hooks, 42 KIMG_1.0 names" \
	test "$(echo "$nodes" | wc -l) $(echo "$runtime" | wc -l) $(echo "$kimg" | wc -l)" = "3 15 42"
check "exported functions, with versions == version script list + runtime names per libcudart node ($(echo "$want" | wc -l))" \
	test "$want" = "$got"
[ "$want" = "$got" ] || diff <(echo "$want") <(echo "$got") | sed 's/^/   /'
check "cudaLaunchKernel@libcudart.so.13 exported (a non-default version)" bash -c \
	"readelf --dyn-syms -W '$LIB' | grep -q ' cudaLaunchKernel@libcudart.so.13$'"
check "no kimg_ internals exported" bash -c "! readelf --dyn-syms -W '$LIB' | awk '\$7 != \"UND\"' | grep -q ' kimg_'"
# versions the hooks layer itself requires (its objects, not the rest)
hookobj=$(ls "$BUILD"/obj/shim/hook_*.o "$BUILD"/obj/shim/real.o "$BUILD"/obj/shim/init.o 2>/dev/null)
newer=$(nm -u $hookobj 2>/dev/null | grep -oE '@GLIBC_[0-9.]+' | sort -u | grep -vxF "@$base" || true)
check "hooks layer references only base-version glibc symbols (dl*: @$base)" test -z "$newer"
echo "   glibc versions libkimg.so requires (objdump -T; informative):" \
	$(objdump -T "$LIB" | awk '$2 != "g" && /\*UND\*/' | grep -oE 'GLIBC_[0-9.]+' | sort -uV | tr '\n' ' ')
check "dlsym pass-through ends in a tail jump (x86-64: jmp *%rax; aarch64: br x16)" bash -c \
	"$disasm -d --no-show-raw-insn '$LIB' | awk '/<dlsym@@GLIBC_2.34>:/,/^\$/' | grep -qE '$tailjump'"
finish
