#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libkimg.so's diagnosis end to end through the fake driver (no GPU): the
# text report a user reads, the JSON Lines log (KIMG_FORMAT/KIMG_LOG with
# %p), one report per (module, error) with kernels and modules counted in
# the summary, silence for 500 when an image fits (cuda_errors.h), the
# KIMG_ON_ERROR actions, KIMG_SKIP, and a bad option value warning.
. "$(dirname "$0")/../lib.bash" shim
out=$TMP/diagnose
mkdir -p "$out"
for f in "$FIX/sm80.cubin" "$FIX/multi.fatbin" "$PROGS/diagnose_prog"; do
	require "$f" "make BUILD=$BUILD fixtures shim-tests"
done
# the program under kimg with the fake driver as SM 9.0, its output captured by the caller
on_sm90() { under_kimg FAKE_CUDA_SM=90 "$@"; }
prog=$PROGS/diagnose_prog drv=$PROGS/drv_dl

# ---- text report on stderr ----
o=$(on_sm90 KIMG_LOG= "$prog" "$FIX/sm80.cubin" 2>&1 >/dev/null)
echo "$o" | sed 's/^/  /'
check "text: header names call, code, name, meaning" \
	eval 'echo "$o" | grep -qx "kimg: cuLibraryGetKernel returned 209 CUDA_ERROR_NO_BINARY_FOR_GPU (.*)"'
check "text: device line from the driver" eval 'echo "$o" | grep -qx "kimg:   device: Fake GPU (device 0), SM 9.0, driver 13.0, max PTX ISA 9.0"'
check "text: kernel named" eval 'echo "$o" | grep -qx "kimg:   kernel: axpy"'
check "text: module loaded by cuLibraryLoadData" eval 'echo "$o" | grep -qx "kimg:   module: (in memory, file unknown) (cuLibraryLoadData)"'
check "text: image row with S1 verdict" eval 'echo "$o" | grep -qE "^kimg:     0   sass  sm_80 .* no: .* \[S1\]$"'
check "text: fix for nvcc names sm_90" eval 'echo "$o" | grep -qE "^kimg: +nvcc: .*code=sm_90"'
check "text: host stack reaches main of the program" eval 'echo "$o" | grep -qE "^kimg:     #[0-9]+ +main\+0x[0-9a-f]+ \(diagnose_prog\+"'
check "text: first frame is the program, not libkimg" eval 'echo "$o" | grep -A1 "^kimg:   stack:" | tail -1 | grep -q "(diagnose_prog+"'
check "dedupe: one report for 3 failures of one module" eval '[ "$(echo "$o" | grep -c "returned 209")" -eq 1 ]'
check "summary: distinct kernels, one module" eval 'echo "$o" | grep -qx "kimg: 2 kernels in 1 module failed to load (see above)"'

# ---- two modules ----
o=$(on_sm90 KIMG_LOG= "$prog" "$FIX/sm80.cubin" "$FIX/sm80.cubin" 2>&1 >/dev/null)
check "dedupe: a second module gets its own report" eval '[ "$(echo "$o" | grep -c "returned 209")" -eq 2 ]'
check "summary: 3 kernels in 2 modules" eval 'echo "$o" | grep -qx "kimg: 3 kernels in 2 modules failed to load (see above)"'

# ---- when the log file is opened (docs/shim.md, docs/site-wide.md, libkimg.7; issue 31 item 4) ----
# On the first report; with KIMG_VERBOSE=1 in text format at load, with the
# banner as its first line; in JSON format the banner goes to stderr and a
# program without a failure leaves no file.
rm -f "$out"/when-*.log
env LD_PRELOAD="$LIB" KIMG_VERBOSE=1 KIMG_LOG="$out/when-text.log" "$PROGS/hello" >/dev/null 2>&1
check "text, KIMG_VERBOSE=1, no failure: the log is created at load, the banner its only line" \
	eval '[ "$(wc -l <"$out/when-text.log" 2>/dev/null)" = 1 ] && grep -q "^kimg [0-9][^ ]*: loaded into hello;" "$out/when-text.log"'
env LD_PRELOAD="$LIB" KIMG_VERBOSE=1 KIMG_FORMAT=json KIMG_LOG="$out/when-json.log" "$PROGS/hello" >/dev/null 2>&1
check "json, KIMG_VERBOSE=1, no failure: no log file (the banner went to stderr)" test ! -e "$out/when-json.log"
env LD_PRELOAD="$LIB" KIMG_LOG="$out/when-quiet.log" "$PROGS/hello" >/dev/null 2>&1
check "text, no KIMG_VERBOSE, no failure: no log file" test ! -e "$out/when-quiet.log"

# ---- JSON Lines log with %p ----
rm -f "$out"/k-*.log
o=$(on_sm90 KIMG_FORMAT=json KIMG_LOG="$out/k-%p.log" KIMG_VERBOSE=1 "$prog" "$FIX/sm80.cubin" 2>&1 >/dev/null)
logs=$(ls "$out"/k-*.log 2>/dev/null)
for f in $logs; do json_collect report-lines "$f" "json log with %p"; done
check "json: log file named by %p" eval '[ "$(echo "$logs" | wc -l)" -eq 1 ] && echo "$logs" | grep -qE "/k-[0-9]+\.log$"'
check "json: banner and summary go to stderr, not into the log" \
	eval 'echo "$o" | grep -q "^kimg 0" && echo "$o" | grep -q "failed to load" && ! grep -qv "^{" $logs'
check "json: one report, keys as documented" eval "python3 - $logs <<'PY'
import json, sys
reps = [json.loads(l) for l in open(sys.argv[1])]
assert len(reps) == 1, reps
r = reps[0]
assert r['error'] == {'code': 209, 'name': 'CUDA_ERROR_NO_BINARY_FOR_GPU', 'runtime_name': 'cudaErrorNoKernelImageForDevice', 'text': 'no kernel image suitable for the device', 'cause': 'no cubin or PTX in the module can run on this GPU with this driver'}
assert r['call'] == 'cuLibraryGetKernel' and r['kernel']['name'] == 'axpy'
assert r['device']['sm'] == '9.0' and r['device']['name'] == 'Fake GPU'
assert [i['arch'] for i in r['module']['images']] == ['sm_80']
assert r['module']['images'][0]['reason'] == 'different_major' and r['verdict']['rule'] == 'S1'
assert 'sm_90' in r['fix']['nvcc']
assert any('main' in f for f in r['stack'])
PY"


# ---- KIMG_LOG's %h: the host's name; "localhost" when gethostname fails ----
# (tests/probe/src/bad_hostname.so fails it with ENAMETOOLONG, the buffer
# left full of a cut name, as glibc leaves it: that name must not be used)
rm -f "$out"/h-*.log
on_sm90 KIMG_LOG="$out/h-%h.log" "$prog" "$FIX/sm80.cubin" >/dev/null 2>&1
check "%h: the host's name (hostname(1))" test -s "$out/h-$(hostname).log"
rm -f "$out"/h-*.log
on_sm90 LD_PRELOAD="$BUILD_DIR/tests/bad_hostname.so:$LIB" KIMG_LOG="$out/h-%h.log" "$prog" "$FIX/sm80.cubin" \
	>/dev/null 2>&1
check "%h with gethostname failing: localhost, not the cut name" \
	eval '[ "$(cd "$out" && echo h-*.log)" = h-localhost.log ]'
# ---- driver-API loads: by path, PTX too new for the device, PTX ISA too new ----
o=$(on_sm90 KIMG_LOG= "$drv" dlsym path "$FIX/sm80.cubin" axpy 2>&1)
check "path load: module is the file, offset 0, loaded by cuModuleLoad" \
	eval 'echo "$o" | grep -qx "kimg:   module: $FIX/sm80.cubin @ 0x0 (cuModuleLoad)"'
o=$(on_sm90 KIMG_LOG= "$drv" dlsym load "$FIX/compute100.ptx" axpy 2>&1)
check "218: compute_100 PTX on 9.0 is explained by P3" \
	eval 'echo "$o" | grep -q "^kimg: cuModuleLoadData returned 218 " && echo "$o" | grep -qE "^kimg:   why: .*\[P3\]$"'
sed 's/^\.version 9\.0$/.version 9.9/' "$FIX/compute80.ptx" >"$out/isa99.ptx"
o=$(on_sm90 KIMG_LOG= "$drv" dlsym load "$out/isa99.ptx" axpy 2>&1)
check "222: PTX ISA 9.9 on a 13.0 driver is explained by P4" \
	eval 'echo "$o" | grep -q "^kimg: cuModuleLoadData returned 222 " && echo "$o" | grep -qE "^kimg:     0   ptx   compute_80    9.9 .*\[P4\]$"'

# ---- 500 with a fitting image: silent ----
o=$(on_sm90 KIMG_LOG= "$prog" "$FIX/multi.fatbin" 2>&1)
check "500 on a module with a fitting image: no report" eval '! echo "$o" | grep -q "^kimg" && echo "$o" | grep -q "(axpy): 500\|(other): 500"'

# ---- KIMG_ON_ERROR ----
o=$(on_sm90 KIMG_LOG= KIMG_ON_ERROR=exit:86 "$prog" "$FIX/sm80.cubin" 2>&1); rc=$?
check "on_error exit:86: status 86 after the report and summary" \
	eval '[ $rc -eq 86 ] && echo "$o" | grep -q "returned 209" && echo "$o" | grep -q "failed to load" && ! echo "$o" | grep -q "(other)"'
o=$(on_sm90 KIMG_LOG= KIMG_ON_ERROR=abort "$prog" "$FIX/sm80.cubin" 2>&1); rc=$?
check "on_error abort: SIGABRT (134)" eval '[ $rc -eq 134 ] && echo "$o" | grep -q "returned 209"'
o=$(on_sm90 KIMG_LOG= "$prog" "$FIX/sm80.cubin" 2>&1); rc=$?
check "on_error continue (default): the program goes on, error unchanged" \
	eval '[ $rc -eq 0 ] && echo "$o" | grep -qx "cuLibraryGetKernel(other): 209"'

# ---- KIMG_SKIP and bad values ----
o=$(on_sm90 KIMG_LOG= KIMG_SKIP=diagnose_prog "$prog" "$FIX/sm80.cubin" 2>&1)
check "KIMG_SKIP=diagnose_prog: silent, error unchanged" eval '! echo "$o" | grep -q "^kimg" && echo "$o" | grep -qx "cuLibraryGetKernel(axpy): 209"'
o=$(on_sm90 KIMG_LOG= KIMG_FORMAT=xml "$prog" "$FIX/sm80.cubin" 2>&1)
check "bad KIMG_FORMAT: one warning naming it, text report still written" \
	eval '[ "$(echo "$o" | grep -c "^kimg: warning: KIMG_FORMAT=xml")" -eq 1 ] && echo "$o" | grep -q "^kimg: cuLibraryGetKernel returned 209"'
finish
