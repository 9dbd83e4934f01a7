/* SPDX-License-Identifier: Apache-2.0 */
/* dpkg's answer for one path without indexing every file list
 * (owners_internal.h: kimg_owners_dpkg_search).
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
	if (snprintf(p.record, sizeof p.record, "%s/%s", dir, file) >= (int)sizeof p.record)
		return NULL;
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
