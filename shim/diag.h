/* SPDX-License-Identifier: Apache-2.0 */
/* The one header between libkimg.so's two layers.
 *
 * shim/hook/ (the hooks: the only code that calls dlsym/dlvsym, reads the
 * hook table and calls the driver) and shim/diag/ (the diagnosis: registry,
 * options, reports, audit, fallback, stacks) meet here and nowhere else.
 * Down-calls, made by the hooks: options and lifecycle, the registry,
 * failures, load checks, registrations, the re-entry guard. Up-calls, made
 * by the diagnosis: the real driver functions and glibc's own dlsym. Each
 * layer's other headers stay in its folder (the build gives each folder its
 * own include path), and tests/scripts/layers.sh checks with nm -u that no
 * diag object names dlsym, dlvsym or a CUDA entry point itself.
 * Nothing here is exported: the version script exports only hook symbols. */
#ifndef KIMG_SHIM_DIAG_H
#define KIMG_SHIM_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KIMG_HIDDEN __attribute__((visibility("hidden")))
#define KIMG_EXPORT __attribute__((visibility("default")))
#define KIMG_COLD __attribute__((cold, noinline))
#define KIMG_LIKELY(x) __builtin_expect(!!(x), 1)
#define KIMG_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The release, as the banner and the reports give it: the file VERSION,
 * which the Makefile passes as -DKIMG_VERSION (its one place). */
#ifndef KIMG_VERSION
#error "KIMG_VERSION: build with the Makefile, which passes it from the file VERSION"
#endif

/* ---- options (options.c): read once in the constructor, then read-only ---- */
/* An option's values are named KIMG_<VARIABLE>_<VALUE> (KIMG_FALLBACK=ptx is
 * KIMG_FALLBACK_PTX); the core's fallback plan names its own apart:
 * KIMG_FALLBACK_MODE_* and KIMG_FALLBACK_OUTCOME_* (core/fallback_plan.h). */

enum kimg_format { KIMG_FORMAT_TEXT = 0, KIMG_FORMAT_JSON };
enum kimg_on_error { KIMG_ON_ERROR_CONTINUE = 0, KIMG_ON_ERROR_ABORT, KIMG_ON_ERROR_EXIT };
enum kimg_fallback { KIMG_FALLBACK_NONE = 0, KIMG_FALLBACK_PTX, KIMG_FALLBACK_FORCE_PTX };

struct kimg_options {
	bool disabled;             /* KIMG_SKIP matched this program, KIMG_DISABLE=1, secure
				    * execution, or another copy of libkimg runs this process */
	bool secure;               /* AT_SECURE (setuid, setgid, capabilities): nothing was read */
	bool verbose;              /* KIMG_VERBOSE */
	enum kimg_format format;   /* KIMG_FORMAT=text|json */
	char log_path[512];        /* KIMG_LOG expanded (%p %h %r); "" = stderr */
	enum kimg_on_error on_error;
	int exit_code;             /* KIMG_ON_ERROR=exit:N */
	enum kimg_fallback fallback;
	char fallback_glob[256];   /* KIMG_FALLBACK=force-ptx:GLOB */
	bool audit;                /* KIMG_AUDIT */
	bool driver_log;           /* KIMG_DRIVER_LOG (default on): join the driver's error log */
	bool ptxas_reason;         /* KIMG_PTXAS_REASON (default on): re-compile a refused PTX once for ptxas's words */
};

KIMG_HIDDEN extern struct kimg_options kimg_opts;
KIMG_HIDDEN void kimg_options_init(void);  /* walks environ itself; no allocation */
/* For init: print the banner when KIMG_VERBOSE is set. */
KIMG_HIDDEN void kimg_options_print_banner(void);
/* Straight to stderr, with the log's care (SIGPIPE blocked, EPIPE ends it). */
KIMG_HIDDEN void kimg_log_stderr(const char *buf, size_t len);

/* CUDA types both layers need; cuda.h is deliberately not included (see
 * hook/hook.h). */
typedef int CUresult;
typedef void *CUhandle; /* CUmodule, CUlibrary, CUfunction, CUkernel, CUstream */
#define KIMG_CUDA_SUCCESS 0

/* ---- up-calls: the real driver and glibc's dlsym (hook/driver_api.c, hook/resolve.c) ---- */

typedef int CUresult_t;
struct kimg_driver_api {
	CUresult_t (*cuDriverGetVersion)(int *);
	CUresult_t (*cuCtxGetDevice)(int *);
	CUresult_t (*cuDeviceGet)(int *, int);
	CUresult_t (*cuDeviceGetCount)(int *);
	CUresult_t (*cuDeviceGetName)(char *, int, int);
	CUresult_t (*cuDeviceGetAttribute)(int *, int, int);
	/* the fallback unloads a stand-in the JIT rejected (shim/diag/fallback.c) */
	CUresult_t (*cuModuleUnload)(void *);
	CUresult_t (*cuLibraryUnload)(void *);
	/* ptxas's reason (shim/diag/ptxas_reason.c): the refused PTX once more, with a log buffer */
	CUresult_t (*cuModuleLoadDataEx)(void **, const void *, unsigned, int *, void **);
};
/* Real (unwrapped) driver functions, resolved lazily from the driver the
 * process loaded; members are NULL when unavailable. Never calls hooks. */
KIMG_HIDDEN const struct kimg_driver_api *kimg_driver_real(void);

/* The real functions behind three hooks, as the program's own calls reach
 * them (the fallback forces the JIT through them); NULL when nothing
 * behind libkimg defines them. Each is resolved on its first request. */
typedef CUresult (*kimg_get_function_fn)(CUhandle *fn, CUhandle mod, const char *name);
typedef CUresult (*kimg_library_get_kernel_fn)(CUhandle *kernel, CUhandle lib, const char *name);
typedef CUresult (*kimg_kernel_get_function_fn)(CUhandle *fn, CUhandle kernel);
KIMG_HIDDEN kimg_get_function_fn kimg_real_cuModuleGetFunction(void);
KIMG_HIDDEN kimg_library_get_kernel_fn kimg_real_cuLibraryGetKernel(void);
KIMG_HIDDEN kimg_kernel_get_function_fn kimg_real_cuKernelGetFunction(void);

/* glibc's own dlsym, via dlvsym(RTLD_NEXT, "dlsym", GLIBC_2.34 / base);
 * NULL only if glibc offers neither. Never re-enters our dlsym. */
KIMG_HIDDEN void *kimg_real_dlsym(void *handle, const char *name);

/* ---- registry (registry.c): handle -> where its code came from ----
 * Fixed-size, lock-free (atomic CAS), allocation-free tables: insertions
 * happen on successful loads, lookups only on the cold error path. */

enum kimg_handle_kind {
	KIMG_HANDLE_MODULE = 0, /* CUmodule */
	KIMG_HANDLE_LIBRARY,    /* CUlibrary */
	KIMG_HANDLE_FUNCTION,   /* CUfunction -> parent module or kernel */
	KIMG_HANDLE_KERNEL,     /* CUkernel -> parent library */
	KIMG_HANDLE_FATBIN,     /* runtime registration handle (void **) from __cudaRegisterFatBinary */
	KIMG_HANDLE_HOST_STUB,  /* host stub address -> registration handle (+ device name) */
	KIMG_HANDLE_KIND_COUNT
};

struct kimg_origin {
	const void *image;   /* in-memory image or registration wrapper, or NULL */
	const char *path;    /* file it was loaded from (cuModuleLoad, cuLibraryLoadFromFile), or NULL */
	const void *parent;  /* for FUNCTION/KERNEL/HOST_STUB: the handle it came from */
	const char *name;    /* for FUNCTION/KERNEL/HOST_STUB: the mangled kernel name */
};

/* Strings passed in must stay valid (names given by the driver's caller are
 * copied into a fixed arena by the registry; paths likewise). */
KIMG_HIDDEN void kimg_registry_add(enum kimg_handle_kind kind, const void *handle, const struct kimg_origin *origin);
KIMG_HIDDEN bool kimg_registry_find(enum kimg_handle_kind kind, const void *handle, struct kimg_origin *out);

/* ---- failure reporting (diagnose.c): the one cold entry point ---- */

/* A JIT link input (cuLinkAddData / cuLinkAddFile), remembered per link
 * state by hook_link.c in a fixed table: no allocation. */
#define KIMG_LINK_NAME 128
#define KIMG_LINK_MAX_INPUTS 16
struct kimg_link_input {
	int type;                  /* CUjitInputType: 0 cubin, 1 PTX, 2 fatbin, 3 object, 4 library, 5 NVVM */
	const void *data;          /* cuLinkAddData's bytes (may be gone after the call), or NULL */
	size_t size;
	char name[KIMG_LINK_NAME]; /* the name given, or cuLinkAddFile's path (cut) */
};

/* What a failed link call knows beyond the module: the state's inputs and
 * the driver's JIT error log (CU_JIT_ERROR_LOG_BUFFER), when the program
 * asked for one. */
struct kimg_link_facts {
	const struct kimg_link_input *inputs;
	size_t n_inputs;           /* remembered, the refused one included */
	size_t refused;            /* index of the input the driver refused; n_inputs: cuLinkComplete */
	unsigned dropped;          /* inputs beyond KIMG_LINK_MAX_INPUTS, not remembered */
	const char *log;           /* the program's log buffer, or NULL */
	size_t log_size;           /* its capacity */
};

struct kimg_replay; /* dispatch_track.h: a recorded failure, reported later */

struct kimg_failure {
	const char *call;          /* "cuLibraryGetKernel", "cudaLaunchKernel", ... */
	int error;                 /* the code the real function returned */
	const char *kernel;        /* mangled kernel name when the call names one */
	enum kimg_handle_kind handle_kind;
	const void *handle;        /* the module/library/function/kernel/stub involved, or NULL */
	const void *image;         /* image passed to a failed load, or NULL */
	const char *path;          /* file passed to a failed load, or NULL */
	size_t image_size;         /* bytes at image when the caller said (cuLinkAddData); 0: find out */
	const struct kimg_link_facts *link; /* JIT linker and cuModuleLoadDataEx facts, or NULL */
	const void *caller;        /* return address into the code that made the call, or NULL */
	bool launch;               /* a launch: never taken for a library's probe (dispatch_track.h) */
	const struct kimg_replay *replay; /* set only when a recorded failure is reported later */
	/* the safety net (driver_log.c): a failure seen only in the driver's log,
	 * from an entry point kimg does not hook, reported at a failing exit */
	const struct kimg_driver_lines *driver_lines; /* that call's lines, or NULL */
	int exit_status;           /* with driver_lines: the status of the failing exit */
	/* (last, so positional initialisers of the fields above stay valid) */
	const char *symbol;        /* the variable (or unified function) a symbol lookup names, or NULL */
	bool symbol_lookup;        /* a symbol API (cuLibraryGetGlobal, cudaMemcpyToSymbol, ...): a
				    * registered name found for the handle is the symbol's, not a kernel's */
};

/* ---- the driver's error log (driver_log.c) ----
 * kimg's CUlogsCallback keeps each thread's last messages in a fixed ring
 * (a static table of rings claimed by thread id: no allocation, no lock,
 * no thread-local storage, nothing called but memcpy and two syscalls).
 * A report takes the lines of the failing call on the failing thread. */
#define KIMG_DRIVER_LINES 8
#define KIMG_DRIVER_LINE 240
struct kimg_driver_lines {
	size_t n;                                      /* oldest first */
	char line[KIMG_DRIVER_LINES][KIMG_DRIVER_LINE];
};

/* The callback (the CUlogsCallback ABI; level 0 error, 1 warning). */
KIMG_HIDDEN void kimg_driver_log_callback(void *data, int level, char *message, size_t length);

/* The hooks registered the callback with the driver (safety_net.c): arms the safety
 * net's check at exit (on_exit). Once; cold. */
KIMG_HIDDEN void kimg_driver_log_attached(void);

/* Called by a hook when the real call returned an image-class error.
 * Builds the report from the core model, writes it once per
 * (module, error), applies KIMG_ON_ERROR. Never changes the error. */
KIMG_HIDDEN KIMG_COLD void kimg_report_failure(const struct kimg_failure *f);

/* A load-time finding that is not a failed call: KIMG_AUDIT found a module
 * that cannot run, or KIMG_FALLBACK acted (or could not). The report is
 * built as for a failure (module, images, verdict, fix, stacks, process),
 * plus the fallback section or the audit mark. */
struct kimg_report_fallback;
struct kimg_device;
struct kimg_load_event {
	const char *call;          /* the load: "cuLibraryLoadData", "__cudaRegisterFatBinary" */
	int error;                 /* what the module gives (would give) on this device; 0 none */
	const void *image;         /* the code as the program passed it, or NULL */
	const char *path;          /* or the file it was loaded from */
	const struct kimg_device *device;            /* facts the caller has, or NULL: ask the driver */
	const struct kimg_report_fallback *fallback; /* or NULL */
	bool audit;                /* found by KIMG_AUDIT */
	/* The module cannot run: count it as failed and mark (module, error)
	 * reported, so its later failure is counted, not reported again;
	 * KIMG_ON_ERROR applies now when audit is set, else at that failure. */
	bool cannot_run;
	unsigned audit_modules;    /* KIMG_AUDIT: modules of this file with this cause */
	const struct kimg_replay *replay; /* stacks taken earlier (a held audit report), or NULL */
};
/* Returns false when (module, error) was already reported (nothing written). */
KIMG_HIDDEN KIMG_COLD bool kimg_report_load_event(const struct kimg_load_event *e);

/* A module KIMG_AUDIT counted with its (file, cause) group instead of
 * reporting it: its later failure with `error` is counted, not reported. */
KIMG_HIDDEN void kimg_report_mark_counted(const void *image, const char *path, int error);

/* At exit: one summary line when anything failed. */
KIMG_HIDDEN void kimg_report_summary(void);

/* ---- load checks (diag/fallback.c, diag/audit.c) ---- */

/* The load being made. */
struct kimg_load_req {
	const char *call;            /* "cuModuleLoadData", "cuLibraryLoadFromFile", ... */
	enum kimg_handle_kind kind;  /* KIMG_HANDLE_MODULE or KIMG_HANDLE_LIBRARY */
	const void *image;           /* in-memory code, or NULL */
	const char *path;            /* file, or NULL */
};

/* The real load of in-memory code (PTX text for the stand-in) with the
 * caller's other arguments (ctx): cuModuleLoadData(Ex) / cuLibraryLoadData,
 * also for path loads, whose stand-in is in memory. */
typedef CUresult (*kimg_load_fn)(void *ctx, const void *image, CUhandle *handle);

/* Audit the module and apply the fallback (the load hooks call it when
 * KIMG_FALLBACK or KIMG_AUDIT is set). True when it loaded the stand-in
 * itself: *handle and *result hold the outcome (success), the handle is in
 * the registry, and the hook returns *result. False: the hook loads the
 * original as usual (nothing to do, not rescuable, or the JIT rejected the
 * stand-in, which has then been reported and unloaded: the original load
 * gives the program its original error).
 *
 * The stand-in text is never freed: the driver may read it for as long as
 * the module lives (CU_LIBRARY_BINARY_IS_PRESERVED, docs/loading.md §4),
 * and modules are few; one is freed only when its load failed. */
KIMG_HIDDEN KIMG_COLD bool kimg_load_intercept(const struct kimg_load_req *req, kimg_load_fn load, void *ctx,
					       CUhandle *handle, CUresult *result);

/* KIMG_AUDIT for a fatbin the shared runtime registered (hook_runtime.c):
 * reads the wrapper, asks for the device, checks. Cold; never faults. */
KIMG_HIDDEN KIMG_COLD void kimg_audit_registration(const void *wrapper);

/* ---- the driver refusing the runtime (diag/driver_mismatch.c) ----
 * A runtime that asks the driver for a newer CUDA version than it supports
 * (error 35, cudaErrorInsufficientDriver) or a shared runtime whose
 * cudaRuntimeGetVersion is newer than the driver, and cuInit failing with
 * 35, 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: a user-mode driver, usually a
 * cuda-compat package, that does not match the kernel module) or 804
 * (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility on a
 * GPU that does not support it). Reported once per process, with both
 * versions and the fix. */

/* A runtime asked cuGetProcAddress for `version` (its CUDA version, as
 * cudart passes it), or cudaRuntimeGetVersion answered it (`call` names
 * which). Cheap when version is not above what was already compared: one
 * relaxed atomic load. */
KIMG_HIDDEN void kimg_driver_mismatch_note_request(int version, const char *call);

/* cuInit returned rc != 0. */
KIMG_HIDDEN KIMG_COLD void kimg_driver_mismatch_init_failed(int rc);

/* Thread-local re-entry guard: hooks pass straight through while the
 * diagnosis itself runs (it calls the driver, dladdr, libunwind). */
KIMG_HIDDEN extern __thread int kimg_in_diagnosis;

#endif
