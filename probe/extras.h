/* SPDX-License-Identifier: Apache-2.0 */
/* What check (and doctor) add around the image verdicts: the package that
 * installed each file (sys/owners.h), and CUDA runtimes and libraries
 * among the inputs judged against the targets' drivers
 * (core/cuda_libs.h, core/cuda_versions.h). */
#ifndef KIMG_PROBE_EXTRAS_H
#define KIMG_PROBE_EXTRAS_H

#include "cuda_libs.h"
#include "cuda_versions.h"
#include "fix.h"
#include "packages.h"
#include "probe.h"
#include "owners.h"

/* One package's share of a check, for the by-package table. */
struct probe_pkg_group {
	char name[128], version[64], installer[32];
	const char *source;        /* NULL: files no package record names */
	unsigned long files, modules, cannot, libs_need_driver;
	char advice[640];          /* for the first target that cannot run, or "" */
	char first_path[512];      /* a failing file, for the text table */
};

struct probe_extras {
	struct kimg_owners *owners;       /* NULL: ENOMEM, package lookups give NULL */
	unsigned long libs, libs_need_driver, libs_minor_compat;
	struct probe_pkg_group *groups;
	size_t n_groups, cap_groups;
	/* An owner index or a by-package row lost for want of memory: the
	 * command says so (check: one "(packages)" error, exit 2). */
	bool short_of_memory;
};

/* dpkg_dir: /var/lib/dpkg unless KIMG_DPKG_DIR says otherwise ("" turns
 * dpkg off). */
void probe_extras_init(struct probe_extras *x);
void probe_extras_free(struct probe_extras *x);

const struct kimg_pkg *probe_extras_owner(struct probe_extras *x, const char *path);
/* kimg_owners_prepare for dir. */
void probe_extras_prepare_owners(struct probe_extras *x, const char *dir);


/* Identify; see kimg_cuda_lib_identify. */
bool probe_cuda_lib_identify(const char *path, struct kimg_span bytes, const struct kimg_pkg *pkg,
			     struct kimg_cuda_lib *lib);

/* The library against each distinct driver of the targets: text lines
 * (indented under the file) or a "cuda_library" member. Returns how many
 * drivers it needs a newer version of (counted in x too, unless x is
 * NULL: probe_cuda_lib_needs_driver counts without writing). */
unsigned long probe_cuda_lib_needs_driver(const struct kimg_cuda_lib *lib, const struct probe_target *t, int n);
unsigned long probe_cuda_lib_text(struct probe_extras *x, FILE *out, const struct kimg_cuda_lib *lib,
				  const struct probe_target *t, int n);
unsigned long probe_cuda_lib_json(struct probe_extras *x, struct kimg_json *j, const struct kimg_cuda_lib *lib,
				  const struct probe_target *t, int n);
/* Verdict of lib against one driver (for doctor's page). */
void probe_cuda_lib_judge(const struct kimg_cuda_lib *lib, int driver_version, struct kimg_runtime_verdict *v);
/* "13.x" / "12.4" / "?" */
void probe_cuda_lib_version(const struct kimg_cuda_lib *lib, char *buf, size_t size);
/* The fix lines for a runtime that needs a newer driver, one per line
 * into buf with `indent` before each. */
void probe_cuda_lib_fix_text(const struct kimg_cuda_lib *lib, const struct kimg_runtime_verdict *v,
			     const char *indent, char *buf, size_t size);

/* "package": {name, version, installer, source, record} or null. */
void probe_json_package(struct kimg_json *j, const struct kimg_pkg *pkg);
/* "torch 2.5.1 (pip)" */
void probe_format_package(const struct kimg_pkg *pkg, char *buf, size_t size);

/* The package advice for a module that cannot run on target t with fix. */
void probe_package_advice(const struct kimg_pkg *pkg, const struct probe_target *t, const struct kimg_fix *fix,
			  char *buf, size_t size);

/* Count one file into its package's group; advice "" when it runs. */
void probe_extras_count(struct probe_extras *x, const struct kimg_pkg *pkg, const char *path,
			unsigned long modules, unsigned long cannot, unsigned long libs_need_driver,
			const char *advice);
/* The by-package table (text), failing packages first; nothing when no
 * file belongs to a known package. */
void probe_extras_text_packages(const struct probe_extras *x);
/* Sort groups: failing first, then by name. */
void probe_extras_sort_groups(struct probe_extras *x);

#endif
