/* The driver refusing the program's CUDA runtime (driver_mismatch.c): a
 * runtime that asks the driver for a newer CUDA version than the driver
 * supports (error 35, cudaErrorInsufficientDriver) or a shared runtime
 * whose cudaRuntimeGetVersion is newer than the driver, and cuInit failing
 * with 35, 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: a user-mode driver,
 * usually a cuda-compat package, that does not match the kernel module)
 * or 804 (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility
 * on a GPU that does not support it). Reported once per process, with
 * both versions and the fix. */
#ifndef KIMG_SHIM_DRIVER_MISMATCH_H
#define KIMG_SHIM_DRIVER_MISMATCH_H

#include "shim.h"

/* A runtime asked cuGetProcAddress for `version` (its CUDA version, as
 * cudart passes it), or cudaRuntimeGetVersion answered it (`call` names
 * which). Cheap when version is not above what was already compared: one
 * relaxed atomic load. */
KIMG_HIDDEN void kimg_driver_mismatch_note_request(int version, const char *call);

/* cuInit returned rc != 0. */
KIMG_HIDDEN KIMG_COLD void kimg_driver_mismatch_init_failed(int rc);

#endif
