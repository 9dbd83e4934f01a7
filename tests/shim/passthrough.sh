#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libkimg is a guest: a process that never uses CUDA, or runs where there is
# no libcuda, behaves exactly as without it (same stdout, stderr, exit
# status), and other interposers that look up symbols with
# dlsym(RTLD_NEXT, ...) keep working (docs/loading.md section 7.1).
. "$(dirname "$0")/../lib.bash" shim

# no libcuda anywhere: LD_LIBRARY_PATH does not name the fake driver
plain() { env -u LD_PRELOAD LD_LIBRARY_PATH=/nonexistent "$@"; }
kimg() { env LD_PRELOAD="$LIB" LD_LIBRARY_PATH=/nonexistent "$@"; }
plain "$PROGS/no_cuda" >"$TMP/a.out" 2>"$TMP/a.err"; echo $? >"$TMP/a.rc"
kimg "$PROGS/no_cuda" >"$TMP/b.out" 2>"$TMP/b.err"; echo $? >"$TMP/b.rc"
check "no libcuda: same stdout" cmp -s "$TMP/a.out" "$TMP/b.out"
check "no libcuda: same stderr" cmp -s "$TMP/a.err" "$TMP/b.err"
check "no libcuda: same exit status (7)" test "$(cat "$TMP/a.rc") $(cat "$TMP/b.rc")" = "7 7"
check "dlsym(RTLD_DEFAULT, cu*/cuda* names) stays NULL without a driver" \
	grep -qx "probe cuLaunchKernel: absent" "$TMP/b.out"
check "... for the runtime registration name too" grep -qx "probe __cudaRegisterFatBinary: absent" "$TMP/b.out"
check "a NULL for a driver name leaves dlerror() naming it, RTLD_DEFAULT and dlopen(NULL) (ctypes.CDLL(None).cuInit crashed Python)" \
	eval 'grep -qx "default cuInit: absent, dlerror names it" "$TMP/b.out" &&
		grep -qx "self cuLaunchKernel: absent, dlerror names it" "$TMP/b.out"'

# A program that references the driver and runtime weakly, linked against
# neither: under kimg with neither present its references bind to kimg's
# exports, which have nothing behind them (shim/hook/hook.h): cuInit 3
# (CUDA_ERROR_NOT_INITIALIZED), each runtime call 35 (cudaErrorInsufficientDriver,
# "no driver"), registrations NULL or nothing; never a call through NULL.
require "$PROGS/weak_cuda" "make shim-tests"
kimg "$PROGS/weak_cuda" >"$TMP/w.out" 2>"$TMP/w.err"; echo $? >"$TMP/w.rc"
check "weak references, no driver or runtime: the program ends 0, nothing on stderr" \
	eval '[ "$(cat "$TMP/w.rc")" = 0 ] && [ ! -s "$TMP/w.err" ]'
check "... cuInit 3, every one of the 23 runtime calls 35, registrations NULL or nothing" \
	eval 'grep -qx "cuInit: 3" "$TMP/w.out" && [ "$(grep -c "^cuda[A-Za-z_]*: 35$" "$TMP/w.out")" = 23 ] &&
		grep -qx "__cudaRegisterFatBinary: NULL" "$TMP/w.out" &&
		[ "$(grep -c "^__cudaRegister[A-Za-z]*: returned$" "$TMP/w.out")" = 3 ] &&
		[ "$(wc -l <"$TMP/w.out")" = 28 ]'

# with the fake driver installed but never used: still identical
env -u LD_PRELOAD LD_LIBRARY_PATH="$FAKE" "$PROGS/no_cuda" >"$TMP/c.out" 2>"$TMP/c.err"; echo $? >"$TMP/c.rc"
env LD_PRELOAD="$LIB" LD_LIBRARY_PATH="$FAKE" "$PROGS/no_cuda" >"$TMP/d.out" 2>"$TMP/d.err"; echo $? >"$TMP/d.rc"
check "driver present, unused: same stdout" cmp -s "$TMP/c.out" "$TMP/d.out"
check "driver present, unused: same stderr and status" \
	test "$(cat "$TMP/c.err" "$TMP/c.rc")" = "$(cat "$TMP/d.err" "$TMP/d.rc")"

# a second interposer preloaded after libkimg: dlsym(RTLD_NEXT, "puts") must
# reach libc's puts, not libwrap_puts' own (which would recurse)
env LD_PRELOAD="$LIB $PROGS/libwrap_puts.so" "$PROGS/hello" >"$TMP/e.out" 2>"$TMP/e.err"
check "RTLD_NEXT from a later preload resolves after that preload (hello)" \
	grep -qx "\[wrapped\] hello" "$TMP/e.out"
check "... every call, no recursion" test "$(grep -c '^\[wrapped\] ' "$TMP/e.out")" = 2
check "... nothing on stderr" test ! -s "$TMP/e.err"
# and before libkimg in the list: same answer
env LD_PRELOAD="$PROGS/libwrap_puts.so $LIB" "$PROGS/hello" >"$TMP/f.out" 2>"$TMP/f.err"
check "RTLD_NEXT from an earlier preload resolves past libkimg" \
	test "$(cat "$TMP/f.out")" = "$(printf '[wrapped] hello\n[wrapped] again')"
finish
