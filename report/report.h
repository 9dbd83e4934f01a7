/* SPDX-License-Identifier: Apache-2.0 */
/* The shim's report model and its two renderers (text for people, JSON
 * Lines for machines). The model is filled by shim/diag/diagnose.c from the core
 * verdicts; the renderers only format it, they never re-derive a verdict
 * (docs/design.md section 1). JSON keys are documented in docs/json-shim-report.md.
 *
 * Everything is fixed size so the shim can fill one without the heap. */
#ifndef KIMG_REPORT_H
#define KIMG_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "fix.h"
#include "image.h"
#include "rules.h"

#define KIMG_REPORT_MAX_IMAGES 64
#define KIMG_REPORT_MAX_FRAMES 32
/* The driver's error-log lines of the failing call (shim/diag/driver_log.c). */
#define KIMG_REPORT_MAX_DRIVER_LINES 8
#define KIMG_REPORT_DRIVER_LINE 240

struct kimg_python_frame {
	char file[256];
	int line;
	char function[128];
};

/* What KIMG_FALLBACK did with this module (shim/diag/fallback.c), present only
 * when it acted or was asked to and could not: never a silent rescue. */
struct kimg_report_fallback {
	bool present;
	char action[64];          /* the mode: "ptx" or "force-ptx" */
	char result[160];         /* one sentence: "PTX rewritten ...", "JIT rejected the rewritten PTX: 218 ..." */
	bool applied;             /* the program now runs the rewritten PTX */
	char version_from[8];     /* PTX .version before/after ("9.9" -> "9.0"); "" when not lowered */
	char version_to[8];
	char target_from[16];     /* .target before/after ("sm_100" -> "sm_90"); "" when not lowered */
	char target_to[16];
	char image[32];           /* the image used: "compute_100" */
	double jit_ms;            /* load + first kernel lookup (the JIT) in ms; < 0 when not measured */
	const char *warning;      /* static text, or NULL */
};

/* The process that failed, so reports from many ranks and hosts can be
 * merged (kimg-probe summarize). */
struct kimg_report_process {
	bool present;
	char host[256];    /* uname nodename */
	long pid;
	long rank;         /* -1: unknown (JSON null); see shim/diag/diag_internal.h for the variables */
	long local_rank;   /* -1: unknown */
	long world_size;   /* -1: unknown */
	char program[64];  /* basename of the executable */
};

/* A refusal by the driver's JIT linker (cuLinkAddData, cuLinkAddFile,
 * cuLinkComplete): which input, and what else the link state holds. */
#define KIMG_REPORT_MAX_LINK_INPUTS 16
struct kimg_report_link_input {
	char name[128];
	const char *type;         /* "ptx", "cubin", "fatbin", "object", "library", "nvvm", "?" */
};
struct kimg_report_link {
	bool present;
	bool at_complete;         /* refused by cuLinkComplete: no single input named */
	struct kimg_report_link_input input;  /* the refused input */
	struct kimg_report_link_input inputs[KIMG_REPORT_MAX_LINK_INPUTS]; /* the state's, in order */
	size_t input_count;       /* entries in inputs[] */
	unsigned inputs_dropped;  /* more inputs than kimg remembers */
	char advice[512];         /* what to change in the PTX or the driver, "" when the fix says it */
};

/* Why a failure of an arch-dispatched module (a module for other GPUs in
 * a file that has code for this one: shim/diag/dispatch_track.c) is reported
 * after all; such failures are recorded, not printed, until one of these. */
enum kimg_escalation {
	KIMG_ESCALATION_NONE = 0,       /* reported at once, as every other failure */
	KIMG_ESCALATION_LAUNCH,         /* a launch of the same module failed where kimg sees it */
	KIMG_ESCALATION_PROGRAM_CALL,   /* the failing call came from the program, not a runtime or the library */
	KIMG_ESCALATION_EXIT_STATUS,    /* the process exited with a failure status after it */
	KIMG_ESCALATION_COUNT
};

struct kimg_report {
	/* the failing call */
	const char *call;             /* "cuLibraryGetKernel" */
	int error;                    /* CUresult / cudaError_t value */
	const char *kernel;           /* mangled name, or NULL */
	char kernel_demangled[512];   /* "" when unknown or not a C++ name */
	const char *symbol;           /* the variable a symbol lookup named (cuLibraryGetGlobal,
				       * cudaMemcpyToSymbol), or NULL */
	char symbol_demangled[512];   /* "" when unknown or not a C++ name */

	/* where the code came from */
	char module_file[512];        /* "" when unknown */
	uint64_t module_offset;       /* of the module within module_file */
	bool module_offset_known;
	const char *module_origin;    /* ".nv_fatbin", "cuModuleLoad", "memory", ... or NULL */
	char module_note[160];        /* why the module could not be read, "" when it was */

	/* the images found in the module and their verdicts */
	struct kimg_image images[KIMG_REPORT_MAX_IMAGES];
	struct kimg_image_verdict image_verdicts[KIMG_REPORT_MAX_IMAGES];
	size_t image_count;           /* entries filled in images[] */
	size_t image_total;           /* entries in the module (> image_count when truncated) */

	/* the device and the module verdict; *_known false when not available */
	bool device_known;
	struct kimg_device device;
	bool verdict_known;
	struct kimg_module_verdict verdict;
	bool fix_known;
	struct kimg_fix fix;

	/* where the program was when it failed, innermost first */
	char stack[KIMG_REPORT_MAX_FRAMES][256];
	size_t stack_count;
	struct kimg_python_frame python[KIMG_REPORT_MAX_FRAMES];
	size_t python_count;

	struct kimg_report_fallback fallback;
	bool audit;                   /* found by KIMG_AUDIT at load, before any kernel ran */
	unsigned audit_modules;       /* KIMG_AUDIT: modules of this file with this cause (this one included) */

	struct kimg_report_link link; /* JIT linker facts, when present */
	char jit_log[1024];           /* the driver's JIT error log (CU_JIT_ERROR_LOG_BUFFER), "" when none */
	bool jit_log_by_kimg;         /* jit_log is from kimg's re-compile (KIMG_PTXAS_REASON), not the program's buffer */
	/* the driver's own words for the failing call, oldest first */
	char driver_log[KIMG_REPORT_MAX_DRIVER_LINES][KIMG_REPORT_DRIVER_LINE];
	size_t driver_log_count;
	bool safety_net;              /* seen only in the driver's log: kimg does not hook the call */

	enum kimg_escalation escalation;
	int exit_status;              /* KIMG_ESCALATION_EXIT_STATUS: the status */
	unsigned dispatch_modules;    /* modules of the file recorded (exit-status reports), 0 unknown */
	char python_note[160];        /* why python_stack is empty although Python runs, "" otherwise */

	struct kimg_report_process process;
};

/* Human-readable block: every line starts with "kimg: ". Returns 0, or
 * -EIO when the stream reports an error. */
int kimg_report_write_text(const struct kimg_report *r, FILE *out);

/* One JSON object on one line, ending in '\n' (JSON Lines). Returns 0, or
 * -EIO when the stream reports an error. */
int kimg_report_write_json(const struct kimg_report *r, FILE *out);

struct kimg_json;
/* Opens one image's JSON object with the keys every JSON document of
 * kimg gives an image first, the one writer of them: "kind", "arch" and
 * "ptx_isa" (null but for PTX). The caller adds its own keys (kimg-probe's
 * docs/json-probe.md, libkimg's docs/json-shim-report.md) and ends the object. */
void kimg_report_json_image_begin(struct kimg_json *j, const struct kimg_image *img);

/* "kimg: 2 kernels in 1 module failed to load (see above)\n", or, when
 * no failure named a kernel (loads failed), "kimg: 1 module failed to load
 * (see above)\n", into buf (always NUL-terminated). Returns the length,
 * 0 when nothing failed. */
size_t kimg_report_summary_line(unsigned kernels, unsigned modules, char *buf, size_t size);

/* Helpers shared by both renderers. */
/* "13.0" from 13000, "?" for 0. */
void kimg_report_format_driver(int driver_version, char *buf, size_t size);
/* "9.0" from 900; "" for 0. */
void kimg_report_format_isa(uint16_t isa, char *buf, size_t size);
/* "a launch of the same module failed", ...; NULL for NONE. */
const char *kimg_escalation_text(enum kimg_escalation e);
/* "launch", "program_call", "exit_status"; NULL for NONE. */
const char *kimg_escalation_id(enum kimg_escalation e);

#endif
