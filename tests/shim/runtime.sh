#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shared cudart under libkimg (docs/loading.md section 1): the runtime entry
# points are interposed by symbol. The fake libcudart.so registers and loads
# like cudart 13 ([V] section 4): cuLibraryLoadData at registration, the
# error at cuLibraryGetKernel on first use. With FAKE_CUDART_PRIVATE=1 its
# driver calls bypass libkimg entirely, so only the runtime hooks
# (registration records, cudaFuncGetAttributes / cudaLaunchKernel failures)
# can produce the report.
. "$(dirname "$0")/../lib.bash" shim

run good -- "$PROGS/rt" "$FIX/multi.fatbin" axpy
check "9.0 device: registration, attributes, launch succeed" has good "cudaLaunchKernel: 0"
check "no report for a working program" report good 'R == []'

run bad FAKE_CUDA_SM=75 -- "$PROGS/rt" "$FIX/multi.fatbin" axpy
check "7.5 device: cudaFuncGetAttributes 209 (original code)" has bad "cudaFuncGetAttributes: 209"
check "cudaLaunchKernel 209" has bad "cudaLaunchKernel: 209"
check "cudaGetFuncBySymbol 209" has bad "cudaGetFuncBySymbol: 209"
check "report: the driver call inside the runtime, kernel axpy, all 9 images, device 7.5" \
	report bad 'first(code=209)["call"] == "cuLibraryGetKernel" and R[0]["kernel"]["name"] == "axpy"
		and len(R[0]["module"]["images"]) == 9 and R[0]["device"]["sm"] == "7.5"'

run private FAKE_CUDA_SM=75 FAKE_CUDART_PRIVATE=1 -- "$PROGS/rt" "$FIX/multi.fatbin" axpy
check "private driver table: still 209 at cudaLaunchKernel" has private "cudaLaunchKernel: 209"
check "report from the runtime hook: call cudaFuncGetAttributes, kernel axpy from __cudaRegisterFunction" \
	report private 'first("cudaFuncGetAttributes", 209)["kernel"]["name"] == "axpy"'
check "module found through the registration handle (__cudaRegisterFatBinary)" \
	report private 'first("cudaFuncGetAttributes", 209)["module"]["origin"] == "__cudaRegisterFatBinary"
		and "sm_80" in archs(R[0]) and R[0]["verdict"]["outcome"] == "cannot_run"'

# cudaGetDriverEntryPoint: the runtime's own (unwrapped) driver table; the
# hooked name comes back wrapped, any other name untouched
check "cudaGetDriverEntryPoint(cuLaunchKernel) returns libkimg's wrapper" \
	has private "cudaGetDriverEntryPoint: 0 owner libkimg"
check "cudaGetDriverEntryPoint(cuDeviceGet), a name kimg does not hook, returns the driver's function" \
	has private "cudaGetDriverEntryPoint cuDeviceGet: 0 owner libcuda.so.1"
check "cudaGetDriverEntryPointByVersion(cuGetProcAddress, 12000): wrapped _v2" \
	has private "cudaGetDriverEntryPointByVersion cuGetProcAddress 12000: 0 owner libkimg"
check "... which takes 5 arguments and wraps what it returns" \
	has private "via it, cuLaunchKernel flag 2: 0 status 0 owner libkimg"
check "cudaGetDriverEntryPoint_ptsz(cuLaunchKernel, flags 0): libkimg's wrapper ..." \
	has private "cudaGetDriverEntryPoint_ptsz: 0 owner libkimg"
check "... of the per-thread-stream variant: the launch reaches cuLaunchKernel_ptsz" \
	has private "via it, launch reaches: cuLaunchKernel_ptsz"
check "a versioned export for a function the runtime lacks: dlvsym finds none behind libkimg, 35" \
	has private "cudaLaunchKernelExC@libcudart.so.13: 35"
check "... and for a runtime version that is not loaded: 35, not the other runtime's answer" \
	has private "cudaFuncGetAttributes@libcudart.so.12: 35"

# ---- runtimes that version their symbols, as the real libcudart ----
# A reference to cudaLaunchKernel@libcudart.so.13 binds only to a definition
# of that version ([V] on the H200: plain exports never saw a program linked
# against the real runtime), so each hook is also exported per libcudart
# node (hook_runtime.c). One fake runtime per node, versioned by a version
# script, and rt.c linked against it (make fake-cudart-versioned,
# tests/fake_cuda/fake.mk); FAKE_CUDART_PRIVATE=1 keeps the driver hooks
# out, so every report below comes from a runtime hook.
for node in 13 12 11.0; do
	d=$FAKE/v$node rt=$PROGS/rt_v$node
	if ! { need "$d/libcudart.so.$node" "make fake-cudart-versioned" && need "$rt" "make fake-cudart-versioned"; }; then
		continue
	fi
	check "v$node: the program references cudaLaunchKernel, cudaFuncGetAttributes, __cudaRegisterFunction @libcudart.so.$node" \
		eval '[ "$(readelf --dyn-syms -W "$rt" | grep -cE " (cudaLaunchKernel|cudaFuncGetAttributes|__cudaRegisterFunction)@libcudart\.so\.$node( |$)")" = 3 ]'

	run "v${node}launch" FAKE_CUDA_SM=75 FAKE_CUDART_PRIVATE=1 LD_LIBRARY_PATH="$d:$FAKE" -- "$rt" \
		"$FIX/multi.fatbin" axpy launch-first
	check "v$node: launch returns the runtime's 209 unchanged" has "v${node}launch" "cudaLaunchKernel: 209"
	check "v$node: one report, from cudaLaunchKernel@libcudart.so.$node, kernel axpy from __cudaRegisterFunction@, module from __cudaRegisterFatBinary@" \
		report "v${node}launch" 'len(R) == 1 and R[0]["call"] == "cudaLaunchKernel" and R[0]["error"]["code"] == 209
			and R[0]["kernel"]["name"] == "axpy" and R[0]["module"]["origin"] == "__cudaRegisterFatBinary"
			and "sm_80" in archs(R[0]) and R[0]["device"]["sm"] == "7.5" and R[0]["verdict"]["outcome"] == "cannot_run"'

	run "v${node}attr" FAKE_CUDA_SM=75 FAKE_CUDART_PRIVATE=1 LD_LIBRARY_PATH="$d:$FAKE" -- "$rt" "$FIX/multi.fatbin" axpy
	check "v$node: cudaFuncGetAttributes@libcudart.so.$node reports first, kernel axpy" \
		report "v${node}attr" 'len(R) == 1 and R[0]["call"] == "cudaFuncGetAttributes" and R[0]["kernel"]["name"] == "axpy"'
	check "v$node: cudaGetDriverEntryPoint@libcudart.so.$node wraps the hooked name, passes others" \
		eval 'has "v${node}attr" "cudaGetDriverEntryPoint: 0 owner libkimg" &&
			has "v${node}attr" "cudaGetDriverEntryPoint cuDeviceGet: 0 owner libcuda.so.1"'
	check "v$node: cudaGetDriverEntryPointByVersion@libcudart.so.$node hands out the wrapped _v2" \
		has "v${node}attr" "via it, cuLaunchKernel flag 2: 0 status 0 owner libkimg"

	run "v${node}ok" FAKE_CUDART_PRIVATE=1 LD_LIBRARY_PATH="$d:$FAKE" -- "$rt" "$FIX/multi.fatbin" axpy
	check "v$node, 9.0 device: every call forwarded to that runtime, no report" \
		eval 'has "v${node}ok" "cudaFuncGetAttributes: 0" && has "v${node}ok" "cudaLaunchKernel: 0" &&
			has "v${node}ok" "cudaGetFuncBySymbol: 0" && [ "$(cat "$TMP/v${node}ok.rc")" = 0 ] && report "v${node}ok" "R == []"'
done

# ---- the runtime only in a dlopen'ed object's local scope ----
# An extension module (rt as a shared object, linked against the versioned
# libcudart.so.13) loaded RTLD_LOCAL, as Python loads extensions: its
# references find libkimg's global exports first, but RTLD_NEXT from libkimg
# does not see its runtime; the wrapper finds it by soname instead.
# Both built by make (tests/shim/shim.mk): rt_ext.so, rt.c with its main
# renamed rt_main, and rt_loader (tests/shim/progs/rt_loader.c).
d=$FAKE/v13 ext=$PROGS/rt_ext.so loader=$PROGS/rt_loader
if need "$d/libcudart.so.13" "make fake-cudart-versioned" && need "$ext" "make shim-tests" && need "$loader" "make shim-tests"; then
	run local FAKE_CUDA_SM=75 FAKE_CUDART_PRIVATE=1 LD_LIBRARY_PATH="$d:$FAKE" -- "$loader" "$ext" \
		"$FIX/multi.fatbin" axpy launch-first
	check "RTLD_LOCAL extension: registration and launch reach its runtime (209 from the launch, not 35)" \
		eval 'has local "registered: yes" && has local "cudaLaunchKernel: 209"'
	check "RTLD_LOCAL extension: report from cudaLaunchKernel, kernel axpy" \
		report local 'len(R) == 1 and R[0]["call"] == "cudaLaunchKernel" and R[0]["kernel"]["name"] == "axpy"'
	# The same extension finding an unversioned libcudart.so.13 first
	# ($FAKE's): glibc binds its versioned references to it, so must we.
	run localplain FAKE_CUDA_SM=75 FAKE_CUDART_PRIVATE=1 LD_LIBRARY_PATH="$FAKE" -- "$loader" "$ext" \
		"$FIX/multi.fatbin" axpy launch-first
	check "RTLD_LOCAL extension over an unversioned runtime: forwarded by plain name, 209 and the report" \
		eval 'has localplain "registered: yes" && has localplain "cudaLaunchKernel: 209" &&
			report localplain "len(R) == 1 and R[0][\"call\"] == \"cudaLaunchKernel\" and R[0][\"kernel\"][\"name\"] == \"axpy\""'
fi
finish
