/* SPDX-License-Identifier: Apache-2.0 */
/* The walk's internals, shared by its files: walk.c (the command-line
 * paths and the trees under them), walk_jobs.c (each file as a worker's
 * job), walk_file.c (one file on disk: mapped, sniffed, handed on),
 * walk_archive.c (archives and their members), input_threads.c (helpers
 * inside one input) and problems.c (the problem lines). probe.h has the
 * interface (struct probe_walker). */
#ifndef KIMG_PROBE_WALK_H
#define KIMG_PROBE_WALK_H

#include <stdio.h>

#include "file.h"
#include "probe.h"

/* Archives that could not be read because a library is missing: one line
 * per library at the end of the walk, not one per archive. */
struct walk_unread {
	char *paths;   /* ", "-separated */
	size_t len, cap;
	unsigned long count;
	char why[120];
};

/* One walk's state: the main thread's, or a job's own (walk_jobs.c). */
struct walk_state {
	const struct probe_walker *w;
	struct walk_unread zlib, tar;
	unsigned long dangling;        /* links inside the trees that lead nowhere */
	char *first_dangling;
	struct probe_pool *pool;       /* main thread with workers, else NULL */
};

/* ---- walk_archive.c ---- */

enum walk_archive_kind { ARCHIVE_NONE = 0, ARCHIVE_ZIP, ARCHIVE_EMPTY_ZIP, ARCHIVE_TAR };

bool walk_name_ends_with(const char *name, const char *suffix);
/* Zip by its first local header (or the end record alone: an empty zip);
 * tar packages by their compression magic or the ustar mark. */
enum walk_archive_kind walk_archive_kind_of(struct kimg_span head);
/* Whether a walk of a tree opens an archive of this kind and name. */
bool walk_opens_archive(const char *path, enum walk_archive_kind kind);
/* Worth reading from an archive or image (by its head: a prefix). */
bool walk_member_wanted(void *ctx, const char *name, struct kimg_span head);
/* depth: of the archive itself (0 on disk). every_member: sniff each
 * member (wheels, archives named on the command line); otherwise zips
 * inflate only members named like code. */
void walk_archive(struct walk_state *ws, const char *path, struct kimg_span bytes, enum walk_archive_kind kind,
		  bool every_member, int depth);
/* The one line for the archives of u, at the walk's end. */
void walk_unread_report(const struct walk_state *ws, const struct walk_unread *u, const char *how);
/* A job's unread archives after those of the jobs before it; frees from's. */
void walk_unread_merge(struct walk_unread *into, struct walk_unread *from);

/* ---- walk_file.c ---- */

/* Map path and hand it on (an input, an archive's members, an image's
 * files); explicit: named on the command line. */
void walk_file_now(struct walk_state *ws, const char *path, bool explicit_path);
/* probe_tree_visitor.want_file (ctx: the walk_state). */
bool walk_tree_wants(void *ctx, int dirfd, const char *name, const char *path);
/* The mapped file this thread walks, or NULL (input_threads.c). */
const struct kimg_file *walk_current_file(void);

/* ---- walk_jobs.c ---- */

/* A file, or a problem found while listing, in walk order: a job for a
 * worker when ws->pool is set, else done at once. */
void walk_submit(struct walk_state *ws, const char *path, const char *problem, bool explicit_path);

/* ---- problems.c ---- */

/* Where this thread's problem lines go: a job's buffer, or NULL (stderr). */
void walk_set_error_stream(FILE *f);

#endif
