/* Internal interface of the fake driver (tests/fake_cuda): the decisions,
 * made with kimg's core, apart from the driver API surface in fake_cuda.c. */
#ifndef KIMG_FAKE_CUDA_H
#define KIMG_FAKE_CUDA_H

#include <stdint.h>

#include "image.h"

#define FAKE_HIDDEN __attribute__((visibility("hidden")))

/* Integer value of an environment variable, dflt when unset or empty. */
FAKE_HIDDEN int fake_env_int(const char *name, int dflt);
/* 0 or the CUresult the driver gives for this code on the fake device
 * (FAKE_CUDA_SM ...); *selected (may be NULL) gets the chosen image;
 * 200 for bytes that are no device code. */
FAKE_HIDDEN int fake_decide(const uint8_t *code, uint64_t size, struct kimg_image *selected);
/* Extent of in-memory code (wrapper, container, cubin, PTX): 0 or 200. */
FAKE_HIDDEN int fake_span_of_memory(const void *image, const uint8_t **code, uint64_t *size);
/* Whole file plus a NUL, malloc'ed; NULL when unreadable. */
FAKE_HIDDEN uint8_t *fake_read_file(const char *path, uint64_t *size);
/* Is `name` a kernel of the image the driver selects from this code?
 * Compressed or unparsable images answer yes. */
FAKE_HIDDEN int fake_has_kernel(const uint8_t *code, uint64_t size, const char *name);

#endif
