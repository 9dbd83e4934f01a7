/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe doctor internals: the Python environment (python_env.c). */
#ifndef KIMG_PROBE_DOCTOR_H
#define KIMG_PROBE_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "extras.h"
#include "gpu_readings.h"
#include "probe.h"

/* How long the interpreter may take to answer (python_env.c). */
#define PROBE_PYTHON_TIME_LIMIT_S 10.0

struct probe_python {
	char executable[512];   /* sys.executable */
	char version[32];       /* "3.11.2" */
	char cwd[1024];         /* os.getcwd(): sys.path entries equal to it came from the cwd */
	char **paths;           /* existing sys.path directories, in order, none inside another */
	int n_paths, cap_paths;
	char **skipped, **skipped_why; /* entries not checked ("/", pseudo file systems), and why */
	int n_skipped, cap_skipped;
	bool answer_over_limit; /* the answer was over 1 MiB: its first MiB was used */
};

/* Run `python -c ...` once (execvp, no shell) and read sys.executable,
 * the version and sys.path, within PROBE_PYTHON_TIME_LIMIT_S. Returns 0,
 * or -1 with a reason in err (also when the answer names no directory to
 * check). */
int probe_python_env(const char *python, struct probe_python *py, char *err, size_t err_size);
/* The answer python_env.c's query would print (first line `mark`), read
 * from the files of a virtual environment without starting it, into buf:
 * its length, or -1 with why it cannot be read so (python_venv.c). */
int probe_python_venv_answer(const char *python, const char *mark, char *buf, size_t size, char *why,
			     size_t why_size);
/* Is dir the interpreter's working directory (put in sys.path by an
 * empty PYTHONPATH item)? */
bool probe_python_is_cwd(const struct probe_python *py, const char *dir);
void probe_python_free(struct probe_python *py);

/* ---- the model of one doctor run (cmd_doctor.c fills it, doctor_render.c renders it) ---- */

#define MAX_FAILS_SHOWN 4

struct doc_fail {              /* one module that cannot run on one target */
	unsigned long module;      /* index in the file, from 1 */
	int target;
	enum kimg_reason reason;
	const char *rule;          /* the module rule (docs/rules.md: "S1") */
	const char *file_rule;     /* the file-level rule ("F0", "R2"), or NULL */
	int expected_error;
	struct kimg_fix fix;
	bool have_fix;
};

struct doc_file {
	char *path;
	const struct kimg_pkg *pkg;  /* stable until the owners index is freed */
	unsigned long modules, stubs, sass, ptx_jit, cannot;
	unsigned long dispatched;    /* (module, GPU) pairs for other GPUs, selected at run time (core/file_rules.h) */
	unsigned long link_inputs;   /* __nv_relfatbin modules of a linked file: not judged */
	struct doc_fail fail;        /* the first failure */
	bool is_lib;
	bool system;                 /* a runtime of /usr/local/cuda or LD_LIBRARY_PATH: listed, not judged into the exit status */
	struct kimg_cuda_lib lib;
	bool lib_needs_driver;
};

/* ---- toolchains, JIT caches and the CUDA switches (doctor_tools.c,
 * doctor_caches.c fill them; doctor_tools_render.c renders them) ---- */

enum doc_tool_kind {
	DOC_TOOL_TRITON_PTXAS = 0,   /* the ptxas Triton compiles with (bundled, or $TRITON_PTXAS_PATH) */
	DOC_TOOL_PTXAS,              /* a ptxas on PATH or in a toolkit directory */
	DOC_TOOL_NVCC,               /* an nvcc on PATH or in a toolkit directory */
	DOC_TOOL_KIND_COUNT
};

#define DOC_TOOLS_MAX 48

struct doc_tool {
	enum doc_tool_kind kind;
	char path[1024];
	const char *source;          /* "triton", "TRITON_PTXAS_PATH", "PATH", "toolkit" */
	bool used;                   /* Triton: the one it compiles with (false: TRITON_PTXAS_PATH overrides it) */
	int release;                 /* --version's "release X.Y": 12080; 0 when it did not say */
	char error[160];             /* why release is 0 */
	unsigned long cannot;        /* bit t: cannot target doctor.targets[t] (t < 64) */
	int needs_release;           /* the first CUDA release that targets every GPU here, 0 none known */
	char fix[1280];              /* "" when it targets every GPU */
};

struct doc_tools {
	struct doc_tool v[DOC_TOOLS_MAX];
	size_t n;
	unsigned long triton_bad;    /* Triton ptxas in use that cannot target a GPU: in the exit status */
	unsigned long build_bad;     /* nvcc / ptxas that cannot: named, not in the exit status */
};

struct doc_stale {               /* one cached file whose code cannot run here */
	char *path;
	char *remove;                /* the directory (or file) to remove */
	char archs[160];             /* its targets: "sm_80 compute_80" */
	char sm[16];                 /* the first GPU it cannot run on */
	enum kimg_reason reason;
	const char *rule;
	int expected_error;
};

#define DOC_STALE_SHOWN 8

struct doc_cache {
	const char *name;            /* "cupy", "torch_extensions", "triton", "flashinfer", "nv_compute_cache" */
	const char *env;             /* the variable that moves it ("CUPY_CACHE_DIR") */
	char dir[1024];
	bool from_env;               /* dir came from env, not the default */
	bool exists;
	bool disabled;               /* CUDA_CACHE_DISABLE=1 (the driver's cache) */
	unsigned long files;         /* files with device code (cubins, PTX, fatbins, ELF) checked */
	unsigned long unreadable;
	unsigned long stale;
	struct doc_stale shown[DOC_STALE_SHOWN];
	size_t n_shown;
};

#define DOC_CACHES_MAX 8

struct doc_caches {
	struct doc_cache v[DOC_CACHES_MAX];
	size_t n;
	unsigned long stale;         /* in the exit status */
};

struct doc_switch {              /* a CUDA / PyTorch variable set in the environment */
	const char *name;
	char value[256];
	const char *effect;
	char verdict[512];           /* TORCH_CUDA_ARCH_LIST against the GPUs: "" or what would fail */
};

#define DOC_SWITCHES_MAX 12

struct doc_switches {
	struct doc_switch v[DOC_SWITCHES_MAX];
	size_t n;
};

struct doctor {
	struct probe_out out;        /* first: probe_input_unreadable's ctx */
	struct probe_extras extras;
	struct probe_target *targets;
	int n_targets;
	/* The thread asking this machine's GPUs (cmd_doctor.c), until joined:
	 * the walk lists and reads while the driver starts, and the first
	 * file to be judged waits for it (doctor_await_gpus). */
	struct probe_thread *gpus_pending;
	double gpus_waited_s;          /* time spent waiting for it (KIMG_DOCTOR_TIMING) */
	struct doc_file *files;
	size_t n_files, cap_files;
	unsigned long errors_before;
	struct doc_tools tools;
	struct doc_caches caches;
	struct doc_switches switches;
	/* Per target: what cannot run on it and the first fix, for "Where it
	 * may run" (cluster_groups.h); NULL until a failure or the render. */
	struct probe_place_row *place;
};

struct group {                 /* the files of one package (pkg NULL: no package record) */
	const struct kimg_pkg *pkg;
	size_t *files;             /* indexes into doctor.files */
	size_t n;
	unsigned long modules, cannot, libs_bad, dispatched;
};

struct doctor_totals {
	int status;                /* the exit status */
	unsigned long cannot, libs_bad, failing_pkgs;
	double seconds;
	const char *sm_list;       /* --sm, or NULL: this machine's GPUs */
};

/* The packages with device code, failing first (each group's files
 * malloc'ed; free them and the array). */
struct group *probe_doctor_groups(struct doctor *d, size_t *n_out);
void probe_doctor_json(struct doctor *d, const struct kimg_gpu_inventory *inv, const struct probe_python *py,
		       const struct group *groups, size_t n_groups, const struct doctor_totals *t);
void probe_doctor_text(struct doctor *d, const struct kimg_gpu_inventory *inv, const struct probe_python *py,
		       const struct group *groups, size_t n_groups, const struct doctor_totals *t);

/* doctor_tools.c: Triton's ptxas (under each of the `n` directories:
 * sys.path or the DIRs), the ptxas and nvcc on PATH and in the toolkit
 * directories ($KIMG_TOOLKIT_DIRS, colon-separated, else /usr/local/cuda*),
 * each asked --version (_find: no GPU needed, so it runs beside the
 * walk) and judged against d->targets (_judge); and the CUDA switches set
 * in the environment. */
void probe_doctor_tools_find(struct doc_tools *tools, char *const *dirs, int n);
void probe_doctor_tools_judge(struct doctor *d);
void probe_doctor_switches(struct doctor *d);
/* doctor_caches.c: every JIT cache, every file with device code in it
 * judged against d->targets as check judges it. */
void probe_doctor_caches(struct doctor *d);
void probe_doctor_caches_free(struct doctor *d);
/* doctor_tools_render.c */
void probe_doctor_tools_text(const struct doctor *d);
void probe_doctor_tools_json(struct kimg_json *j, const struct doctor *d);
/* "GPU 0 (NVIDIA H200, 9.0)", "H100 (9.0)" or "9.0" (doctor_render.c) */
void probe_doctor_target_name(const struct probe_target *t, char *buf, size_t size);

int probe_cmd_doctor(int argc, char **argv);

#endif
