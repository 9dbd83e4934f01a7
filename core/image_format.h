/* SPDX-License-Identifier: Apache-2.0 */
/* Container image metadata: the documents that say which blobs make an
 * image, read from bytes (the probe finds and hashes the blobs).
 *
 *  - OCI image layout: "oci-layout" ({"imageLayoutVersion": "1.0.0"}),
 *    "index.json" (an image index), blobs/<alg>/<hex>
 *    (opencontainers/image-spec image-layout.md).
 *  - OCI image index and manifest (image-index.md, manifest.md), and the
 *    Docker "application/vnd.docker.distribution.manifest.list.v2+json" /
 *    "...manifest.v2+json" documents of the same shape.
 *  - docker save / podman save "manifest.json": an array of
 *    {"Config": PATH, "RepoTags": [...], "Layers": [PATH, ...]} whose
 *    paths name members of the same tar (moby/moby image/tarexport).
 *  - The image config (config.md): "os", "architecture", "variant",
 *    "config.Env", "history" [{"created_by", "empty_layer"}],
 *    "rootfs.diff_ids".
 *
 * Pure and bounded: each document is parsed by core/json_read.h into an
 * arena the caller gives (about 4 times the document), every string is
 * checked for size, and nothing is allocated. */
#ifndef KIMG_IMAGE_FORMAT_H
#define KIMG_IMAGE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "json_read.h"
#include "span.h"

/* Layers one image may have: Docker's overlay2 stops at 128 (moby
 * daemon/graphdriver/overlay2 maxDepth), so this is far beyond any real
 * image and keeps a hostile manifest from costing more than it says. */
#define KIMG_IMAGE_LAYERS_MAX 4096u
/* A manifest, index or config kimg reads at most. */
#define KIMG_IMAGE_DOC_MAX ((uint64_t)16 << 20)

struct kimg_descriptor {
	char media_type[128];        /* "" when absent */
	char digest[72];             /* "sha256:" and 64 lowercase hex digits */
	uint64_t size;
	bool has_size;
	char os[32], arch[32], variant[32]; /* "platform", "" when absent */
	char ref_name[128];          /* annotation org.opencontainers.image.ref.name */
};

/* A digest kimg can check: "sha256:" and 64 lowercase hex digits. hex
 * (may be NULL) gets the 64 digits. -KIMG_ENOTSUP for another algorithm
 * (sha512), -KIMG_EFORMAT for anything else. */
int kimg_digest_parse(const char *digest, char hex[65], struct kimg_error *err);

enum kimg_oci_doc_kind {
	KIMG_OCI_INDEX = 1,          /* has "manifests": an index or a manifest list */
	KIMG_OCI_MANIFEST,           /* has "config" and "layers" */
};

/* What an index or manifest holds, in input order: an index's entries go
 * to on_manifest, a manifest's config to *config and its layers to
 * on_layer(ctx, i, desc). A non-zero return of a callback stops the parse
 * and is returned. Returns the kind, or a negative error with err set. */
struct kimg_oci_doc_visitor {
	void *ctx;
	int (*on_manifest)(void *ctx, const struct kimg_descriptor *d);
	int (*on_layer)(void *ctx, unsigned index, const struct kimg_descriptor *d);
	struct kimg_descriptor *config;
};
int kimg_oci_doc_parse(struct kimg_span doc, void *arena, size_t arena_size, const struct kimg_oci_doc_visitor *v,
		       struct kimg_error *err);

/* docker save's manifest.json: fn(ctx, i, config, repo_tag, layers,
 * n_layers) for each image (layers: member paths, valid during the call;
 * repo_tag: the first RepoTags entry or NULL). Returns the image count or
 * a negative error. */
typedef int (*kimg_docker_image_fn)(void *ctx, unsigned index, const char *config, const char *repo_tag,
				    const char *const *layers, unsigned n_layers);
int kimg_docker_manifest_parse(struct kimg_span doc, void *arena, size_t arena_size, kimg_docker_image_fn fn,
			       void *ctx, struct kimg_error *err);

/* The image config. env and history are visited in order; diff_ids are
 * counted and each checked by kimg_digest_parse. */
struct kimg_image_config {
	char os[32], arch[32], variant[32];
	unsigned n_env, n_history, n_diff_ids;
	unsigned n_layer_history;    /* history entries without "empty_layer": true */
};
struct kimg_image_config_visitor {
	void *ctx;
	int (*on_env)(void *ctx, const char *entry);          /* "NAME=value" */
	/* layer: index of the layer this step made, or -1 for an empty_layer step */
	int (*on_history)(void *ctx, int layer, const char *created_by);
	int (*on_diff_id)(void *ctx, unsigned index, const char *digest);
};
int kimg_image_config_parse(struct kimg_span doc, void *arena, size_t arena_size, const struct kimg_image_config_visitor *v,
			    struct kimg_image_config *out, struct kimg_error *err);

/* "linux/arm64/v8" -> os, arch, variant. -KIMG_EFORMAT when not of the
 * shape OS/ARCH[/VARIANT]. */
int kimg_platform_parse(const char *text, char os[32], char arch[32], char variant[32]);
/* Does a descriptor's platform match the one asked (os/arch, and the
 * variant when both name one)? "amd64" and "x86_64", "arm64" and
 * "aarch64" are the same (containerd platforms.Normalize). */
bool kimg_platform_matches(const char *os, const char *arch, const char *variant, const char *want_os,
			   const char *want_arch, const char *want_variant);

#endif
