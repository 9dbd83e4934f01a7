/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the container-image readers in core/: the OCI
 * index/manifest, docker manifest.json and config parsers, tar header and
 * pax records, NVIDIA_REQUIRE_* expressions, and the final file system of
 * layers (the input's lines as entries "L KIND NAME [LINK]"), and the
 * sparse-read plans, wrapper scan and fatbin walk of core/elf_sparse.c,
 * and the JIT switches of an Env (core/jit_env.c). No crash, no
 * read past the input (ASan), every return a documented code. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_sparse.h"
#include "image_format.h"
#include "jit_env.h"
#include "layer_fs.h"
#include "nvidia_require.h"
#include "tar_header.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int any_manifest(void *ctx, const struct kimg_descriptor *d) { (void)ctx; return d->digest[0] ? 0 : 1; }
static int any_layer(void *ctx, unsigned i, const struct kimg_descriptor *d) { (void)ctx; (void)i; return d->digest[0] ? 0 : 1; }
static int any_image(void *ctx, unsigned i, const char *c, const char *t, const char *const *l, unsigned n)
{
	(void)ctx; (void)i; (void)t;
	for (unsigned k = 0; k < n; k++)
		if (!l[k])
			abort();
	return c ? 0 : 1;
}

struct found {
	struct kimg_sparse_wrapper w[64];
	unsigned n;
	uint64_t size;
};

static int wrapper_seen(void *ctx, const struct kimg_sparse_wrapper *w)
{
	struct found *f = ctx;
	if (w->off % 8 || w->off > f->size || f->size - w->off < KIMG_SPARSE_WRAPPER_SIZE)
		abort(); /* only whole, aligned wrappers inside the input */
	if (f->n < 64)
		f->w[f->n++] = *w;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char arena[1 << 18];
	struct kimg_span in = kimg_span_make(data, size);
	struct kimg_descriptor config;
	struct kimg_oci_doc_visitor v = { NULL, any_manifest, any_layer, &config };
	(void)kimg_oci_doc_parse(in, arena, sizeof arena, &v, NULL);
	(void)kimg_docker_manifest_parse(in, arena, sizeof arena, any_image, NULL, NULL);
	struct kimg_image_config c;
	(void)kimg_image_config_parse(in, arena, sizeof arena, NULL, &c, NULL);
	struct kimg_tar_header h;
	(void)kimg_tar_header_parse(in, &h, NULL);
	(void)kimg_tar_pax_apply(in, &h, NULL);
	/* sparse plans: the input as an ELF file, its own window; the fatbin
	 * walk over all of it, every announced payload inside it */
	uint64_t lo, hi;
	struct kimg_sparse_plan plan;
	struct found wf = { .n = 0, .size = size };
	if (kimg_sparse_wrappers_scan(in, 0, wrapper_seen, &wf) != 0)
		abort();
	if (kimg_sparse_window(in, size, &lo, &hi))
		(void)kimg_sparse_plan_make(in, kimg_span_sub(&in, lo, hi - lo), lo, size, wf.w, wf.n, &plan);
	struct kimg_fatbin_stream fst;
	struct kimg_sparse_range d;
	kimg_fatbin_stream_begin(&fst, 0, size);
	for (int n = 0; n < 4096 && kimg_fatbin_stream_next(&fst, in, size, &d) == 1; n++)
		if (d.off > size || d.size > size - d.off)
			abort();

	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct kimg_require_facts f = { 12040, "", "9.0", "" };
	struct kimg_require_verdict rv;
	int rc = kimg_require_judge(text, &f, &rv, NULL);
	if (rc != 0 && rc != -KIMG_EFORMAT)
		abort();
	/* the text's lines as an Env: whatever they hold, each switch is off
	 * or set by one of them */
	{
		const char *env[64];
		unsigned n_env = 0;
		char *copy = strdup(text);
		for (char *line = copy ? strtok(copy, "\n") : NULL; line && n_env < 64; line = strtok(NULL, "\n"))
			env[n_env++] = line;
		struct kimg_jit_env je;
		kimg_jit_env_read(env, n_env, &je);
		for (unsigned k = 0; k < KIMG_JIT_SWITCH_COUNT; k++)
			if (je.on[k] && !je.set_by[k])
				abort();
		free(copy);
	}
	struct kimg_layer_fs *fs = kimg_layer_fs_new(4, 4096);
	uint32_t ord[4] = { 0 };
	for (char *line = strtok(text, "\n"); fs && line; line = strtok(NULL, "\n")) {
		if (strlen(line) < 4)
			continue;
		unsigned layer = (unsigned)(line[0] & 3);
		enum kimg_fs_kind kind = (enum kimg_fs_kind)((unsigned)line[1] % KIMG_FS_KIND_COUNT);
		char *name = line + 3, *link = strchr(name, ' ');
		if (link)
			*link++ = '\0';
		(void)kimg_layer_fs_add(fs, layer, ord[layer]++, name, kind, link, NULL);
	}
	if (fs && kimg_layer_fs_finish(fs) == 0)
		for (unsigned l = 0; l < 4; l++)
			for (uint32_t o = 0; o < ord[l]; o++) {
				const char *p = kimg_layer_fs_judged_as(fs, l, o);
				if (p && p[0] != '/')
					abort();
			}
	kimg_layer_fs_free(fs);
	free(text);
	return 0;
}
