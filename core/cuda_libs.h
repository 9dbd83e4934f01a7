/* SPDX-License-Identifier: Apache-2.0 */
/* CUDA runtimes and libraries among a check's inputs: libcudart.so.N,
 * NVRTC, nvJitLink, cuBLAS, ... recognised by file name, and the CUDA
 * version each was built for, from (best first) the file name
 * ("libcudart.so.12.4.127"), an embedded "Cuda compilation tools, release
 * X.Y" string, the ELF DT_SONAME and symbol-version definitions
 * ("libcudart.so.13"), through a table of how each library's soname major
 * maps to a CUDA major. Pure: reads only the bytes given. */
#ifndef KIMG_CUDA_LIBS_H
#define KIMG_CUDA_LIBS_H

#include <stdbool.h>

#include "span.h"

struct kimg_cuda_lib_kind {
	const char *stem;         /* "libcudart" */
	const char *id;           /* stable JSON name: "cudart" */
	const char *what;         /* "CUDA runtime" */
	bool runtime;             /* the library whose version the driver must support (cudart) */
	bool banner_in_host_data; /* its .rodata may hold the toolkit's "Cuda compilation tools,
	                             release X.Y" banner (the runtime, the compilers, CUPTI); the math
	                             libraries carry it in their device code (.nv_fatbin) only */
};

struct kimg_cuda_lib {
	const struct kimg_cuda_lib_kind *kind;
	char soname[64];          /* DT_SONAME, or "" */
	char file_version[32];    /* digits after ".so." in the file name: "12.4.127", or "" */
	int soname_major;         /* -1 unknown */
	int cuda_major;           /* CUDA version it was built for; -1 unknown */
	int cuda_minor;           /* -1 unknown (a soname gives only the major) */
	const char *source;       /* where cuda_major/minor came from: "file name",
	                             "embedded release string", "soname", "symbol version",
	                             "package version", or NULL */
};

/* Recognise `basename` (no directory) as a CUDA library and read its
 * version; bytes may be empty (name only). Returns true when recognised.
 * Never reads outside bytes; a malformed ELF only loses the ELF sources. */
bool kimg_cuda_lib_identify(const char *basename, struct kimg_span bytes, struct kimg_cuda_lib *out);

/* NVIDIA's own packages carry the CUDA version as their version
 * (nvidia-cuda-runtime-cu12 12.4.127, conda cuda-cudart 12.4.127): when
 * package `name` is one of them, set cuda_major/minor from `version` and
 * return true. */
bool kimg_cuda_lib_version_from_package(struct kimg_cuda_lib *lib, const char *name, const char *version);

/* Table access for listing and tests: NULL past the end. */
const struct kimg_cuda_lib_kind *kimg_cuda_lib_kind_at(unsigned index);

#endif
