/* kimg-probe doctor internals: the Python environment (python_env.c). */
#ifndef KIMG_PROBE_DOCTOR_H
#define KIMG_PROBE_DOCTOR_H

#include <stddef.h>

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

int probe_cmd_doctor(int argc, char **argv);

#endif
