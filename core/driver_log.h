/* SPDX-License-Identifier: Apache-2.0 */
/* The driver's error log (CUDA 12.9+, cuLogsRegisterCallback): reading one
 * message. Pure: the shim's callback (shim/diag/driver_log.c) and its tests
 * call these on bytes the driver handed over, which are bounded by the
 * length it gave and need not end in NUL. */
#ifndef KIMG_DRIVER_LOG_H
#define KIMG_DRIVER_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* The last line a failing entry point logs, as the driver words it ([V]
 * driver 580.159.04): "Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from
 * cuLibraryGetKernel". Found anywhere in the message (a prefix such as a
 * time stamp is skipped). On a match: true, *code the number, fn the
 * entry point's name (cut to fn_size - 1, NUL-terminated). The name must
 * be an identifier ([A-Za-z_][A-Za-z0-9_]*) and the number decimal with at
 * most 9 digits; anything else is no match, as is an fn_size below 2. */
bool kimg_driver_log_parse_return(const char *msg, size_t len, int *code, char *fn, size_t fn_size);

/* Does the message say the device code did not fit or did not compile
 * ("No device code available for GPU ISA 90", "Kernel (k) cannot be found
 * in library due to compilation error", "JIT compilation failed")? The
 * phrases are a table (driver_log.c) with where each was seen. */
bool kimg_driver_log_names_image_problem(const char *msg, size_t len);

/* The kernel a "Kernel (NAME) cannot be found" message names, copied to
 * out (cut, NUL-terminated); false when the message names none. */
bool kimg_driver_log_kernel(const char *msg, size_t len, char *out, size_t size);

#endif
