#!/usr/bin/env bash
# shim/stack.c end to end, without a GPU: host frames of a known call chain
# (libunwind names static functions through .symtab; backtrace() must at
# least find the frames), demangling through a run-time __cxa_demangle,
# and Python frames read through ctypes: PyDLL holds the GIL (frames
# expected), CDLL releases it (kimg must not walk: no frames).
set -u
BUILD=${BUILD:-build}
out=$BUILD/tests/stack
mkdir -p "$out"
fail=0
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fail=1; fi; }
CFLAGS="-D_GNU_SOURCE -Icore -Isys -Ireport -Ishim -std=c11 -O2 -g -Wall -Wextra"

gcc $CFLAGS -o "$out/stack_probe" tests/shim/stack_probe.c shim/stack.c -ldl -lpthread || exit 1
gcc $CFLAGS -shared -fPIC -DSTACK_PROBE_LIB -o "$out/libstack_probe.so" tests/shim/stack_probe.c shim/stack.c \
	-ldl -lpthread || exit 1

# ---- host frames ----
if [ -e /usr/lib/x86_64-linux-gnu/libunwind.so.8 ] || ldconfig -p 2>/dev/null | grep -q 'libunwind.so.8 '; then
	o=$("$out/stack_probe" libunwind)
	echo "$o" | sed 's/^/  /'
	check "libunwind: chosen by auto" '"$out/stack_probe" auto | grep -q "^unwinder libunwind$"'
	# innermost first: print_host, probe_inner, probe_middle, probe_outer, main
	order=$(echo "$o" | grep -o -E '^frame (probe_inner|probe_middle|probe_outer|main)\+' | tr -d '+' | awk '{print $2}' | tr '\n' ' ')
	check "libunwind: static functions named, innermost first" '[ "$order" = "probe_inner probe_middle probe_outer main " ]'
	check "libunwind: frames name their object" 'echo "$o" | grep -q "^frame probe_inner+0x[0-9a-f]* (stack_probe+0x[0-9a-f]*)$"'
else
	echo "SKIP libunwind.so.8 not installed"
fi
o=$("$out/stack_probe" backtrace)
echo "$o" | sed 's/^/  /'
check "backtrace(): at least 5 frames" '[ "$(echo "$o" | grep -c "^frame ")" -ge 5 ]'
check "backtrace(): frames in the program" 'echo "$o" | grep -q "(stack_probe+0x"'
check "no Python in a C program: 0 frames" 'echo "$o" | grep -q "^python frames 0$"'

# ---- demangling ----
o=$("$out/stack_probe" demangle)
echo "$o" | sed 's/^/  /'
check "demangle: no __cxa_demangle loaded -> mangled only" 'echo "$o" | grep -q "^before: 0$"'
check "demangle: after libstdc++ is loaded (RTLD_LOCAL, as by Python)" 'echo "$o" | grep -q "^after: 1 foo::bar(int)$"'
check "demangle: plain C names are left alone" 'echo "$o" | grep -q "^plain: 0$"'
check "demangle: output truncated and terminated" 'echo "$o" | grep -q "^truncated: 1 foo::$"'

# ---- Python frames ----
if command -v python3 >/dev/null; then
	o=$(python3 - "$out/libstack_probe.so" <<'PY'
import ctypes, sys
def level2(lib):
    buf = ctypes.create_string_buffer(8192)
    n = lib.probe_python_stack(buf, len(buf))
    return n, buf.value.decode()
def level1(lib):
    return level2(lib)
held = ctypes.PyDLL(sys.argv[1])      # keeps the GIL during the call
n, text = level1(held)
print("held", n)
print(text, end="")
free = ctypes.CDLL(sys.argv[1])       # releases the GIL
n, text = level1(free)
print("released", n)
buf = ctypes.create_string_buffer(512)
held.probe_host_first(buf, len(buf))
print("host-first", buf.value.decode())
PY
)
	echo "$o" | sed 's/^/  /'
	first3=$(echo "$o" | sed -n '2,4p' | cut -d: -f3 | tr '\n' ' ')
	check "python: innermost first (level2 level1 <module>)" '[ "$first3" = "level2 level1 <module> " ]'
	check "python: file and line of the call" 'echo "$o" | sed -n 2p | grep -q "^<stdin>:[0-9][0-9]*:level2$"'
	check "python: GIL released -> no frames" 'echo "$o" | grep -q "^released 0$"'
	check "host: skip_self leaves out the probe object" 'echo "$o" | grep "^host-first " | grep -vq "libstack_probe.so"'
else
	echo "SKIP python3 not installed"
fi
exit $fail
