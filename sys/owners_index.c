/* SPDX-License-Identifier: Apache-2.0 */
/* The owning-package index itself (owners_internal.h): its rows, the
 * open-addressing table of paths, the arena the paths live in, and the
 * records that could not be read. The readers that fill it are owners.c. */
#include "owners_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source_names.h"

/* A record that names files but could not be read: kept for the caller
 * to say (kimg_owners_problems), never dropped silently. */
void kimg_owners_add_problem(struct kimg_owners *o, const char *record, const char *why)
{
	if (o->n_problems == o->cap_problems) {
		size_t nc = o->cap_problems ? o->cap_problems * 2 : 8;
		char **v = realloc(o->problems, nc * sizeof *v);
		if (!v)
			return;
		o->problems = v;
		o->cap_problems = nc;
	}
	size_t n = strlen(record) + strlen(why) + 3;
	char *line = malloc(n);
	if (!line)
		return;
	snprintf(line, n, "%s: %s", record, why);
	o->problems[o->n_problems++] = line;
}

size_t kimg_owners_problems(const struct kimg_owners *o, const char *const **lines)
{
	*lines = (const char *const *)o->problems;
	return o->n_problems;
}

/* Eight bytes at a time, then mixed so that every bit of the input moves
 * the low bits the table is indexed by. */
static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	uint64_t tail = 0;
	memcpy(&tail, s + i, len - i);
	h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

const char *kimg_owners_arena_copy(struct kimg_owners *o, const char *s, size_t len)
{
	struct arena_block *b = o->arena;
	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > ARENA_BLOCK ? len + 1 : ARENA_BLOCK;
		if ((b = malloc(sizeof *b + cap)) == NULL)
			return NULL;
		b->next = o->arena;
		b->used = 0;
		b->cap = cap;
		o->arena = b;
	}
	char *p = b->data + b->used;
	memcpy(p, s, len + 1);
	b->used += len + 1;
	return p;
}

static int table_resize(struct kimg_owners *o, size_t nc)
{
	struct entry *t = calloc(nc, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < o->cap_table; i++) {
		if (!o->table[i].path)
			continue;
		size_t k = o->table[i].hash & (nc - 1);
		while (t[k].path)
			k = (k + 1) & (nc - 1);
		t[k] = o->table[i];
	}
	free(o->table);
	o->table = t;
	o->cap_table = nc;
	return 0;
}

/* Room for `more` entries at most half full, grown once for a record. */
static int table_reserve(struct kimg_owners *o, size_t more)
{
	size_t need = (o->n_entries + more + 1) * 2, nc = o->cap_table ? o->cap_table : 1024;
	while (nc < need)
		nc *= 2;
	return nc == o->cap_table ? 0 : table_resize(o, nc);
}

/* Documentation, headers and configuration, and the file names of Python,
 * C/C++ sources and docs (source_names.h): files with device code and
 * CUDA libraries, which is all that lookups ask for, are seldom there. */
bool kimg_owners_rarely_asked(const char *path, size_t len)
{
	static const char *const dirs[] = { "/usr/share/", "/usr/include/", "/etc/", "/usr/lib/python3/dist-packages/__pycache__/" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return kimg_name_is_source(path, len);
}

/* First owner wins: a file named by two records keeps the first reader's. */
void kimg_owners_put(struct kimg_owners *o, const char *path, uint32_t pkg)
{
	size_t len = strlen(path);
	if (o->scope != INDEX_ALL && kimg_owners_rarely_asked(path, len) != (o->scope == INDEX_REST))
		return;
	if (table_reserve(o, 1) < 0)
		return;
	uint64_t h = hash_str(path, len);
	size_t k = h & (o->cap_table - 1);
	while (o->table[k].path) {
		if (o->table[k].hash == h && strcmp(o->table[k].path, path) == 0)
			return;
		k = (k + 1) & (o->cap_table - 1);
	}
	const char *copy = kimg_owners_arena_copy(o, path, len);
	if (!copy)
		return;
	o->table[k].path = copy;
	o->table[k].hash = h;
	o->table[k].pkg = pkg;
	o->n_entries++;
}

const struct kimg_pkg *kimg_owners_get(const struct kimg_owners *o, const char *path)
{
	if (!o->cap_table)
		return NULL;
	uint64_t h = hash_str(path, strlen(path));
	size_t k = h & (o->cap_table - 1);
	while (o->table[k].path) {
		if (o->table[k].hash == h && strcmp(o->table[k].path, path) == 0)
			return o->pkgs[o->table[k].pkg];
		k = (k + 1) & (o->cap_table - 1);
	}
	return NULL;
}

/* A new row, its entries relative to base. Returns its index, or -1. */
int kimg_owners_add_row(struct kimg_owners *o, const struct kimg_pkg *p, const char *base)
{
	if (o->n_pkgs == o->cap_pkgs) {
		size_t nc = o->cap_pkgs ? o->cap_pkgs * 2 : 32;
		struct kimg_pkg **v = realloc(o->pkgs, nc * sizeof *v);
		if (!v)
			return -1;
		o->pkgs = v;
		const char **b = realloc(o->bases, nc * sizeof *b);
		if (!b)
			return -1;
		o->bases = b;
		o->cap_pkgs = nc;
	}
	const char *base_copy = kimg_owners_arena_copy(o, base, strlen(base));
	if (!base_copy || !(o->pkgs[o->n_pkgs] = malloc(sizeof *p)))
		return -1;
	*o->pkgs[o->n_pkgs] = *p;
	o->bases[o->n_pkgs] = base_copy;
	return (int)o->n_pkgs++;
}

/* The row added last, taken back (its record could not be read). */
void kimg_owners_drop_last_row(struct kimg_owners *o)
{
	free(o->pkgs[--o->n_pkgs]);
}

bool kimg_owners_visited(struct kimg_owners *o, const char *dir)
{
	for (size_t i = 0; i < o->n_visited; i++)
		if (strcmp(o->visited[i], dir) == 0)
			return true;
	if (o->n_visited == o->cap_visited) {
		size_t nc = o->cap_visited ? o->cap_visited * 2 : 32;
		char **v = realloc(o->visited, nc * sizeof *v);
		if (!v)
			return true; /* cannot remember it: do not read it again and again */
		o->visited = v;
		o->cap_visited = nc;
	}
	char *copy = strdup(dir);
	if (copy)
		o->visited[o->n_visited++] = copy;
	return false;
}

struct kimg_owners *kimg_owners_new(const char *dpkg_dir)
{
	struct kimg_owners *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	if (dpkg_dir && !(o->dpkg_dir = strdup(dpkg_dir))) {
		free(o);
		return NULL;
	}
	return o;
}

/* The index owns the lists a dpkg search kept (owners_dpkg.c). */
void kimg_owners_dpkg_lists_free(struct kimg_owners *o)
{
	for (size_t i = 0; i < o->n_dpkg_lists; i++) {
		free(o->dpkg_lists[i].file);
		free(o->dpkg_lists[i].text);
	}
	free(o->dpkg_lists);
	o->dpkg_lists = NULL;
	o->n_dpkg_lists = 0;
}

void kimg_owners_free(struct kimg_owners *o)
{
	if (!o)
		return;
	for (struct arena_block *b = o->arena, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(o->table);
	for (size_t i = 0; i < o->n_visited; i++)
		free(o->visited[i]);
	free(o->visited);
	for (size_t i = 0; i < o->n_pkgs; i++)
		free(o->pkgs[i]);
	free(o->pkgs);
	free(o->bases);
	free(o->dpkg_dir);
	kimg_owners_dpkg_lists_free(o);
	for (size_t i = 0; i < o->n_problems; i++)
		free(o->problems[i]);
	free(o->problems);
	free(o);
}
