#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kimg-probe check: verdicts, fixes and exit codes on the nvcc-built
# fixtures (docs/rules.md sections 1-3, 8; docs/format.md section 2).
. "$(dirname "$0")/../lib.bash" probe

# The module holding kernels is the last one; the first is nvcc 13's link stub.
# sm80_exe on 9.0: S1, 209, the exact nvcc fix (docs/rules.md section 8).
run "$PROBE" check --sm 8.6,9.0,"RTX 4060 Ti" --json "$FX/sm80_exe"
expect_rc 1 "check sm80_exe on 8.6,9.0,RTX 4060 Ti"
expect_json "targets: 8.6 and 9.0 by number, RTX 4060 Ti named at 8.9" \
	'[(t["sm"], t["device"]) for t in d["targets"]] == [("8.6", None), ("9.0", None), ("8.9", "GeForce RTX 4060 Ti")]'
expect_json "sm80_exe: runs on 8.6 and 8.9 from the sm_80 cubin (S1, same major)" \
	'[(v["outcome"], v["image"], v["expected_error"]) for v in d["files"][0]["modules"][-1]["verdicts"]][0::2]
	 == [("sass", "sm_80", None), ("sass", "sm_80", None)]'
expect_json "sm80_exe on 9.0: cannot_run different_major S1, error 209" \
	'[(v["sm"], v["outcome"], v["image"], v["reason"], v["rule"], v["expected_error"]) for v in d["files"][0]["modules"][-1]["verdicts"]][1]
	 == ("9.0", "cannot_run", None, "different_major", "S1", 209)'
expect_json "sm80_exe on 9.0: fix keeps sm_80 and adds sm_90 SASS + compute_90 PTX, CMake 80-real;90, torch 8.0;9.0+PTX, CUDA 11.8" \
	'(lambda f: (f["nvcc"], f["cmake"], f["torch_cuda_arch_list"], f["min_toolkit"]))(d["files"][0]["modules"][-1]["verdicts"][1]["fix"])
	 == ("-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90", "80-real;90", "8.0;9.0+PTX", "11.8")'
expect_json "runnable verdicts carry no fix" \
	'[v["fix"] for v in d["files"][0]["modules"][-1]["verdicts"]][0::2] == [None, None]'
expect_json "the .symtab-only stub module is a link stub and the kernel module is not" \
	'[m["link_stub"] for m in d["files"][0]["modules"]] == [True, False]'
expect_json "the link stub gets no fix (only modules with kernels do)" \
	'd["files"][0]["modules"][0]["link_stub"] is True and all(v["fix"] is None for v in d["files"][0]["modules"][0]["verdicts"])'
expect_json "ok is false, summary counts checks of real modules only" \
	'd["ok"] is False and d["summary"]["link_stubs"] == 1 and d["summary"]["checks"] == 3 and d["summary"]["cannot_run"] == 1'

# ptxonly_exe on 9.0 runs from compute_80 PTX through the JIT (P1).
run "$PROBE" check --sm 9.0 --json "$FX/ptxonly_exe"
expect_rc 0 "check ptxonly_exe on 9.0"
expect_json "ptxonly_exe on 9.0: ptx_jit of compute_80" \
	'[(v["outcome"], v["image"], v["fix"]) for m in d["files"][0]["modules"] for v in m["verdicts"]] == [("ptx_jit", "compute_80", None)] and d["ok"] is True'

# --driver 12.4: the compute_80 PTX carries ISA 9.0 (nvcc 13), too new for a 12.4 JIT (P4/P5) -> 222.
run "$PROBE" check --sm 9.0 --driver 12.4 --json "$FX/ptxonly_exe"
expect_rc 1 "check ptxonly_exe on 9.0 with a CUDA 12.4 driver"
expect_json "ISA 9.0 PTX on a 12.4 driver: cannot_run ptx_isa_too_new, error 222" \
	'[(v["outcome"], v["reason"], v["expected_error"]) for m in d["files"][0]["modules"] for v in m["verdicts"]] == [("cannot_run", "ptx_isa_too_new", 222)]'
expect_json "targets record the assumed driver" 'd["targets"][0]["driver_cuda_version"] == "12.4"'

# multi_exe: runs on 8.6 (sm_80), 9.0, 10.0 (sm_100a/f), 12.0; not on Orin 8.7 (S2) nor 11.0.
run "$PROBE" check --sm 8.6,9.0,10.0,12.0,8.7 --json "$FX/multi_exe"
expect_rc 1 "check multi_exe including 8.7"
expect_json "multi_exe: 8.6 sass sm_80; 12.0 sass sm_120; 8.7 cannot_run tegra_mismatch S2 209" \
	'(lambda v: ((v[0]["outcome"], v[0]["image"]), (v[3]["outcome"], v[3]["image"]), (v[4]["outcome"], v[4]["reason"], v[4]["rule"], v[4]["expected_error"])))(d["files"][0]["modules"][-1]["verdicts"])
	 == (("sass", "sm_80"), ("sass", "sm_120"), ("cannot_run", "tegra_mismatch", "S2", 209))'
expect_json "multi_exe: 9.0 and 10.0 run from a cubin" \
	'[v["outcome"] for v in d["files"][0]["modules"][-1]["verdicts"]][1:3] == ["sass", "sass"]'
expect_json "multi_exe on 8.7: fix adds sm_87 to the module's targets (sm_80 first, sm_120 kept)" \
	'(lambda f: f["nvcc"].startswith("-gencode arch=compute_80,code=sm_80 -gencode arch=compute_87,code=sm_87") and "sm_120" in f["nvcc"] and f["torch_cuda_arch_list"].startswith("8.0;8.7+PTX;9.0+PTX"))(d["files"][0]["modules"][-1]["verdicts"][4]["fix"])'

run "$PROBE" check --sm 8.6,9.0 "$FX/multi_exe"
expect_rc 0 "check multi_exe on 8.6,9.0: everything runs"
expect_grep "text summary of a passing check" "$TMP/out" "1 file, 2 modules on 2 GPUs: 4 run (4 sass, 0 ptx_jit), 0 cannot run; 0 errors"

# Text: failing SM with reason, rule, error and fix.
run "$PROBE" check --sm 9.0 "$FX/sm80_exe"
expect_rc 1 "check sm80_exe on 9.0 (text)"
expect_grep "text verdict line" "$TMP/out" "CANNOT RUN: cubin for another major version [S1] -> error 209 (CUDA_ERROR_NO_BINARY_FOR_GPU)"
expect_grep "text fix line" "$TMP/out" "fix: nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"
expect_grep "text CMake line quoted (a ; list)" "$TMP/out" 'CMAKE_CUDA_ARCHITECTURES="80-real;90"  TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"'
[ "$(grep -c "PyTorch:" "$TMP/out")" -eq 0 ] && ok "no PyTorch wheel line for a module that is not PyTorch's" || fail "wheel line for sm80_exe"
# The driver floor of CUDA 11.8 GA is 520.61.05 (Linux x86_64): NVIDIA's
# CUDA Toolkit release notes, table 3 "CUDA Toolkit and Corresponding
# Driver Versions". The whole line, so a dropped driver part is seen.
expect_eq "text fix: toolkit line, with the driver the toolkit needs" \
	"           toolkit: CUDA 11.8 or newer, driver >= 520.61.05" "$(grep "toolkit: CUDA" "$TMP/out")"
expect_grep "text stub line" "$TMP/out" "device-link stub (cubins without kernels): not checked"

# Spellings of the same GPU give the same verdicts: 9.0, 90, sm_90, H100;
# the three spellings of 9.0 are one target (checked once), H100 another.
run "$PROBE" check --sm 9.0,90,sm_90,H100 --json "$FX/sm80_exe"
expect_json "9.0 = 90 = sm_90 = H100" \
	'len({(v["outcome"], v["reason"]) for v in d["files"][0]["modules"][-1]["verdicts"]}) == 1 and [(t["sm"], t["device"]) for t in d["targets"]] == [("9.0", None), ("9.0", "H100")]'

# --sm hardening (issue 12 item 12): duplicates checked once, repeated
# options merged in order, empty items and impossible CCs refused.
run "$PROBE" check --sm 9.0,9.0,sm_90,90 --json "$FX/sm80_exe"
expect_json "9.0,9.0,sm_90,90 is one target" '[t["sm"] for t in d["targets"]] == ["9.0"]'
run "$PROBE" check --sm 9.0 --sm 8.0 --sm=8.6,9.0 --json "$FX/sm80_exe"
expect_json "repeated --sm merged in order, de-duplicated" '[t["sm"] for t in d["targets"]] == ["9.0", "8.0", "8.6"]'
run "$PROBE" check --sm 80,860 "$FX/sm80_exe"
expect_rc 2 "--sm 80,860"
expect_grep "860 named as no compute capability" "$TMP/err" "'860' would be compute capability 86.0, which no NVIDIA GPU has"
run "$PROBE" check --sm 9.0,,8.0 "$FX/sm80_exe"
expect_rc 2 "--sm 9.0,,8.0"
expect_grep "empty item message" "$TMP/err" "--sm: empty item in '9.0,,8.0'"
run "$PROBE" check --sm 9.0, "$FX/sm80_exe"
expect_rc 2 "--sm with a trailing comma"
run "$PROBE" check --sm "" "$FX/sm80_exe"
expect_rc 2 "--sm ''"
expect_grep "empty list message" "$TMP/err" "--sm: empty list"

# --driver outside kimg's PTX ISA table (issue 12 item 13): said, not guessed;
# CUDA 8.0 has a limit (PTX ISA 5.0), so a 9.0 PTX image gets error 222.
run "$PROBE" check --sm 9.0 --driver 14.0 "$FX/sm80_exe"
expect_grep "newer driver: no PTX limit, said so" "$TMP/err" "--driver 14.0 is newer than kimg's PTX ISA table"
run "$PROBE" check --sm 9.0 --driver 6.5 "$FX/sm80_exe"
expect_grep "older driver: no PTX limit, said so" "$TMP/err" "--driver 6.5 is older than kimg's PTX ISA table"
run "$PROBE" check --sm 9.0 --driver 8.0 --json "$FX/compute80.ptx"
expect_json "CUDA 8.0 driver: PTX ISA 9.0 refused (P4, 222)" \
	'[(v["rule"], v["expected_error"]) for v in d["files"][0]["modules"][0]["verdicts"]] == [("P4", 222)]'

# Usage errors: exit 2.
run "$PROBE" check "$FX/sm80_exe"
expect_rc 2 "check without --sm"
expect_grep "missing --sm message" "$TMP/err" "--sm LIST is required"
run "$PROBE" check --sm "GeForce Imaginary 9999" "$FX/sm80_exe"
expect_rc 2 "check with an unknown GPU name"
expect_grep "unknown GPU message" "$TMP/err" "'GeForce Imaginary 9999' is neither a compute capability"
run "$PROBE" check --sm 9.0 --driver twelve "$FX/sm80_exe"
expect_rc 2 "check with a bad --driver"
for bad_driver in 0.5 0.0 100.0 12.10 12 12.4x; do
	run "$PROBE" check --sm 9.0 --driver "$bad_driver" "$FX/sm80_exe"
	expect_rc 2 "check --driver $bad_driver is refused"
done
expect_grep "bad --driver message" "$TMP/err" "--driver needs a CUDA version X.Y (e.g. 12.4)"

# An unreadable input makes the whole check exit 2, even when another module fails (2 wins over 1).
run "$PROBE" check --sm 9.0 "$FX/sm80_exe" "$TMP/does-not-exist"
expect_rc 2 "check with a failing module and a missing file"
expect_grep "missing file reported" "$TMP/err" "kimg-probe: $TMP/does-not-exist: No such file or directory"
expect_grep "summary says inputs were unreadable" "$TMP/out" "1 error (some inputs could not be read: exit 2)"


# ---- file-level verdicts (core/file_rules.c) ----

# libdispatch.so: an sm_90 unit and an sm_100a-only unit. On 9.0 the sm_100a module is
# dispatched for other GPUs (F1): exit 0, counted per file and in the summary.
run "$PROBE" check --sm 9.0 --json "$FX/libdispatch.so"
expect_rc 0 "libdispatch.so on 9.0"
expect_json "libdispatch.so: sm_100a module dispatched [F1], sm_90 module runs" \
	'[(v["fate"], v["file_rule"], v["outcome"]) for m in d["files"][0]["modules"] for v in m["verdicts"]] == [("dispatched", "F1", "cannot_run"), ("runs", None, "sass")]'
expect_json "libdispatch.so: per_target 1 run, 1 dispatched (sm_100a), 0 fail; summary dispatched 1, cannot_run 0, ok" \
	'd["files"][0]["per_target"] == [{"sm": "9.0", "device": None, "runs": 1, "dispatched": 1, "fails": 0, "dispatched_targets": ["sm_100a"]}] and d["summary"]["dispatched"] == 1 and d["summary"]["cannot_run"] == 0 and d["ok"] is True'
run "$PROBE" check --sm 9.0 "$FX/libdispatch.so"
expect_grep "text: dispatched verdict line" "$TMP/out" "9.0  not for this GPU: arch-specific code its library selects on other GPUs [F1]"
expect_grep "text: per-file tally" "$TMP/out" "  on 9.0: 1 run, 1 dispatched for other GPUs (sm_100a), 0 fail"
run "$PROBE" check --sm 9.0 --strict "$FX/libdispatch.so"
expect_rc 1 "libdispatch.so on 9.0 with --strict"
expect_grep "--strict: the sm_100a module fails" "$TMP/out" "CANNOT RUN: arch-specific (a) code for another compute capability [S3]"

# A split-arch .so (sm_80-only unit next to sm_90) still fails on 9.0 (F3), and on 8.6.
run "$PROBE" check --sm 9.0,8.6 --json "$FX/libtwo.so"
expect_rc 1 "split-arch libtwo.so on 9.0 and 8.6"
expect_json "libtwo.so: sm_80 unit fails on 9.0 [F3], sm_90 unit fails on 8.6 [F3]" \
	'[(v["sm"], v["fate"], v["file_rule"]) for m in d["files"][0]["modules"][1:] for v in m["verdicts"] if v["fate"] != "runs"] == [("9.0", "fails", "F3"), ("8.6", "fails", "F3")]'

# A library known to pick modules per GPU (F2): the same split file named libcublasLt.so.13.
cp "$FX/libtwo.so" "$TMP/libcublasLt.so.13"
run "$PROBE" check --sm 9.0 --json "$TMP/libcublasLt.so.13"
expect_rc 0 "split file named libcublasLt.so.13 on 9.0"
expect_json "libcublasLt: the sm_80 module dispatched [F2] by cuBLASLt" \
	'[(v["fate"], v["file_rule"], v["library"]) for v in d["files"][0]["modules"][1]["verdicts"]] == [("dispatched", "F2", "cuBLASLt")]'
run "$PROBE" check --sm 9.0 "$TMP/libcublasLt.so.13"
expect_grep "text: library dispatch line" "$TMP/out" "not for this GPU: cuBLASLt selects its modules per GPU [F2]"
run "$PROBE" check --sm 9.0 --strict "$TMP/libcublasLt.so.13"
expect_rc 1 "libcublasLt.so.13 with --strict"
# Nothing of the file runs (F0): sm80_exe on 9.0 fails whatever it is called.
cp "$FX/sm80_exe" "$TMP/libnccl.so.2"
run "$PROBE" check --sm 9.0 --json "$TMP/libnccl.so.2"
expect_rc 1 "a file with no runnable module fails even under a library name"
expect_json "F0" '[v["file_rule"] for v in d["files"][0]["modules"][-1]["verdicts"]] == ["F0"]'

# -rdc: relocatable inputs with compute_80 PTX: the linked sm_80 module runs on 9.0 after a JIT link (R1);
# with SASS only or compute_100 PTX it fails with 500 (R2), as the programs do on an H200.
run "$PROBE" check --sm 9.0 --json "$FX/rdc_ptx80_exe" "$FX/rdc_sm80_exe" "$FX/rdc_ptx100_exe"
expect_rc 1 "-rdc programs on 9.0"
expect_json "rdc: jit_link R1 error none / cannot_run R2 500 / cannot_run R2 500; inputs hidden" \
	'[[(v["outcome"], v["file_rule"], v["expected_error"]) for m in f["modules"] for v in m["verdicts"]] for f in d["files"]] == [[("jit_link", "R1", None)], [("cannot_run", "R2", 500)], [("cannot_run", "R2", 500)]] and d["summary"]["jit_link"] == 1'
run "$PROBE" check --sm 9.0 --json --all "$FX/rdc_ptx80_exe"
expect_json "--all: the two relocatable inputs listed, marked link_input, no verdicts of their own" \
	'[(m["origin"], m["link_input"], len(m["verdicts"])) for m in d["files"][0]["modules"]] == [("nv_fatbin", False, 1), ("relfatbin", True, 0), ("relfatbin", True, 0)]'
run "$PROBE" check --sm 9.0 "$FX/rdc_ptx80_exe"
expect_rc 0 "rdc_ptx80_exe on 9.0 passes"
expect_grep "text: runs after JIT link" "$TMP/out" "runs after JIT link: the driver JIT-links the PTX of the device-link inputs [R1]"
run "$PROBE" check --sm 9.0 "$FX/rdc_sm80_exe"
expect_grep "text: R2 with error 500" "$TMP/out" "[R2] -> error 500 (CUDA_ERROR_NOT_FOUND)"

# scan: link inputs hidden by default (cuobjdump's default), listed with --all (cuobjdump -all);
# in a relocatable object they are what the user links and always listed.
run "$PROBE" scan --json "$FX/rdc_exe" "$FX/rdc_main.o"
expect_json "scan rdc_exe: only .nv_fatbin; rdc_main.o: its __nv_relfatbin" \
	'[[m["origin"] for m in f["modules"]] for f in d["files"]] == [["nv_fatbin"], ["relfatbin"]]'
expect_json "scan: the hidden link inputs counted" 'd["summary"]["link_inputs_not_listed"] == 2'
run "$PROBE" scan "$FX/rdc_exe"
expect_grep "scan text: hidden link inputs named in the summary" "$TMP/out" "; 2 -rdc device-link inputs not listed (--all lists them); 0 errors"
run "$PROBE" scan --json --all "$FX/rdc_exe"
expect_json "scan --all rdc_exe: .nv_fatbin and two relfatbin containers" \
	'[m["origin"] for m in d["files"][0]["modules"]] == ["nv_fatbin", "relfatbin", "relfatbin"]'
finish
