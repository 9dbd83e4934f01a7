#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# KIMG_AUDIT=1 end to end through the fake driver (no GPU): every module is
# checked against the device when it is loaded or registered, before any
# kernel runs; each one that cannot run gets one report (audit mark, fix),
# the exit summary counts them, and KIMG_ON_ERROR=exit:N stops the process
# at that load (a CI job fails at start-up). Modules that run: no output.
. "$(dirname "$0")/../lib.bash" shim
DRV=$PROGS/drv_dl

# ---- a library that cannot run (S1: sm_80 SASS on 9.0) ----
run lib KIMG_AUDIT=1 -- "$DRV" dlsym lib "$FIX/sm80.fatbin" axpy
check "reported at cuLibraryLoadData, before the kernel is looked up" \
	report lib 'len(R) == 1 and R[0]["call"] == "cuLibraryLoadData" and R[0]["audit"] is True
		and R[0]["error"]["code"] == 209 and R[0]["kernel"]["name"] is None
		and R[0]["verdict"]["rule"] == "S1" and "sm_90" in R[0]["fix"]["nvcc"]'
check "the program goes on and gets its own error (KIMG_ON_ERROR=continue)" has lib "cuLibraryGetKernel: 209"
check "summary: audit counts, the failure is counted once" \
	eval 'grep -qx "kimg: audit: 1 module load checked, 1 cannot run on this device (see above)" "$TMP/lib.err" &&
		grep -qx "kimg: 1 kernel in 1 module failed to load (see above)" "$TMP/lib.err"'

run libexit KIMG_AUDIT=1 KIMG_ON_ERROR=exit:3 -- "$DRV" dlsym lib "$FIX/sm80.fatbin" axpy
check "KIMG_ON_ERROR=exit:3: status 3 inside the load, nothing after it ran" \
	eval '[ "$(cat "$TMP/libexit.rc")" = 3 ] && ! grep -q "^cuLibraryLoadData:" "$TMP/libexit.out" &&
		report libexit "len(R) == 1 and R[0][\"audit\"] is True"'
check "KIMG_ON_ERROR=exit:3: the summary printed on the way out counts the module" \
	grep -qx "kimg: audit: 1 module load checked, 1 cannot run on this device (see above)" "$TMP/libexit.err"

# ---- a current device past the 64 whose facts kimg keeps (device_query.c):
# asked of the driver at each load, and the report is about that device ----
run dev70 KIMG_AUDIT=1 FAKE_CUDA_COUNT=72 FAKE_CUDA_DEVICE=70 -- "$DRV" dlsym lib "$FIX/sm80.fatbin" axpy
check "the context's device is 70 of 72: the load is checked against device 70, one report" \
	eval 'report dev70 "len(R) == 1 and R[0][\"audit\"] is True and R[0][\"device\"][\"ordinal\"] == 70
		and R[0][\"device\"][\"sm\"] == \"9.0\"" &&
		grep -qx "kimg: audit: 1 module load checked, 1 cannot run on this device (see above)" "$TMP/dev70.err"'

# ---- modules that run: silent ----
run good KIMG_AUDIT=1 KIMG_ON_ERROR=exit:3 -- "$DRV" dlsym lib "$FIX/multi.fatbin" axpy
check "a module that runs: no report, status 0, launch works" \
	eval '[ "$(cat "$TMP/good.rc")" = 0 ] && has good "cuLaunchKernel: 0" && report good "R == []"'
check "summary still says what was checked" \
	grep -qx "kimg: audit: 1 module load checked, 0 cannot run on this device" "$TMP/good.err"

# ---- a module loaded by path is the program's, never arch-dispatched ----
# (issue 23) the file holds code for this GPU too (a second container,
# sm_90) but the driver loads its first module (sm_100f only): the path
# was asked for by name, so it is reported, with the audit mark.
cat "$FIX/sm100f.fatbin" "$FIX/lineinfo.fatbin" >"$TMP/two.fatbin"
run bypath KIMG_AUDIT=1 -- "$DRV" dlsym path "$TMP/two.fatbin" axpy
check "by path from a file with code for this GPU: 209, one audit report (S4), counted as cannot run" \
	eval 'has bypath "cuModuleLoad: 209" && report bypath "len(R) == 1 and R[0][\"audit\"] is True
		and R[0][\"verdict\"][\"rule\"] == \"S4\"" &&
		grep -qx "kimg: audit: 1 module load checked, 1 cannot run on this device (see above)" "$TMP/bypath.err"'

# ---- driver-API module load: raw PTX for a newer target (218, P3) ----
run ptx KIMG_AUDIT=1 -- "$DRV" dlsym load "$FIX/compute100.ptx" axpy
check "raw PTX: audit report expects 218, the failing load itself is not reported again" \
	eval 'has ptx "cuModuleLoadData: 218" && report ptx "len(R) == 1 and R[0][\"audit\"] is True
		and R[0][\"error\"][\"code\"] == 218 and R[0][\"verdict\"][\"rule\"] == \"P3\""'

# ---- the shared runtime: registration ----
run rt KIMG_AUDIT=1 -- "$PROGS/rt" "$FIX/sm80.fatbin" axpy
check "runtime loading at registration: one report, at the load inside it" \
	report rt 'len(R) == 1 and R[0]["call"] == "cuLibraryLoadData" and R[0]["audit"] is True'
run rtreg KIMG_AUDIT=1 KIMG_ON_ERROR=exit:3 FAKE_CUDART_PRIVATE=1 -- "$PROGS/rt" "$FIX/sm80.fatbin" axpy
check "runtime with a private driver table: reported at __cudaRegisterFatBinary, exit 3 before registration returns" \
	eval '[ "$(cat "$TMP/rtreg.rc")" = 3 ] && ! grep -q "^registered:" "$TMP/rtreg.out" &&
		report rtreg "len(R) == 1 and R[0][\"call\"] == \"__cudaRegisterFatBinary\" and R[0][\"audit\"] is True
			and R[0][\"module\"][\"origin\"] == \"__cudaRegisterFatBinary\""'

# ---- a runtime that versions its symbols, as the real libcudart.so.13 ----
# (references bind only to __cudaRegisterFatBinary@libcudart.so.13; [V] on
# the H200 an unversioned export never saw PyTorch extensions register)
# (make fake-cudart-versioned: tests/fake_cuda/fake.mk)
if need "$FAKE/v13/libcudart.so.13" "make fake-cudart-versioned" && need "$PROGS/rt_v13" "make fake-cudart-versioned"; then
	run rtv13 KIMG_AUDIT=1 KIMG_ON_ERROR=exit:3 FAKE_CUDART_PRIVATE=1 LD_LIBRARY_PATH="$FAKE/v13:$FAKE" -- "$PROGS/rt_v13" \
		"$FIX/sm80.fatbin" axpy
	check "versioned runtime: the program's __cudaRegisterFatBinary@libcudart.so.13 reaches libkimg, exit 3" \
		eval '[ "$(cat "$TMP/rtv13.rc")" = 3 ] && report rtv13 "R[0][\"call\"] == \"__cudaRegisterFatBinary\""'
	run rtv13ok FAKE_CUDART_PRIVATE=1 LD_LIBRARY_PATH="$FAKE/v13:$FAKE" -- "$PROGS/rt_v13" "$FIX/multi.fatbin" axpy
	check "versioned runtime: registration forwarded to that runtime (dlvsym), program runs" \
		has rtv13ok "cudaLaunchKernel: 0"
fi

# ---- with the fallback: one report says both ----
run both KIMG_AUDIT=1 KIMG_FALLBACK=ptx KIMG_ON_ERROR=exit:4 -- "$DRV" dlsym lib "$FIX/sm80.fatbin" axpy
check "audit + fallback on a SASS-only module: one report, not rescuable, exit 4 at the load" \
	eval '[ "$(cat "$TMP/both.rc")" = 4 ] && report both "len(R) == 1 and R[0][\"audit\"] is True
		and R[0][\"fallback\"][\"applied\"] is False"'
run rescued KIMG_AUDIT=1 KIMG_FALLBACK=ptx KIMG_ON_ERROR=exit:4 -- "$DRV" dlsym lib "$FIX/ptx100.fatbin" axpy
check "audit + fallback on a rescuable module: the fallback report only, no exit" \
	eval '[ "$(cat "$TMP/rescued.rc")" = 0 ] && report rescued "len(R) == 1 and \"audit\" not in R[0]
		and R[0][\"fallback\"][\"applied\"] is True"'

# ---- text ----
run text KIMG_AUDIT=1 KIMG_FORMAT=text KIMG_LOG= -- "$DRV" dlsym lib "$FIX/sm80.fatbin" axpy
check "text: the headline says it is an audit finding at the load" \
	grep -qx "kimg: audit: cuLibraryLoadData loads a module that cannot run on this device: 209 CUDA_ERROR_NO_BINARY_FOR_GPU (.*)" \
	"$TMP/text.err"

# ---- grouping: one report per (file, cause) ----
# a library registering two sm_80-only modules, and libdisp.so (sm_90 +
# sm_100f): tests/shim/progs/disp.c around fixtures, built by make fixtures
MAIN=$PROGS/disp_main
TWO80=$BUILD_DIR/shim-tests/disp/libtwo80.so DISP=$BUILD_DIR/shim-tests/disp/libdisp.so
need "$TWO80" "make BUILD=$BUILD fixtures"
need "$DISP" "make BUILD=$BUILD fixtures"
run group KIMG_AUDIT=1 -- "$MAIN" "$TWO80" probe
check "two modules of one file, same cause: one report with the module count, the representative's images" \
	report group 'len(R) == 1 and R[0]["audit"] is True and R[0]["audit_modules"] == 2
		and R[0]["module"]["file"] == "'"$TWO80"'" and archs(R[0]) == ["sm_80"] and R[0]["verdict"]["rule"] == "S1"'
check "... the later lookups in both are counted, not reported; summary and one line for the group" \
	eval 'has group "probe B: 209" && grep -qx "kimg: audit: 2 module loads checked, 2 cannot run on this device (see above: 1 report)" "$TMP/group.err" &&
		grep -qx "kimg: audit:   $TWO80: 2 modules cannot run (cubin for another major version \[S1\], error 209), one report" "$TMP/group.err"'
run grouptext KIMG_AUDIT=1 KIMG_FORMAT=text KIMG_LOG= -- "$MAIN" "$TWO80" probe
check "text: one block, the headline says it stands for 2 modules" \
	eval '[ "$(grep -c "^kimg: audit: cuLibraryLoadData loads" "$TMP/grouptext.err")" = 1 ] &&
		grep -q "; 2 modules of this file, same cause: this report stands for all$" "$TMP/grouptext.err"'
run disp KIMG_AUDIT=1 -- "$MAIN" "$DISP" probe
check "a module for other GPUs next to code for this one: counted as arch-dispatched, not reported" \
	eval 'report disp "R == []" && grep -qx "kimg: audit: 2 module loads checked, 0 cannot run on this device; 1 arch-dispatched (for other GPUs, in files with code for this one), not reported" "$TMP/disp.err"'

# ---- registered before libcuda is loaded: the device from NVML ----
# A runtime whose driver is not there (yet): the shim asks NVML
# (sys/nvml.c) for the first device of CUDA_VISIBLE_DEVICES, without
# initialising CUDA. The stand-in NVML's SM (FAKE_NVML_SM) is the oracle:
# the stand-in driver, which would say 9.0, is not on the path.
# (the stand-in NVML built by make: tests/fake_cuda/fake.mk)
fake_standin "$FAKE_NVML/libnvidia-ml.so.1"
NV=$TMP/nvml
mkdir -p "$NV" && cp "$FAKE"/libcudart.so* "$FAKE_NVML/libnvidia-ml.so.1" "$NV"/ ||
	fail "cannot gather the stand-in runtime and NVML in $NV"
run nvml KIMG_AUDIT=1 FAKE_NVML_SM=120 LD_LIBRARY_PATH="$NV" -- "$PROGS/rt" "$FIX/sm80.fatbin" axpy
check "no driver loaded: the device is NVML's first (SM 12.0, not Tegra), the module reported at its registration" \
	report nvml 'len(R) == 1 and R[0]["call"] == "__cudaRegisterFatBinary" and R[0]["audit"] is True
		and R[0]["device"]["sm"] == "12.0" and R[0]["device"]["tegra"] is False and R[0]["device"]["ordinal"] == 0
		and R[0]["error"]["code"] == 209'
run nvmlvis KIMG_AUDIT=1 FAKE_NVML_SM=80 FAKE_NVML_COUNT=2 CUDA_VISIBLE_DEVICES=1 LD_LIBRARY_PATH="$NV" -- \
	"$PROGS/rt" "$FIX/sm80.fatbin" axpy
check "CUDA_VISIBLE_DEVICES=1 of 2: asked by that index (SM 8.0: the module runs, nothing reported)" \
	eval 'report nvmlvis "R == []" && grep -qx "kimg: audit: 1 module load checked, 0 cannot run on this device" "$TMP/nvmlvis.err"'
for how in "FAKE_NVML_FAIL=1" "CUDA_VISIBLE_DEVICES=2 FAKE_NVML_COUNT=2" "CUDA_VISIBLE_DEVICES="; do
	run nvmlno KIMG_AUDIT=1 $how LD_LIBRARY_PATH="$NV" -- "$PROGS/rt" "$FIX/sm80.fatbin" axpy
	check "NVML cannot say ($how): not checked, counted as such" \
		eval 'report nvmlno "R == []" && grep -qx "kimg: audit: 0 module loads checked, 0 cannot run on this device; 1 registered before the device could be asked, not checked" "$TMP/nvmlno.err"'
done

# ---- off ----
run off -- "$DRV" dlsym lib "$FIX/sm80.fatbin" axpy
check "KIMG_AUDIT unset: the failure is reported where it happens, no audit mark" \
	report off 'len(R) == 1 and R[0]["call"] == "cuLibraryGetKernel" and "audit" not in R[0]'
finish
