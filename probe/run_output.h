/* SPDX-License-Identifier: Apache-2.0 */
/* Running `kubectl get nodes -o json` or `scontrol show node --oneliner`
 * for --sm k8s: and slurm: (cluster_groups.c). */
#ifndef KIMG_PROBE_RUN_OUTPUT_H
#define KIMG_PROBE_RUN_OUTPUT_H

#include <stddef.h>

/* Run argv (found on PATH) with stdin from /dev/null and its stderr passed
 * through; *out (malloc'ed) and *len receive its stdout, at most
 * KIMG_FILE_READ_MAX bytes. Returns 0, or -1 with a reason in why: not
 * on PATH, a non-zero exit status, a signal, output too large. */
int probe_run_output(char *const argv[], char **out, size_t *len, char *why, size_t why_size);

#endif
