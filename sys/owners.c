/* SPDX-License-Identifier: Apache-2.0 */
/* The owning-package index (owners.h): the readers of the package
 * managers' records (Python RECORDs, conda-meta, dpkg's lists and status)
 * and the lookup that walks up a file's directories. The index they fill
 * is owners_index.c (owners_internal.h); dpkg's lists are read by
 * owners_dpkg.c. */
#include "owners_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_read.h"
#include "packages.h"
#include "file.h"
#include "source_names.h"

#define PATH_CAP 4096
/* A conda-meta record over this size is not read (the largest real ones,
 * cudatoolkit's, are a few MB). */
#define CONDA_META_MAX (64u << 20)
/* Records are read(), not mapped, below this size (the largest RECORD of
 * the H200's site-packages, torch's, is 1.3 MB): in a process whose other
 * threads are busy, each munmap costs every one of them a TLB flush. */
#define RECORD_READ_BELOW (16u << 20)

/* The arena a JSON document needs at most: a node per value, and a value
 * starts the document or follows '[', '{' or ',' (counted inside strings
 * too: an over-estimate); decoded strings are no longer than the text. */
static size_t json_arena_bound(struct kimg_span doc)
{
	size_t starts = 1;
	for (uint64_t i = 0; i < doc.size; i++)
		starts += doc.data[i] == ',' || doc.data[i] == '[' || doc.data[i] == '{';
	return starts * (sizeof(struct kimg_jval) + _Alignof(struct kimg_jval)) + (size_t)doc.size * 2 + 4096;
}

/* dst = a "/" b, or -1 when it does not fit (never truncated). */
static int join(char *dst, size_t size, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la + 1 + lb + 1 > size)
		return -1;
	memcpy(dst, a, la);
	dst[la] = '/';
	memcpy(dst + la + 1, b, lb + 1);
	return 0;
}

/* Bounded copy that says nothing when it truncates (display strings). */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t l = strlen(src);
	if (l >= size)
		l = size - 1;
	memcpy(dst, src, l);
	dst[l] = '\0';
}

int kimg_path_normalize(const char *path, char *out, unsigned long size)
{
	char buf[PATH_CAP];
	if (path[0] == '/') {
		if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
			return -1;
	} else {
		char cwd[PATH_CAP];
		if (!getcwd(cwd, sizeof cwd) || snprintf(buf, sizeof buf, "%s/%s", cwd, path) >= (int)sizeof buf)
			return -1;
	}
	/* components onto out, resolving . and .. */
	size_t n = 0;
	char *save = NULL;
	if (size < 2)
		return -1;
	out[0] = '\0';
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *slash = strrchr(out, '/');
			n = slash ? (size_t)(slash - out) : 0;
			out[n] = '\0';
			continue;
		}
		size_t cl = strlen(c);
		if (n + 1 + cl + 1 > size)
			return -1;
		out[n++] = '/';
		memcpy(out + n, c, cl + 1);
		n += cl;
	}
	if (n == 0) {
		out[0] = '/';
		out[1] = '\0';
	}
	return 0;
}

/* The first line of a small file (INSTALLER: "pip"), trailing space cut. */
static void read_small(const char *path, char *out, size_t size)
{
	out[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return;
	ssize_t n;
	do
		n = read(fd, out, size - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	size_t l = strlen(out);
	while (l > 0 && (out[l - 1] == '\r' || out[l - 1] == ' '))
		out[--l] = '\0';
}

/* A relative path with nothing to normalise: no empty, "." or ".."
 * component. Nearly every RECORD entry ("torch/lib/libc10.so"). */
static bool clean_relative(const char *rel)
{
	if (!rel[0] || rel[0] == '/')
		return false;
	for (const char *c = rel;;) {
		const char *end = strchr(c, '/');
		size_t len = end ? (size_t)(end - c) : strlen(c);
		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!end)
			return true;
		c = end + 1;
	}
}

/* Record entries are relative to base (normalised); "../../bin/x" leaves it. */
static void put_relative(struct kimg_owners *o, const char *base, const char *rel, uint32_t pkg)
{
	char joined[PATH_CAP], norm[PATH_CAP];
	if (clean_relative(rel) && !strstr(base, "//")) {
		/* base + "/" + rel is already what kimg_path_normalize would make */
		if (join(joined, sizeof joined, strcmp(base, "/") == 0 ? "" : base, rel) == 0)
			kimg_owners_put(o, joined, pkg);
		return;
	}
	if (rel[0] == '/') {
		if (kimg_path_normalize(rel, norm, sizeof norm) == 0)
			kimg_owners_put(o, norm, pkg);
		return;
	}
	if (join(joined, sizeof joined, base, rel) < 0)
		return;
	if (kimg_path_normalize(joined, norm, sizeof norm) == 0)
		kimg_owners_put(o, norm, pkg);
}

/* A dist-info RECORD (CSV) or an egg-info installed-files.txt (a path a
 * line) into the index. -1 when it cannot be read. */
static int index_record(struct kimg_owners *o, uint32_t idx)
{
	const struct kimg_pkg *p = o->pkgs[idx];
	bool egg = strcmp(p->source, "egg-info") == 0;
	struct kimg_file f;
	if (kimg_file_open_small_read(p->record, &f, RECORD_READ_BELOW, NULL) < 0)
		return -1;
	char rel[PATH_CAP];
	uint64_t pos = 0;
	int rc;
	while ((rc = egg ? kimg_list_next(f.bytes, &pos, rel, sizeof rel)
			 : kimg_record_next(f.bytes, &pos, rel, sizeof rel)) != 0) {
		/* A source file's name stays its last component through
		 * normalising: table_put would leave it out too. */
		if (rc == 1 && !(o->scope == INDEX_LIKELY && kimg_name_is_source(rel, strlen(rel))))
			put_relative(o, o->bases[idx], rel, idx);
		else if (rc == -KIMG_EFORMAT)
			break;
	}
	kimg_file_close(&f);
	return 0;
}

static void read_dist_info(struct kimg_owners *o, const char *dir, const char *entry)
{
	struct kimg_pkg p;
	memset(&p, 0, sizeof p);
	if (kimg_dist_info_parse_dirname(entry, p.name, sizeof p.name, p.version, sizeof p.version) < 0)
		return;
	bool egg = strstr(entry, ".egg-info") != NULL;
	char info[PATH_CAP], path[PATH_CAP];
	p.source = egg ? "egg-info" : "dist-info";
	if (join(info, sizeof info, dir, entry) < 0 || join(path, sizeof path, info, "INSTALLER") < 0)
		return;
	read_small(path, p.installer, sizeof p.installer);
	/* egg-info lists files in installed-files.txt, relative to itself */
	if (join(path, sizeof path, info, egg ? "installed-files.txt" : "RECORD") < 0)
		return;
	copy_str(p.record, sizeof p.record, path);
	int idx = kimg_owners_add_row(o, &p, egg ? info : dir);
	if (idx >= 0 && index_record(o, (uint32_t)idx) < 0)
		kimg_owners_drop_last_row(o);
}

struct conda_ctx {
	struct kimg_owners *o;
	const char *prefix;
	uint32_t pkg;
};

static int conda_file(void *ctx, const char *path)
{
	struct conda_ctx *c = ctx;
	put_relative(c->o, c->prefix, path, c->pkg);
	return 0;
}

/* A conda-meta JSON record into the index, and into name and version the
 * package it names. -1 when it cannot be read. */
static int index_conda(struct kimg_owners *o, uint32_t idx, char *name, size_t name_size, char *version,
		       size_t version_size)
{
	struct kimg_file f;
	if (kimg_file_open_small_read(o->pkgs[idx]->record, &f, RECORD_READ_BELOW, NULL) < 0)
		return -1;
	int rc = -1;
	char why[160];
	if (f.bytes.size > CONDA_META_MAX) {
		snprintf(why, sizeof why, "conda-meta record of %llu bytes is over the limit (%u MiB): its files have no owner",
			 (unsigned long long)f.bytes.size, CONDA_META_MAX >> 20);
	} else {
		/* sized from the document: many short names need far more
		 * nodes than bytes (a 64-byte node per value) */
		size_t arena_size = json_arena_bound(f.bytes);
		void *arena = malloc(arena_size);
		struct kimg_error err = { 0, 0, "" };
		struct conda_ctx c = { o, o->bases[idx], idx };
		if (!arena)
			snprintf(why, sizeof why, "out of memory for a %zu-byte parse: its files have no owner", arena_size);
		else if (kimg_conda_meta_parse(f.bytes, arena, arena_size, name, name_size, version, version_size,
					       conda_file, &c, &err) < 0)
			snprintf(why, sizeof why, "conda-meta record not read (%s): its files have no owner", err.what);
		else
			rc = 0;
		free(arena);
	}
	if (rc < 0)
		kimg_owners_add_problem(o, o->pkgs[idx]->record, why);
	kimg_file_close(&f);
	return rc;
}

static void read_conda_meta(struct kimg_owners *o, const char *prefix)
{
	char dir[PATH_CAP];
	if (join(dir, sizeof dir, prefix, "conda-meta") < 0)
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l <= 5 || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		char path[PATH_CAP];
		if (join(path, sizeof path, dir, de->d_name) < 0)
			continue;
		struct kimg_pkg p;
		memset(&p, 0, sizeof p);
		p.source = "conda-meta";
		snprintf(p.installer, sizeof p.installer, "conda");
		copy_str(p.record, sizeof p.record, path);
		/* the row exists before its files point at it; the parser
		 * names the package before it hands out any file */
		int idx = kimg_owners_add_row(o, &p, prefix);
		if (idx < 0)
			continue;
		struct kimg_pkg *row = o->pkgs[idx];
		if (index_conda(o, (uint32_t)idx, row->name, sizeof row->name, row->version, sizeof row->version) < 0)
			kimg_owners_drop_last_row(o);
	}
	closedir(d);
}

/* Read the records one directory holds: its dist-infos, its conda-meta. */
static void read_dir(struct kimg_owners *o, const char *dir)
{
	if (kimg_owners_visited(o, dir))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	char **names = NULL;
	size_t n = 0, cap = 0;
	bool conda = false;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, "conda-meta") == 0) {
			conda = true;
			continue;
		}
		size_t l = strlen(de->d_name);
		bool dist = (l > 10 && strcmp(de->d_name + l - 10, ".dist-info") == 0) ||
			    (l > 9 && strcmp(de->d_name + l - 9, ".egg-info") == 0);
		if (!dist)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **v = realloc(names, nc * sizeof *v);
			if (!v)
				break;
			names = v;
			cap = nc;
		}
		if ((names[n] = strdup(de->d_name)) != NULL)
			n++;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		read_dist_info(o, dir, names[i]);
		free(names[i]);
	}
	free(names);
	if (conda)
		read_conda_meta(o, dir);
}

/* The rarely asked paths of every record read so far, row by row in the
 * order first read (enum index_scope); then records are indexed whole. */
static void index_rest(struct kimg_owners *o)
{
	o->scope = INDEX_REST;
	for (size_t i = 0; i < o->n_pkgs; i++) {
		const char *source = o->pkgs[i]->source;
		char name[sizeof o->pkgs[i]->name], version[sizeof o->pkgs[i]->version];
		if (strcmp(source, "dpkg") == 0)
			(void)kimg_owners_index_dpkg_list(o, (uint32_t)i);
		else if (strcmp(source, "conda-meta") == 0)
			(void)index_conda(o, (uint32_t)i, name, sizeof name, version, sizeof version);
		else
			(void)index_record(o, (uint32_t)i);
	}
	o->scope = INDEX_ALL;
}

/* "dist/foo_bar-1.0-cp311-none-linux_x86_64.whl!/x.so" -> foo_bar 1.0 */
static const struct kimg_pkg *wheel_owner(struct kimg_owners *o, const char *path, const char *bang)
{
	char whl[PATH_CAP];
	size_t len = (size_t)(bang - path);
	if (len >= sizeof whl)
		return NULL;
	memcpy(whl, path, len);
	whl[len] = '\0';
	const char *base = strrchr(whl, '/');
	base = base ? base + 1 : whl;
	const char *d1 = strchr(base, '-');
	if (!d1)
		return NULL;
	const char *d2 = strchr(d1 + 1, '-');
	const char *dot = strstr(d1 + 1, ".whl");
	const char *vend = d2 ? d2 : dot;
	if (!vend || vend <= d1 + 1)
		return NULL;
	memset(&o->wheel, 0, sizeof o->wheel);
	snprintf(o->wheel.name, sizeof o->wheel.name, "%.*s", (int)(d1 - base), base);
	snprintf(o->wheel.version, sizeof o->wheel.version, "%.*s", (int)(vend - d1 - 1), d1 + 1);
	snprintf(o->wheel.installer, sizeof o->wheel.installer, "wheel file");
	copy_str(o->wheel.record, sizeof o->wheel.record, whl);
	o->wheel.source = "wheel";
	return &o->wheel;
}

void kimg_owners_prepare(struct kimg_owners *o, const char *dir)
{
	char norm[PATH_CAP];
	if (kimg_path_normalize(dir, norm, sizeof norm) < 0)
		return;
	for (;;) {
		read_dir(o, norm[0] ? norm : "/");
		char *slash = strrchr(norm, '/');
		if (!slash || !norm[0])
			break;
		*slash = '\0';
	}
}

const struct kimg_pkg *kimg_owners_lookup(struct kimg_owners *o, const char *path)
{
	const char *bang = strstr(path, ".whl!/");
	if (bang)
		return wheel_owner(o, path, bang + 4);
	char norm[PATH_CAP], dir[PATH_CAP];
	if (kimg_path_normalize(path, norm, sizeof norm) < 0)
		return NULL;
	if (o->scope == INDEX_LIKELY && kimg_owners_rarely_asked(norm, strlen(norm)))
		index_rest(o);
	const struct kimg_pkg *p = kimg_owners_get(o, norm);
	if (p && p->source && strcmp(p->source, "dpkg") != 0)
		return p;
	copy_str(dir, sizeof dir, norm);
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
		read_dir(o, dir[0] ? dir : "/");
		if ((p = kimg_owners_get(o, norm)) != NULL && strcmp(p->source, "dpkg") != 0)
			return p;
		if (!dir[0])
			break;
	}
	return kimg_owners_dpkg_owner(o, norm);
}
