#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Driver API under libkimg, through every way a program reaches the driver
# (docs/loading.md sections 2-4): linked symbols, dlsym on a dlopen handle,
# dlsym(RTLD_DEFAULT), cuGetProcAddress_v2 (static cudart 13), the 4-arg
# cuGetProcAddress, and flag 2 (_ptsz). For each: the program gets libkimg's
# wrappers, sees the driver's original error code, and kimg's JSON report
# names the call, kernel, images, device, verdict and fix.
# The fake driver decides with kimg's rules on a device given by FAKE_CUDA_SM.
. "$(dirname "$0")/../lib.bash" shim
HOOKED="cuModuleLoad cuModuleLoadData cuModuleLoadDataEx cuModuleLoadFatBinary cuModuleGetFunction
cuLibraryLoadData cuLibraryLoadFromFile cuLibraryGetKernel cuLibraryGetModule cuKernelGetFunction
cuLaunchKernel cuLaunchKernelEx cuLaunchCooperativeKernel"

all_wrapped() { local n; for n in $HOOKED; do has "$1" "$n owner: libkimg" || return 1; done; }

for access in direct dlsym default gpa gpa4 ptsz; do
	prog=$PROGS/drv_dl; [ $access = direct ] && prog=$PROGS/drv_direct
	# S1: sm_80 cubin on a 9.0 device -> 209 at cuModuleLoadData [V]
	run $access.load -- "$prog" $access load "$FIX/sm80.cubin"
	check "$access: every hooked function is libkimg's wrapper" all_wrapped $access.load
	check "$access: cuInit is wrapped too (shim/diag/driver_mismatch.c: 803, 804)" has $access.load "cuInit owner: libkimg"
	check "$access: program sees 209 from cuModuleLoadData" has $access.load "cuModuleLoadData: 209"
	check "$access: report 209 at cuModuleLoadData with sm_80, device 9.0, rule S1, fix sm_90" \
		report $access.load 'len(R) == 1 and first("cuModuleLoadData", 209) and archs(R[0]) == ["sm_80"]
			and R[0]["error"]["name"] == "CUDA_ERROR_NO_BINARY_FOR_GPU" and R[0]["device"]["sm"] == "9.0"
			and R[0]["verdict"]["rule"] == "S1" and "sm_90" in R[0]["fix"]["nvcc"]'
	# the CUDA 13 library path with a good container: silence
	run $access.good -- "$prog" $access lib "$FIX/multi.fatbin" axpy
	check "$access: good fatbin loads, kernel found, launches succeed" \
		has $access.good "cuLaunchKernel: 0"
	check "$access: no report for a working program" report $access.good 'R == []'
done

# which variant the wrapper forwards to: flag 2 reaches the _ptsz exports
check "gpa flag 0 launches cuLaunchKernel" has gpa.good "last: cuLaunchKernel"
check "ptsz flag 2 launches cuLaunchKernel_ptsz" has ptsz.good "last: cuLaunchKernel_ptsz"
check "ptsz flag 2 launches cuLaunchKernelEx_ptsz" has ptsz.good "last: cuLaunchKernelEx_ptsz"
check "ptsz flag 2 launches cuLaunchCooperativeKernel_ptsz" has ptsz.good "last: cuLaunchCooperativeKernel_ptsz"
check "direct cuLaunchKernelEx reaches the driver's cuLaunchKernelEx" has direct.good "last: cuLaunchKernelEx"
# the _v2 ABI trap: "cuGetProcAddress" at 12000 is the 5-argument function,
# whichever function was asked (docs/loading.md section 3)
check "v2 via cuGetProcAddress_v2: wrapped 5-arg function, status written" has gpa.load "refetch: 0 status 0 owner libkimg"
check "v2 via the 4-arg cuGetProcAddress: wrapped 5-arg function, status written" \
	has gpa4.load "v2 via 4-arg: 0 status 0 owner libkimg"
check "4-arg cuGetProcAddress itself is wrapped" has gpa4.load "cuGetProcAddress owner: libkimg"

# Codes the image rules cannot predict: the report says what the driver means.
head -c 4096 /dev/urandom >"$TMP/garbage.bin"
run garbage -- "$PROGS/drv_dl" gpa load "$TMP/garbage.bin"
check "garbage image: program sees 200 from cuModuleLoadData" has garbage "cuModuleLoadData: 200"
check "garbage image: report 200 with the driver's cause (corrupt, or compression too new)" \
	report garbage 'first("cuModuleLoadData", 200)["error"]["name"] == "CUDA_ERROR_INVALID_IMAGE"
		and "corrupt" in R[0]["error"]["cause"] and R[0]["module"]["images"] == []'
run nojit FAKE_CUDA_NO_JIT=1 -- "$PROGS/drv_dl" gpa load "$FIX/compute80.ptx"
check "no JIT library: program sees 221" has nojit "cuModuleLoadData: 221"
check "no JIT library: report 221, PTX image fits by the rules, cause names libnvidia-ptxjitcompiler" \
	report nojit 'first("cuModuleLoadData", 221)["verdict"]["outcome"] == "ptx_jit"
		and "libnvidia-ptxjitcompiler" in R[0]["error"]["cause"] and archs(R[0]) == ["compute_80"]'

# CUDA 13: cuLibraryLoadData succeeds, cuLibraryGetKernel gives 209 [V]
run lib_bad FAKE_CUDA_SM=75 -- "$PROGS/drv_dl" gpa lib "$FIX/multi.fatbin" axpy
check "7.5 device: cuLibraryLoadData 0" has lib_bad "cuLibraryLoadData: 0"
check "7.5 device: cuLibraryGetKernel 209" has lib_bad "cuLibraryGetKernel: 209"
check "report names cuLibraryGetKernel, kernel axpy, the container's images, device 7.5" \
	report lib_bad 'first("cuLibraryGetKernel", 209)["kernel"]["name"] == "axpy"
		and "sm_80" in archs(R[0]) and "sm_90" in archs(R[0]) and R[0]["device"]["sm"] == "7.5"'

# lazy loading: the error moves to cuKernelGetFunction and the launch
run lazy FAKE_CUDA_LAZY=1 -- "$PROGS/drv_dl" gpa lazy "$FIX/sm80.cubin" axpy
check "lazy: cuLibraryGetKernel 0" has lazy "cuLibraryGetKernel: 0"
check "lazy: cuKernelGetFunction 209" has lazy "cuKernelGetFunction: 209"
check "lazy: cuLaunchKernel 209 (original code)" has lazy "cuLaunchKernel: 209"
check "lazy: report at cuKernelGetFunction names kernel axpy and sm_80" \
	report lazy 'first("cuKernelGetFunction", 209)["kernel"]["name"] == "axpy"
		and archs(first("cuKernelGetFunction", 209)) == ["sm_80"]'

# files: cuModuleLoad and cuLibraryLoadFromFile name the file
run path -- "$PROGS/drv_direct" direct path "$FIX/sm80.cubin" axpy
check "cuModuleLoad: 209" has path "cuModuleLoad: 209"
check "cuModuleLoad report names the file" report path 'first("cuModuleLoad", 209)["module"]["file"].endswith("sm80.cubin")'
run libfile -- "$PROGS/drv_dl" dlsym libfile "$FIX/sm80.cubin" axpy
check "cuLibraryLoadFromFile: 0, then cuLibraryGetKernel: 209" has libfile "cuLibraryGetKernel: 209"
check "cuLibraryGetKernel report names the file and kernel" \
	report libfile 'first("cuLibraryGetKernel", 209)["module"]["file"].endswith("sm80.cubin")
		and R[0]["kernel"]["name"] == "axpy"'

# the other loaders
run loadex -- "$PROGS/drv_dl" dlsym loadex "$FIX/sm80.cubin"
check "cuModuleLoadDataEx: 209 and reported" report loadex 'first("cuModuleLoadDataEx", 209) is not None'
run fatbin FAKE_CUDA_SM=75 -- "$PROGS/drv_dl" gpa fatbin "$FIX/multi.fatbin"
check "cuModuleLoadFatBinary: 209 on 7.5" has fatbin "cuModuleLoadFatBinary: 209"
check "cuModuleLoadFatBinary reported with the container's images" \
	report fatbin '"sm_120" in archs(first("cuModuleLoadFatBinary", 209))'
run libmod -- "$PROGS/drv_dl" gpa libmod "$FIX/multi.fatbin" axpy
check "cuLibraryGetModule + cuModuleGetFunction on a good library: 0" has libmod "cuModuleGetFunction: 0"
check "no report" report libmod 'R == []'

# PTX (docs/rules.md P3, P4, P6): 218 raw target too new, 222 ISA too new, 223 JIT disabled
run ptx218 -- "$PROGS/drv_dl" gpa load "$FIX/compute100.ptx"
check "compute_100 PTX on 9.0: 218" has ptx218 "cuModuleLoadData: 218"
check "218 reported" report ptx218 'first("cuModuleLoadData", 218)["module"]["images"][0]["arch"] == "compute_100"'
sed 's/^\.version .*/.version 9.9/' "$FIX/compute80.ptx" >"$TMP/isa99.ptx"
run ptx222 -- "$PROGS/drv_dl" gpa load "$TMP/isa99.ptx"
check "PTX ISA 9.9 on a 13.0 driver: 222" has ptx222 "cuModuleLoadData: 222"
check "222 reported" report ptx222 'first("cuModuleLoadData", 222) is not None'
run ptx223 CUDA_DISABLE_PTX_JIT=1 -- "$PROGS/drv_dl" gpa load "$FIX/compute80.ptx"
check "PTX only with CUDA_DISABLE_PTX_JIT=1: 223" has ptx223 "cuModuleLoadData: 223"
check "223 reported" report ptx223 'first("cuModuleLoadData", 223) is not None'
run ptxok -- "$PROGS/drv_dl" gpa load "$FIX/compute80.ptx" axpy
check "compute_80 PTX JITs on 9.0: load, function, launch 0" has ptxok "cuLaunchKernel: 0"

# not an image error: a missing kernel in a module that fits (500, unconfirmed)
run missing -- "$PROGS/drv_dl" gpa load "$FIX/multi.fatbin" no_such_kernel
check "missing kernel: cuModuleGetFunction 500 passed through" has missing "cuModuleGetFunction: 500"
check "500 in a fitting module is not reported" report missing 'R == []'

# KIMG_DISABLE=1: nothing wrapped, nothing reported
run off KIMG_DISABLE=1 -- "$PROGS/drv_dl" gpa load "$FIX/sm80.cubin"
check "disabled: cuGetProcAddress_v2 not wrapped" has off "cuGetProcAddress_v2 owner: libcuda.so.1"
check "disabled: still 209" has off "cuModuleLoadData: 209"
check "disabled: no report" report off 'R == []'
finish
