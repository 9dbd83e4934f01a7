#!/usr/bin/env bash
# Shared cudart under libkimg (cuda-loading.md section 1): the runtime entry
# points are interposed by symbol. The fake libcudart.so registers and loads
# like cudart 13 ([V] section 4): cuLibraryLoadData at registration, the
# error at cuLibraryGetKernel on first use. With FAKE_CUDART_PRIVATE=1 its
# driver calls bypass libkimg entirely, so only the runtime hooks
# (registration records, cudaFuncGetAttributes / cudaLaunchKernel failures)
# can produce the report.
. "$(dirname "$0")/shimlib.bash"

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
check "cudaGetDriverEntryPoint(cuInit) returns the driver's function" \
	has private "cudaGetDriverEntryPoint cuInit: 0 owner libcuda.so.1"
check "cudaGetDriverEntryPointByVersion(cuGetProcAddress, 12000): wrapped _v2" \
	has private "cudaGetDriverEntryPointByVersion cuGetProcAddress 12000: 0 owner libkimg"
check "... which takes 5 arguments and wraps what it returns" \
	has private "via it, cuLaunchKernel flag 2: 0 status 0 owner libkimg"
finish
