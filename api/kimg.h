/* SPDX-License-Identifier: Apache-2.0 */
/* kimg.h: ask before the first kernel.
 *
 * "Can this file's GPU code run on this device (or on this --sm target)?",
 * answered before anything is launched, with the verdict, the CUDA error
 * the program would get, the reason and the fix. The answers are the ones
 * `kimg-probe check` gives: the same core (parsers, rule tables, file-level
 * rules, fix generator) is linked into libkimgapi.so; nothing here has
 * rules of its own (docs/api.md).
 *
 * Link with -lkimgapi. libkimgapi.so is not the LD_PRELOAD library
 * (libkimg.so): it has no hooks and no constructor, so loading it changes
 * nothing in the process. It exports exactly the functions below.
 *
 * Targets (`sm`): what `kimg-probe check --sm` takes, as one string:
 * compute capabilities (9.0, 90, sm_90), GPU names ("H100", "RTX 4090"),
 * comma-separated, and `native` for this machine's GPUs with their real
 * driver version (the only target that needs a driver: NVML, else the CUDA
 * driver, loaded once with dlopen; where NVML cannot answer, cuInit runs
 * in the calling process). NULL means "native". `driver`: the
 * CUDA version ("12.4") assumed for the targets given by number or name,
 * so that PTX newer than that driver's JIT is error 222; NULL: no limit.
 *
 * Errors are returned, never printed: a negative errno (-ENOENT for a
 * missing file or driver, -ENODEV for no GPU, -EINVAL for a bad `sm` or
 * `driver`) or a negative kimg code (kimg_api_strerror names them), with
 * one line in `why` (may be NULL). Thread safety: every function may be
 * called from any thread at once; an answer is read-only once made and
 * may be shared between threads until kimg_answer_free. */
#ifndef KIMG_H
#define KIMG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever a function or field is added; checked by
 * kimg_api_version() at run time. */
#define KIMG_API_VERSION 1

/* One question's answer: every module of the file on every target. */
struct kimg_answer;

enum kimg_ask_flag {
	/* As `check --strict`: no module is excused as code its library
	 * selects for other GPUs (docs/rules.md, F1/F2). */
	KIMG_ASK_STRICT = 1u << 0,
	/* As `check --deep`: also device code stored as plain data in
	 * loaded data sections (loaded with cuModuleLoadData). */
	KIMG_ASK_DEEP = 1u << 1,
};

/* The bytes of a module or file: a host ELF (executable, shared object,
 * object), a static archive, a fatbin, a cubin or PTX text. `name` is
 * the file name the bytes came from (used for the file-level rules, such
 * as the libraries known to pick modules per GPU; NULL: none). The bytes
 * are read during the call only. Returns 0 with *out set (free it with
 * kimg_answer_free), or a negative error with *out NULL. Bytes that are
 * none of the kinds above: -KIMG_API_EUNKNOWN. */
int kimg_can_run_bytes(const void *data, size_t size, const char *name, const char *sm, const char *driver,
		       unsigned flags, struct kimg_answer **out, char *why, size_t why_size);

/* The same for the file at `path` (mapped read-only; only the headers are
 * read). A file with no device code is an answer (it runs: nothing in it
 * can fail with a kernel-image error), not an error. Zip archives and
 * wheels: -KIMG_API_ENOTSUP (kimg-probe check reads them). */
int kimg_can_run_file(const char *path, const char *sm, const char *driver, unsigned flags,
		      struct kimg_answer **out, char *why, size_t why_size);

/* The same for the file of the loaded module (executable or shared
 * object) that holds `addr`: a function or variable of it, as dladdr(3)
 * finds it. -ENOENT when no loaded module holds addr. */
int kimg_can_run_loaded(const void *addr, const char *sm, const char *driver, unsigned flags,
			struct kimg_answer **out, char *why, size_t why_size);

void kimg_answer_free(struct kimg_answer *a);

/* 1 when every module runs (as SASS, by PTX JIT, after a JIT link, or is
 * code its library selects for other GPUs) on every target, else 0. */
int kimg_answer_runs(const struct kimg_answer *a);
/* The CUresult the first failing module would get on the first target
 * it fails on (209 CUDA_ERROR_NO_BINARY_FOR_GPU, 218, 222, 500 ...), or 0.
 * A CUDA runtime or library (libcudart.so.N, NVRTC, cuBLAS ...) of a newer
 * CUDA major than a target's driver fails first, at its start: 35
 * (cudaErrorInsufficientDriver), as kimg-probe check says. */
int kimg_answer_error(const struct kimg_answer *a);
/* One line: why it cannot run (module, target, reason, rule, error), or
 * why it runs. Never NULL. */
const char *kimg_answer_reason(const struct kimg_answer *a);
/* One line: the build settings that fix the first failure (nvcc
 * -gencode, CMAKE_CUDA_ARCHITECTURES, TORCH_CUDA_ARCH_LIST, toolkit,
 * PyTorch wheel, advice); "" when it runs. Never NULL. */
const char *kimg_answer_fix(const struct kimg_answer *a);
/* The file's path (or the name given to kimg_can_run_bytes; "" if none). */
const char *kimg_answer_path(const struct kimg_answer *a);
size_t kimg_answer_module_count(const struct kimg_answer *a);
size_t kimg_answer_target_count(const struct kimg_answer *a);

struct kimg_target_info {
	const char *sm;          /* "9.0" */
	const char *device;      /* "NVIDIA H200", a GPU name, or the token given ("9.0") */
	int ordinal;             /* device index for native targets, -1 otherwise */
	int driver_version;      /* 1000 * major + 10 * minor (12040), 0 unknown */
	int tegra;               /* 1 for an integrated (Jetson) GPU */
};
/* Target t (below kimg_answer_target_count). 0, or -EINVAL. */
int kimg_answer_target(const struct kimg_answer *a, size_t t, struct kimg_target_info *out);

/* A module that is not judged (fate "not_judged": a device-link input of
 * an -rdc file, a device-link stub, an empty container) has outcome,
 * reason, reason_text and rule NULL. */
struct kimg_verdict_info {
	const char *outcome;     /* "sass", "ptx_jit", "jit_link", "cannot_run" */
	const char *image;       /* the image the driver would use ("sm_80"), or NULL */
	const char *reason;      /* reason id ("different_major"), docs/rules.md */
	const char *reason_text; /* the same in words */
	const char *rule;        /* the rule row that decided ("S1", "P3") */
	int expected_error;      /* CUresult: 0 when it runs */
	const char *fate;        /* "runs", "dispatched", "fails", "not_judged" */
	const char *file_rule;   /* "F0".."F3", "R1", "R2", or NULL */
	const char *library;     /* F2: the library that selects modules per GPU, or NULL */
	/* the fix of a failing verdict ("" otherwise) */
	const char *fix_nvcc;            /* "-gencode arch=compute_80,code=sm_80 ..." */
	const char *fix_cmake;           /* CMAKE_CUDA_ARCHITECTURES: "80-real;90" */
	const char *fix_torch_arch_list; /* TORCH_CUDA_ARCH_LIST: "8.0;9.0+PTX" */
	const char *fix_advice;          /* one sentence */
};
/* Module m (file order, below kimg_answer_module_count) on target t.
 * Pointers stay valid until kimg_answer_free. 0, or -EINVAL. */
int kimg_answer_verdict(const struct kimg_answer *a, size_t m, size_t t, struct kimg_verdict_info *out);

/* The whole answer as one JSON object (docs/api.md): path, runs, error,
 * reason, fix, targets, and modules with their images and verdicts in
 * `kimg-probe check --json`'s spelling. Valid until kimg_answer_free. */
const char *kimg_answer_json(const struct kimg_answer *a);

/* kimg's own error codes (negated when returned). */
enum kimg_api_errno {
	KIMG_API_EFORMAT = 4001,   /* malformed input */
	KIMG_API_ETRUNC = 4002,    /* input ends early */
	KIMG_API_ENOTSUP = 4003,   /* valid but not supported here (zip, thin archive) */
	KIMG_API_ENOCODEC = 4004,  /* a decompressor library is missing */
	KIMG_API_ECODEC = 4005,    /* a decompressor rejected a payload */
	KIMG_API_ELIMIT = 4006,    /* a safety limit */
	KIMG_API_ENOTFOUND = 4007, /* no such name in a table */
	KIMG_API_EUNKNOWN = 4008,  /* not ELF, archive, fatbin, cubin or PTX */
};
/* Message for a negative code (errno or kimg's). Never NULL. */
const char *kimg_api_strerror(int code);
/* KIMG_API_VERSION of the library loaded. */
int kimg_api_version(void);
/* kimg's release ("0.9.0"). */
const char *kimg_api_release(void);

#ifdef __cplusplus
}
#endif

#endif
