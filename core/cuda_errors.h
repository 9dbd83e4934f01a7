/* SPDX-License-Identifier: Apache-2.0 */
/* CUresult / cudaError_t numbers kimg explains (docs/rules.md section 9). */
#ifndef KIMG_CUDA_ERRORS_H
#define KIMG_CUDA_ERRORS_H

#include <stdbool.h>

/* "CUDA_ERROR_NO_BINARY_FOR_GPU" (driver) for 209; NULL when unknown. */
const char *kimg_cuda_error_name(int code);
/* Runtime name: "cudaErrorNoKernelImageForDevice"; NULL when unknown. */
const char *kimg_cuda_runtime_error_name(int code);
/* Short meaning: "no kernel image suitable for the device". */
const char *kimg_cuda_error_text(int code);
/* What the driver means by an image-class code, for when the image rules
 * alone do not explain the failure (200 on a readable image, 221, 300);
 * NULL for other codes. */
const char *kimg_cuda_error_cause(int code);
/* True for the image-class codes: 200 209 218 221 222 223 300, and 500 / 98
 * which are image errors only when the module has no fitting image. */
bool kimg_cuda_error_is_image_class(int code);
/* 500 and 98: image-class only after the rules confirm a mismatch. */
bool kimg_cuda_error_needs_confirmation(int code);

#endif
