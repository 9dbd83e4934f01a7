/* SPDX-License-Identifier: Apache-2.0 */
/* Text rendering of a struct kimg_report: one block a person reads at a
 * glance. Every line starts with "kimg: " so the block stays findable when
 * it lands in the middle of a program's own output. */
#include <errno.h>
#include <string.h>

#include "cuda_errors.h"
#include "report.h"
#include "text_escape.h"

#define P "kimg: "

/* The driver's names for driver calls, the runtime's for runtime calls
 * (cudaLaunchKernel returns cudaErrorNoKernelImageForDevice, not
 * CUDA_ERROR_NO_BINARY_FOR_GPU, although the number is the same). */
static const char *error_name(const struct kimg_report *r)
{
	const char *drv = kimg_cuda_error_name(r->error);
	const char *rt = kimg_cuda_runtime_error_name(r->error);
	bool runtime_call = r->call && strncmp(r->call, "cuda", 4) == 0;
	const char *name = runtime_call ? (rt ? rt : drv) : (drv ? drv : rt);
	return name ? name : "unknown error";
}

static void image_verdict_text(const struct kimg_report *r, size_t i, char *buf, size_t size)
{
	const struct kimg_image_verdict *v = &r->image_verdicts[i];
	bool selected = r->verdict_known && r->verdict.selected == (int)i;
	const char *rule = v->rule ? v->rule : "";
	const char *open = *rule ? " [" : "", *close = *rule ? "]" : "";
	switch (v->outcome) {
	case KIMG_OUTCOME_SASS:
	case KIMG_OUTCOME_PTX_JIT: {
		const char *how = v->outcome == KIMG_OUTCOME_SASS ? "runs as cubin" : "runs through PTX JIT";
		if (selected)
			snprintf(buf, size, "selected: %s%s%s%s", how, open, rule, close);
		else if (v->reason != KIMG_REASON_FITS)
			snprintf(buf, size, "%s, but %s%s%s%s", how, kimg_reason_text(v->reason), open, rule, close);
		else
			snprintf(buf, size, "%s%s%s%s", how, open, rule, close);
		break;
	}
	default:
		snprintf(buf, size, "no: %s%s%s%s", kimg_reason_text(v->reason), open, rule, close);
		break;
	}
}

static void write_device(const struct kimg_report *r, FILE *out)
{
	if (!r->device_known) {
		fprintf(out, P "  device: unknown (the driver could not be asked)\n");
		return;
	}
	const struct kimg_device *d = &r->device;
	char cc[16], drv[16], isa[16];
	kimg_arch_format_cc(d->cc, cc, sizeof cc);
	kimg_report_format_driver(d->driver_version, drv, sizeof drv);
	kimg_report_format_isa(kimg_driver_max_ptx_isa(d->driver_version), isa, sizeof isa);
	fprintf(out, P "  device: %s", d->name[0] ? d->name : "GPU");
	if (d->ordinal >= 0)
		fprintf(out, " (device %d)", d->ordinal);
	fprintf(out, ", SM %s%s, driver %s, max PTX ISA %s", cc, d->tegra ? " (Tegra)" : "", drv, isa[0] ? isa : "?");
	if (d->force_ptx_jit)
		fprintf(out, ", CUDA_FORCE_PTX_JIT=1");
	if (d->disable_ptx_jit)
		fprintf(out, ", CUDA_DISABLE_PTX_JIT=1");
	fputc('\n', out);
}

static void write_images(const struct kimg_report *r, FILE *out)
{
	if (r->image_total == 0)
		return;
	fprintf(out, P "  images (%zu):\n", r->image_total);
	fprintf(out, P "    %-3s %-5s %-13s %-4s %-10s %10s  %s\n", "#", "kind", "arch", "ptx", "compressed", "size",
		"verdict");
	for (size_t i = 0; i < r->image_count; i++) {
		const struct kimg_image *img = &r->images[i];
		char arch[32], isa[16], verdict[256];
		kimg_image_arch_name(img, arch, sizeof arch);
		kimg_report_format_isa(img->ptx_isa, isa, sizeof isa);
		const char *comp = kimg_compression_name(img->compression);
		if (r->verdict_known)
			image_verdict_text(r, i, verdict, sizeof verdict);
		else
			snprintf(verdict, sizeof verdict, "?");
		fprintf(out, P "    %-3zu %-5s %-13s %-4s %-10s %10llu  %s\n", i, kimg_image_kind_name(img->kind), arch,
			isa[0] ? isa : "-", comp ? comp : "-", (unsigned long long)img->size, verdict);
	}
	if (r->image_count < r->image_total)
		fprintf(out, P "    ... %zu more not shown\n", r->image_total - r->image_count);
}

static void write_fix(const struct kimg_report *r, FILE *out)
{
	const struct kimg_fix *f = &r->fix;
	const char *lead = P "  fix:    ";
	const char *cont = P "          ";
#define FIX_LINE(...) do { fputs(lead, out); fprintf(out, __VA_ARGS__); fputc('\n', out); lead = cont; } while (0)
	if (f->advice[0])
		FIX_LINE("%s", f->advice);
	if (f->nvcc[0])
		FIX_LINE("nvcc: %s", f->nvcc);
	if (f->cmake[0])
		FIX_LINE("CMake: -DCMAKE_CUDA_ARCHITECTURES=\"%s\"", f->cmake);
	if (f->torch_arch_list[0])
		FIX_LINE("PyTorch extensions: TORCH_CUDA_ARCH_LIST=\"%s\"", f->torch_arch_list);
	if (f->wheel[0])
		FIX_LINE("wheel: %s", f->wheel);
	if (f->min_toolkit > 0) {
		char lo[16], hi[16];
		kimg_report_format_driver(f->min_toolkit, lo, sizeof lo);
		kimg_report_format_driver(f->max_toolkit, hi, sizeof hi);
		FIX_LINE("toolkit: CUDA %s%s%s%s%s", lo, f->max_toolkit > 0 ? " to " : " or newer",
			 f->max_toolkit > 0 ? hi : "", f->min_driver[0] ? ", driver >= " : "", f->min_driver);
	}
#undef FIX_LINE
}

/* "process: python3 pid 4242 on node1, rank 3 of 8 (local 1)": which of
 * many ranks wrote this block when they share a terminal. */
static void write_process(const struct kimg_report *r, FILE *out)
{
	const struct kimg_report_process *p = &r->process;
	if (!p->present)
		return;
	fputs(P "  process: ", out);
	kimg_text_fputs(p->program[0] ? p->program : "?", out);
	fprintf(out, " pid %ld on ", p->pid);
	kimg_text_fputs(p->host[0] ? p->host : "?", out);
	if (p->rank >= 0) {
		fprintf(out, ", rank %ld", p->rank);
		if (p->world_size > 0)
			fprintf(out, " of %ld", p->world_size);
		if (p->local_rank >= 0)
			fprintf(out, " (local %ld)", p->local_rank);
	}
	fputc('\n', out);
}

/* First line: what happened. A failed call names the call and its error;
 * a load-time audit finding and a fallback say so first, since the call
 * they name has not failed (yet). */
static void write_header(const struct kimg_report *r, FILE *out)
{
	const char *call = r->call ? r->call : "a CUDA call";
	const char *text = kimg_cuda_error_text(r->error);
	if (r->fallback.present && r->fallback.applied) {
		fprintf(out, P "fallback: %s runs rewritten PTX", call);
		if (r->error)
			fprintf(out, " (without it: %d %s)", r->error, error_name(r));
		fputc('\n', out);
		return;
	}
	if (r->audit)
		fprintf(out, P "audit: %s loads a module that cannot run on this device: %d %s", call, r->error,
			error_name(r));
	else
		fprintf(out, P "%s returned %d %s", call, r->error, error_name(r));
	if (text)
		fprintf(out, " (%s)", text);
	if (r->audit && r->audit_modules > 1)
		fprintf(out, "; %u modules of this file, same cause: this report stands for all", r->audit_modules);
	fputc('\n', out);
}

/* "fallback: MODE: RESULT", then what was rewritten and the JIT time,
 * then the warning, continuation lines indented under the value. */
static void write_fallback(const struct kimg_report_fallback *f, FILE *out)
{
	const char *sep = "";
	fprintf(out, P "  fallback: %s: %s\n", f->action, f->result);
	if (f->image[0] || f->version_from[0] || f->target_from[0] || f->jit_ms >= 0) {
		fputs(P "            ", out);
		if (f->image[0]) {
			fprintf(out, "image %s", f->image);
			sep = ", ";
		}
		if (f->version_from[0]) {
			fprintf(out, "%s.version %s -> %s", sep, f->version_from, f->version_to);
			sep = ", ";
		}
		if (f->target_from[0]) {
			fprintf(out, "%s.target %s -> %s", sep, f->target_from, f->target_to);
			sep = ", ";
		}
		if (f->jit_ms >= 0)
			fprintf(out, "%sJIT %.3f ms", sep, f->jit_ms);
		fputc('\n', out);
	}
	if (f->warning)
		fprintf(out, P "            warning: %s\n", f->warning);
}

/* The JIT linker's inputs: "link: input NAME (ptx), refused; 2 inputs: ..." */
static void write_link(const struct kimg_report_link *l, FILE *out)
{
	if (l->at_complete)
		fprintf(out, P "  link:   cuLinkComplete refused the link of %zu input%s\n", l->input_count,
			l->input_count == 1 ? "" : "s");
	else
		fprintf(out, P "  link:   input \"%s\" (%s) refused\n", l->input.name[0] ? l->input.name : "(no name)",
			l->input.type);
	for (size_t i = 0; i < l->input_count; i++)
		fprintf(out, P "          #%zu %s (%s)\n", i, l->inputs[i].name[0] ? l->inputs[i].name : "(no name)",
			l->inputs[i].type);
	if (l->inputs_dropped)
		fprintf(out, P "          ... %u more inputs not remembered\n", l->inputs_dropped);
}

/* Multi-line text (the JIT log) as continuation lines. */
static void write_block(const char *label, const char *text, FILE *out)
{
	const char *lead = label;
	while (*text) {
		size_t n = strcspn(text, "\n");
		if (n > 0)
			fprintf(out, P "  %s%.*s\n", lead, (int)n, text);
		lead = "         "; /* under the value, past "jit log: " */
		text += n;
		if (*text)
			text++;
	}
}

int kimg_report_write_text(const struct kimg_report *r, FILE *out)
{
	write_header(r, out);
	if (r->escalation != KIMG_ESCALATION_NONE) {
		fprintf(out, P "  dispatch: an arch-dispatched failure (a module for other GPUs in a file with code for "
			"this one), reported because %s", kimg_escalation_text(r->escalation));
		if (r->escalation == KIMG_ESCALATION_EXIT_STATUS)
			fprintf(out, " (status %d; %u module%s of this file recorded)", r->exit_status, r->dispatch_modules,
				r->dispatch_modules == 1 ? "" : "s");
		fputc('\n', out);
	}

	write_device(r, out);
	write_process(r, out);
	if (r->kernel) {
		/* Names from the module and from files: escaped (text_escape.h). */
		fputs(P "  kernel: ", out);
		if (r->kernel_demangled[0] && strcmp(r->kernel_demangled, r->kernel) != 0) {
			kimg_text_fputs(r->kernel_demangled, out);
			fputs("  [", out);
			kimg_text_fputs(r->kernel, out);
			fputs("]\n", out);
		} else {
			kimg_text_fputs(r->kernel, out);
			fputc('\n', out);
		}
	}
	if (r->symbol) {
		fputs(P "  symbol: ", out);
		kimg_text_fputs(r->symbol_demangled[0] ? r->symbol_demangled : r->symbol, out);
		fputc('\n', out);
	}
	if (r->safety_net) {
		fputs(P "  seen in the driver's log only: kimg does not hook ", out);
		kimg_text_fputs(r->call ? r->call : "?", out);
		fprintf(out, "; reported at exit (status %d)\n", r->exit_status);
	}
	if (r->link.present)
		write_link(&r->link, out);
	fputs(P "  module: ", out);
	if (r->module_file[0])
		kimg_text_fputs(r->module_file, out);
	else
		fputs("(in memory, file unknown)", out);
	if (r->module_offset_known)
		fprintf(out, " @ 0x%llx", (unsigned long long)r->module_offset);
	if (r->module_origin)
		fprintf(out, " (%s)", r->module_origin);
	fputc('\n', out);
	if (r->module_note[0])
		fprintf(out, P "  note:   %s\n", r->module_note);

	write_images(r, out);
	if (r->verdict_known) {
		const char *rule = r->verdict.rule;
		fprintf(out, P "  why:    %s%s%s%s\n", kimg_reason_text(r->verdict.reason), rule ? " [" : "", rule ? rule : "",
			rule ? "]" : "");
	}
	/* The rules explain a failure only when they find no fitting image;
	 * otherwise (a corrupt image, a missing JIT library) the code does. */
	const char *cause = kimg_cuda_error_cause(r->error);
	if (cause && (!r->verdict_known || r->verdict.outcome != KIMG_OUTCOME_CANNOT_RUN))
		fprintf(out, P "  cause:  %s\n", cause);
	if (r->link.present && r->link.advice[0])
		fprintf(out, P "  link fix: %s\n", r->link.advice);
	if (r->fix_known)
		write_fix(r, out);
	if (r->jit_log[0])
		write_block(r->jit_log_by_kimg ? "ptxas said (kimg compiled it once more): " : "jit log: ", r->jit_log, out);
	for (size_t i = 0; i < r->driver_log_count && i < KIMG_REPORT_MAX_DRIVER_LINES; i++) {
		fputs(P "  driver said: ", out);
		kimg_text_fputs(r->driver_log[i], out);
		fputc('\n', out);
	}
	if (r->fallback.present)
		write_fallback(&r->fallback, out);

	if (r->python_count > 0) {
		fprintf(out, P "  python stack (innermost first):\n");
		for (size_t i = 0; i < r->python_count; i++)
		{
			fputs(P "    ", out);
			kimg_text_fputs(r->python[i].file, out);
			fprintf(out, ":%d in ", r->python[i].line);
			kimg_text_fputs(r->python[i].function, out);
			fputc('\n', out);
		}
	}
	else if (r->python_note[0])
		fprintf(out, P "  python stack: %s\n", r->python_note);
	if (r->stack_count > 0) {
		fprintf(out, P "  stack:\n");
		for (size_t i = 0; i < r->stack_count; i++)
		{
			fprintf(out, P "    #%-2zu ", i);
			kimg_text_fputs(r->stack[i], out);
			fputc('\n', out);
		}
	}
	return ferror(out) ? -EIO : 0;
}
