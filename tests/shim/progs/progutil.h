/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers for the shim test programs: fixture bytes, the registration
 * wrapper static cudart builds around a container, and "is this pointer
 * libkimg's wrapper" checks. Programs print one "what: value" line per
 * step; the scripts in tests/shim assert on those lines and on kimg's
 * JSON report. */
#ifndef KIMG_TEST_PROGUTIL_H
#define KIMG_TEST_PROGUTIL_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whole file plus a NUL (PTX text is passed as a C string), or exit 2. */
static inline void *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	/* 8-byte aligned: containers are read as 64-bit words */
	uint64_t *buf = calloc((size_t)n / 8 + 2, 8);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	if (size)
		*size = (size_t)n;
	return buf;
}

/* __fatBinC_Wrapper_t (docs/format.md section 2): what static cudart
 * passes to cuLibraryLoadData. */
struct fatbin_wrapper {
	int32_t magic;   /* 0x466243B1 */
	int32_t version; /* 1 */
	const void *data;
	const void *filename_or_fatbins;
};

static inline struct fatbin_wrapper make_wrapper(const void *container)
{
	struct fatbin_wrapper w = { 0x466243B1, 1, container, NULL };
	return w;
}

/* "libkimg" when p lies in libkimg.so, else the file's basename. */
static inline const char *owner_of(const void *p)
{
	Dl_info info;
	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "none";
	const char *slash = strrchr(info.dli_fname, '/');
	const char *base = slash ? slash + 1 : info.dli_fname;
	return strncmp(base, "libkimg", 7) == 0 ? "libkimg" : base;
}

#endif
