#!/usr/bin/env bash
# libkimg.so exports exactly the symbols listed in shim/libkimg.map (STYLE.md
# section 9), dlsym in both versions (dlsym@@GLIBC_2.34 and the base
# dlsym@GLIBC_2.2.5, cuda-loading.md section 7.1), and the hooks layer
# requires no glibc symbol version newer than the base one. The pass-through
# dlsym is a tail jump, so glibc sees the caller's return address.
. "$(dirname "$0")/shimlib.bash"
want=$(sed 's#/\*.*\*/##' shim/libkimg.map | grep -oE '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*;' | tr -d ' \t;' | sort -u)
got=$(readelf --dyn-syms -W "$LIB" | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $4 != "OBJECT" {print $8}' |
	sed 's/@.*//' | sort -u)
check "exported functions == version script list" test "$want" = "$got"
[ "$want" = "$got" ] || diff <(echo "$want") <(echo "$got") | sed 's/^/   /'
check "dlsym@@GLIBC_2.34 exported" bash -c "readelf --dyn-syms -W '$LIB' | grep -q ' dlsym@@GLIBC_2.34$'"
check "dlsym@GLIBC_2.2.5 exported" bash -c "readelf --dyn-syms -W '$LIB' | grep -q ' dlsym@GLIBC_2.2.5$'"
check "no kimg_ internals exported" bash -c "! readelf --dyn-syms -W '$LIB' | awk '\$7 != \"UND\"' | grep -q ' kimg_'"
# versions the hooks layer itself requires (its objects, not the rest)
hookobj=$(ls "$BUILD"/obj/shim/hook_*.o "$BUILD"/obj/shim/real.o "$BUILD"/obj/shim/init.o 2>/dev/null)
newer=$(nm -u $hookobj 2>/dev/null | grep -oE '@GLIBC_[0-9.]+' | sort -u | grep -vE '@GLIBC_2\.2\.5$' || true)
check "hooks layer references only base-version glibc symbols (dl*: @GLIBC_2.2.5)" test -z "$newer"
echo "   glibc versions libkimg.so requires (objdump -T; informative):" \
	$(objdump -T "$LIB" | awk '$2 != "g" && /\*UND\*/' | grep -oE 'GLIBC_[0-9.]+' | sort -uV | tr '\n' ' ')
check "dlsym pass-through ends in a tail jump (x86-64: jmp *%rax)" bash -c \
	"[ \"\$(uname -m)\" != x86_64 ] || objdump -d --no-show-raw-insn '$LIB' | awk '/<dlsym@@GLIBC_2.34>:/,/^\$/' | grep -qE 'jmp +\*%r'"
finish
