/* SPDX-License-Identifier: Apache-2.0 */
/* dpkg's owner of a file (owners_internal.h: kimg_owners_dpkg_owner):
 * its file lists indexed whole (read_dpkg), or, for the first lookup,
 * searched for one path without indexing them (kimg_owners_dpkg_search).
 *
 * Why: a doctor or a check whose files are all Python's asks dpkg about
 * one or two files (the CUDA runtime under /usr/local/cuda). Indexing
 * every list for that put 146,000 paths of 881 lists into the table
 * (36 ms of CPU of a 38 ms check of libcudart here). The first search
 * reads the same lists and keeps their text (8.7 MB here); a list is
 * parsed line by line only where memmem finds the path in it. The next
 * search reads no file, and the index (owners.c read_dpkg, from the
 * DPKG_SEARCHES+1-th lookup) is made from the kept text, so a check of
 * /usr/lib with hundreds of dpkg files still reads each list once. */
#include "owners_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "packages.h"

#define PATH_CAP 4096
#define RECORD_READ_BELOW (16u << 20)

/* Bounded copy, cut without a word, as owners.c's copy_str (display strings). */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t l = strlen(src);
	if (l >= size)
		l = size - 1;
	memcpy(dst, src, l);
	dst[l] = '\0';
}

struct status_ctx {
	struct kimg_owners *o;
	size_t first, end; /* dpkg rows */
};

static int status_version(void *ctx, const char *package, const char *version)
{
	struct status_ctx *c = ctx;
	for (size_t i = c->first; i < c->end; i++)
		if (strcmp(c->o->pkgs[i]->name, package) == 0 && !c->o->pkgs[i]->version[0])
			snprintf(c->o->pkgs[i]->version, sizeof c->o->pkgs[i]->version, "%s", version);
	return 0;
}

static void index_dpkg_text(struct kimg_owners *o, uint32_t idx, struct kimg_span text)
{
	char line[PATH_CAP];
	uint64_t pos = 0;
	int rc;
	while ((rc = kimg_list_next(text, &pos, line, sizeof line)) != 0)
		if (rc == 1 && line[0] == '/')
			kimg_owners_put(o, line, idx);
}

/* A dpkg file list (absolute paths, a line each) into the index. -1 when
 * it cannot be read. */
int kimg_owners_index_dpkg_list(struct kimg_owners *o, uint32_t idx)
{
	struct kimg_file f;
	if (kimg_file_open_small_read(o->pkgs[idx]->record, &f, RECORD_READ_BELOW, NULL) < 0)
		return -1;
	index_dpkg_text(o, idx, f.bytes);
	kimg_file_close(&f);
	return 0;
}

/* The row of list `file` in dir, not indexed yet; -1 when none. */
static int dpkg_row(struct kimg_owners *o, const char *dir, const char *file)
{
	struct kimg_pkg p;
	memset(&p, 0, sizeof p);
	if (kimg_dpkg_list_package(file, p.name, sizeof p.name) < 0)
		return -1;
	p.source = "dpkg";
	snprintf(p.installer, sizeof p.installer, "dpkg");
	char path[PATH_CAP];
	if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path)
		return -1;
	copy_cut(p.record, sizeof p.record, path);
	return kimg_owners_add_row(o, &p, "");
}

static void read_dpkg(struct kimg_owners *o)
{
	o->dpkg_loaded = true;
	if (!o->dpkg_dir)
		return;
	char dir[PATH_CAP];
	if (snprintf(dir, sizeof dir, "%s/info", o->dpkg_dir) >= (int)sizeof dir)
		return;
	size_t first = o->n_pkgs;
	if (o->dpkg_lists_read && o->dpkg_lists) {
		/* the lists a search read (owners_dpkg.c), in the same order */
		for (size_t i = 0; i < o->n_dpkg_lists; i++) {
			int idx = dpkg_row(o, dir, o->dpkg_lists[i].file);
			if (idx >= 0)
				index_dpkg_text(o, (uint32_t)idx,
						kimg_span_make(o->dpkg_lists[i].text, o->dpkg_lists[i].size));
		}
		kimg_owners_dpkg_lists_free(o);
	} else {
		DIR *d = opendir(dir);
		if (!d)
			return;
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			int idx = dpkg_row(o, dir, de->d_name);
			if (idx >= 0 && kimg_owners_index_dpkg_list(o, (uint32_t)idx) < 0)
				kimg_owners_drop_last_row(o);
		}
		closedir(d);
	}
	char status[PATH_CAP];
	struct kimg_file f;
	if (o->n_pkgs > first && snprintf(status, sizeof status, "%s/status", o->dpkg_dir) < (int)sizeof status && kimg_file_open(status, &f, NULL) == 0) {
		struct status_ctx c = { o, first, o->n_pkgs };
		kimg_dpkg_status_each(f.bytes, status_version, &c);
		kimg_file_close(&f);
	}
}

/* Debian's merged /usr: dpkg may list /lib/... for a file found as
 * /usr/lib/...: that other name, or NULL. */
static const char *merged_usr(const char *norm)
{
	static const char *const merged[] = { "/usr/lib/", "/usr/bin/", "/usr/sbin/", "/usr/lib64/" };
	for (size_t i = 0; i < sizeof merged / sizeof merged[0]; i++)
		if (strncmp(norm, merged[i], strlen(merged[i])) == 0)
			return norm + 4;
	return NULL;
}

static const struct kimg_pkg *dpkg_get(const struct kimg_owners *o, const char *norm)
{
	const struct kimg_pkg *p = kimg_owners_get(o, norm);
	const char *alt = merged_usr(norm);
	return p || !alt ? p : kimg_owners_get(o, alt);
}

/* The first lookups dpkg answers search its lists (owners_dpkg.c); then
 * they are indexed whole, from the text the first search kept: 881 lists,
 * 146,000 paths here, 36 ms of CPU indexed, 13 ms searched. */
#define DPKG_SEARCHES 1

/* dpkg's owner of norm, a file no Python or conda record read names. */
const struct kimg_pkg *kimg_owners_dpkg_owner(struct kimg_owners *o, const char *norm)
{
	if (!o->dpkg_loaded && o->dpkg_searches < DPKG_SEARCHES) {
		const char *alt = merged_usr(norm);
		const struct kimg_pkg *p = kimg_owners_get(o, norm);
		if (p) /* a search's earlier answer */
			return p;
		if (alt && (p = kimg_owners_get(o, alt)) != NULL)
			return p;
		o->dpkg_searches++;
		return kimg_owners_dpkg_search(o, norm, alt);
	}
	if (!o->dpkg_loaded)
		read_dpkg(o);
	return dpkg_get(o, norm);
}


/* Whether the list's text has `path` as a whole line, the way
 * index_dpkg_list (owners.c) would put it. */
static bool list_names(struct kimg_span text, const char *path, size_t len)
{
	if (!memmem(text.data, (size_t)text.size, path, len))
		return false;
	char line[PATH_CAP];
	uint64_t pos = 0;
	int rc;
	while ((rc = kimg_list_next(text, &pos, line, sizeof line)) != 0)
		if (rc == 1 && line[0] == '/' && strcmp(line, path) == 0)
			return true;
	return false;
}

struct version_ctx {
	struct kimg_pkg *row;
};

static int first_version(void *ctx, const char *package, const char *version)
{
	struct version_ctx *c = ctx;
	if (!c->row->version[0] && strcmp(c->row->name, package) == 0)
		snprintf(c->row->version, sizeof c->row->version, "%s", version);
	return 0;
}

/* A row for the package of list `file` in `dir`, its version from
 * dpkg's status (the first installed stanza of that name, as read_dpkg
 * gives every row). NULL when it cannot be made. */
static const struct kimg_pkg *add_list_row(struct kimg_owners *o, const char *dir, const char *file)
{
	struct kimg_pkg p;
	memset(&p, 0, sizeof p);
	if (kimg_dpkg_list_package(file, p.name, sizeof p.name) < 0)
		return NULL;
	p.source = "dpkg";
	snprintf(p.installer, sizeof p.installer, "dpkg");
	char path[PATH_CAP];
	if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path)
		return NULL;
	copy_cut(p.record, sizeof p.record, path);
	int idx = kimg_owners_add_row(o, &p, "");
	if (idx < 0)
		return NULL;
	struct kimg_pkg *row = o->pkgs[idx];
	char status[PATH_CAP];
	struct kimg_file f;
	if (snprintf(status, sizeof status, "%s/status", o->dpkg_dir) < (int)sizeof status &&
	    kimg_file_open(status, &f, NULL) == 0) {
		struct version_ctx c = { row };
		kimg_dpkg_status_each(f.bytes, first_version, &c);
		kimg_file_close(&f);
	}
	return row;
}

/* Every list of dir into o->dpkg_lists, as read_dpkg would read them: in
 * readdir order, the unreadable ones left out. Out of memory: the lists
 * kept so far, the rest left to read_dpkg's own reading (false). */
static bool read_lists(struct kimg_owners *o, const char *dir)
{
	o->dpkg_lists_read = true;
	DIR *d = opendir(dir);
	if (!d)
		return true;
	size_t cap = 0;
	bool ok = true;
	struct dirent *de;
	while (ok && (de = readdir(d)) != NULL) {
		char name[sizeof ((struct kimg_pkg *)0)->name], path[PATH_CAP];
		if (kimg_dpkg_list_package(de->d_name, name, sizeof name) < 0 ||
		    snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path)
			continue;
		struct kimg_file f;
		if (kimg_file_open_small_read(path, &f, RECORD_READ_BELOW, NULL) < 0)
			continue;
		if (o->n_dpkg_lists == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			struct dpkg_list *v = realloc(o->dpkg_lists, nc * sizeof *v);
			ok = v != NULL;
			if (v) {
				o->dpkg_lists = v;
				cap = nc;
			}
		}
		struct dpkg_list l = { strdup(de->d_name), f.bytes.size ? malloc((size_t)f.bytes.size) : NULL,
				       (size_t)f.bytes.size };
		if (ok && l.file && (l.text || !l.size)) {
			if (l.size)
				memcpy(l.text, f.bytes.data, l.size);
			o->dpkg_lists[o->n_dpkg_lists++] = l;
		} else {
			free(l.file);
			free(l.text);
			ok = false;
		}
		kimg_file_close(&f);
	}
	closedir(d);
	if (!ok) /* read_dpkg reads the lists itself */
		kimg_owners_dpkg_lists_free(o);
	return ok;
}

const struct kimg_pkg *kimg_owners_dpkg_search(struct kimg_owners *o, const char *norm, const char *alt)
{
	if (!o->dpkg_dir)
		return NULL;
	char dir[PATH_CAP];
	if (snprintf(dir, sizeof dir, "%s/info", o->dpkg_dir) >= (int)sizeof dir)
		return NULL;
	if (!o->dpkg_lists_read && !read_lists(o, dir))
		return NULL; /* out of memory */
	/* The index's first owner of each is the first list, in readdir
	 * order, naming it; norm's owner is asked before alt's. */
	const char *norm_list = NULL, *alt_list = NULL;
	size_t norm_len = strlen(norm), alt_len = alt ? strlen(alt) : 0;
	for (size_t i = 0; i < o->n_dpkg_lists && !norm_list; i++) {
		struct kimg_span text = kimg_span_make(o->dpkg_lists[i].text, o->dpkg_lists[i].size);
		if (list_names(text, norm, norm_len))
			norm_list = o->dpkg_lists[i].file;
		else if (alt && !alt_list && list_names(text, alt, alt_len))
			alt_list = o->dpkg_lists[i].file;
	}
	const char *hit = norm_list ? norm : alt_list ? alt : NULL;
	if (!hit)
		return NULL;
	const struct kimg_pkg *row = add_list_row(o, dir, norm_list ? norm_list : alt_list);
	if (row)
		kimg_owners_put(o, hit, (uint32_t)(o->n_pkgs - 1)); /* asked again: found in the table */
	return row;
}
