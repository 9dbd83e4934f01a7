/* SPDX-License-Identifier: Apache-2.0 */
/* From a failed call to the code behind it (locate.c). Cold path only. */
#ifndef KIMG_SHIM_LOCATE_H
#define KIMG_SHIM_LOCATE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "span.h"
#include "diag.h"

struct kimg_located {
	const void *image;   /* as passed or registered (wrapper, container, cubin, PTX), or NULL */
	const char *path;    /* file it was loaded from, or NULL */
	const char *kernel;  /* the call's kernel name, else the registry's */
	const char *how;     /* "cuLibraryLoadData", "__cudaRegisterFatBinary", the failed call ... */
	size_t size;         /* bytes at image when the caller said so (cuLinkAddData), else 0 */
};

/* Resolve f to an image or a path: directly for a failed load, else by
 * following the registry (function -> module/kernel -> library; host stub
 * -> fatbin). False when the chain breaks (handle never registered). */
bool kimg_locate(const struct kimg_failure *f, struct kimg_located *out);

/* File that the loaded object containing addr was mapped from (the main
 * program through /proc/self/exe) and addr's offset in it (*off_known
 * false for .bss-like memory). False when addr is in no loaded object
 * (heap, anonymous mappings). */
bool kimg_locate_file(const void *addr, char *path, size_t size, uint64_t *file_off, bool *off_known);

/* A module file mapped read-only (cuModuleLoad, cuLibraryLoadFromFile). */
struct kimg_mapped_file {
	struct kimg_span bytes;
	void *map;
	size_t size;
};
int kimg_map_path(const char *path, struct kimg_mapped_file *f, struct kimg_error *err);
void kimg_unmap_path(struct kimg_mapped_file *f); /* safe on a zeroed struct */

#endif
