/* SPDX-License-Identifier: Apache-2.0 */
/* dpkg's answer for one path without indexing every file list
 * (owners_internal.h: kimg_owners_dpkg_search).
 *
 * Why: a doctor or a check whose files are all Python's asks dpkg about
 * one or two files (the CUDA runtime under /usr/local/cuda). Indexing
 * every list for that put 146,000 paths of 881 lists into the table
 * (36 ms of CPU of a 38 ms check of libcudart here). A search reads the
 * same lists, but a list is only parsed line by line where memmem finds
 * the path in it, and nothing is copied. After a few searches the caller
 * indexes the lists whole (owners.c), so a check of /usr/lib with
 * hundreds of dpkg files reads them once. */
#include "owners_internal.h"

#include <dirent.h>
#include <stdio.h>
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

const struct kimg_pkg *kimg_owners_dpkg_search(struct kimg_owners *o, const char *norm, const char *alt)
{
	if (!o->dpkg_dir)
		return NULL;
	char dir[PATH_CAP];
	if (snprintf(dir, sizeof dir, "%s/info", o->dpkg_dir) >= (int)sizeof dir)
		return NULL;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	/* The index's first owner of each is the first list, in readdir
	 * order, naming it; norm's owner is asked before alt's. */
	char norm_list[256] = "", alt_list[256] = "";
	size_t norm_len = strlen(norm), alt_len = alt ? strlen(alt) : 0;
	struct dirent *de;
	while (!norm_list[0] && (de = readdir(d)) != NULL) {
		char name[sizeof ((struct kimg_pkg *)0)->name], path[PATH_CAP];
		if (kimg_dpkg_list_package(de->d_name, name, sizeof name) < 0 || strlen(de->d_name) >= sizeof norm_list ||
		    snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path)
			continue;
		struct kimg_file f;
		if (kimg_file_open_small_read(path, &f, RECORD_READ_BELOW, NULL) < 0)
			continue;
		if (list_names(f.bytes, norm, norm_len))
			snprintf(norm_list, sizeof norm_list, "%s", de->d_name);
		else if (alt && !alt_list[0] && list_names(f.bytes, alt, alt_len))
			snprintf(alt_list, sizeof alt_list, "%s", de->d_name);
		kimg_file_close(&f);
	}
	closedir(d);
	const char *hit = norm_list[0] ? norm : alt_list[0] ? alt : NULL;
	if (!hit)
		return NULL;
	const struct kimg_pkg *row = add_list_row(o, dir, norm_list[0] ? norm_list : alt_list);
	if (row)
		kimg_owners_put(o, hit, (uint32_t)(o->n_pkgs - 1)); /* asked again: found in the table */
	return row;
}
