/* SPDX-License-Identifier: Apache-2.0 */
/* Mapping an input file read-only for the parsers.
 *
 * Regular files are mmap'ed, so a scan touches only the pages holding the
 * headers it reads (a 456 MB library costs a few hundred page faults, not a
 * full read). Anything else that can be opened (a pipe, /dev/stdin, a
 * process substitution) is read() into memory up to KIMG_FILE_READ_MAX. */
#ifndef KIMG_SYS_FILE_H
#define KIMG_SYS_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "input.h"
#include "span.h"

/* Cap for pipes and terminals, which have no size up front: a runaway
 * writer must end in an error, not in exhausted memory. */
#define KIMG_FILE_READ_MAX ((uint64_t)1 << 30)

/* Holes of a sparse file kept per mapped file: the largest first-found
 * ones, at least KIMG_FILE_HOLE_MIN bytes each. Past the count the rest of
 * the file is read as data (correct, only slower). */
#define KIMG_FILE_HOLES_MAX 1024
#define KIMG_FILE_HOLE_MIN ((uint64_t)64 << 10)

struct kimg_file {
	struct kimg_span bytes; /* the file's contents, valid until kimg_file_close */
	void *map;              /* mmap'ed region, or NULL */
	size_t map_size;
	void *buf;              /* heap copy for non-regular files, or NULL */
	/* Holes of a mapped sparse file (lseek SEEK_HOLE / SEEK_DATA), for
	 * kimg_input_for_each_module_zeros: reading them would fault in a page
	 * of zeros per 4 KiB (a 1 TiB hole: minutes and the page cache).
	 * zeros.r is allocated only when the file has holes. */
	struct kimg_zero_ranges zeros;
	bool guarded;           /* registered with kimg_file_guard_add */
};

/* Open and map `path` (holes of a regular file in f->zeros). Returns 0, or -errno with err->what naming the
 * failing step ("open: Permission denied"); -EISDIR for directories and
 * -KIMG_ELIMIT past KIMG_FILE_READ_MAX, -ENODEV for block devices and
 * character devices other than terminals (/dev/zero would never end). An empty file maps to an empty
 * span (not an error). Non-blocking open: a FIFO without a writer reads as
 * empty instead of hanging. */
int kimg_file_open(const char *path, struct kimg_file *f, struct kimg_error *err);

/* Access hints for a mapped file (no-ops for anything else). The walk
 * jumps from header to header, so readahead around each fault (128 KiB or
 * more per fault, the whole file for a dense container) reads what no
 * verdict needs: random access makes each fault read its page alone.
 * Bytes about to be read whole (a compressed payload being decoded) are
 * asked for in one request with kimg_file_will_need. */
void kimg_file_advise_random(const struct kimg_file *f);
/* Back to the kernel's default readahead (an input read front to back). */
void kimg_file_advise_normal(const struct kimg_file *f);
/* Start reading the pages of `bytes` (any part of a mapping) ahead. */
void kimg_file_will_need(struct kimg_span bytes);

/* The same, but a regular file smaller than read_below bytes is read into
 * memory instead of mapped: a walk over a tree of many small files (a
 * Python environment: tens of thousands of sources) then costs one read
 * each instead of a mapping, a fault and an unmapping, which several
 * threads of one process would also serialise on the address space. */
#define KIMG_FILE_SMALL_READ ((uint64_t)64 << 10)
int kimg_file_open_small_read(const char *path, struct kimg_file *f, uint64_t read_below, struct kimg_error *err);

/* Release what kimg_file_open took; safe on a zeroed struct. */
void kimg_file_close(struct kimg_file *f);

/* Run fn(ctx) while f's mapping is read. A mapped file that shrinks under
 * the reader (rewritten, truncated by another process) makes the kernel
 * raise SIGBUS on the next page past the new end; inside fn that ends fn
 * early and returns -EIO with err->what "file changed while it was read",
 * instead of killing the process. fn must expect to be left at any read
 * of f's bytes: what it allocated is then lost, what it wrote stays cut.
 * SIGBUS for other addresses keeps its previous disposition. Guards nest
 * (the innermost whose file holds the address wins). Guards are per
 * thread: several threads may each read their own files under their own
 * guards (the handler is process state, installed while any is active);
 * meant for kimg-probe, never for libkimg.so. Returns 0
 * when fn ran to its end (and for files that are not mapped). */
int kimg_file_guard(const struct kimg_file *f, void (*fn)(void *ctx), void *ctx, struct kimg_error *err);

/* Leave this thread's innermost active guard as a SIGBUS in its file
 * would (kimg_file_guard returns -EIO): for a reader whose helper threads
 * met the change under guards of their own. Returns only when there is
 * no active guard. */
void kimg_file_guard_fail(void);

/* Another mapped file read under the innermost active guard, and later
 * ones until it is closed (thin archive members, read inside their
 * archive's walk): SIGBUS in it ends that guard the same way. Until
 * kimg_file_close, which must be called by the same thread. Returns 0, or
 * -ENOMEM (then it is simply not guarded). */
int kimg_file_guard_add(struct kimg_file *f);

/* stat(2) (follow_links) or lstat(2) (not) with errno set on failure:
 * callers use these instead of stat/lstat so that kimg-probe keeps
 * starting on glibc 2.17 (sys/file.c says how). */
struct stat;
int kimg_file_stat(const char *path, struct stat *st, bool follow_links);
/* The same for name in the directory dirfd (fstatat(2)). */
int kimg_file_stat_at(int dirfd, const char *name, struct stat *st, bool follow_links);
/* fstat, with the same care for old glibc. */
int kimg_file_fstat(int fd, struct stat *st);

/* The pseudo file system path lies on ("proc", "sysfs", "cgroup2",
 * "devtmpfs"...), whose files are the kernel's controls and views, not
 * stored files; NULL for an ordinary one (or when statfs fails). */
const char *kimg_file_pseudo_fs(const char *path);

#endif
