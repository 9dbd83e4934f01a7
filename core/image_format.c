/* SPDX-License-Identifier: Apache-2.0 */
/* Image index, manifest, manifest.json and config documents
 * (image_format.h): which keys are read, and how each is checked. */
#include "image_format.h"

#include <stdio.h>
#include <string.h>

static bool copy_str(char *dst, size_t size, const struct kimg_jval *v)
{
	const char *s = kimg_jval_string(v);
	if (!s) {
		dst[0] = '\0';
		return v == NULL || v->type == KIMG_JNULL;
	}
	if (v->len >= size || memchr(s, 0, v->len))
		return false;
	memcpy(dst, s, v->len + 1);
	return true;
}

int kimg_digest_parse(const char *digest, char hex[65], struct kimg_error *err)
{
	if (!digest)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "no digest");
	const char *colon = strchr(digest, ':');
	if (!colon || colon == digest)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "digest '%.80s' is not ALGORITHM:HEX", digest);
	if ((size_t)(colon - digest) != 6 || memcmp(digest, "sha256", 6) != 0)
		return kimg_error_set(err, -KIMG_ENOTSUP, 0, "digest algorithm '%.*s' is not supported (sha256 only)",
				      (int)(colon - digest > 20 ? 20 : colon - digest), digest);
	const char *h = colon + 1;
	size_t n = strlen(h);
	if (n != 64 || strspn(h, "0123456789abcdef") != 64)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "digest '%.80s' is not sha256 with 64 lowercase hex digits",
				      digest);
	if (hex)
		memcpy(hex, h, 65);
	return 0;
}

static int parse_root(struct kimg_jdoc *jd, struct kimg_span doc, void *arena, size_t arena_size, const char *what,
		      struct kimg_error *err)
{
	if (doc.size > KIMG_IMAGE_DOC_MAX)
		return kimg_error_set(err, -KIMG_ELIMIT, 0, "%s larger than %llu bytes", what,
				      (unsigned long long)KIMG_IMAGE_DOC_MAX);
	kimg_jdoc_init(jd, arena, arena_size);
	int rc = kimg_jdoc_parse(jd, doc, err);
	if (rc < 0) {
		char why[sizeof err->what];
		snprintf(why, sizeof why, "%s", err ? err->what : "");
		return kimg_error_set(err, rc, err ? err->offset : 0, "%s is not valid JSON: %s", what, why);
	}
	return 0;
}

static int descriptor_of(const struct kimg_jval *v, struct kimg_descriptor *d, const char *what,
			 struct kimg_error *err)
{
	memset(d, 0, sizeof *d);
	if (!v || v->type != KIMG_JOBJECT)
		return kimg_error_set(err, -KIMG_EFORMAT, v ? v->offset : 0, "%s: descriptor is not an object", what);
	const struct kimg_jval *p = kimg_jval_get(v, "platform");
	const struct kimg_jval *ann = kimg_jval_get(v, "annotations");
	int64_t size;
	if (!copy_str(d->media_type, sizeof d->media_type, kimg_jval_get(v, "mediaType")) ||
	    !copy_str(d->digest, sizeof d->digest, kimg_jval_get(v, "digest")) ||
	    !copy_str(d->os, sizeof d->os, kimg_jval_get(p, "os")) ||
	    !copy_str(d->arch, sizeof d->arch, kimg_jval_get(p, "architecture")) ||
	    !copy_str(d->variant, sizeof d->variant, kimg_jval_get(p, "variant")) ||
	    !copy_str(d->ref_name, sizeof d->ref_name, kimg_jval_get(ann, "org.opencontainers.image.ref.name")))
		return kimg_error_set(err, -KIMG_EFORMAT, v->offset, "%s: a descriptor field is not a string or too long",
				      what);
	int rc = kimg_digest_parse(d->digest, NULL, err);
	if (rc < 0) {
		char why[sizeof err->what];
		snprintf(why, sizeof why, "%s", err ? err->what : "");
		return kimg_error_set(err, rc, v->offset, "%s: %s", what, why);
	}
	const struct kimg_jval *sz = kimg_jval_get(v, "size");
	if (sz) {
		if (!kimg_jval_int(sz, &size) || size < 0)
			return kimg_error_set(err, -KIMG_EFORMAT, sz->offset, "%s: size is not a byte count", what);
		d->size = (uint64_t)size;
		d->has_size = true;
	}
	return 0;
}

int kimg_oci_doc_parse(struct kimg_span doc, void *arena, size_t arena_size, const struct kimg_oci_doc_visitor *v,
		       struct kimg_error *err)
{
	struct kimg_jdoc jd;
	int rc = parse_root(&jd, doc, arena, arena_size, "manifest", err);
	if (rc < 0)
		return rc;
	const struct kimg_jval *root = jd.root;
	if (root->type != KIMG_JOBJECT)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "manifest: not a JSON object");
	const struct kimg_jval *manifests = kimg_jval_get(root, "manifests");
	const struct kimg_jval *layers = kimg_jval_get(root, "layers");
	struct kimg_descriptor d;
	if (manifests) {
		if (manifests->type != KIMG_JARRAY)
			return kimg_error_set(err, -KIMG_EFORMAT, manifests->offset, "index: \"manifests\" is not an array");
		for (const struct kimg_jval *m = manifests->child; m; m = m->next) {
			if ((rc = descriptor_of(m, &d, "index entry", err)) < 0)
				return rc;
			if (v->on_manifest && (rc = v->on_manifest(v->ctx, &d)) != 0)
				return rc;
		}
		return KIMG_OCI_INDEX;
	}
	const struct kimg_jval *config = kimg_jval_get(root, "config");
	if (!config || !layers)
		return kimg_error_set(err, -KIMG_EFORMAT, 0,
				      "manifest: neither an index (\"manifests\") nor a manifest (\"config\", \"layers\")");
	if (layers->type != KIMG_JARRAY)
		return kimg_error_set(err, -KIMG_EFORMAT, layers->offset, "manifest: \"layers\" is not an array");
	if (layers->count > KIMG_IMAGE_LAYERS_MAX)
		return kimg_error_set(err, -KIMG_ELIMIT, layers->offset, "manifest lists %u layers, more than kimg reads (%u)",
				      layers->count, KIMG_IMAGE_LAYERS_MAX);
	if ((rc = descriptor_of(config, &d, "manifest config", err)) < 0)
		return rc;
	if (v->config)
		*v->config = d;
	unsigned i = 0;
	for (const struct kimg_jval *l = layers->child; l; l = l->next, i++) {
		char what[32];
		snprintf(what, sizeof what, "layer %u", i + 1);
		if ((rc = descriptor_of(l, &d, what, err)) < 0)
			return rc;
		if (v->on_layer && (rc = v->on_layer(v->ctx, i, &d)) != 0)
			return rc;
	}
	return KIMG_OCI_MANIFEST;
}

int kimg_docker_manifest_parse(struct kimg_span doc, void *arena, size_t arena_size, kimg_docker_image_fn fn,
			       void *ctx, struct kimg_error *err)
{
	struct kimg_jdoc jd;
	int rc = parse_root(&jd, doc, arena, arena_size, "manifest.json", err);
	if (rc < 0)
		return rc;
	if (jd.root->type != KIMG_JARRAY)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "manifest.json: not a JSON array");
	unsigned index = 0;
	for (const struct kimg_jval *img = jd.root->child; img; img = img->next, index++) {
		const struct kimg_jval *config = kimg_jval_get(img, "Config"), *layers = kimg_jval_get(img, "Layers");
		const struct kimg_jval *tags = kimg_jval_get(img, "RepoTags");
		if (!kimg_jval_string(config) || !layers || layers->type != KIMG_JARRAY)
			return kimg_error_set(err, -KIMG_EFORMAT, img->offset,
					      "manifest.json image %u: no \"Config\" string or \"Layers\" array", index + 1);
		if (layers->count > KIMG_IMAGE_LAYERS_MAX)
			return kimg_error_set(err, -KIMG_ELIMIT, layers->offset,
					      "manifest.json image %u lists %u layers, more than kimg reads (%u)", index + 1,
					      layers->count, KIMG_IMAGE_LAYERS_MAX);
		const char *paths[KIMG_IMAGE_LAYERS_MAX];
		unsigned n = 0;
		for (const struct kimg_jval *l = layers->child; l; l = l->next) {
			if (!kimg_jval_string(l) || memchr(l->str, 0, l->len))
				return kimg_error_set(err, -KIMG_EFORMAT, l->offset,
						      "manifest.json image %u: layer %u is not a path", index + 1, n + 1);
			paths[n++] = l->str;
		}
		const struct kimg_jval *tag = kimg_jval_at(tags, 0);
		if (fn && (rc = fn(ctx, index, config->str, kimg_jval_string(tag), paths, n)) != 0)
			return rc;
	}
	return (int)index;
}

int kimg_image_config_parse(struct kimg_span doc, void *arena, size_t arena_size, const struct kimg_image_config_visitor *v,
			    struct kimg_image_config *out, struct kimg_error *err)
{
	struct kimg_jdoc jd;
	int rc = parse_root(&jd, doc, arena, arena_size, "image config", err);
	memset(out, 0, sizeof *out);
	if (rc < 0)
		return rc;
	const struct kimg_jval *root = jd.root;
	if (root->type != KIMG_JOBJECT)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "image config: not a JSON object");
	if (!copy_str(out->os, sizeof out->os, kimg_jval_get(root, "os")) ||
	    !copy_str(out->arch, sizeof out->arch, kimg_jval_get(root, "architecture")) ||
	    !copy_str(out->variant, sizeof out->variant, kimg_jval_get(root, "variant")))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "image config: os/architecture/variant not a short string");
	const struct kimg_jval *env = kimg_jval_path(root, "config.Env");
	if (env && env->type != KIMG_JNULL) {
		if (env->type != KIMG_JARRAY)
			return kimg_error_set(err, -KIMG_EFORMAT, env->offset, "image config: config.Env is not an array");
		for (const struct kimg_jval *e = env->child; e; e = e->next) {
			if (!kimg_jval_string(e) || memchr(e->str, 0, e->len))
				return kimg_error_set(err, -KIMG_EFORMAT, e->offset, "image config: an Env entry is not a string");
			out->n_env++;
			if (v && v->on_env && (rc = v->on_env(v->ctx, e->str)) != 0)
				return rc;
		}
	}
	const struct kimg_jval *hist = kimg_jval_get(root, "history");
	if (hist && hist->type != KIMG_JNULL) {
		if (hist->type != KIMG_JARRAY)
			return kimg_error_set(err, -KIMG_EFORMAT, hist->offset, "image config: history is not an array");
		for (const struct kimg_jval *h = hist->child; h; h = h->next) {
			const struct kimg_jval *empty = kimg_jval_get(h, "empty_layer");
			const struct kimg_jval *cb = kimg_jval_get(h, "created_by");
			if (h->type != KIMG_JOBJECT || (cb && !kimg_jval_string(cb) && cb->type != KIMG_JNULL))
				return kimg_error_set(err, -KIMG_EFORMAT, h->offset, "image config: a history entry is malformed");
			bool is_empty = empty && empty->type == KIMG_JTRUE;
			int layer = is_empty ? -1 : (int)out->n_layer_history;
			out->n_history++;
			out->n_layer_history += !is_empty;
			const char *text = kimg_jval_string(cb);
			if (v && v->on_history && (rc = v->on_history(v->ctx, layer, text ? text : "")) != 0)
				return rc;
		}
	}
	const struct kimg_jval *ids = kimg_jval_path(root, "rootfs.diff_ids");
	if (ids && ids->type != KIMG_JNULL) {
		if (ids->type != KIMG_JARRAY)
			return kimg_error_set(err, -KIMG_EFORMAT, ids->offset, "image config: rootfs.diff_ids is not an array");
		for (const struct kimg_jval *d = ids->child; d; d = d->next) {
			const char *s = kimg_jval_string(d);
			if (!s || kimg_digest_parse(s, NULL, NULL) < 0)
				return kimg_error_set(err, -KIMG_EFORMAT, d->offset, "image config: diff_id %u is not a sha256 digest",
						      out->n_diff_ids + 1);
			if (v && v->on_diff_id && (rc = v->on_diff_id(v->ctx, out->n_diff_ids, s)) != 0)
				return rc;
			out->n_diff_ids++;
		}
	}
	return 0;
}

int kimg_platform_parse(const char *text, char os[32], char arch[32], char variant[32])
{
	char buf[100];
	if (!text || strlen(text) >= sizeof buf)
		return -KIMG_EFORMAT;
	snprintf(buf, sizeof buf, "%s", text);
	char *a = strchr(buf, '/');
	if (!a || a == buf || !a[1])
		return -KIMG_EFORMAT;
	*a++ = '\0';
	char *var = strchr(a, '/');
	if (var) {
		*var++ = '\0';
		if (!*var || strchr(var, '/'))
			return -KIMG_EFORMAT;
	}
	if (strlen(buf) >= 32 || strlen(a) >= 32 || (var && strlen(var) >= 32))
		return -KIMG_EFORMAT;
	snprintf(os, 32, "%s", buf);
	snprintf(arch, 32, "%s", a);
	snprintf(variant, 32, "%s", var ? var : "");
	return 0;
}

static const char *arch_norm(const char *a)
{
	if (strcmp(a, "x86_64") == 0 || strcmp(a, "x86-64") == 0)
		return "amd64";
	if (strcmp(a, "aarch64") == 0)
		return "arm64";
	return a;
}

bool kimg_platform_matches(const char *os, const char *arch, const char *variant, const char *want_os,
			   const char *want_arch, const char *want_variant)
{
	if (strcmp(os, want_os) != 0 || strcmp(arch_norm(arch), arch_norm(want_arch)) != 0)
		return false;
	return !variant[0] || !want_variant[0] || strcmp(variant, want_variant) == 0;
}
