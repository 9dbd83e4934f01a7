/* SPDX-License-Identifier: Apache-2.0 */
/* A shared library opened on first use, never linked (sys/lazylib.c).
 *
 * kimg-probe and libkimg.so must start where zlib, libarchive, libzstd or
 * liblz4 are missing, and the shim must add no load-time dependency to the
 * processes it lives in; so each optional library is described by a table
 * (sonames to try, functions to find) and loaded once, thread safe, by the
 * first caller. A library that is absent or lacks a required function
 * leaves every pointer of its table NULL and a one-line reason in `why`. */
#ifndef KIMG_SYS_LAZYLIB_H
#define KIMG_SYS_LAZYLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* One function to find: its name and the function-pointer variable it is
 * stored in (KIMG_LAZY_FN fills both size and address). An optional one
 * may be missing (its pointer stays NULL); a required one missing makes
 * the whole library unavailable. Rows naming the same variable are
 * alternatives, tried in order (cuDeviceGetUuid_v2, then cuDeviceGetUuid):
 * the first found is kept. The variables start NULL (static storage). */
struct kimg_lazy_fn {
	const char *name;
	void *fnptr;  /* address of a function-pointer variable */
	size_t size;  /* sizeof that variable */
	bool optional;
};
#define KIMG_LAZY_FN(name, var) { name, &(var), sizeof(var), false }
#define KIMG_LAZY_FN_OPTIONAL(name, var) { name, &(var), sizeof(var), true }

#define KIMG_LAZY_SONAMES 4

struct kimg_lazylib {
	/* ---- the description, constant ---- */
	const char *sonames[KIMG_LAZY_SONAMES]; /* tried in order; unused slots NULL */
	int flags;                              /* RTLD_NOW or RTLD_LAZY; RTLD_LOCAL is always added */
	const struct kimg_lazy_fn *fns;
	size_t n_fns;
	/* The reason given when a function is missing: "%s lacks %s" with the
	 * soname and this text, or with the first missing function's name when
	 * NULL. */
	const char *lacks;
	/* ---- state, written once under `once` ---- */
	pthread_once_t once;
	int state;        /* 0 untried, 1 loaded, -1 no soname loads, -2 a required function is missing */
	char why[96];     /* -1: "libz.so.1 not found", "libarchive.so.13 lacks archive_read_new" */
	const char *override; /* kimg_lazylib_set_soname: tried instead of sonames[] */
};

/* Load lib once (the first caller does the work; the others wait for it).
 * Returns true when it loaded with every required function of its table. The handle is
 * kept for the life of the process. */
bool kimg_lazylib_load(struct kimg_lazylib *lib);

/* Try only `soname` (a name or a path) instead of the table's sonames;
 * ignored when empty or once loading has been tried. Not thread safe:
 * for start-up (the probe's $KIMG_ZLIB) and tests. */
void kimg_lazylib_set_soname(struct kimg_lazylib *lib, const char *soname);

/* The name tried first: the override, else the table's first soname. */
const char *kimg_lazylib_name(const struct kimg_lazylib *lib);

#endif
