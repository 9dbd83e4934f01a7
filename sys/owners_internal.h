/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the owning-package index (owners.h): the index itself
 * (owners_index.c: rows, the path table, the arena, the problems) and the
 * readers of the package managers' records that fill it (owners.c). Not
 * part of any API: hidden by -fvisibility=hidden. */
#ifndef KIMG_SYS_OWNERS_INTERNAL_H
#define KIMG_SYS_OWNERS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "owners.h"

struct entry {
	const char *path;  /* normalised absolute path, in the arena */
	uint64_t hash;     /* hash_str(path): no string is hashed twice */
	uint32_t pkg;      /* index into pkgs */
};

/* The paths live in large blocks, not one allocation each: a Python
 * environment's RECORDs name some 70,000 files. */
#define ARENA_BLOCK (1u << 20)
struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

/* Lookups ask for files with device code and for CUDA libraries. Source
 * files, documentation, headers and /etc (rarely_asked) are most lines of
 * every record, so at first they are not indexed. The first lookup of
 * such a path reads every record read so far again, for those paths alone
 * and in the order first read, so the first owner still wins; from then
 * on, records are indexed whole. */
enum index_scope {
	INDEX_LIKELY,  /* all but the rarely asked paths */
	INDEX_REST,    /* the rarely asked paths alone (the second reading) */
	INDEX_ALL,
};

struct kimg_owners {
	struct kimg_pkg **pkgs; /* each row allocated once: lookups hand out stable pointers */
	const char **bases;     /* per row: the directory its entries are relative to (arena) */
	size_t n_pkgs, cap_pkgs;
	enum index_scope scope;
	struct entry *table;  /* open addressing, power-of-two size */
	size_t n_entries, cap_table;
	struct arena_block *arena;
	char **visited;       /* directories already read */
	size_t n_visited, cap_visited;
	char *dpkg_dir;
	bool dpkg_loaded;
	unsigned dpkg_searches; /* lookups dpkg answered by a search (owners_dpkg.c) */
	struct dpkg_list *dpkg_lists; /* the lists the first search read, in readdir order */
	size_t n_dpkg_lists;
	bool dpkg_lists_read;
	struct kimg_pkg wheel; /* answer for wheel members (last one asked) */
	char **problems;      /* records that could not be read: "PATH: why" */
	size_t n_problems, cap_problems;
};

/* A record that names files but could not be read: kept for the caller
 * to say (kimg_owners_problems), never dropped silently. */
void kimg_owners_add_problem(struct kimg_owners *o, const char *record, const char *why);

/* A copy of s (len bytes and a NUL) in the index's arena, or NULL. */
const char *kimg_owners_arena_copy(struct kimg_owners *o, const char *s, size_t len);

/* Documentation, headers, configuration and source names: the paths the
 * first reading leaves out (enum index_scope). */
bool kimg_owners_rarely_asked(const char *path, size_t len);

/* path (normalised, absolute) is owned by row pkg; first owner wins. Paths
 * out of o->scope are left out. */
void kimg_owners_put(struct kimg_owners *o, const char *path, uint32_t pkg);
/* The row owning path, or NULL. */
const struct kimg_pkg *kimg_owners_get(const struct kimg_owners *o, const char *path);

/* A new row, its entries relative to base. Returns its index, or -1. */
int kimg_owners_add_row(struct kimg_owners *o, const struct kimg_pkg *p, const char *base);
/* The row added last, taken back (its record could not be read). */
void kimg_owners_drop_last_row(struct kimg_owners *o);

/* True when dir was read before; else remembers it (true also when it
 * cannot: a directory is not read again and again) and returns false. */
bool kimg_owners_visited(struct kimg_owners *o, const char *dir);

/* A dpkg list (the row's record) into the index; -1 when unreadable. */
int kimg_owners_index_dpkg_list(struct kimg_owners *o, uint32_t idx);
/* dpkg's owner of norm, a file no Python or conda record read names. */
const struct kimg_pkg *kimg_owners_dpkg_owner(struct kimg_owners *o, const char *norm);

/* A dpkg file list as the first search read it: its file name in
 * <dpkg dir>/info and its text, kept for the next search and the index. */
struct dpkg_list {
	char *file;
	uint8_t *text;
	size_t size;
};
void kimg_owners_dpkg_lists_free(struct kimg_owners *o);

/* The dpkg package whose file list names norm (else alt, when not NULL:
 * merged /usr), found by reading the lists without indexing them; the
 * answer is put in the table. NULL when no list names either. */
const struct kimg_pkg *kimg_owners_dpkg_search(struct kimg_owners *o, const char *norm, const char *alt);

#endif
