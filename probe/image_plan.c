/* SPDX-License-Identifier: Apache-2.0 */
/* Which images a source holds, and their blobs (image_int.h): docker
 * archive's manifest.json, or an OCI layout's index.json followed through
 * nested indexes to its manifests (the --platform asked, attestations
 * left out), each made one plan: config, layers, platform, reference. The
 * documents are parsed by core/image_format.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image_format.h"
#include "image_int.h"
#include "probe.h"

#define INDEX_DEPTH_MAX 4           /* an index of indexes of ... */
#define PLANS_MAX 256u

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

void image_plans_free(struct planner *p)
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
	int rc = image_blob_read_doc(p->src, member, want_hex, &doc, &len, &p->err);
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
int image_plan_all(struct planner *p)
{
	if (!p->src->is_dir && image_tar_find(p->src, "manifest.json")) {
		unsigned char *doc;
		uint64_t len;
		int rc = image_blob_read_doc(p->src, "manifest.json", NULL, &doc, &len, &p->err);
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
	if (!image_source_has(p->src, "oci-layout"))
		return kimg_error_set(&p->err, -KIMG_EFORMAT, 0, "no oci-layout: not an OCI image layout");
	unsigned char *layout;
	uint64_t len;
	int rc = image_blob_read_doc(p->src, "oci-layout", NULL, &layout, &len, &p->err);
	if (rc < 0)
		return rc;
	bool ok = memmem(layout, len, "imageLayoutVersion", 18) != NULL;
	free(layout);
	if (!ok)
		return kimg_error_set(&p->err, -KIMG_EFORMAT, 0, "oci-layout has no imageLayoutVersion");
	return oci_doc(p, "index.json", NULL, NULL);
}

