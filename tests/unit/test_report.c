/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the shim's report renderers (report/report_text.c,
 * report/report_json.c): the exact text lines a user reads and the JSON
 * keys that tools (tests/gpu/shim_gpu.py, docs/json-shim-report.md) rely on.
 * Verdicts come from the real rules so the report shows what the core
 * decides; the renderers must only format them. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_errors.h"
#include "fix.h"
#include "json.h"
#include "report.h"
#include "rules.h"
#include "testutil.h"

static struct kimg_report rep;

/* The user case of docs/rules.md S1: an sm_80 cubin plus compute_80 PTX
 * on an H200 (9.0), driver 13.0, with CUDA_DISABLE_PTX_JIT=1 (P6 -> 223). */
static void build_report(bool disable_jit)
{
	memset(&rep, 0, sizeof rep);
	rep.call = "cuLibraryGetKernel";
	rep.error = 209;
	rep.kernel = "_Z7add_onePfi";
	strcpy(rep.kernel_demangled, "add_one(float*, int)");
	strcpy(rep.module_file, "/work/app");
	rep.module_offset = 0x3a000;
	rep.module_offset_known = true;
	rep.module_origin = "cuLibraryLoadData";
	rep.images[0].kind = KIMG_IMAGE_SASS;
	rep.images[0].arch.sm = 80;
	rep.images[0].size = 4096;
	rep.images[1].kind = KIMG_IMAGE_PTX;
	rep.images[1].arch.sm = 80;
	rep.images[1].ptx_isa = KIMG_ISA(9, 0);
	rep.images[1].compression = KIMG_COMPRESS_ZSTD;
	rep.images[1].size = 12000;
	rep.image_count = rep.image_total = 2;
	rep.device_known = true;
	rep.device.cc.sm = 90;
	rep.device.driver_version = 13000;
	rep.device.ordinal = 0;
	strcpy(rep.device.name, "NVIDIA H200");
	rep.device.disable_ptx_jit = disable_jit;
	kimg_rules_check_module(rep.images, 2, &rep.device, rep.image_verdicts, &rep.verdict);
	rep.verdict_known = true;
	rep.fix_known = kimg_fix_for(&rep.device, &rep.verdict, rep.images, 2, &rep.fix) == 0;
	strcpy(rep.stack[0], "main+0x12 (app+0x1234)");
	strcpy(rep.stack[1], "__libc_start_main+0x80 (libc.so.6+0x29d90)");
	rep.stack_count = 2;
	strcpy(rep.python[0].file, "train.py");
	rep.python[0].line = 12;
	strcpy(rep.python[0].function, "main");
	rep.python_count = 1;
}

static char *render(int (*fn)(const struct kimg_report *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fn(&rep, f), 0);
	fclose(f);
	return buf;
}

/* Line `n` (0-based) of text, copied into line. */
static const char *line_of(const char *text, int n, char *line, size_t size)
{
	const char *s = text;
	for (int i = 0; i < n && s; i++) {
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	ck_assert_msg(s && *s, "no line %d in:\n%s", n, text);
	size_t len = strcspn(s, "\n");
	ck_assert_uint_lt(len, size);
	memcpy(line, s, len);
	line[len] = '\0';
	return line;
}

static bool has_line(const char *text, const char *want)
{
	size_t wlen = strlen(want);
	for (const char *s = text; s && *s;) {
		size_t len = strcspn(s, "\n");
		if (len == wlen && memcmp(s, want, len) == 0)
			return true;
		s = s[len] ? s + len + 1 : NULL;
	}
	return false;
}

START_TEST(text_header_names_call_code_name_and_meaning)
{
	build_report(true);
	char *t = render(kimg_report_write_text), line[512];
	/* a literal, not kimg_cuda_error_text(209): the renderer must not be
	 * checked against the table it prints from */
	ck_assert_str_eq(line_of(t, 0, line, sizeof line),
			 "kimg: cuLibraryGetKernel returned 209 CUDA_ERROR_NO_BINARY_FOR_GPU "
			 "(no kernel image suitable for the device)");
	free(t);
}
END_TEST

/* docs/rules.md section 9: same number, runtime name for runtime calls */
START_TEST(text_header_uses_runtime_name_for_runtime_calls)
{
	build_report(true);
	rep.call = "cudaLaunchKernel";
	char *t = render(kimg_report_write_text), line[512];
	ck_assert_ptr_nonnull(strstr(line_of(t, 0, line, sizeof line), " 209 cudaErrorNoKernelImageForDevice ("));
	free(t);
}
END_TEST

START_TEST(text_device_kernel_module_lines)
{
	build_report(true);
	char *t = render(kimg_report_write_text), line[512];
	ck_assert_str_eq(line_of(t, 1, line, sizeof line),
			 "kimg:   device: NVIDIA H200 (device 0), SM 9.0, driver 13.0, max PTX ISA 9.0, CUDA_DISABLE_PTX_JIT=1");
	ck_assert_str_eq(line_of(t, 2, line, sizeof line), "kimg:   kernel: add_one(float*, int)  [_Z7add_onePfi]");
	ck_assert_str_eq(line_of(t, 3, line, sizeof line), "kimg:   module: /work/app @ 0x3a000 (cuLibraryLoadData)");
	free(t);
}
END_TEST

/* S1 (another major) for the cubin, P6 (JIT disabled) for the PTX */
START_TEST(text_image_table_is_aligned_with_verdicts)
{
	build_report(true);
	char *t = render(kimg_report_write_text), line[512];
	ck_assert_str_eq(line_of(t, 4, line, sizeof line), "kimg:   images (2):");
	ck_assert_str_eq(line_of(t, 5, line, sizeof line),
			 "kimg:     #   kind  arch          ptx  compressed       size  verdict");
	/* literals: the reason texts of core/rules_tables.c as a user reads them */
	ck_assert_str_eq(line_of(t, 6, line, sizeof line),
			 "kimg:     0   sass  sm_80         -    -                4096  no: cubin for another major version [S1]");
	ck_assert_str_eq(line_of(t, 7, line, sizeof line),
			 "kimg:     1   ptx   compute_80    9.0  zstd            12000  no: PTX JIT disabled by CUDA_DISABLE_PTX_JIT [P6]");
	ck_assert_str_eq(line_of(t, 8, line, sizeof line), "kimg:   why:    PTX JIT disabled by CUDA_DISABLE_PTX_JIT [P6]");
	free(t);
}
END_TEST

START_TEST(text_selected_image_is_marked)
{
	build_report(false); /* P1: compute_80 PTX JITs on 9.0 */
	char *t = render(kimg_report_write_text), line[512];
	ck_assert_int_eq(rep.verdict.selected, 1);
	ck_assert_ptr_nonnull(strstr(line_of(t, 7, line, sizeof line), "  selected: runs through PTX JIT [P1]"));
	free(t);
}
END_TEST

START_TEST(text_fix_lines_for_nvcc_cmake_torch)
{
	build_report(true);
	ck_assert(rep.fix_known);
	char *t = render(kimg_report_write_text), want[1200];
	snprintf(want, sizeof want, "kimg:   fix:    %s", rep.fix.advice);
	ck_assert_msg(has_line(t, want), "%s", t);
	snprintf(want, sizeof want, "kimg:           nvcc: %s", rep.fix.nvcc);
	ck_assert_msg(has_line(t, want), "%s", t);
	snprintf(want, sizeof want, "kimg:           CMake: -DCMAKE_CUDA_ARCHITECTURES=\"%s\"", rep.fix.cmake);
	ck_assert_msg(has_line(t, want), "%s", t);
	/* additive: the module's compute_80 PTX stays next to the sm_90 SASS */
	ck_assert_msg(has_line(t, "kimg:           PyTorch extensions: TORCH_CUDA_ARCH_LIST=\"8.0+PTX;9.0\""), "%s", t);
	ck_assert_ptr_nonnull(strstr(rep.fix.nvcc, "sm_90"));
	free(t);
}
END_TEST

START_TEST(text_stacks_innermost_first)
{
	build_report(true);
	char *t = render(kimg_report_write_text);
	ck_assert(has_line(t, "kimg:   python stack (innermost first):"));
	ck_assert(has_line(t, "kimg:     train.py:12 in main"));
	ck_assert(has_line(t, "kimg:     #0  main+0x12 (app+0x1234)"));
	ck_assert(has_line(t, "kimg:     #1  __libc_start_main+0x80 (libc.so.6+0x29d90)"));
	/* every line carries the prefix */
	for (const char *s = t; *s; s = strchr(s, '\n') + 1)
		ck_assert_msg(strncmp(s, "kimg: ", 6) == 0, "unprefixed line: %.60s", s);
	free(t);
}
END_TEST

START_TEST(text_unknowns_are_said_not_invented)
{
	build_report(true);
	rep.device_known = rep.verdict_known = rep.fix_known = false;
	rep.module_file[0] = '\0';
	rep.module_offset_known = false;
	rep.module_origin = NULL;
	rep.kernel_demangled[0] = '\0';
	rep.image_count = 1;
	rep.image_total = 70;
	char *t = render(kimg_report_write_text), line[512];
	ck_assert_str_eq(line_of(t, 1, line, sizeof line), "kimg:   device: unknown (the driver could not be asked)");
	ck_assert_str_eq(line_of(t, 2, line, sizeof line), "kimg:   kernel: _Z7add_onePfi");
	ck_assert_str_eq(line_of(t, 3, line, sizeof line), "kimg:   module: (in memory, file unknown)");
	ck_assert(has_line(t, "kimg:     ... 69 more not shown"));
	ck_assert_ptr_null(strstr(t, "why:"));
	ck_assert_ptr_null(strstr(t, "fix:"));
	free(t);
}
END_TEST

/* A failure the rules explain (no image fits) gets "why:"; one they cannot
 * explain (200 on an image kimg could not read either, 221 on PTX that
 * fits) gets the driver's cause instead. */
START_TEST(text_cause_only_when_rules_do_not_explain)
{
	build_report(true); /* 223: the rules explain it */
	char *t = render(kimg_report_write_text);
	ck_assert_ptr_nonnull(strstr(t, "\nkimg:   why:    "));
	ck_assert_ptr_null(strstr(t, "cause:"));
	free(t);
	build_report(false); /* compute_80 PTX fits 9.0 by JIT, but the driver said 221 */
	rep.error = 221;
	t = render(kimg_report_write_text);
	ck_assert(has_line(t, "kimg:   cause:  the PTX JIT compiler library (libnvidia-ptxjitcompiler.so.1) could not be "
			      "loaded: install the driver's JIT library (often missing in containers and Jetson images) or "
			      "ship SASS for this GPU"));
	free(t);
	build_report(false);
	rep.error = 200;
	rep.verdict_known = rep.fix_known = false;
	rep.image_count = rep.image_total = 0;
	t = render(kimg_report_write_text);
	ck_assert_ptr_nonnull(strstr(t, "\nkimg:   cause:  the driver could not read the image: it is corrupt"));
	free(t);
	t = render(kimg_report_write_json);
	ck_assert_ptr_nonnull(strstr(t, "\"cause\":\"the driver could not read the image"));
	free(t);
}
END_TEST

START_TEST(json_is_one_line_with_nested_keys)
{
	build_report(true);
	char *j = render(kimg_report_write_json);
	size_t len = strlen(j);
	ck_assert_uint_gt(len, 2);
	ck_assert_ptr_eq(strchr(j, '\n'), j + len - 1); /* exactly one newline, at the end */
	ck_assert_int_eq(j[0], '{');
	ck_assert_int_eq(j[len - 2], '}');
	ck_assert_ptr_nonnull(strstr(j, "{\"kimg_version\":\"" KIMG_VERSION "\",\"error\":{\"code\":209,\"name\":\"CUDA_ERROR_NO_BINARY_FOR_GPU\","));
	ck_assert_ptr_nonnull(strstr(j, "\"call\":\"cuLibraryGetKernel\""));
	ck_assert_ptr_nonnull(strstr(j, "\"kernel\":{\"name\":\"_Z7add_onePfi\",\"demangled\":\"add_one(float*, int)\"}"));
	ck_assert_ptr_nonnull(strstr(j, "\"module\":{\"file\":\"/work/app\",\"offset\":237568,"));
	ck_assert_ptr_nonnull(strstr(j, "{\"kind\":\"sass\",\"arch\":\"sm_80\",\"ptx_isa\":null,\"compressed\":false,"));
	ck_assert_ptr_nonnull(strstr(j, "\"verdict\":\"cannot_run\",\"reason\":\"different_major\",\"rule\":\"S1\""));
	ck_assert_ptr_nonnull(strstr(j, "\"kind\":\"ptx\",\"arch\":\"compute_80\",\"ptx_isa\":\"9.0\",\"compressed\":true,"));
	ck_assert_ptr_nonnull(strstr(j, "\"sm\":\"9.0\""));
	ck_assert_ptr_nonnull(strstr(j, "\"driver\":\"13.0\""));
	ck_assert_ptr_nonnull(strstr(j, "\"max_ptx_isa\":\"9.0\""));
	ck_assert_ptr_nonnull(strstr(j, "\"verdict\":{\"outcome\":\"cannot_run\",\"reason\":\"jit_disabled\","));
	ck_assert_ptr_nonnull(strstr(j, "\"selected\":null,\"expected_error\":223}"));
	ck_assert_ptr_nonnull(strstr(j, "\"stack\":[\"main+0x12 (app+0x1234)\","));
	ck_assert_ptr_nonnull(strstr(j, "\"python_stack\":[{\"file\":\"train.py\",\"line\":12,\"function\":\"main\"}]"));
	free(j);
}
END_TEST

/* The document's key list, checked by a real JSON parser: every key
 * docs/json-shim-report.md promises is present with the promised type. */
START_TEST(json_parses_and_has_documented_keys)
{
	build_report(true);
	strcpy(rep.kernel_demangled, "f<\"quoted\", \\back>(\t)"); /* escaping */
	char *j = render(kimg_report_write_json);
	if (system("python3 -c 'import json' 2>/dev/null") != 0) {
		const char *ci = getenv("CI");
		free(j);
		ck_assert_msg(!ci || strcmp(ci, "true") != 0, "python3 missing: a prerequisite under CI=true");
		fprintf(stderr, "test_report: SKIP python3 missing, the JSON parse check did not run\n");
		return;
	}
	char path[] = "/tmp/kimg_report_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs(j, f);
	fclose(f);
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "python3 -c '\n"
		 "import json,sys\n"
		 "d=json.loads(open(sys.argv[1]).read())\n"
		 "assert set(d)=={\"kimg_version\",\"error\",\"call\",\"kernel\",\"module\",\"device\",\"verdict\",\"fix\",\"stack\",\"python_stack\",\"process\"}, set(d)\n"
		 "assert d[\"error\"][\"code\"]==209 and d[\"error\"][\"name\"]==\"CUDA_ERROR_NO_BINARY_FOR_GPU\"\n"
		 "assert d[\"kernel\"][\"demangled\"]==\"f<\\\"quoted\\\", \\\\back>(\\t)\", d[\"kernel\"]\n"
		 "im=d[\"module\"][\"images\"]\n"
		 "assert len(im)==2 and all({\"kind\",\"arch\",\"ptx_isa\",\"compressed\",\"size\",\"verdict\",\"reason\"}<=set(i) for i in im)\n"
		 "assert im[1][\"size\"]==12000 and im[1][\"compressed\"] is True\n"
		 "assert d[\"device\"][\"sm\"]==\"9.0\" and d[\"device\"][\"name\"]==\"NVIDIA H200\"\n"
		 "assert d[\"device\"][\"driver\"]==\"13.0\" and d[\"device\"][\"max_ptx_isa\"]==\"9.0\"\n"
		 "assert {\"outcome\",\"reason\",\"rule\",\"selected\"}<=set(d[\"verdict\"])\n"
		 "assert \"sm_90\" in d[\"fix\"][\"nvcc\"] and d[\"fix\"][\"torch_cuda_arch_list\"]==\"8.0+PTX;9.0\"\n"
		 "assert d[\"stack\"][0]==\"main+0x12 (app+0x1234)\"\n"
		 "assert d[\"python_stack\"]==[{\"file\":\"train.py\",\"line\":12,\"function\":\"main\"}]\n"
		 "' %s",
		 path);
	int rc = system(cmd);
	unlink(path);
	ck_assert_msg(rc == 0, "python3 rejected the JSON:\n%s", j);
	free(j);
}
END_TEST

/* An integrated Tegra device says so on the device line. */
START_TEST(text_tegra_device_is_marked)
{
	build_report(false);
	rep.device.cc.sm = 87;
	rep.device.tegra = true;
	strcpy(rep.device.name, "Orin");
	char *t = render(kimg_report_write_text), line[512];
	ck_assert_str_eq(line_of(t, 1, line, sizeof line),
			 "kimg:   device: Orin (device 0), SM 8.7 (Tegra), driver 13.0, max PTX ISA 9.0");
	free(t);
	rep.device.tegra = false;
	t = render(kimg_report_write_text);
	ck_assert_str_eq(line_of(t, 1, line, sizeof line),
			 "kimg:   device: Orin (device 0), SM 8.7, driver 13.0, max PTX ISA 9.0");
	free(t);
}
END_TEST

/* "selected" is true on the image the verdict chose and on no other. */
START_TEST(json_selected_marks_exactly_the_chosen_image)
{
	build_report(false);
	for (int sel = -1; sel <= 1; sel++) {
		rep.verdict.selected = sel;
		char *j = render(kimg_report_write_json);
		const char *first = strstr(j, "\"selected\":"), *second = first ? strstr(first + 1, "\"selected\":") : NULL;
		ck_assert_ptr_nonnull(second);
		ck_assert_msg(strncmp(first, sel == 0 ? "\"selected\":true" : "\"selected\":false", 15 + (sel != 0)) == 0,
			      "image 0, selected %d: %.40s", sel, first);
		ck_assert_msg(strncmp(second, sel == 1 ? "\"selected\":true" : "\"selected\":false", 15 + (sel != 1)) == 0,
			      "image 1, selected %d: %.40s", sel, second);
		free(j);
	}
}
END_TEST

/* report/json.c: control characters become \u00XX (or \n, \t), so a kernel
 * or file name with any byte in it keeps the line valid JSON. */
START_TEST(json_strings_escape_control_characters)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct kimg_json j;
	ck_assert_ptr_nonnull(f);
	kimg_json_init(&j, f);
	kimg_json_string_n(&j, "a\x01" "b\x1f\n\t\x7f\"\\c", 10);
	fclose(f);
	ck_assert_str_eq(buf, "\"a\\u0001b\\u001f\\n\\t\\u007f\\\"\\\\c\"");
	free(buf);
}
END_TEST

START_TEST(json_unknowns_are_null)
{
	build_report(true);
	rep.device_known = rep.verdict_known = rep.fix_known = false;
	rep.module_offset_known = false;
	rep.module_file[0] = '\0';
	rep.kernel = NULL;
	rep.kernel_demangled[0] = '\0';
	rep.stack_count = rep.python_count = 0;
	char *j = render(kimg_report_write_json);
	ck_assert_ptr_nonnull(strstr(j, "\"kernel\":{\"name\":null,\"demangled\":null}"));
	ck_assert_ptr_nonnull(strstr(j, "\"module\":{\"file\":null,\"offset\":null,"));
	ck_assert_ptr_nonnull(strstr(j, "\"device\":null,\"verdict\":null,\"fix\":null,\"stack\":[],\"python_stack\":[],\"process\":null}"));
	ck_assert_ptr_nonnull(strstr(j, "\"verdict\":null,\"reason\":null,\"rule\":null,\"selected\":false"));
	free(j);
}
END_TEST

/* docs/json-shim-report.md "process": which rank on which host failed, so
 * kimg-probe summarize can merge many ranks' logs; unknown launcher
 * values are null, never -1. */
START_TEST(process_object_and_line)
{
	build_report(false);
	rep.process.present = true;
	strcpy(rep.process.host, "node7");
	rep.process.pid = 4242;
	rep.process.rank = 3;
	rep.process.local_rank = 1;
	rep.process.world_size = 8;
	strcpy(rep.process.program, "python3.12");
	char *j = render(kimg_report_write_json);
	ck_assert_ptr_nonnull(strstr(j, ",\"process\":{\"host\":\"node7\",\"pid\":4242,\"rank\":3,\"local_rank\":1,"
					"\"world_size\":8,\"program\":\"python3.12\"}}\n"));
	free(j);
	char *t = render(kimg_report_write_text), line[512];
	ck_assert_str_eq(line_of(t, 2, line, sizeof line), "kimg:   process: python3.12 pid 4242 on node7, rank 3 of 8 (local 1)");
	free(t);

	rep.process.rank = rep.process.local_rank = rep.process.world_size = -1;
	rep.process.host[0] = '\0';
	j = render(kimg_report_write_json);
	ck_assert_ptr_nonnull(strstr(j, ",\"process\":{\"host\":null,\"pid\":4242,\"rank\":null,\"local_rank\":null,"
					"\"world_size\":null,\"program\":\"python3.12\"}}\n"));
	free(j);
	t = render(kimg_report_write_text);
	ck_assert_str_eq(line_of(t, 2, line, sizeof line), "kimg:   process: python3.12 pid 4242 on ?");
	free(t);
}
END_TEST

/* KIMG_FALLBACK's section (docs/json-shim-report.md "fallback"): exact JSON,
 * null for values not lowered and an unmeasured JIT; the text headline of
 * an applied fallback; the audit mark and headline. */
START_TEST(fallback_section_and_audit_mark)
{
	build_report(false);
	rep.call = "cuModuleLoadData";
	rep.error = 218;
	rep.fallback.present = true;
	rep.fallback.applied = true;
	strcpy(rep.fallback.action, "ptx");
	strcpy(rep.fallback.result, "PTX rewritten for this device and JIT-compiled");
	strcpy(rep.fallback.image, "compute_100");
	strcpy(rep.fallback.target_from, "sm_100");
	strcpy(rep.fallback.target_to, "sm_90");
	rep.fallback.jit_ms = 12.5;
	rep.fallback.warning = "code paths may differ";
	char *j = render(kimg_report_write_json);
	ck_assert_ptr_nonnull(strstr(j, ",\"fallback\":{\"mode\":\"ptx\",\"applied\":true,\"image\":\"compute_100\","
					"\"rewritten\":{\"version\":null,\"target\":{\"from\":\"sm_100\",\"to\":\"sm_90\"}},"
					"\"jit_ms\":12.500,\"result\":\"PTX rewritten for this device and JIT-compiled\","
					"\"warning\":\"code paths may differ\"}}\n"));
	ck_assert_ptr_null(strstr(j, "\"audit\""));
	free(j);
	char *t = render(kimg_report_write_text), line[512];
	ck_assert_str_eq(line_of(t, 0, line, sizeof line),
			 "kimg: fallback: cuModuleLoadData runs rewritten PTX (without it: 218 CUDA_ERROR_INVALID_PTX)");
	ck_assert(has_line(t, "kimg:   fallback: ptx: PTX rewritten for this device and JIT-compiled"));
	ck_assert(has_line(t, "kimg:             image compute_100, .target sm_100 -> sm_90, JIT 12.500 ms"));
	ck_assert(has_line(t, "kimg:             warning: code paths may differ"));
	free(t);

	rep.fallback.applied = false;
	rep.fallback.jit_ms = -1;
	rep.fallback.target_from[0] = '\0';
	strcpy(rep.fallback.version_from, "9.9");
	strcpy(rep.fallback.version_to, "9.0");
	rep.audit = true;
	rep.error = 209;
	j = render(kimg_report_write_json);
	ck_assert_ptr_nonnull(strstr(j, "\"rewritten\":{\"version\":{\"from\":\"9.9\",\"to\":\"9.0\"},\"target\":null},"
					"\"jit_ms\":null,"));
	ck_assert_ptr_nonnull(strstr(j, ",\"audit\":true,\"audit_modules\":1}\n"));
	free(j);
	t = render(kimg_report_write_text);
	ck_assert_str_eq(line_of(t, 0, line, sizeof line),
			 "kimg: audit: cuModuleLoadData loads a module that cannot run on this device: 209 "
			 "CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image suitable for the device)");
	free(t);
}
END_TEST

/* The sections of issue 11: a KIMG_AUDIT group's count, the JIT
 * linker's inputs and advice, the driver's JIT log, why a recorded
 * arch-dispatched failure is reported, and why Python frames are missing. */
START_TEST(link_dispatch_group_and_python_note)
{
	char line[512];
	build_report(false);
	rep.call = "cuLinkAddData_v2";
	rep.error = 222;
	rep.link.present = true;
	strcpy(rep.link.input.name, "numba.ptx");
	rep.link.input.type = "ptx";
	strcpy(rep.link.inputs[0].name, "cudadevrt.a");
	rep.link.inputs[0].type = "library";
	rep.link.inputs[1] = rep.link.input;
	rep.link.input_count = 2;
	strcpy(rep.link.advice, "produce the PTX with CUDA 13.0 or older");
	strcpy(rep.jit_log, "ptxas fatal: one\nsecond line");
	rep.escalation = KIMG_ESCALATION_EXIT_STATUS;
	rep.exit_status = 3;
	rep.dispatch_modules = 4;
	rep.python_count = 0;
	strcpy(rep.python_note, "CPython 3.15: frame layout unknown to kimg");
	char *j = render(kimg_report_write_json);
	ck_assert_ptr_nonnull(strstr(j, "\"link\":{\"input\":{\"name\":\"numba.ptx\",\"type\":\"ptx\"},"
					"\"inputs\":[{\"name\":\"cudadevrt.a\",\"type\":\"library\"},"
					"{\"name\":\"numba.ptx\",\"type\":\"ptx\"}],\"inputs_not_remembered\":0,"
					"\"advice\":\"produce the PTX with CUDA 13.0 or older\"}"));
	ck_assert_ptr_nonnull(strstr(j, "\"jit_log\":\"ptxas fatal: one\\nsecond line\""));
	ck_assert_ptr_nonnull(strstr(j, "\"dispatch\":{\"reported_because\":\"exit_status\",\"exit_status\":3,"
					"\"modules_recorded\":4}"));
	ck_assert_ptr_nonnull(strstr(j, "\"python_stack\":[],\"python_note\":\"CPython 3.15: frame layout unknown to kimg\""));
	free(j);
	char *t = render(kimg_report_write_text);
	ck_assert_str_eq(line_of(t, 1, line, sizeof line),
			 "kimg:   dispatch: an arch-dispatched failure (a module for other GPUs in a file with code for this "
			 "one), reported because the process exited with a failure status afterwards (status 3; 4 modules "
			 "of this file recorded)");
	ck_assert(has_line(t, "kimg:   link:   input \"numba.ptx\" (ptx) refused"));
	ck_assert(has_line(t, "kimg:           #0 cudadevrt.a (library)"));
	ck_assert(has_line(t, "kimg:   link fix: produce the PTX with CUDA 13.0 or older"));
	ck_assert(has_line(t, "kimg:   jit log: ptxas fatal: one"));
	ck_assert(has_line(t, "kimg:            second line"));
	ck_assert(has_line(t, "kimg:   python stack: CPython 3.15: frame layout unknown to kimg"));
	free(t);
	/* an audit group of several modules says so in its headline */
	build_report(false);
	rep.call = "__cudaRegisterFatBinary";
	rep.audit = true;
	rep.audit_modules = 445;
	t = render(kimg_report_write_text);
	ck_assert_msg(strstr(line_of(t, 0, line, sizeof line), "; 445 modules of this file, same cause: this report stands for all"),
		      "%s", line);
	free(t);
}
END_TEST

START_TEST(summary_line_counts_and_plurals)
{
	char buf[128];
	ck_assert_uint_eq(kimg_report_summary_line(0, 0, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "");
	/* loads that failed before any kernel was named */
	kimg_report_summary_line(0, 2, buf, sizeof buf);
	ck_assert_str_eq(buf, "kimg: 2 modules failed to load (see above)\n");
	kimg_report_summary_line(1, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "kimg: 1 kernel in 1 module failed to load (see above)\n");
	size_t n = kimg_report_summary_line(2, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "kimg: 2 kernels in 1 module failed to load (see above)\n");
	ck_assert_uint_eq(n, strlen(buf));
	kimg_report_summary_line(3, 2, buf, sizeof buf);
	ck_assert_str_eq(buf, "kimg: 3 kernels in 2 modules failed to load (see above)\n");
	/* truncation keeps a terminated string and reports what is there */
	ck_assert_uint_eq(kimg_report_summary_line(3, 2, buf, 10), 9);
	ck_assert_str_eq(buf, "kimg: 3 k");
}
END_TEST

START_TEST(format_helpers)
{
	char b[16];
	kimg_report_format_driver(13000, b, sizeof b);
	ck_assert_str_eq(b, "13.0");
	kimg_report_format_driver(12080, b, sizeof b);
	ck_assert_str_eq(b, "12.8");
	kimg_report_format_driver(0, b, sizeof b);
	ck_assert_str_eq(b, "?");
	kimg_report_format_isa(KIMG_ISA(8, 7), b, sizeof b);
	ck_assert_str_eq(b, "8.7");
	kimg_report_format_isa(0, b, sizeof b);
	ck_assert_str_eq(b, "");
}
END_TEST

/* The driver's words (docs/json-shim-report.md driver_log, symbol, jit_log_from,
 * safety_net; shim/diag/driver_log.c fills them): JSON keys only when
 * present, text lines "driver said:", escaped like every name. */
START_TEST(driver_log_symbol_and_safety_net)
{
	build_report(false);
	char *j = render(kimg_report_write_json);
	ck_assert_ptr_null(strstr(j, "\"driver_log\""));
	ck_assert_ptr_null(strstr(j, "\"symbol\""));
	ck_assert_ptr_null(strstr(j, "\"safety_net\""));
	ck_assert_ptr_null(strstr(j, "\"jit_log_from\""));
	free(j);

	build_report(false);
	rep.call = "cuLibraryGetGlobal";
	rep.kernel = NULL;
	rep.symbol = "coeffs";
	strcpy(rep.driver_log[0], "No device code available for GPU ISA 90");
	strcpy(rep.driver_log[1], "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetGlobal\x1b[2J");
	rep.driver_log_count = 2;
	strcpy(rep.jit_log, "ptxas fatal   : Unsupported .version 9.9; current version is '9.0'");
	rep.jit_log_by_kimg = true;
	j = render(kimg_report_write_json);
	ck_assert_ptr_nonnull(strstr(j, "\"symbol\":{\"name\":\"coeffs\",\"demangled\":null}"));
	ck_assert_msg(strstr(j, "\"driver_log\":[\"No device code available for GPU ISA 90\","
				"\"Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from cuLibraryGetGlobal\\u001b[2J\"]") != NULL,
		      "%s", j);
	ck_assert_ptr_nonnull(strstr(j, "\"jit_log_from\":\"kimg\""));
	ck_assert_ptr_null(strstr(j, "\"safety_net\""));
	free(j);
	char *t = render(kimg_report_write_text);
	ck_assert_msg(has_line(t, "kimg:   symbol: coeffs"), "%s", t);
	ck_assert_msg(has_line(t, "kimg:   driver said: No device code available for GPU ISA 90"), "%s", t);
	ck_assert_ptr_null(strstr(t, "\x1b"));
	ck_assert_msg(has_line(t, "kimg:   ptxas said (kimg compiled it once more): ptxas fatal   : Unsupported .version "
				  "9.9; current version is '9.0'"), "%s", t);
	free(t);

	build_report(false);
	rep.call = "cuLibraryGetKernelCount";
	rep.safety_net = true;
	rep.exit_status = 1;
	j = render(kimg_report_write_json);
	ck_assert_ptr_nonnull(strstr(j, "\"safety_net\":{\"reported_at\":\"exit\",\"exit_status\":1}"));
	free(j);
	t = render(kimg_report_write_text);
	ck_assert_msg(has_line(t, "kimg:   seen in the driver's log only: kimg does not hook cuLibraryGetKernelCount; "
				  "reported at exit (status 1)"), "%s", t);
	free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("render");
	tcase_add_test(tc, text_header_names_call_code_name_and_meaning);
	tcase_add_test(tc, text_cause_only_when_rules_do_not_explain);
	tcase_add_test(tc, text_header_uses_runtime_name_for_runtime_calls);
	tcase_add_test(tc, text_device_kernel_module_lines);
	tcase_add_test(tc, text_image_table_is_aligned_with_verdicts);
	tcase_add_test(tc, text_selected_image_is_marked);
	tcase_add_test(tc, text_fix_lines_for_nvcc_cmake_torch);
	tcase_add_test(tc, text_stacks_innermost_first);
	tcase_add_test(tc, text_unknowns_are_said_not_invented);
	tcase_add_test(tc, json_is_one_line_with_nested_keys);
	tcase_add_test(tc, json_parses_and_has_documented_keys);
	tcase_add_test(tc, json_unknowns_are_null);
	tcase_add_test(tc, text_tegra_device_is_marked);
	tcase_add_test(tc, json_selected_marks_exactly_the_chosen_image);
	tcase_add_test(tc, json_strings_escape_control_characters);
	tcase_add_test(tc, process_object_and_line);
	tcase_add_test(tc, fallback_section_and_audit_mark);
	tcase_add_test(tc, link_dispatch_group_and_python_note);
	tcase_add_test(tc, driver_log_symbol_and_safety_net);
	tcase_add_test(tc, summary_line_counts_and_plurals);
	tcase_add_test(tc, format_helpers);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
