/* SPDX-License-Identifier: Apache-2.0 */
/* Which package installed a file: the parsers of the package managers'
 * own records, and the build advice per package.
 *
 *  - Python distributions: "<name>-<version>.dist-info" directories and
 *    their RECORD (CSV: path, hash, size; paths relative to the directory
 *    holding the .dist-info, quoted when they contain a comma) and
 *    INSTALLER ("pip", "uv", "conda") files (PEP 376, PEP 627).
 *  - conda: conda-meta/<name>-<version>-<build>.json, whose "name",
 *    "version" and "files" (paths relative to the environment prefix) are
 *    read here.
 *  - Debian: /var/lib/dpkg/info/<package>[:<arch>].list (one absolute path
 *    per line) and /var/lib/dpkg/status stanzas (Package:, Version:).
 *
 * Pure: every function parses the bytes given, bounds-checked; nothing is
 * read from disk here (sys/owners.c does that). */
#ifndef KIMG_PACKAGES_H
#define KIMG_PACKAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "span.h"

/* "foo_bar-1.2.3.dist-info" -> name "foo_bar", version "1.2.3"; also
 * ".egg-info". Returns 0, or -KIMG_EFORMAT when the name is not of that
 * shape (or a part does not fit). */
int kimg_dist_info_parse_dirname(const char *dirname, char *name, size_t name_size, char *version,
				 size_t version_size);

/* Next path of a RECORD file from *pos (advanced past the line). Returns 1
 * with the path in out, 0 at the end, or -KIMG_ELIMIT for a path longer
 * than out (the line is skipped: call again) / -KIMG_EFORMAT for an
 * unterminated quote (the rest is skipped). Empty lines are skipped. */
int kimg_record_next(struct kimg_span text, uint64_t *pos, char *out, size_t size);

/* Next line of a dpkg .list file (trailing '\n' and '\r' dropped): same
 * returns as kimg_record_next. */
int kimg_list_next(struct kimg_span text, uint64_t *pos, char *out, size_t size);

/* "python3-torch:amd64.list" -> "python3-torch". -KIMG_EFORMAT if no ".list". */
int kimg_dpkg_list_package(const char *filename, char *name, size_t size);

/* Walk /var/lib/dpkg/status: fn(ctx, package, version) for each stanza
 * with both fields whose Status, when present, ends in "installed" or a
 * triggers-* state (the whole word: not "not-installed", "half-installed").
 * Returns the count, or fn's non-zero return. */
int kimg_dpkg_status_each(struct kimg_span text, int (*fn)(void *ctx, const char *package, const char *version),
			  void *ctx);

/* A conda-meta JSON document: name, version, and fn(ctx, path) for every
 * entry of "files". arena: scratch memory for the JSON tree (about 4x the
 * document is enough). Returns the number of files, or a negative error
 * with err set (-KIMG_EFORMAT when it is not a conda record). */
int kimg_conda_meta_parse(struct kimg_span doc, void *arena, size_t arena_size, char *name, size_t name_size,
			  char *version, size_t version_size, int (*fn)(void *ctx, const char *path), void *ctx,
			  struct kimg_error *err);

/* ---- advice by package ---- */

enum kimg_pkg_family {
	KIMG_PKG_OTHER = 0,        /* the nvcc / CMake fix */
	KIMG_PKG_PYTORCH,          /* torch and its companion wheels of the same index */
	KIMG_PKG_TORCH_EXTENSION,  /* flash-attn, xformers, bitsandbytes, vLLM, ... */
	KIMG_PKG_CUPY,
	KIMG_PKG_JAX,
	KIMG_PKG_TENSORFLOW,
	KIMG_PKG_NVIDIA_LIBRARY,   /* nvidia-cublas-cu12, ...: NVIDIA's library wheels */
	KIMG_PKG_FAMILY_COUNT
};

struct kimg_pkg_advice {
	const char *pattern;       /* normalised name ("flash-attn"), '*' at the end = prefix */
	enum kimg_pkg_family family;
	const char *label;         /* "PyTorch extension" */
	/* advice template: {sm} -> "sm_120", {cc} -> "12.0", {arch_list} ->
	 * TORCH_CUDA_ARCH_LIST value, {pkg} -> package name */
	const char *advice;
};

/* PEP 503 normalisation: lower case, runs of -_. become one '-'. */
void kimg_pkg_normalize(const char *name, char *out, size_t size);

/* Row for a package name (normalised here); the OTHER row when none
 * matches. Never NULL. */
const struct kimg_pkg_advice *kimg_pkg_advice_for(const char *name);
const struct kimg_pkg_advice *kimg_pkg_advice_at(unsigned index);

/* Expand an advice template. Returns the length written (truncated). */
size_t kimg_pkg_advice_format(const struct kimg_pkg_advice *a, const char *pkg, const char *sm, const char *cc,
			      const char *arch_list, char *out, size_t size);

#endif
