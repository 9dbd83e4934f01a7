#!/usr/bin/env bash
# kimg-probe check: verdicts, fixes and exit codes on the nvcc-built
# fixtures (compat-rules.md sections 1-3, 8; fatbin-format.md section 2).
. "$(dirname "$0")/lib.bash"

# The module holding kernels is the last one; the first is nvcc 13's link stub.
# sm80_exe on 9.0: S1, 209, the exact nvcc fix (compat-rules.md section 8).
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
expect_json "sm80_exe on 9.0: fix is sm_90 SASS + compute_90 PTX, CMake 90, torch 9.0+PTX, CUDA 11.8" \
	'(lambda f: (f["nvcc"], f["cmake"], f["torch_cuda_arch_list"], f["min_toolkit"]))(d["files"][0]["modules"][-1]["verdicts"][1]["fix"])
	 == ("-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90", "90", "9.0+PTX", "11.8")'
expect_json "runnable verdicts carry no fix" \
	'[v["fix"] for v in d["files"][0]["modules"][-1]["verdicts"]][0::2] == [None, None]'
expect_json "the .symtab-only stub module is a link stub and the kernel module is not" \
	'[m["link_stub"] for m in d["files"][0]["modules"]] == [True, False]'
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
expect_json "multi_exe on 8.7: fix names sm_87 and the Tegra case" \
	'(lambda f: f["nvcc"].startswith("-gencode arch=compute_87,code=sm_87") and f["torch_cuda_arch_list"].startswith("8.7"))(d["files"][0]["modules"][-1]["verdicts"][4]["fix"])'

run "$PROBE" check --sm 8.6,9.0 "$FX/multi_exe"
expect_rc 0 "check multi_exe on 8.6,9.0: everything runs"
expect_grep "text summary of a passing check" "$TMP/out" "1 file, 2 modules on 2 GPUs: 4 run (4 sass, 0 ptx_jit), 0 cannot run; 0 errors"

# Text: failing SM with reason, rule, error and fix.
run "$PROBE" check --sm 9.0 "$FX/sm80_exe"
expect_rc 1 "check sm80_exe on 9.0 (text)"
expect_grep "text verdict line" "$TMP/out" "CANNOT RUN: cubin for another major version [S1] -> error 209 (CUDA_ERROR_NO_BINARY_FOR_GPU)"
expect_grep "text fix line" "$TMP/out" "fix: nvcc -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"
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

# An unreadable input makes the whole check exit 2, even when another module fails (2 wins over 1).
run "$PROBE" check --sm 9.0 "$FX/sm80_exe" "$TMP/does-not-exist"
expect_rc 2 "check with a failing module and a missing file"
expect_grep "missing file reported" "$TMP/err" "kimg-probe: $TMP/does-not-exist: No such file or directory"
expect_grep "summary says inputs were unreadable" "$TMP/out" "1 error (some inputs could not be read: exit 2)"

finish
