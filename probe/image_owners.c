/* SPDX-License-Identifier: Apache-2.0 */
/* The owning packages of an image's files, from the image's own records
 * (never the host's): dpkg's status and info/<pkg>.list, Python
 * dist-info RECORD (and INSTALLER), conda-meta JSON records, as the final file
 * system holds them. The records are read by image_pass1.c from the layers; this
 * file parses them (core/packages.h) into one path -> package table. */
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "layer_fs.h"
#include "packages.h"

struct owner_slot {
	char *path;
	uint32_t hash;
	uint32_t pkg;                /* index + 1 */
};

struct probe_image_owners {
	struct kimg_pkg *pkgs;
	uint32_t n_pkgs, cap_pkgs;
	struct owner_slot *slots;
	uint32_t n_slots, size;      /* size: power of two */
};

static uint32_t hash_of(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int add_pkg(struct probe_image_owners *o, const char *name, const char *version, const char *installer,
		   const char *source, const char *record)
{
	if (o->n_pkgs == o->cap_pkgs) {
		uint32_t cap = o->cap_pkgs ? o->cap_pkgs * 2 : 64;
		struct kimg_pkg *p = realloc(o->pkgs, cap * sizeof *p);
		if (!p)
			return -1;
		o->pkgs = p;
		o->cap_pkgs = cap;
	}
	struct kimg_pkg *p = &o->pkgs[o->n_pkgs];
	memset(p, 0, sizeof *p);
	snprintf(p->name, sizeof p->name, "%s", name);
	snprintf(p->version, sizeof p->version, "%s", version ? version : "");
	snprintf(p->installer, sizeof p->installer, "%s", installer ? installer : "");
	p->source = source;
	snprintf(p->record, sizeof p->record, "%s", record);
	return (int)o->n_pkgs++;
}

static void put(struct probe_image_owners *o, const char *path, int pkg)
{
	char norm[KIMG_LAYER_FS_PATH_MAX];
	if (kimg_layer_fs_normalize(path, false, false, norm, sizeof norm) <= 0)
		return;
	if ((o->n_slots + 1) * 2 > o->size) {
		uint32_t size = o->size ? o->size * 2 : 4096;
		struct owner_slot *s = calloc(size, sizeof *s);
		if (!s)
			return;
		for (uint32_t i = 0; i < o->size; i++) {
			if (!o->slots[i].path)
				continue;
			uint32_t j = o->slots[i].hash & (size - 1);
			while (s[j].path)
				j = (j + 1) & (size - 1);
			s[j] = o->slots[i];
		}
		free(o->slots);
		o->slots = s;
		o->size = size;
	}
	uint32_t h = hash_of(norm), j = h & (o->size - 1);
	for (; o->slots[j].path; j = (j + 1) & (o->size - 1))
		if (o->slots[j].hash == h && strcmp(o->slots[j].path, norm) == 0)
			return; /* the first record to name a file keeps it */
	if (!(o->slots[j].path = strdup(norm)))
		return;
	o->slots[j].hash = h;
	o->slots[j].pkg = (uint32_t)pkg + 1;
	o->n_slots++;
}

struct probe_image_owners *probe_image_owners_new(void)
{
	return calloc(1, sizeof(struct probe_image_owners));
}

void probe_image_owners_free(struct probe_image_owners *o)
{
	if (!o)
		return;
	for (uint32_t i = 0; i < o->size; i++)
		free(o->slots[i].path);
	free(o->slots);
	free(o->pkgs);
	free(o);
}

const struct kimg_pkg *probe_image_owners_lookup(const struct probe_image_owners *o, const char *path)
{
	char norm[KIMG_LAYER_FS_PATH_MAX];
	if (!o || !o->size || kimg_layer_fs_normalize(path, false, false, norm, sizeof norm) <= 0)
		return NULL;
	uint32_t h = hash_of(norm);
	for (uint32_t j = h & (o->size - 1); o->slots[j].path; j = (j + 1) & (o->size - 1))
		if (o->slots[j].hash == h && strcmp(o->slots[j].path, norm) == 0)
			return &o->pkgs[o->slots[j].pkg - 1];
	return NULL;
}

/* ---- dpkg ---- */

struct dpkg_version_ctx {
	const char *want;
	char version[64];
};

static int dpkg_version_of(void *ctx, const char *package, const char *version)
{
	struct dpkg_version_ctx *c = ctx;
	if (strcmp(package, c->want) == 0) {
		snprintf(c->version, sizeof c->version, "%s", version);
		return 1;
	}
	return 0;
}

static void add_dpkg_list(struct probe_image_owners *o, const char *path, struct kimg_span list,
			  struct kimg_span status)
{
	const char *base = strrchr(path, '/');
	char name[128], line[KIMG_LAYER_FS_PATH_MAX];
	if (kimg_dpkg_list_package(base ? base + 1 : path, name, sizeof name) < 0)
		return;
	struct dpkg_version_ctx vc = { name, "" };
	if (status.size)
		kimg_dpkg_status_each(status, dpkg_version_of, &vc);
	int pkg = add_pkg(o, name, vc.version, "dpkg", "dpkg", path);
	if (pkg < 0)
		return;
	uint64_t pos = 0;
	int r;
	while ((r = kimg_list_next(list, &pos, line, sizeof line)) != 0)
		if (r > 0)
			put(o, line, pkg);
}

/* ---- Python ---- */

static void add_record(struct probe_image_owners *o, const char *path, struct kimg_span record,
		       const char *installer)
{
	/* ".../site-packages/foo-1.0.dist-info/RECORD": paths relative to site-packages */
	char dir[KIMG_LAYER_FS_PATH_MAX], name[128], version[64], line[KIMG_LAYER_FS_PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	char *dist = strrchr(dir, '/');
	if (!dist)
		return;
	*dist++ = '\0';
	if (kimg_dist_info_parse_dirname(dist, name, sizeof name, version, sizeof version) < 0)
		return;
	int pkg = add_pkg(o, name, version, installer, strstr(dist, ".egg-info") ? "egg-info" : "dist-info", path);
	if (pkg < 0)
		return;
	uint64_t pos = 0;
	int r;
	while ((r = kimg_record_next(record, &pos, line, sizeof line)) != 0) {
		if (r < 0)
			continue;
		char full[2 * KIMG_LAYER_FS_PATH_MAX + 2];
		if (line[0] == '/')
			snprintf(full, sizeof full, "%s", line);
		else
			snprintf(full, sizeof full, "%s/%s", dir, line);
		put(o, full, pkg);
	}
}

/* ---- conda ---- */

struct conda_file_list {
	char **paths;
	size_t n, cap;
};

static int conda_collect(void *ctx, const char *path)
{
	struct conda_file_list *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **p = realloc(l->paths, cap * sizeof *p);
		if (!p)
			return 0;
		l->paths = p;
		l->cap = cap;
	}
	if ((l->paths[l->n] = strdup(path)) != NULL)
		l->n++;
	return 0;
}

static void add_conda(struct probe_image_owners *o, const char *path, struct kimg_span doc)
{
	char prefix[KIMG_LAYER_FS_PATH_MAX], name[128], version[64];
	snprintf(prefix, sizeof prefix, "%s", path);
	char *cm = strstr(prefix, "/conda-meta/");
	if (!cm)
		return;
	*cm = '\0';
	size_t arena_size = doc.size * 4 + 4096;
	void *arena = malloc(arena_size);
	struct conda_file_list l = { 0 };
	struct kimg_error err = { 0, 0, "" };
	if (arena && kimg_conda_meta_parse(doc, arena, arena_size, name, sizeof name, version, sizeof version,
					   conda_collect, &l, &err) >= 0) {
		int pkg = add_pkg(o, name, version, "conda", "conda-meta", path);
		for (size_t i = 0; pkg >= 0 && i < l.n; i++) {
			char full[2 * KIMG_LAYER_FS_PATH_MAX + 2];
			snprintf(full, sizeof full, "%s/%s", prefix, l.paths[i]);
			put(o, full, pkg);
		}
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.paths[i]);
	free(l.paths);
	free(arena);
}

enum record_kind probe_image_record_kind(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(path), bn = strlen(base);
	if (strcmp(path, "/var/lib/dpkg/status") == 0)
		return RECORD_DPKG_STATUS;
	if (strncmp(path, "/var/lib/dpkg/info/", 19) == 0 && bn > 5 && strcmp(base + bn - 5, ".list") == 0 &&
	    !strchr(path + 19, '/'))
		return RECORD_DPKG_LIST;
	if (n > 17 && strcmp(base, "RECORD") == 0 && base - path > 11 &&
	    (strncmp(base - 11, ".dist-info/", 11) == 0 || (base - path > 10 && strncmp(base - 10, ".egg-info/", 10) == 0)))
		return RECORD_PY_RECORD;
	if (strcmp(base, "INSTALLER") == 0 && base - path > 11 && strncmp(base - 11, ".dist-info/", 11) == 0)
		return RECORD_PY_INSTALLER;
	if (bn > 5 && strcmp(base + bn - 5, ".json") == 0 && base - path >= 12 && strncmp(base - 12, "/conda-meta/", 12) == 0)
		return RECORD_CONDA_META;
	return RECORD_NONE;
}

void probe_image_owners_build(struct probe_image_owners *o, const struct probe_image_record *recs, size_t n)
{
	struct kimg_span status = { NULL, 0 };
	for (size_t i = 0; i < n; i++)
		if (recs[i].kind == RECORD_DPKG_STATUS)
			status = kimg_span_make(recs[i].bytes, recs[i].size);
	/* Python and conda records first: as on the host (sys/owners.h), a
	 * file a pip RECORD names is the wheel's even when dpkg lists it. */
	for (size_t i = 0; i < n; i++) {
		const struct probe_image_record *r = &recs[i];
		struct kimg_span b = kimg_span_make(r->bytes, r->size);
		if (r->kind == RECORD_PY_RECORD) {
			char inst_path[KIMG_LAYER_FS_PATH_MAX + 16], installer[32] = "";
			snprintf(inst_path, sizeof inst_path, "%s", r->path);
			char *slash = strrchr(inst_path, '/');
			if (slash) {
				snprintf(slash + 1, sizeof inst_path - (size_t)(slash + 1 - inst_path), "INSTALLER");
				for (size_t k = 0; k < n; k++)
					if (recs[k].kind == RECORD_PY_INSTALLER && strcmp(recs[k].path, inst_path) == 0) {
						size_t len = recs[k].size < sizeof installer - 1 ? recs[k].size : sizeof installer - 1;
						memcpy(installer, recs[k].bytes, len);
						installer[len] = '\0';
						installer[strcspn(installer, "\r\n")] = '\0';
					}
			}
			add_record(o, r->path, b, installer);
		} else if (r->kind == RECORD_CONDA_META) {
			add_conda(o, r->path, b);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (recs[i].kind == RECORD_DPKG_LIST)
			add_dpkg_list(o, recs[i].path, kimg_span_make(recs[i].bytes, recs[i].size), status);
}
