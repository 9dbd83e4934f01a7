/* SPDX-License-Identifier: Apache-2.0 */
/* Container images as the final file system of their layers (image.h).
 *
 * Why two passes over each layer: which entries survive depends on the
 * layers above (whiteouts, replacements), and a layer's owning-package
 * records may sit in any layer. Pass one reads every layer's headers (and
 * the first page of each file, to know which may hold device code, and the
 * package records), checks the blob's SHA-256, and applies the entries to
 * the path table (core/layer_fs.h); pass two reads again only the layers
 * holding a surviving file that may hold device code, and hands on only
 * those files. Nothing is written to disk; what is held is the path table,
 * the package records, one file at a time and libarchive's window.
 *
 * This file is over 500 lines: it is the one reader of the three image
 * containers (docker archive, OCI directory, OCI tar), and its passes share
 * their state; the pure parts are in core/ (image_format, layer_fs,
 * tar_header, sha256) and the owners in image_owners.c. */
#include "image.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "elf_sparse.h"
#include "extras.h"
#include "file.h"
#include "image_format.h"
#include "layer_fs.h"
#include "probe.h"
#include "sha256.h"
#include "tar.h"
#include "tar_header.h"

#define HEAD_SIZE 4096u
#define CHUNK ((size_t)1 << 20)
#define INDEX_DEPTH_MAX 4           /* an index of indexes of ... */
#define PLANS_MAX 256u

/* ---- where the blobs are ---- */

struct tar_member {
	char *name;                     /* normalised, no leading "./" or "/" */
	char *link;                     /* a symlink member's target (docker's "ID/layer.tar"), else NULL */
	uint64_t off, size;
};

struct source {
	const char *path;
	int fd;                         /* the tar, or the layout directory */
	bool is_dir;
	const char *format;
	struct tar_member *m;
	size_t n, cap;
};

struct blob {
	int fd;
	uint64_t off, size;
	bool own_fd;
};

static void strip_dot(const char *in, char *out, size_t size)
{
	while (in[0] == '.' && in[1] == '/')
		in += 2;
	while (in[0] == '/')
		in++;
	snprintf(out, size, "%s", in);
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -KIMG_ETRUNC;
		got += (size_t)r;
	}
	return 0;
}

/* List the tar's regular members by header, skipping their data. */
static int index_tar(struct source *s, struct kimg_error *err)
{
	struct stat st;
	if (kimg_file_fstat(s->fd, &st) < 0)
		return kimg_error_set(err, -errno, 0, "%s", strerror(errno));
	uint64_t pos = 0, end = (uint64_t)st.st_size;
	struct kimg_tar_header *h = malloc(sizeof *h);
	char *long_name = NULL;
	bool pax = false;
	struct kimg_tar_header *pax_h = malloc(sizeof *pax_h);
	int rc = 0;
	if (!h || !pax_h) {
		rc = kimg_error_set(err, -ENOMEM, 0, "out of memory");
		goto out;
	}
	while (pos + KIMG_TAR_BLOCK <= end) {
		uint8_t blk[KIMG_TAR_BLOCK];
		if ((rc = pread_all(s->fd, blk, sizeof blk, pos)) < 0) {
			kimg_error_set(err, rc, pos, "reading the tar: %s", kimg_strerror(rc));
			goto out;
		}
		int r = kimg_tar_header_parse(kimg_span_make(blk, sizeof blk), h, err);
		if (r < 0) {
			rc = r;
			goto out;
		}
		if (r == 0)
			break;
		uint64_t data = pos + KIMG_TAR_BLOCK;
		if (h->size > end - data) {
			rc = kimg_error_set(err, -KIMG_ETRUNC, pos, "tar member '%.200s' passes the end of the file", h->name);
			goto out;
		}
		pos = data + kimg_tar_padded(h->size);
		if (h->type == KIMG_TAR_PAX || h->type == KIMG_TAR_GNU_LONGNAME) {
			if (h->size > KIMG_TAR_EXT_MAX) {
				rc = kimg_error_set(err, -KIMG_ELIMIT, data, "tar extended header larger than %llu bytes",
						    (unsigned long long)KIMG_TAR_EXT_MAX);
				goto out;
			}
			char *buf = malloc(h->size + 1);
			if (!buf || (rc = pread_all(s->fd, buf, h->size, data)) < 0) {
				free(buf);
				rc = kimg_error_set(err, rc ? rc : -ENOMEM, data, "reading a tar extended header");
				goto out;
			}
			buf[h->size] = '\0';
			if (h->type == KIMG_TAR_PAX) {
				memset(pax_h, 0, sizeof *pax_h);
				pax_h->size = UINT64_MAX;
				if ((rc = kimg_tar_pax_apply(kimg_span_make(buf, h->size), pax_h, err)) < 0) {
					free(buf);
					goto out;
				}
				pax = true;
				free(buf);
			} else {
				free(long_name);
				long_name = buf;
			}
			continue;
		}
		if (pax) {
			if (pax_h->name[0])
				snprintf(h->name, sizeof h->name, "%s", pax_h->name);
			if (pax_h->size != UINT64_MAX && pax_h->size != h->size) {
				rc = kimg_error_set(err, -KIMG_ENOTSUP, pos, "tar member '%.200s': pax size differs from the header",
						    h->name);
				goto out;
			}
			pax = false;
		}
		if (long_name) {
			snprintf(h->name, sizeof h->name, "%s", long_name);
			free(long_name);
			long_name = NULL;
		}
		if (h->type != KIMG_TAR_REG && h->type != KIMG_TAR_SYMLINK)
			continue;
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 64;
			struct tar_member *m = realloc(s->m, cap * sizeof *m);
			if (!m) {
				rc = kimg_error_set(err, -ENOMEM, 0, "out of memory");
				goto out;
			}
			s->m = m;
			s->cap = cap;
		}
		char name[KIMG_TAR_NAME_MAX];
		strip_dot(h->name, name, sizeof name);
		if (!(s->m[s->n].name = strdup(name))) {
			rc = kimg_error_set(err, -ENOMEM, 0, "out of memory");
			goto out;
		}
		s->m[s->n].off = data;
		s->m[s->n].size = h->type == KIMG_TAR_REG ? h->size : 0;
		s->m[s->n].link = NULL;
		if (h->type == KIMG_TAR_SYMLINK && !(s->m[s->n].link = strdup(h->link))) {
			free(s->m[s->n].name);
			rc = kimg_error_set(err, -ENOMEM, 0, "out of memory");
			goto out;
		}
		s->n++;
	}
out:
	free(long_name);
	free(h);
	free(pax_h);
	return rc;
}

static const struct tar_member *tar_find(const struct source *s, const char *name)
{
	char want[KIMG_TAR_NAME_MAX];
	strip_dot(name, want, sizeof want);
	for (int hops = 0; hops < 8; hops++) {
		const struct tar_member *m = NULL;
		/* the last member of a name wins, as tar extraction has it */
		for (size_t i = s->n; i-- > 0 && !m;)
			if (strcmp(s->m[i].name, want) == 0)
				m = &s->m[i];
		if (!m || !m->link)
			return m;
		/* a symlink member, relative to its directory, within the archive */
		char joined[2 * KIMG_TAR_NAME_MAX + 2], norm[KIMG_TAR_NAME_MAX];
		const char *slash = strrchr(m->name, '/');
		snprintf(joined, sizeof joined, "%.*s%s%s", slash ? (int)(slash - m->name) : 0, m->name, slash ? "/" : "",
			 m->link);
		if (m->link[0] == '/' || kimg_layer_fs_normalize(joined, false, true, norm, sizeof norm) <= 0)
			return NULL;
		snprintf(want, sizeof want, "%s", norm + 1);
	}
	return NULL;
}

static void source_close(struct source *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->m[i].name);
		free(s->m[i].link);
	}
	free(s->m);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static int source_open(const char *path, struct source *s, struct kimg_error *err)
{
	memset(s, 0, sizeof *s);
	s->path = path;
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return kimg_error_set(err, -errno, 0, "%s", strerror(errno));
	struct stat st;
	if (kimg_file_fstat(s->fd, &st) < 0)
		return kimg_error_set(err, -errno, 0, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		s->is_dir = true;
		s->format = "oci-layout";
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not a regular file");
	int rc = index_tar(s, err);
	if (rc < 0)
		return rc;
	s->format = tar_find(s, "manifest.json") ? "docker-archive" : "oci-archive";
	return 0;
}

static bool source_has(const struct source *s, const char *name)
{
	if (s->is_dir) {
		struct stat st;
		return kimg_file_stat_at(s->fd, name, &st, true) == 0 && S_ISREG(st.st_mode);
	}
	return tar_find(s, name) != NULL;
}

static int blob_open(const struct source *s, const char *name, struct blob *b, struct kimg_error *err)
{
	memset(b, 0, sizeof *b);
	b->fd = -1;
	if (s->is_dir) {
		char clean[KIMG_LAYER_FS_PATH_MAX];
		/* a layout names its blobs itself: never outside the directory */
		if (kimg_layer_fs_normalize(name, true, true, clean, sizeof clean) <= 0)
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "blob name '%.200s' leaves the layout", name);
		int fd = openat(s->fd, clean + 1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return kimg_error_set(err, -errno, 0, "blob %s missing: %s", clean + 1, strerror(errno));
		struct stat st;
		if (kimg_file_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "blob %s is not a regular file", clean + 1);
		}
		b->fd = fd;
		b->own_fd = true;
		b->size = (uint64_t)st.st_size;
		return 0;
	}
	const struct tar_member *m = tar_find(s, name);
	if (!m)
		return kimg_error_set(err, -ENOENT, 0, "blob %.200s missing from the archive", name);
	b->fd = s->fd;
	b->off = m->off;
	b->size = m->size;
	return 0;
}

static void blob_close(struct blob *b)
{
	if (b->own_fd && b->fd >= 0)
		close(b->fd);
	b->fd = -1;
}

/* A small blob (manifest, index, config) whole, its SHA-256 checked
 * against want_hex when given. */
static int blob_read_doc(const struct source *s, const char *name, const char *want_hex, unsigned char **out,
			 uint64_t *len, struct kimg_error *err)
{
	struct blob b;
	int rc = blob_open(s, name, &b, err);
	if (rc < 0)
		return rc;
	if (b.size > KIMG_IMAGE_DOC_MAX) {
		blob_close(&b);
		return kimg_error_set(err, -KIMG_ELIMIT, 0, "%s: larger than %llu bytes", name,
				      (unsigned long long)KIMG_IMAGE_DOC_MAX);
	}
	unsigned char *buf = malloc(b.size + 1);
	if (!buf || (rc = pread_all(b.fd, buf, b.size, b.off)) < 0) {
		free(buf);
		blob_close(&b);
		return kimg_error_set(err, rc ? rc : -ENOMEM, 0, "%s: cannot read it", name);
	}
	blob_close(&b);
	buf[b.size] = '\0';
	if (want_hex) {
		struct kimg_sha256 h;
		char got[65];
		kimg_sha256_init(&h);
		kimg_sha256_update(&h, buf, b.size);
		kimg_sha256_hex(&h, got);
		if (strcmp(got, want_hex) != 0) {
			free(buf);
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "%s: digest mismatch: its bytes are sha256:%s", name, got);
		}
	}
	*out = buf;
	*len = b.size;
	return 0;
}

/* ---- which images, which blobs (plans) ---- */

struct layer_plan {
	char digest[72];                /* expected "sha256:..." ("" until known: legacy docker layers) */
	char member[KIMG_LAYER_FS_PATH_MAX]; /* where the blob is */
	char media_type[128];
	char created_by[512];
	uint64_t size;
	bool read;                      /* pass one verified and applied it */
};

struct plan {
	char name[KIMG_LAYER_FS_PATH_MAX + 64];
	char platform[100];
	char ref[256];
	char config_member[KIMG_LAYER_FS_PATH_MAX];
	char config_digest[72];
	struct layer_plan *layers;
	unsigned n_layers;
	bool bad;                       /* an error made it unreadable (reported) */
	char problem[400];
};

struct planner {
	const struct source *src;
	const struct probe_image_walker *w;
	struct plan *plans;
	unsigned n, cap;
	int depth;
	struct kimg_error err;
	char os[32], arch[32], variant[32]; /* --platform */
	bool want_platform;
};

static struct plan *plan_new(struct planner *p)
{
	if (p->n >= PLANS_MAX)
		return NULL;
	if (p->n == p->cap) {
		unsigned cap = p->cap ? p->cap * 2 : 4;
		struct plan *np = realloc(p->plans, cap * sizeof *np);
		if (!np)
			return NULL;
		p->plans = np;
		p->cap = cap;
	}
	struct plan *pl = &p->plans[p->n++];
	memset(pl, 0, sizeof *pl);
	return pl;
}

static void plans_free(struct planner *p)
{
	for (unsigned i = 0; i < p->n; i++)
		free(p->plans[i].layers);
	free(p->plans);
}

static bool hex_of_name(const char *name, char hex[65])
{
	/* "blobs/sha256/HEX", "HEX.json", "HEX.tar", "HEX/layer.tar" */
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	size_t n = strcspn(base, ".");
	if (n == 64 && strspn(base, "0123456789abcdef") >= 64) {
		memcpy(hex, base, 64);
		hex[64] = '\0';
		return true;
	}
	return false;
}

static int docker_image(void *ctx, unsigned index, const char *config, const char *repo_tag,
			const char *const *layers, unsigned n_layers)
{
	struct planner *p = ctx;
	(void)index;
	struct plan *pl = plan_new(p);
	if (!pl || (n_layers && !(pl->layers = calloc(n_layers, sizeof *pl->layers))))
		return -ENOMEM;
	snprintf(pl->ref, sizeof pl->ref, "%s", repo_tag ? repo_tag : "");
	snprintf(pl->config_member, sizeof pl->config_member, "%s", config);
	char hex[65];
	if (hex_of_name(config, hex))
		snprintf(pl->config_digest, sizeof pl->config_digest, "sha256:%s", hex);
	pl->n_layers = n_layers;
	for (unsigned i = 0; i < n_layers; i++) {
		struct layer_plan *l = &pl->layers[i];
		snprintf(l->member, sizeof l->member, "%s", layers[i]);
		/* "ID/layer.tar" (docker < 25): not named by its digest; the
		 * config's diff_id is checked instead (it is uncompressed). */
		if (strcmp(strrchr(layers[i], '/') ? strrchr(layers[i], '/') + 1 : layers[i], "layer.tar") != 0 &&
		    hex_of_name(layers[i], hex))
			snprintf(l->digest, sizeof l->digest, "sha256:%s", hex);
	}
	return 0;
}

struct oci_manifest_ctx {
	struct plan *pl;
	unsigned cap;
};

static int oci_layer(void *ctx, unsigned index, const struct kimg_descriptor *d)
{
	struct oci_manifest_ctx *c = ctx;
	struct plan *pl = c->pl;
	if (index >= c->cap) {
		unsigned cap = c->cap ? c->cap * 2 : 16;
		struct layer_plan *l = realloc(pl->layers, cap * sizeof *l);
		if (!l)
			return -ENOMEM;
		pl->layers = l;
		c->cap = cap;
	}
	struct layer_plan *l = &pl->layers[index];
	memset(l, 0, sizeof *l);
	snprintf(l->digest, sizeof l->digest, "%s", d->digest);
	snprintf(l->member, sizeof l->member, "blobs/sha256/%s", d->digest + 7);
	snprintf(l->media_type, sizeof l->media_type, "%s", d->media_type);
	l->size = d->size;
	pl->n_layers = index + 1;
	return 0;
}

static int oci_entry(void *ctx, const struct kimg_descriptor *d);

/* One index or manifest blob: its entries planned in turn. */
static int oci_doc(struct planner *p, const char *member, const char *want_hex, const struct kimg_descriptor *d)
{
	unsigned char *doc = NULL;
	uint64_t len = 0;
	int rc = blob_read_doc(p->src, member, want_hex, &doc, &len, &p->err);
	if (rc < 0)
		return rc;
	size_t arena_size = (size_t)len * 4 + 65536;
	void *arena = malloc(arena_size);
	if (!arena) {
		free(doc);
		return kimg_error_set(&p->err, -ENOMEM, 0, "out of memory");
	}
	struct plan probe_pl;
	memset(&probe_pl, 0, sizeof probe_pl);
	struct oci_manifest_ctx mc = { &probe_pl, 0 };
	struct kimg_descriptor config;
	/* layers go to a scratch plan until the document is known to be a
	 * manifest of a wanted platform */
	struct kimg_oci_doc_visitor v = { p, oci_entry, NULL, &config };
	p->depth++;
	rc = kimg_oci_doc_parse(kimg_span_make(doc, len), arena, arena_size, &v, &p->err);
	p->depth--;
	if (rc == KIMG_OCI_MANIFEST) {
		struct kimg_oci_doc_visitor lv = { &mc, NULL, oci_layer, &config };
		rc = kimg_oci_doc_parse(kimg_span_make(doc, len), arena, arena_size, &lv, &p->err);
		struct plan *pl = rc >= 0 ? plan_new(p) : NULL;
		if (rc >= 0 && !pl)
			rc = kimg_error_set(&p->err, -KIMG_ELIMIT, 0, "more than %u images", PLANS_MAX);
		if (pl) {
			*pl = probe_pl;
			probe_pl.layers = NULL;
			snprintf(pl->config_digest, sizeof pl->config_digest, "%s", config.digest);
			snprintf(pl->config_member, sizeof pl->config_member, "blobs/sha256/%s", config.digest + 7);
			if (d && d->os[0])
				snprintf(pl->platform, sizeof pl->platform, "%s/%s%s%s", d->os, d->arch, d->variant[0] ? "/" : "",
					 d->variant);
			if (d && d->ref_name[0])
				snprintf(pl->ref, sizeof pl->ref, "%s", d->ref_name);
		}
	}
	free(probe_pl.layers);
	free(arena);
	free(doc);
	return rc < 0 ? rc : 0;
}

static int oci_entry(void *ctx, const struct kimg_descriptor *d)
{
	struct planner *p = ctx;
	/* buildx attaches attestations as manifests of platform unknown/unknown */
	if (strcmp(d->os, "unknown") == 0 && strcmp(d->arch, "unknown") == 0)
		return 0;
	if (p->want_platform && d->os[0] &&
	    !kimg_platform_matches(d->os, d->arch, d->variant, p->os, p->arch, p->variant))
		return 0;
	if (p->depth > INDEX_DEPTH_MAX)
		return kimg_error_set(&p->err, -KIMG_ELIMIT, 0, "index nested more than %d levels deep", INDEX_DEPTH_MAX);
	char member[100];
	snprintf(member, sizeof member, "blobs/sha256/%s", d->digest + 7);
	int rc = oci_doc(p, member, d->digest + 7, d);
	if (rc < 0) {
		/* one bad entry of an index: said, the others still read */
		char msg[400];
		snprintf(msg, sizeof msg, "manifest %.19s...: %s", d->digest, p->err.what);
		p->w->on_error(p->w->ctx, p->src->path, msg);
		struct plan *pl = plan_new(p);
		if (pl) {
			pl->bad = true;
			snprintf(pl->problem, sizeof pl->problem, "%s", msg);
		}
		return 0;
	}
	return 0;
}

/* The images of the source. Returns 0 or a negative error (p->err). */
static int plan_images(struct planner *p)
{
	if (!p->src->is_dir && tar_find(p->src, "manifest.json")) {
		unsigned char *doc;
		uint64_t len;
		int rc = blob_read_doc(p->src, "manifest.json", NULL, &doc, &len, &p->err);
		if (rc < 0)
			return rc;
		size_t arena_size = (size_t)len * 4 + 65536;
		void *arena = malloc(arena_size);
		rc = arena ? kimg_docker_manifest_parse(kimg_span_make(doc, len), arena, arena_size, docker_image, p, &p->err)
			   : kimg_error_set(&p->err, -ENOMEM, 0, "out of memory");
		free(arena);
		free(doc);
		return rc < 0 ? rc : 0;
	}
	if (!source_has(p->src, "oci-layout"))
		return kimg_error_set(&p->err, -KIMG_EFORMAT, 0, "no oci-layout: not an OCI image layout");
	unsigned char *layout;
	uint64_t len;
	int rc = blob_read_doc(p->src, "oci-layout", NULL, &layout, &len, &p->err);
	if (rc < 0)
		return rc;
	bool ok = memmem(layout, len, "imageLayoutVersion", 18) != NULL;
	free(layout);
	if (!ok)
		return kimg_error_set(&p->err, -KIMG_EFORMAT, 0, "oci-layout has no imageLayoutVersion");
	return oci_doc(p, "index.json", NULL, NULL);
}

/* ---- one image: config, pass one, pass two ---- */

struct pending {
	char *name, *link;
	uint8_t kind;                   /* enum kimg_fs_kind */
};

struct run {
	const struct source *src;
	const struct probe_image_walker *w;
	struct plan *pl;
	struct probe_image_info info;
	struct probe_image_layer_info *linfo;
	char **env;
	unsigned n_env;
	char platform[100];
	struct kimg_layer_fs *fs;
	uint8_t **cand;                 /* per layer, per entry: may hold device code */
	uint32_t *n_cand;
	struct probe_image_record *recs;
	size_t n_recs, cap_recs;
	uint64_t rec_bytes;
	struct probe_image_owners *owners;
	uint64_t *maybe_compat;         /* (layer << 32 | ordinal) of files named libcuda.so.* */
	size_t n_maybe_compat, cap_maybe_compat;
	struct probe_image_compat *compat;
	unsigned n_compat;
	struct sparse_entry *sparse;    /* large ELF files: what pass two may drop */
	size_t n_sparse, cap_sparse;
	/* the member being handed on */
	char member_name[KIMG_LAYER_FS_PATH_MAX * 2 + 80];
	struct probe_image_member member;
	bool member_set;
	unsigned long errors;
};

static _Thread_local struct run *current_run;

static void layer_label(const struct run *r, unsigned i, char *buf, size_t size)
{
	const struct layer_plan *l = &r->pl->layers[i];
	snprintf(buf, size, "layer %u of %u (%.19s%s)", i + 1, r->pl->n_layers, l->digest[0] ? l->digest : l->member,
		 strlen(l->digest[0] ? l->digest : l->member) > 19 ? "..." : "");
}

static void run_error(struct run *r, int layer, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void run_error(struct run *r, int layer, const char *fmt, ...)
{
	char msg[900], label[160] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (layer >= 0)
		layer_label(r, (unsigned)layer, label, sizeof label);
	char line[1100];
	snprintf(line, sizeof line, "%s%s%s", label, label[0] ? ": " : "", msg);
	r->w->on_error(r->w->ctx, r->info.name, line);
	r->errors++;
}

struct sparse_entry {
	unsigned layer;
	uint32_t ordinal;
	struct kimg_sparse_plan plan;
};

static const struct kimg_sparse_plan *sparse_plan_of(const struct run *r, unsigned layer, uint32_t ordinal)
{
	for (size_t i = 0; i < r->n_sparse; i++)
		if (r->sparse[i].layer == layer && r->sparse[i].ordinal == ordinal)
			return &r->sparse[i].plan;
	return NULL;
}

/* -- the config -- */

struct config_ctx {
	struct run *r;
	unsigned cap_env;
	char diff_ids[KIMG_IMAGE_LAYERS_MAX][72];
	unsigned n_diff_ids;
};

static int on_env(void *ctx, const char *entry)
{
	struct config_ctx *c = ctx;
	struct run *r = c->r;
	if (r->n_env == c->cap_env) {
		unsigned cap = c->cap_env ? c->cap_env * 2 : 32;
		char **e = realloc(r->env, cap * sizeof *e);
		if (!e)
			return -ENOMEM;
		r->env = e;
		c->cap_env = cap;
	}
	if (!(r->env[r->n_env] = strdup(entry)))
		return -ENOMEM;
	r->n_env++;
	return 0;
}

static int on_history(void *ctx, int layer, const char *created_by)
{
	struct config_ctx *c = ctx;
	if (layer >= 0 && (unsigned)layer < c->r->pl->n_layers)
		snprintf(c->r->pl->layers[layer].created_by, sizeof c->r->pl->layers[layer].created_by, "%s", created_by);
	return 0;
}

static int on_diff_id(void *ctx, unsigned index, const char *digest)
{
	struct config_ctx *c = ctx;
	if (index < KIMG_IMAGE_LAYERS_MAX) {
		snprintf(c->diff_ids[index], sizeof c->diff_ids[index], "%s", digest);
		c->n_diff_ids = index + 1;
	}
	return 0;
}

static int read_config(struct run *r)
{
	struct plan *pl = r->pl;
	unsigned char *doc;
	uint64_t len;
	struct kimg_error err = { 0, 0, "" };
	int rc = blob_read_doc(r->src, pl->config_member, pl->config_digest[0] ? pl->config_digest + 7 : NULL, &doc,
			       &len, &err);
	if (rc < 0) {
		run_error(r, -1, "config: %s", err.what);
		return rc;
	}
	struct config_ctx *c = calloc(1, sizeof *c);
	size_t arena_size = (size_t)len * 4 + 65536;
	void *arena = malloc(arena_size);
	struct kimg_image_config cfg;
	if (!c || !arena) {
		free(c);
		free(arena);
		free(doc);
		run_error(r, -1, "config: out of memory");
		return -ENOMEM;
	}
	c->r = r;
	struct kimg_image_config_visitor v = { c, on_env, on_history, on_diff_id };
	rc = kimg_image_config_parse(kimg_span_make(doc, len), arena, arena_size, &v, &cfg, &err);
	if (rc < 0) {
		run_error(r, -1, "config %.200s: %s", pl->config_member, err.what);
	} else {
		if (!pl->platform[0] && cfg.os[0])
			snprintf(pl->platform, sizeof pl->platform, "%s/%s%s%s", cfg.os, cfg.arch, cfg.variant[0] ? "/" : "",
				 cfg.variant);
		/* docker save's "ID/layer.tar" layers are checked by diff_id */
		for (unsigned i = 0; i < pl->n_layers; i++)
			if (!pl->layers[i].digest[0] && i < c->n_diff_ids)
				snprintf(pl->layers[i].digest, sizeof pl->layers[i].digest, "%s", c->diff_ids[i]);
		if (c->n_diff_ids && c->n_diff_ids != pl->n_layers)
			run_error(r, -1, "config lists %u diff_ids for %u layers", c->n_diff_ids, pl->n_layers);
	}
	free(c);
	free(arena);
	free(doc);
	return rc;
}

/* -- pass one: headers, heads, records; the blob's digest -- */

struct layer_source {
	int fd;
	uint64_t off, size, pos;
	unsigned char *buf;
	struct kimg_digest *sha;
};

static int64_t layer_read(void *ctx, const void **buf)
{
	struct layer_source *ls = ctx;
	uint64_t n = ls->size - ls->pos < CHUNK ? ls->size - ls->pos : CHUNK;
	if (n == 0)
		return 0;
	int rc = pread_all(ls->fd, ls->buf, (size_t)n, ls->off + ls->pos);
	if (rc < 0)
		return rc;
	if (ls->sha)
		kimg_digest_update(ls->sha, ls->buf, (size_t)n);
	ls->pos += n;
	*buf = ls->buf;
	return (int64_t)n;
}

struct pass1 {
	struct run *r;
	unsigned layer;
	struct pending *p;
	uint32_t n, cap;
	uint8_t *cand;
	uint64_t declared, limit;
	size_t first_rec;               /* this layer's records start here in r->recs */
	int stop;                       /* why the walk stopped: 0, or the error */
	char why[300];
	unsigned char head[HEAD_SIZE];
};

static enum kimg_fs_kind fs_kind(enum kimg_tar_entry_type t)
{
	switch (t) {
	case KIMG_TAR_ENTRY_FILE: return KIMG_FS_FILE;
	case KIMG_TAR_ENTRY_DIR: return KIMG_FS_DIR;
	case KIMG_TAR_ENTRY_SYMLINK: return KIMG_FS_SYMLINK;
	case KIMG_TAR_ENTRY_HARDLINK: return KIMG_FS_HARDLINK;
	default: return KIMG_FS_OTHER;
	}
}

static int read_rest(struct kimg_tar_stream *s, unsigned char *buf, uint64_t have, uint64_t size,
		     struct kimg_error *err)
{
	while (have < size) {
		int64_t n = kimg_tar_stream_read(s, buf + have, size - have, err);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		have += (uint64_t)n;
	}
	return have == size ? 0 : kimg_error_set(err, -KIMG_ETRUNC, have, "member ends before its declared size");
}

/* Read the rest of a large ELF file, keeping its section table and what
 * lies just before it (.shstrtab), and make its sparse plan. */
static void capture_plan(struct run *r, struct pass1 *p, uint32_t ordinal, struct kimg_tar_stream *s, uint64_t pos,
			 uint64_t size, uint64_t lo, uint64_t hi)
{
	unsigned char *win = malloc(hi - lo ? hi - lo : 1), *buf = malloc(CHUNK / 4 + 24);
	struct kimg_error err = { 0, 0, "" };
	bool ok = win && buf;
	struct kimg_sparse_wrapper *wr = NULL;
	unsigned n_wr = 0, cap_wr = 0;
	/* wrappers met in the head */
	for (uint64_t o = 0; ok && o + 24 <= pos; o += 8) {
		uint32_t m;
		memcpy(&m, p->head + o, 4);
		if (m == 0x466243B1u && n_wr < 1u << 20) {
			if (n_wr == cap_wr) {
				cap_wr = cap_wr ? cap_wr * 2 : 64;
				struct kimg_sparse_wrapper *nw = realloc(wr, cap_wr * sizeof *nw);
				if (!nw) {
					ok = false;
					break;
				}
				wr = nw;
			}
			wr[n_wr].off = o;
			memcpy(&wr[n_wr].data, p->head + o + 8, 8);
			n_wr++;
		}
	}
	if (ok && pos > lo) /* the window starts inside the head already read */
		memcpy(win, p->head + lo, (size_t)((pos < hi ? pos : hi) - lo));
	/* the rest, 8-aligned chunks after the head: wrappers (24 bytes) may
	 * straddle two chunks, so 24 bytes of the last one are carried over */
	unsigned char carry[24];
	uint64_t carry_at = pos >= 23 ? (pos - 23 + 7) / 8 * 8 : 0;
	size_t carried = (size_t)(pos - carry_at);
	memcpy(carry, p->head + carry_at, carried);
	while (ok && pos < hi) {
		int64_t n = kimg_tar_stream_read(s, buf + 24, CHUNK / 4, &err);
		if (n <= 0) {
			ok = false;
			break;
		}
		uint64_t a = pos > lo ? pos : lo, b = pos + (uint64_t)n < hi ? pos + (uint64_t)n : hi;
		if (a < b)
			memcpy(win + (a - lo), buf + 24 + (a - pos), (size_t)(b - a));
		/* [carry][chunk] from file offset carry_at */
		unsigned char *scan = buf + 24 - carried;
		memcpy(scan, carry, carried);
		uint64_t base = carry_at, len = carried + (uint64_t)n;
		const unsigned char magic[4] = { 0xB1, 0x43, 0x62, 0x46 };
		for (const unsigned char *q = scan; ok && (q = memmem(q, (size_t)(scan + len - q), magic, 4)) != NULL; q++) {
			uint64_t o = base + (uint64_t)(q - scan);
			if (o % 8 || o + 24 > base + len)
				continue;
			if (n_wr == cap_wr) {
				cap_wr = cap_wr ? cap_wr * 2 : 64;
				struct kimg_sparse_wrapper *nw = n_wr < 1u << 20 ? realloc(wr, cap_wr * sizeof *nw) : NULL;
				if (!nw) {
					ok = false;
					break;
				}
				wr = nw;
			}
			wr[n_wr].off = o;
			memcpy(&wr[n_wr].data, q + 8, 8);
			n_wr++;
		}
		/* keep the last 23 bytes (from an 8-aligned offset) for the next round */
		uint64_t end = base + len, keep_from = end > 23 ? (end - 23 + 7) / 8 * 8 : base;
		if (keep_from < base)
			keep_from = base;
		carried = (size_t)(end - keep_from);
		memcpy(carry, scan + (keep_from - base), carried);
		carry_at = keep_from;
		pos += (uint64_t)n;
	}
	struct kimg_sparse_plan plan;
	if (ok && kimg_sparse_plan_make(kimg_span_make(p->head, HEAD_SIZE), kimg_span_make(win, hi - lo), lo, size, wr,
					n_wr, &plan)) {
		if (r->n_sparse == r->cap_sparse) {
			size_t cap = r->cap_sparse ? r->cap_sparse * 2 : 8;
			struct sparse_entry *se = realloc(r->sparse, cap * sizeof *se);
			if (se) {
				r->sparse = se;
				r->cap_sparse = cap;
			}
		}
		if (r->n_sparse < r->cap_sparse)
			r->sparse[r->n_sparse++] = (struct sparse_entry){ p->layer, ordinal, plan };
	}
	free(win);
	free(buf);
	free(wr);
}

static uint64_t sparse_min = PROBE_IMAGE_SPARSE_MIN;

void probe_image_set_sparse_min(uint64_t bytes)
{
	sparse_min = bytes ? bytes : PROBE_IMAGE_SPARSE_MIN;
}

static int pass1_entry(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e, struct kimg_tar_stream *s)
{
	struct pass1 *p = ctx;
	struct run *r = p->r;
	if (e->size > 0)
		p->declared += (uint64_t)e->size;
	if (p->declared > p->limit) {
		snprintf(p->why, sizeof p->why, "its entries add up to more than %llu bytes (%u times its blob): "
			 "a decompression bomb? Not read", (unsigned long long)p->limit, PROBE_IMAGE_LAYER_RATIO_MAX);
		return p->stop = -KIMG_ELIMIT;
	}
	if (ordinal >= PROBE_IMAGE_ENTRIES_MAX) {
		snprintf(p->why, sizeof p->why, "more than %u entries: not read", PROBE_IMAGE_ENTRIES_MAX);
		return p->stop = -KIMG_ELIMIT;
	}
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 256;
		struct pending *np = realloc(p->p, cap * sizeof *np);
		if (np)
			p->p = np;
		uint8_t *nc = np ? realloc(p->cand, cap) : NULL;
		if (!nc) {
			snprintf(p->why, sizeof p->why, "out of memory");
			return p->stop = -ENOMEM;
		}
		p->cand = nc;
		p->cap = cap;
	}
	struct pending *pe = &p->p[p->n];
	pe->name = strdup(e->name);
	pe->link = e->link ? strdup(e->link) : NULL;
	pe->kind = (uint8_t)fs_kind(e->type);
	p->cand[p->n] = 0;
	p->n++;
	if (!pe->name) {
		snprintf(p->why, sizeof p->why, "out of memory");
		return p->stop = -ENOMEM;
	}
	if (e->type != KIMG_TAR_ENTRY_FILE || e->size == 0)
		return 0;
	const char *b = strrchr(e->name, '/');
	if (strncmp(b ? b + 1 : e->name, "libcuda.so.", 11) == 0) {
		if (r->n_maybe_compat == r->cap_maybe_compat) {
			size_t cap = r->cap_maybe_compat ? r->cap_maybe_compat * 2 : 8;
			uint64_t *m = realloc(r->maybe_compat, cap * sizeof *m);
			if (m) {
				r->maybe_compat = m;
				r->cap_maybe_compat = cap;
			}
		}
		if (r->n_maybe_compat < r->cap_maybe_compat)
			r->maybe_compat[r->n_maybe_compat++] = (uint64_t)p->layer << 32 | ordinal;
	}
	struct kimg_error err = { 0, 0, "" };
	int64_t hn = kimg_tar_stream_read(s, p->head, sizeof p->head, &err);
	if (hn < 0)
		return 0; /* the walk itself reports a damaged stream */
	const char *base = strrchr(e->name, '/');
	p->cand[p->n - 1] = r->w->want(r->w->ctx, base ? base + 1 : e->name, kimg_span_make(p->head, (uint64_t)hn));
	uint64_t lo, hi;
	if (p->cand[p->n - 1] && !r->w->whole_files && (uint64_t)e->size >= sparse_min &&
	    kimg_sparse_window(kimg_span_make(p->head, (uint64_t)hn), (uint64_t)e->size, &lo, &hi))
		capture_plan(r, p, ordinal, s, (uint64_t)hn, (uint64_t)e->size, lo, hi);
	char norm[KIMG_LAYER_FS_PATH_MAX];
	enum record_kind rk = kimg_layer_fs_normalize(e->name, false, false, norm, sizeof norm) > 0
			      ? probe_image_record_kind(norm) : RECORD_NONE;
	if (rk == RECORD_NONE)
		return 0;
	uint64_t size = (uint64_t)e->size;
	if (r->rec_bytes + size > PROBE_IMAGE_RECORDS_MAX) {
		run_error(r, (int)p->layer, "package records over %llu bytes: %.200s and later ones not read",
			  (unsigned long long)PROBE_IMAGE_RECORDS_MAX, norm);
		r->rec_bytes = PROBE_IMAGE_RECORDS_MAX;
		return 0;
	}
	unsigned char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, p->head, (size_t)hn);
	if (read_rest(s, buf, (uint64_t)hn, size, &err) < 0) {
		free(buf);
		return 0;
	}
	if (r->n_recs == r->cap_recs) {
		size_t cap = r->cap_recs ? r->cap_recs * 2 : 64;
		struct probe_image_record *nr = realloc(r->recs, cap * sizeof *nr);
		if (!nr) {
			free(buf);
			return 0;
		}
		r->recs = nr;
		r->cap_recs = cap;
	}
	/* path: the layer and ordinal until the final file system names it */
	struct probe_image_record *rec = &r->recs[r->n_recs++];
	rec->kind = rk;
	rec->bytes = buf;
	rec->size = size;
	rec->path = malloc(24);
	if (rec->path)
		snprintf(rec->path, 24, "%u:%u", p->layer, ordinal);
	r->rec_bytes += size;
	return 0;
}

static void pass1_drop(struct pass1 *p)
{
	for (uint32_t i = 0; i < p->n; i++) {
		free(p->p[i].name);
		free(p->p[i].link);
	}
	free(p->p);
	p->p = NULL;
	p->n = p->cap = 0;
}

static void drop_records_from(struct run *r, size_t first)
{
	for (size_t i = first; i < r->n_recs; i++) {
		free(r->recs[i].bytes);
		free(r->recs[i].path);
	}
	r->n_recs = first;
}

static void pass1_layer(struct run *r, unsigned i, unsigned char *chunk)
{
	struct layer_plan *l = &r->pl->layers[i];
	struct blob b;
	struct kimg_error err = { 0, 0, "" };
	if (blob_open(r->src, l->member, &b, &err) < 0) {
		run_error(r, (int)i, "%s", err.what);
		return;
	}
	if (l->size && l->size != b.size)
		run_error(r, (int)i, "blob is %llu bytes, the manifest says %llu", (unsigned long long)b.size,
			  (unsigned long long)l->size);
	l->size = b.size;
	struct kimg_digest sha;
	kimg_digest_init(&sha);
	struct layer_source ls = { b.fd, b.off, b.size, 0, chunk, &sha };
	struct pass1 *p = calloc(1, sizeof *p);
	if (!p) {
		blob_close(&b);
		run_error(r, (int)i, "out of memory");
		return;
	}
	p->r = r;
	p->layer = i;
	p->first_rec = r->n_recs;
	p->limit = b.size * PROBE_IMAGE_LAYER_RATIO_MAX;
	if (p->limit < PROBE_IMAGE_LAYER_FLOOR)
		p->limit = PROBE_IMAGE_LAYER_FLOOR;
	int rc = kimg_tar_stream_walk(layer_read, &ls, pass1_entry, p, &err);
	bool ok = rc >= 0 && !p->stop;
	if (p->stop)
		run_error(r, (int)i, "%s", p->why);
	else if (rc == -KIMG_ENOCODEC)
		run_error(r, (int)i, "%s (install libarchive: Debian libarchive13, or name it with KIMG_LIBARCHIVE)", err.what);
	else if (rc < 0)
		run_error(r, (int)i, "%s", err.what);
	if (ok) {
		/* the rest of the blob (tar padding libarchive did not ask for) */
		while (ls.pos < ls.size) {
			const void *unused;
			if (layer_read(&ls, &unused) < 0) {
				ok = false;
				run_error(r, (int)i, "cannot read the blob to its end");
				break;
			}
		}
	}
	blob_close(&b);
	if (ok && l->digest[0]) {
		char got[65];
		kimg_digest_hex(&sha, got);
		if (strcmp(got, l->digest + 7) != 0) {
			ok = false;
			run_error(r, (int)i, "digest mismatch: the blob's bytes are sha256:%s: layer not applied", got);
		}
	} else if (ok && !l->digest[0]) {
		char got[65];
		kimg_digest_hex(&sha, got);
		snprintf(l->digest, sizeof l->digest, "sha256:%s", got);
		run_error(r, (int)i, "no digest to check the blob against (no diff_id in the config): layer not applied");
		ok = false;
	}
	if (!ok && sha.evp) {
		char unused[65];
		kimg_digest_hex(&sha, unused); /* frees libcrypto's context */
	}
	if (!ok) {
		drop_records_from(r, p->first_rec);
		pass1_drop(p);
		free(p->cand);
		free(p);
		return;
	}
	unsigned problems = 0;
	for (uint32_t o = 0; o < p->n; o++) {
		const struct pending *pe = &p->p[o];
		int arc = kimg_layer_fs_add(r->fs, i, o, pe->name, (enum kimg_fs_kind)pe->kind, pe->link, &err);
		if (arc < 0 && ++problems <= PROBE_IMAGE_LAYER_PROBLEMS_SHOWN)
			run_error(r, (int)i, "%s", err.what);
	}
	if (problems > PROBE_IMAGE_LAYER_PROBLEMS_SHOWN)
		run_error(r, (int)i, "%u more entries not applied", problems - PROBE_IMAGE_LAYER_PROBLEMS_SHOWN);
	r->cand[i] = p->cand;
	r->n_cand[i] = p->n;
	l->read = true;
	pass1_drop(p);
	free(p);
}

/* -- pass two: the surviving files that may hold device code -- */

/* Give back the whole pages of [a, b) (read as zeros after). */
static void drop_pages(unsigned char *map, uint64_t a, uint64_t b)
{
	const uint64_t page = 4096;
	a = (a + page - 1) / page * page;
	b = b / page * page;
	if (a < b)
		madvise(map + a, (size_t)(b - a), MADV_DONTNEED);
}

/* A large ELF file into map (anonymous, never-touched pages cost nothing),
 * giving back, as the stream passes them, the ranges its plan drops and
 * the large fatbin payloads its headers announce. */
static int read_sparse(struct kimg_tar_stream *s, unsigned char *map, uint64_t size, const struct kimg_sparse_plan *plan,
		       struct kimg_error *err)
{
	uint64_t have = 0, done_to = 0; /* plan->drop[di] given back up to done_to */
	unsigned di = 0, fi = 0;
	struct kimg_fatbin_stream fs;
	struct kimg_sparse_range pending = { 0, 0 };
	bool in_fatbin = false;
	while (have < size) {
		uint64_t want = size - have < CHUNK ? size - have : CHUNK;
		int64_t n = kimg_tar_stream_read(s, map + have, want, err);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		have += (uint64_t)n;
		/* code sections the stream has passed */
		while (di < plan->n_drop && plan->drop[di].off < have) {
			const struct kimg_sparse_range *d = &plan->drop[di];
			uint64_t end = d->off + d->size, from = d->off > done_to ? d->off : done_to / 4096 * 4096;
			drop_pages(map, from, end < have ? end : have);
			if (end > have) {
				done_to = have;
				break;
			}
			di++;
		}
		/* fatbin payloads, found by their headers */
		for (;;) {
			if (pending.size) {
				uint64_t end = pending.off + pending.size;
				drop_pages(map, pending.off, end < have ? end : have);
				if (end > have)
					break;
				pending.size = 0;
			}
			if (!in_fatbin) {
				if (fi >= plan->n_fatbin || plan->fatbin[fi].off >= have)
					break;
				kimg_fatbin_stream_begin(&fs, plan->fatbin[fi].off, plan->fatbin[fi].size);
				in_fatbin = true;
			}
			if (kimg_fatbin_stream_next(&fs, kimg_span_make(map, have), have, &pending) == 1)
				continue;
			if (!fs.done && fs.cont < fs.sec_end)
				break; /* more bytes needed */
			in_fatbin = false;
			fi++;
		}
	}
	if (have != size)
		return kimg_error_set(err, -KIMG_ETRUNC, have, "member ends before its declared size");
	return 0;
}

struct pass2 {
	struct run *r;
	unsigned layer;
	uint32_t last;                  /* the last entry to hand on: the rest of the layer is not inflated */
};

#define PASS2_DONE 1

static int pass2_entry(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e, struct kimg_tar_stream *s)
{
	struct pass2 *p = ctx;
	struct run *r = p->r;
	if (ordinal > p->last)
		return PASS2_DONE;
	if (e->type != KIMG_TAR_ENTRY_FILE || ordinal >= r->n_cand[p->layer] || !r->cand[p->layer][ordinal])
		return ordinal == p->last ? PASS2_DONE : 0;
	const char *as = kimg_layer_fs_judged_as(r->fs, p->layer, ordinal);
	if (!as)
		return 0;
	snprintf(r->member_name, sizeof r->member_name, "%s:%s", r->info.name, as);
	uint64_t size = e->size > 0 ? (uint64_t)e->size : 0;
	if (size > KIMG_TAR_MEMBER_MAX_DEFAULT) {
		run_error(r, (int)p->layer, "%s: larger than %llu bytes: not read", as,
			  (unsigned long long)KIMG_TAR_MEMBER_MAX_DEFAULT);
		return 0;
	}
	const struct kimg_sparse_plan *plan = sparse_plan_of(r, p->layer, ordinal);
	unsigned char *buf = plan ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
				  : malloc(size ? size : 1);
	if (buf == MAP_FAILED)
		buf = NULL;
	struct kimg_error err = { 0, 0, "" };
	if (!buf) {
		run_error(r, (int)p->layer, "%s: out of memory for %llu bytes", as, (unsigned long long)size);
		return 0;
	}
	int rrc = plan ? read_sparse(s, buf, size, plan, &err) : read_rest(s, buf, 0, size, &err);
	if (rrc < 0) {
		if (plan)
			munmap(buf, size);
		else
			free(buf);
		r->w->on_error(r->w->ctx, r->member_name, err.what);
		r->errors++;
		return 0;
	}
	r->member = (struct probe_image_member){ &r->info, as, p->layer };
	r->member_set = true;
	r->w->on_file(r->w->ctx, r->member_name, kimg_span_make(buf, size));
	r->member_set = false;
	if (plan)
		munmap(buf, size);
	else
		free(buf);
	return ordinal == p->last ? PASS2_DONE : 0;
}

static void pass2_layer(struct run *r, unsigned i, unsigned char *chunk)
{
	struct layer_plan *l = &r->pl->layers[i];
	bool any = false;
	uint32_t last = 0;
	for (uint32_t o = 0; o < r->n_cand[i]; o++)
		if (r->cand[i][o] && kimg_layer_fs_judged_as(r->fs, i, o)) {
			any = true;
			last = o;
		}
	if (!any)
		return;
	struct blob b;
	struct kimg_error err = { 0, 0, "" };
	if (blob_open(r->src, l->member, &b, &err) < 0) {
		run_error(r, (int)i, "%s", err.what);
		return;
	}
	struct layer_source ls = { b.fd, b.off, b.size, 0, chunk, NULL };
	struct pass2 p = { r, i, last };
	int rc = kimg_tar_stream_walk(layer_read, &ls, pass2_entry, &p, &err);
	if (rc < 0)
		run_error(r, (int)i, "second read: %s", err.what);
	blob_close(&b);
}

/* Records named by their final path; the others dropped. */
static void settle_records(struct run *r)
{
	size_t kept = 0;
	for (size_t i = 0; i < r->n_recs; i++) {
		struct probe_image_record *rec = &r->recs[i];
		unsigned layer, ordinal;
		const char *as = rec->path && sscanf(rec->path, "%u:%u", &layer, &ordinal) == 2
				 ? kimg_layer_fs_judged_as(r->fs, layer, ordinal) : NULL;
		free(rec->path);
		rec->path = as ? strdup(as) : NULL;
		if (!rec->path || probe_image_record_kind(rec->path) != rec->kind) {
			free(rec->bytes);
			free(rec->path);
			continue;
		}
		r->recs[kept++] = *rec;
	}
	r->n_recs = kept;
}

/* The compat libcuda files that survive, by their final names. */
static void find_compat(struct run *r)
{
	if (!r->n_maybe_compat || !(r->compat = calloc(r->n_maybe_compat, sizeof *r->compat)))
		return;
	for (size_t i = 0; i < r->n_maybe_compat; i++) {
		const char *as = kimg_layer_fs_judged_as(r->fs, (unsigned)(r->maybe_compat[i] >> 32),
							 (uint32_t)r->maybe_compat[i]);
		struct probe_image_compat *c = &r->compat[r->n_compat];
		if (as && kimg_compat_lib_identify(as, &c->lib)) {
			snprintf(c->path, sizeof c->path, "%s", as);
			r->n_compat++;
		}
	}
}

static void run_image(const struct source *src, const struct probe_image_walker *w, struct plan *pl, bool many)
{
	struct run *r = calloc(1, sizeof *r);
	unsigned char *chunk = malloc(CHUNK);
	if (!r || !chunk) {
		free(r);
		free(chunk);
		w->on_error(w->ctx, src->path, "out of memory");
		return;
	}
	r->src = src;
	r->w = w;
	r->pl = pl;
	r->info.input = src->path;
	r->info.format = src->format;
	snprintf(pl->name, sizeof pl->name, "%s", src->path);
	r->info.name = pl->name;
	if (read_config(r) < 0)
		goto out;
	if (w->platform && pl->platform[0]) {
		char os[32], arch[32], var[32], hos[32], harch[32], hvar[32];
		if (kimg_platform_parse(w->platform, os, arch, var) == 0 &&
		    kimg_platform_parse(pl->platform, hos, harch, hvar) == 0 &&
		    !kimg_platform_matches(hos, harch, hvar, os, arch, var))
			goto out; /* docker save of another platform */
	}
	if (many)
		snprintf(pl->name, sizeof pl->name, "%s[%s]", src->path, pl->platform[0] ? pl->platform : "?");
	r->info.platform = pl->platform;
	r->info.ref = pl->ref;
	r->info.config_digest = pl->config_digest;
	r->info.env = (const char *const *)r->env;
	r->info.n_env = r->n_env;
	r->linfo = calloc(pl->n_layers ? pl->n_layers : 1, sizeof *r->linfo);
	r->cand = calloc(pl->n_layers ? pl->n_layers : 1, sizeof *r->cand);
	r->n_cand = calloc(pl->n_layers ? pl->n_layers : 1, sizeof *r->n_cand);
	r->fs = kimg_layer_fs_new(pl->n_layers, PROBE_IMAGE_ENTRIES_MAX);
	r->owners = probe_image_owners_new();
	if (!r->linfo || !r->cand || !r->n_cand || !r->fs || !r->owners) {
		run_error(r, -1, "out of memory");
		goto out;
	}
	r->info.layers = r->linfo;
	r->info.n_layers = pl->n_layers;
	for (unsigned i = 0; i < pl->n_layers; i++)
		pass1_layer(r, i, chunk);
	for (unsigned i = 0; i < pl->n_layers; i++)
		r->linfo[i] = (struct probe_image_layer_info){ pl->layers[i].digest, pl->layers[i].media_type,
							       pl->layers[i].size, pl->layers[i].created_by, pl->layers[i].read };
	if (kimg_layer_fs_finish(r->fs) < 0) {
		run_error(r, -1, "out of memory");
		goto out;
	}
	settle_records(r);
	find_compat(r);
	r->info.compat = r->compat;
	r->info.n_compat = r->n_compat;
	if (w->on_image)
		w->on_image(w->ctx, &r->info);
	probe_image_owners_build(r->owners, r->recs, r->n_recs);
	struct run *outer = current_run;
	current_run = r;
	for (unsigned i = 0; i < pl->n_layers; i++)
		if (pl->layers[i].read)
			pass2_layer(r, i, chunk);
	current_run = outer;
out:
	for (unsigned i = 0; r->cand && i < pl->n_layers; i++)
		free(r->cand[i]);
	free(r->cand);
	free(r->n_cand);
	free(r->linfo);
	free(r->maybe_compat);
	free(r->compat);
	free(r->sparse);
	for (unsigned i = 0; i < r->n_env; i++)
		free(r->env[i]);
	free(r->env);
	drop_records_from(r, 0);
	free(r->recs);
	probe_image_owners_free(r->owners);
	kimg_layer_fs_free(r->fs);
	free(r);
	free(chunk);
}

bool probe_image_detect(const char *path)
{
	struct stat st;
	if (kimg_file_stat(path, &st, true) != 0)
		return false;
	if (S_ISDIR(st.st_mode)) {
		char p[KIMG_LAYER_FS_PATH_MAX];
		struct stat a, b;
		snprintf(p, sizeof p, "%s/oci-layout", path);
		bool layout = kimg_file_stat(p, &a, true) == 0 && S_ISREG(a.st_mode);
		snprintf(p, sizeof p, "%s/index.json", path);
		return layout && kimg_file_stat(p, &b, true) == 0 && S_ISREG(b.st_mode);
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)(2 * KIMG_TAR_BLOCK))
		return false;
	/* a tar's first header, then its member names */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	uint8_t blk[KIMG_TAR_BLOCK];
	struct kimg_tar_header *h = malloc(sizeof *h);
	bool tar = h && pread_all(fd, blk, sizeof blk, 0) == 0 &&
		   kimg_tar_header_parse(kimg_span_make(blk, sizeof blk), h, NULL) == 1;
	free(h);
	if (!tar) {
		close(fd);
		return false;
	}
	struct source s;
	memset(&s, 0, sizeof s);
	s.fd = fd;
	s.path = path;
	struct kimg_error err = { 0, 0, "" };
	bool image = index_tar(&s, &err) == 0 && (tar_find(&s, "manifest.json") ||
						  (tar_find(&s, "oci-layout") && tar_find(&s, "index.json")));
	source_close(&s);
	return image;
}

int probe_image_walk(const char *path, const struct probe_image_walker *w)
{
	struct source src;
	struct kimg_error err = { 0, 0, "" };
	if (source_open(path, &src, &err) < 0) {
		w->on_error(w->ctx, path, err.what);
		source_close(&src);
		return 0;
	}
	struct planner p;
	memset(&p, 0, sizeof p);
	p.src = &src;
	p.w = w;
	if (w->platform) {
		if (kimg_platform_parse(w->platform, p.os, p.arch, p.variant) < 0) {
			w->on_error(w->ctx, path, "--platform must be OS/ARCH[/VARIANT], e.g. linux/arm64");
			source_close(&src);
			return 0;
		}
		p.want_platform = true;
	}
	int rc = plan_images(&p);
	if (rc < 0)
		w->on_error(w->ctx, path, p.err.what);
	int walked = 0;
	unsigned good = 0;
	for (unsigned i = 0; i < p.n; i++)
		good += !p.plans[i].bad;
	for (unsigned i = 0; i < p.n; i++) {
		if (p.plans[i].bad)
			continue;
		run_image(&src, w, &p.plans[i], good > 1);
		walked++;
	}
	if (rc >= 0 && walked == 0 && p.n == 0)
		w->on_error(w->ctx, path, w->platform ? "no image of the platform asked (--platform)" : "no image in it");
	plans_free(&p);
	source_close(&src);
	return walked;
}

/* ---- provenance and owners of the member being handed on ---- */

const struct probe_image_member *probe_image_member_of(const char *path)
{
	const struct run *r = current_run;
	if (!r || !r->member_set || strcmp(path, r->member_name) != 0)
		return NULL;
	return &r->member;
}

bool probe_image_owner(const char *path, const struct kimg_pkg **pkg)
{
	const struct run *r = current_run;
	size_t n = r ? strlen(r->info.name) : 0;
	if (!r || strncmp(path, r->info.name, n) != 0 || path[n] != ':')
		return false;
	*pkg = probe_image_owners_lookup(r->owners, path + n + 1);
	return true;
}

void probe_image_text_origin(FILE *f, const char *path)
{
	const struct probe_image_member *m = probe_image_member_of(path);
	if (!m)
		return;
	const struct probe_image_layer_info *l = &m->image->layers[m->layer];
	struct probe_esc e;
	char cb[160];
	snprintf(cb, sizeof cb, "%s%s", l->created_by, strlen(l->created_by) > 140 ? "..." : "");
	if (strlen(l->created_by) > 140)
		snprintf(cb + 140, sizeof cb - 140, "...");
	fprintf(f, "  layer: %u of %u, %.19s...%s%s\n", m->layer + 1, m->image->n_layers, l->digest,
		cb[0] ? ", " : "", cb[0] ? probe_esc(&e, cb) : "");
}

void probe_image_json_origin(struct kimg_json *j, const char *path)
{
	const struct probe_image_member *m = probe_image_member_of(path);
	if (!m)
		return;
	const struct probe_image_layer_info *l = &m->image->layers[m->layer];
	kimg_json_key(j, "image");
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "name", m->image->name);
	kimg_json_kv_string(j, "path", m->path);
	kimg_json_kv_uint(j, "layer", m->layer + 1);
	kimg_json_kv_string(j, "layer_digest", l->digest);
	kimg_json_kv_string(j, "created_by", l->created_by[0] ? l->created_by : NULL);
	kimg_json_end_object(j);
}
