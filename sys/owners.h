/* SPDX-License-Identifier: Apache-2.0 */
/* The owning package of a file: an index built lazily from the package
 * managers' records on disk (parsed by core/packages.h).
 *
 * A lookup walks up the file's directories, nearest first, and reads each
 * directory once: its *.dist-info / *.egg-info RECORDs (Python) and, when
 * it holds conda-meta/, that environment's records (conda). Files no
 * Python or conda record names are looked up in dpkg's file lists
 * (<dpkg dir>/info/<package>.list; versions from <dpkg dir>/status): the
 * first few such lookups search the lists for the one path, later ones
 * find it in an index of every list, read once, with the same answers. Paths lookups seldom ask for (source files,
 * documentation, headers, /etc) are indexed on the first lookup of one:
 * the answers are those of an index of every path. Paths are compared
 * after making them absolute and removing "." / ".." / "//" lexically:
 * symbolic links are not
 * resolved, so a file reached through a link to its directory is not
 * found. A wheel member ("dist/foo-1.0-py3-none-any.whl!/foo/_C.so") is
 * owned by the wheel named by its file name. */
#ifndef KIMG_SYS_OWNERS_H
#define KIMG_SYS_OWNERS_H

struct kimg_pkg {
	char name[128];       /* as the record spells it: "flash_attn", "python3-torch" */
	char version[64];     /* "2.8.3"; "" when unknown */
	char installer[32];   /* INSTALLER file ("pip", "uv"), "conda", "dpkg", "wheel file" */
	const char *source;   /* "dist-info", "egg-info", "conda-meta", "dpkg", "wheel" */
	char record[512];     /* the record that names the file (RECORD path, conda-meta json, .list) */
};

struct kimg_owners;

/* dpkg_dir: "/var/lib/dpkg" normally; NULL skips dpkg. NULL on ENOMEM. */
struct kimg_owners *kimg_owners_new(const char *dpkg_dir);
void kimg_owners_free(struct kimg_owners *o);

/* The package that installed `path`, or NULL. The result stays valid
 * until kimg_owners_free. */
const struct kimg_pkg *kimg_owners_lookup(struct kimg_owners *o, const char *path);

/* Read now the records a lookup of a file under dir would read on its way
 * up (dir and each directory above it), so that such lookups find them
 * read. For a caller that has time to spare before its first lookup. */
void kimg_owners_prepare(struct kimg_owners *o, const char *dir);

/* The records read so far that name files but could not be read ("PATH:
 * why", e.g. a damaged conda-meta JSON): their files have no owner, and the
 * caller says so. Valid until the next lookup or kimg_owners_free. */
#include <stddef.h>
size_t kimg_owners_problems(const struct kimg_owners *o, const char *const **lines);

/* Lexically normalised absolute form of path (cwd prepended when
 * relative). Returns 0, or -1 when it does not fit. */
int kimg_path_normalize(const char *path, char *out, unsigned long size);

#endif
