/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe doctor internals: the Python environment (python_env.c). */
#ifndef KIMG_PROBE_DOCTOR_H
#define KIMG_PROBE_DOCTOR_H

#include <stddef.h>

#include "extras.h"
#include "gpu_readings.h"
#include "probe.h"

#define PROBE_PYTHON_MAX_PATHS 64

struct probe_python {
	char executable[512];   /* sys.executable */
	char version[32];       /* "3.11.2" */
	char *paths[PROBE_PYTHON_MAX_PATHS]; /* existing sys.path directories, in order, none inside another */
	int n_paths;
};

/* Run `python -c ...` once (execvp, no shell) and read sys.executable,
 * the version and sys.path. Returns 0, or -1 with a reason in err. */
int probe_python_env(const char *python, struct probe_python *py, char *err, size_t err_size);
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

struct doctor {
	struct probe_out out;        /* first: probe_input_unreadable's ctx */
	struct probe_extras extras;
	struct probe_target *targets;
	int n_targets;
	struct doc_file *files;
	size_t n_files, cap_files;
	unsigned long errors_before;
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

int probe_cmd_doctor(int argc, char **argv);

#endif
