/* SPDX-License-Identifier: Apache-2.0 */
/* JSON Lines rendering of a struct kimg_report: one object per line.
 * The keys are a stable interface, documented in docs/json-shim-report.md;
 * change them only together with that document and tests/unit/test_report.c. */
#include <errno.h>
#include <string.h>

#include "cuda_errors.h"
#include "json.h"
#include "report.h"

static void write_error(struct kimg_json *j, const struct kimg_report *r)
{
	kimg_json_key(j, "error");
	kimg_json_begin_object(j);
	kimg_json_kv_int(j, "code", r->error);
	kimg_json_kv_string(j, "name", kimg_cuda_error_name(r->error));
	kimg_json_kv_string(j, "runtime_name", kimg_cuda_runtime_error_name(r->error));
	kimg_json_kv_string(j, "text", kimg_cuda_error_text(r->error));
	kimg_json_kv_string(j, "cause", kimg_cuda_error_cause(r->error));
	kimg_json_end_object(j);
}

static void write_kernel(struct kimg_json *j, const struct kimg_report *r)
{
	kimg_json_key(j, "kernel");
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "name", r->kernel);
	kimg_json_kv_string(j, "demangled", r->kernel_demangled[0] ? r->kernel_demangled : NULL);
	kimg_json_end_object(j);
}

/* Only for symbol lookups: the variable named (docs/json-shim-report.md). */
static void write_symbol(struct kimg_json *j, const struct kimg_report *r)
{
	if (!r->symbol)
		return;
	kimg_json_key(j, "symbol");
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "name", r->symbol);
	kimg_json_kv_string(j, "demangled", r->symbol_demangled[0] ? r->symbol_demangled : NULL);
	kimg_json_end_object(j);
}

/* The driver's own words for the failing call, and the safety net's mark. */
static void write_driver_log(struct kimg_json *j, const struct kimg_report *r)
{
	if (r->driver_log_count > 0) {
		kimg_json_key(j, "driver_log");
		kimg_json_begin_array(j);
		for (size_t i = 0; i < r->driver_log_count && i < KIMG_REPORT_MAX_DRIVER_LINES; i++)
			kimg_json_string_n(j, r->driver_log[i], strnlen(r->driver_log[i], KIMG_REPORT_DRIVER_LINE));
		kimg_json_end_array(j);
	}
	if (r->safety_net) {
		kimg_json_key(j, "safety_net");
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "reported_at", "exit");
		kimg_json_kv_int(j, "exit_status", r->exit_status);
		kimg_json_end_object(j);
	}
}

void kimg_report_json_image_begin(struct kimg_json *j, const struct kimg_image *img)
{
	char arch[32], isa[16] = "";
	kimg_image_arch_name(img, arch, sizeof arch);
	if (img->kind == KIMG_IMAGE_PTX) /* the only kind that shows it */
		kimg_report_format_isa(img->ptx_isa, isa, sizeof isa);
	kimg_json_begin_object(j);
	kimg_json_kvl_string(j, KIMG_JSON_LIT("kind"), kimg_image_kind_name(img->kind));
	kimg_json_kvl_string(j, KIMG_JSON_LIT("arch"), arch);
	kimg_json_kvl_string(j, KIMG_JSON_LIT("ptx_isa"), img->kind == KIMG_IMAGE_PTX && isa[0] ? isa : NULL);
}

static void write_image(struct kimg_json *j, const struct kimg_report *r, size_t i)
{
	const struct kimg_image *img = &r->images[i];
	kimg_report_json_image_begin(j, img);
	kimg_json_kv_bool(j, "compressed", img->compression != KIMG_COMPRESS_NONE);
	kimg_json_kv_string(j, "compression", kimg_compression_name(img->compression));
	kimg_json_kv_uint(j, "size", img->size);
	kimg_json_kv_uint(j, "offset", img->offset);
	if (r->verdict_known) {
		const struct kimg_image_verdict *v = &r->image_verdicts[i];
		kimg_json_kv_string(j, "verdict", kimg_outcome_id(v->outcome));
		kimg_json_kv_string(j, "reason", kimg_reason_id(v->reason));
		kimg_json_kv_string(j, "rule", v->rule);
		kimg_json_kv_bool(j, "selected", r->verdict.selected == (int)i);
	} else {
		kimg_json_kv_string(j, "verdict", NULL);
		kimg_json_kv_string(j, "reason", NULL);
		kimg_json_kv_string(j, "rule", NULL);
		kimg_json_kv_bool(j, "selected", false);
	}
	kimg_json_end_object(j);
}

static void write_module(struct kimg_json *j, const struct kimg_report *r)
{
	kimg_json_key(j, "module");
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "file", r->module_file[0] ? r->module_file : NULL);
	if (r->module_offset_known)
		kimg_json_kv_uint(j, "offset", r->module_offset);
	else {
		kimg_json_key(j, "offset");
		kimg_json_null(j);
	}
	kimg_json_kv_string(j, "origin", r->module_origin);
	kimg_json_kv_string(j, "note", r->module_note[0] ? r->module_note : NULL);
	kimg_json_kv_uint(j, "image_count", r->image_total);
	kimg_json_key(j, "images");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < r->image_count; i++)
		write_image(j, r, i);
	kimg_json_end_array(j);
	kimg_json_end_object(j);
}

static void write_device(struct kimg_json *j, const struct kimg_report *r)
{
	kimg_json_key(j, "device");
	if (!r->device_known) {
		kimg_json_null(j);
		return;
	}
	const struct kimg_device *d = &r->device;
	char cc[16], drv[16], isa[16];
	kimg_arch_format_cc(d->cc, cc, sizeof cc);
	kimg_report_format_driver(d->driver_version, drv, sizeof drv);
	kimg_report_format_isa(kimg_driver_max_ptx_isa(d->driver_version), isa, sizeof isa);
	kimg_json_begin_object(j);
	kimg_json_kv_int(j, "ordinal", d->ordinal);
	kimg_json_kv_string(j, "name", d->name[0] ? d->name : NULL);
	kimg_json_kv_string(j, "sm", cc);
	kimg_json_kv_bool(j, "tegra", d->tegra);
	kimg_json_kv_string(j, "driver", d->driver_version > 0 ? drv : NULL);
	kimg_json_kv_int(j, "driver_version", d->driver_version);
	kimg_json_kv_string(j, "max_ptx_isa", isa[0] ? isa : NULL);
	kimg_json_kv_bool(j, "force_ptx_jit", d->force_ptx_jit);
	kimg_json_kv_bool(j, "disable_ptx_jit", d->disable_ptx_jit);
	kimg_json_end_object(j);
}

static void write_verdict(struct kimg_json *j, const struct kimg_report *r)
{
	kimg_json_key(j, "verdict");
	if (!r->verdict_known) {
		kimg_json_null(j);
		return;
	}
	const struct kimg_module_verdict *v = &r->verdict;
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "outcome", kimg_outcome_id(v->outcome));
	kimg_json_kv_string(j, "reason", kimg_reason_id(v->reason));
	kimg_json_kv_string(j, "reason_text", kimg_reason_text(v->reason));
	kimg_json_kv_string(j, "rule", v->rule);
	kimg_json_key(j, "selected");
	if (v->selected >= 0)
		kimg_json_int(j, v->selected);
	else
		kimg_json_null(j);
	kimg_json_kv_int(j, "expected_error", v->expected_error);
	kimg_json_end_object(j);
}

/* Empty strings become null so a consumer tests one thing, not two. */
static void kv_opt(struct kimg_json *j, const char *key, const char *s)
{
	kimg_json_kv_string(j, key, s && s[0] ? s : NULL);
}

static void write_fix(struct kimg_json *j, const struct kimg_report *r)
{
	kimg_json_key(j, "fix");
	if (!r->fix_known) {
		kimg_json_null(j);
		return;
	}
	const struct kimg_fix *f = &r->fix;
	kimg_json_begin_object(j);
	kv_opt(j, "advice", f->advice);
	kv_opt(j, "nvcc", f->nvcc);
	kv_opt(j, "cmake", f->cmake);
	kv_opt(j, "torch_cuda_arch_list", f->torch_arch_list);
	kv_opt(j, "wheel", f->wheel);
	kimg_json_kv_int(j, "min_toolkit", f->min_toolkit);
	kimg_json_kv_int(j, "max_toolkit", f->max_toolkit);
	kv_opt(j, "min_driver", f->min_driver);
	kimg_json_end_object(j);
}

static void write_stacks(struct kimg_json *j, const struct kimg_report *r)
{
	kimg_json_key(j, "stack");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < r->stack_count; i++)
		kimg_json_string(j, r->stack[i]);
	kimg_json_end_array(j);
	kimg_json_key(j, "python_stack");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < r->python_count; i++) {
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "file", r->python[i].file);
		kimg_json_kv_int(j, "line", r->python[i].line);
		kimg_json_kv_string(j, "function", r->python[i].function);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	if (r->python_note[0])
		kimg_json_kv_string(j, "python_note", r->python_note);
}

static void write_link_input(struct kimg_json *j, const struct kimg_report_link_input *in)
{
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "name", in->name);
	kimg_json_kv_string(j, "type", in->type);
	kimg_json_end_object(j);
}

/* The JIT linker's section (docs/json-shim-report.md). */
static void write_link(struct kimg_json *j, const struct kimg_report_link *l)
{
	kimg_json_key(j, "link");
	kimg_json_begin_object(j);
	kimg_json_key(j, "input");
	if (l->at_complete)
		kimg_json_null(j);
	else
		write_link_input(j, &l->input);
	kimg_json_key(j, "inputs");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < l->input_count; i++)
		write_link_input(j, &l->inputs[i]);
	kimg_json_end_array(j);
	kimg_json_kv_uint(j, "inputs_not_remembered", l->inputs_dropped);
	kimg_json_kv_string(j, "advice", l->advice[0] ? l->advice : NULL);
	kimg_json_end_object(j);
}

/* -1 means unknown: null, so a consumer never mistakes it for rank -1. */
static void kv_opt_long(struct kimg_json *j, const char *key, long v)
{
	kimg_json_key(j, key);
	if (v >= 0)
		kimg_json_int(j, v);
	else
		kimg_json_null(j);
}

static void write_process(struct kimg_json *j, const struct kimg_report *r)
{
	const struct kimg_report_process *p = &r->process;
	kimg_json_key(j, "process");
	if (!p->present) {
		kimg_json_null(j);
		return;
	}
	kimg_json_begin_object(j);
	kv_opt(j, "host", p->host);
	kimg_json_kv_int(j, "pid", p->pid);
	kv_opt_long(j, "rank", p->rank);
	kv_opt_long(j, "local_rank", p->local_rank);
	kv_opt_long(j, "world_size", p->world_size);
	kv_opt(j, "program", p->program);
	kimg_json_end_object(j);
}

/* {"from": "9.9", "to": "9.0"}, or null when the value was not lowered */
static void write_change(struct kimg_json *j, const char *key, const char *from, const char *to)
{
	kimg_json_key(j, key);
	if (!from[0]) {
		kimg_json_null(j);
		return;
	}
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "from", from);
	kimg_json_kv_string(j, "to", to);
	kimg_json_end_object(j);
}

/* KIMG_FALLBACK's section (docs/json-shim-report.md): mode, applied, what was
 * rewritten, JIT time, the warning. */
static void write_fallback(struct kimg_json *j, const struct kimg_report_fallback *f)
{
	kimg_json_key(j, "fallback");
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "mode", f->action);
	kimg_json_kv_bool(j, "applied", f->applied);
	kv_opt(j, "image", f->image);
	kimg_json_key(j, "rewritten");
	kimg_json_begin_object(j);
	write_change(j, "version", f->version_from, f->version_to);
	write_change(j, "target", f->target_from, f->target_to);
	kimg_json_end_object(j);
	kimg_json_key(j, "jit_ms");
	if (f->jit_ms >= 0)
		kimg_json_double(j, f->jit_ms);
	else
		kimg_json_null(j);
	kimg_json_kv_string(j, "result", f->result);
	kimg_json_kv_string(j, "warning", f->warning);
	kimg_json_end_object(j);
}

int kimg_report_write_json(const struct kimg_report *r, FILE *out)
{
	struct kimg_json j;
	kimg_json_init(&j, out);
	kimg_json_begin_document(&j);
	write_error(&j, r);
	kimg_json_kv_string(&j, "call", r->call);
	write_kernel(&j, r);
	write_symbol(&j, r);
	write_module(&j, r);
	write_device(&j, r);
	write_verdict(&j, r);
	write_fix(&j, r);
	write_stacks(&j, r);
	write_process(&j, r);
	if (r->fallback.present)
		write_fallback(&j, &r->fallback);
	if (r->audit) {
		kimg_json_kv_bool(&j, "audit", true);
		kimg_json_kv_uint(&j, "audit_modules", r->audit_modules ? r->audit_modules : 1);
	}
	if (r->link.present)
		write_link(&j, &r->link);
	if (r->jit_log[0]) {
		kimg_json_kv_string(&j, "jit_log", r->jit_log);
		kimg_json_kv_string(&j, "jit_log_from", r->jit_log_by_kimg ? "kimg" : "program");
	}
	write_driver_log(&j, r);
	if (r->escalation != KIMG_ESCALATION_NONE) {
		kimg_json_key(&j, "dispatch");
		kimg_json_begin_object(&j);
		kimg_json_kv_string(&j, "reported_because", kimg_escalation_id(r->escalation));
		if (r->escalation == KIMG_ESCALATION_EXIT_STATUS) {
			kimg_json_kv_int(&j, "exit_status", r->exit_status);
			kimg_json_kv_uint(&j, "modules_recorded", r->dispatch_modules);
		}
		kimg_json_end_object(&j);
	}
	kimg_json_end_object(&j);
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}
