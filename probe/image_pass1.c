/* SPDX-License-Identifier: Apache-2.0 */
/* Pass one over a layer (image_int.h): every entry's header applied to
 * the path table (core/layer_fs.h), the first page of each file shown to
 * the walker's want() to mark those that may hold device code, the sparse
 * plan of large ELF files made (core/elf_sparse.h), the package records
 * kept for owners, and the blob's SHA-256 checked on the bytes read. A
 * layer that fails its digest or its limits is not applied. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "elf_sparse.h"
#include "image_int.h"
#include "layer_fs.h"
#include "probe.h"
#include "tar.h"

struct pending {
	char *name, *link;
	uint8_t kind;                   /* enum kimg_fs_kind */
};

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
	unsigned char head[IMAGE_HEAD_SIZE];
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

int image_read_rest(struct kimg_tar_stream *s, unsigned char *buf, uint64_t have, uint64_t size,
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

/* The wrappers a large ELF file holds, gathered as its bytes pass. */
struct wrappers {
	struct kimg_sparse_wrapper *w;
	unsigned n, cap;
};

static int wrapper_add(void *ctx, const struct kimg_sparse_wrapper *w)
{
	struct wrappers *ws = ctx;
	if (ws->n == ws->cap) {
		unsigned cap = ws->cap ? ws->cap * 2 : 64;
		struct kimg_sparse_wrapper *nw = ws->n < 1u << 20 ? realloc(ws->w, cap * sizeof *nw) : NULL;
		if (!nw)
			return -ENOMEM;
		ws->w = nw;
		ws->cap = cap;
	}
	ws->w[ws->n++] = *w;
	return 0;
}

/* Read the rest of a large ELF file, keeping its section table and what
 * lies just before it (.shstrtab), and make its sparse plan. */
static void capture_plan(struct run *r, struct pass1 *p, uint32_t ordinal, struct kimg_tar_stream *s, uint64_t pos,
			 uint64_t size, uint64_t lo, uint64_t hi)
{
	unsigned char *win = malloc(hi - lo ? hi - lo : 1), *buf = malloc(IMAGE_CHUNK / 4 + 24);
	struct kimg_error err = { 0, 0, "" };
	bool ok = win && buf;
	struct wrappers wr = { NULL, 0, 0 };
	/* wrappers met in the head */
	if (ok && kimg_sparse_wrappers_scan(kimg_span_make(p->head, pos), 0, wrapper_add, &wr) < 0)
		ok = false;
	if (ok && pos > lo) /* the window starts inside the head already read */
		memcpy(win, p->head + lo, (size_t)((pos < hi ? pos : hi) - lo));
	/* the rest, 8-aligned chunks after the head: wrappers (24 bytes) may
	 * straddle two chunks, so the last 23 bytes (from an 8-aligned
	 * offset) of each are scanned again with the next */
	unsigned char carry[24];
	uint64_t carry_at = pos >= 23 ? (pos - 23 + 7) / 8 * 8 : 0;
	size_t carried = (size_t)(pos - carry_at);
	memcpy(carry, p->head + carry_at, carried);
	while (ok && pos < hi) {
		int64_t n = kimg_tar_stream_read(s, buf + 24, IMAGE_CHUNK / 4, &err);
		if (n <= 0) {
			ok = false;
			break;
		}
		uint64_t a = pos > lo ? pos : lo, b = pos + (uint64_t)n < hi ? pos + (uint64_t)n : hi;
		if (a < b)
			memcpy(win + (a - lo), buf + 24 + (a - pos), (size_t)(b - a));
		/* [carry][chunk] from file offset carry_at; the carry, under 24
		 * bytes, holds no whole wrapper: none is found twice */
		unsigned char *scan = buf + 24 - carried;
		memcpy(scan, carry, carried);
		uint64_t base = carry_at, len = carried + (uint64_t)n;
		if (kimg_sparse_wrappers_scan(kimg_span_make(scan, len), base, wrapper_add, &wr) < 0)
			ok = false;
		uint64_t end = base + len, keep_from = end > 23 ? (end - 23 + 7) / 8 * 8 : base;
		if (keep_from < base)
			keep_from = base;
		carried = (size_t)(end - keep_from);
		memcpy(carry, scan + (keep_from - base), carried);
		carry_at = keep_from;
		pos += (uint64_t)n;
	}
	struct kimg_sparse_plan plan;
	if (ok && kimg_sparse_plan_make(kimg_span_make(p->head, IMAGE_HEAD_SIZE), kimg_span_make(win, hi - lo), lo, size, wr.w,
					wr.n, &plan)) {
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
	free(wr.w);
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
		image_run_error(r, (int)p->layer, "package records over %llu bytes: %.200s and later ones not read",
			  (unsigned long long)PROBE_IMAGE_RECORDS_MAX, norm);
		r->rec_bytes = PROBE_IMAGE_RECORDS_MAX;
		return 0;
	}
	unsigned char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, p->head, (size_t)hn);
	if (image_read_rest(s, buf, (uint64_t)hn, size, &err) < 0) {
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

void image_drop_records(struct run *r, size_t first)
{
	for (size_t i = first; i < r->n_recs; i++) {
		free(r->recs[i].bytes);
		free(r->recs[i].path);
	}
	r->n_recs = first;
}

void image_pass1_layer(struct run *r, unsigned i, unsigned char *chunk)
{
	struct layer_plan *l = &r->pl->layers[i];
	struct blob b;
	struct kimg_error err = { 0, 0, "" };
	if (image_blob_open(r->src, l->member, &b, &err) < 0) {
		image_run_error(r, (int)i, "%s", err.what);
		return;
	}
	if (l->size && l->size != b.size)
		image_run_error(r, (int)i, "blob is %llu bytes, the manifest says %llu", (unsigned long long)b.size,
			  (unsigned long long)l->size);
	l->size = b.size;
	struct kimg_digest sha;
	kimg_digest_init(&sha);
	struct layer_source ls = { b.fd, b.off, b.size, 0, chunk, &sha, NULL, 0 };
	struct pass1 *p = calloc(1, sizeof *p);
	if (!p) {
		image_blob_close(&b);
		image_run_error(r, (int)i, "out of memory");
		return;
	}
	p->r = r;
	p->layer = i;
	p->first_rec = r->n_recs;
	p->limit = b.size * PROBE_IMAGE_LAYER_RATIO_MAX;
	if (p->limit < PROBE_IMAGE_LAYER_FLOOR)
		p->limit = PROBE_IMAGE_LAYER_FLOOR;
	int rc = kimg_tar_stream_walk_digested(image_layer_read, &ls, pass1_entry, p, &err);
	bool ok = rc >= 0 && !p->stop;
	if (p->stop)
		image_run_error(r, (int)i, "%s", p->why);
	else if (rc == -KIMG_ENOCODEC && strstr(err.what, "cannot read tar archives"))
		/* a layer only libarchive reads (bzip2, xz, ...; sys/tar.h) */
		image_run_error(r, (int)i, "%s (install libarchive: Debian libarchive13, or name it with KIMG_LIBARCHIVE)", err.what);
	else if (rc < 0)
		image_run_error(r, (int)i, "%s", err.what);
	if (ok) {
		/* the rest of the blob (tar padding libarchive did not ask for) */
		while (ls.pos < ls.size) {
			const void *unused;
			if (image_layer_read(&ls, &unused) < 0) {
				ok = false;
				image_run_error(r, (int)i, "cannot read the blob to its end");
				break;
			}
		}
	}
	image_layer_end(&ls);
	image_blob_close(&b);
	if (ok && l->digest[0]) {
		char got[65];
		kimg_digest_hex(&sha, got);
		if (strcmp(got, l->digest + 7) != 0) {
			ok = false;
			image_run_error(r, (int)i, "digest mismatch: the blob's bytes are sha256:%s: layer not applied", got);
		}
	} else if (ok && !l->digest[0]) {
		char got[65];
		kimg_digest_hex(&sha, got);
		snprintf(l->digest, sizeof l->digest, "sha256:%s", got);
		image_run_error(r, (int)i, "no digest to check the blob against (no diff_id in the config): layer not applied");
		ok = false;
	}
	if (!ok && sha.evp) {
		char unused[65];
		kimg_digest_hex(&sha, unused); /* frees libcrypto's context */
	}
	if (!ok) {
		image_drop_records(r, p->first_rec);
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
			image_run_error(r, (int)i, "%s", err.what);
	}
	if (problems > PROBE_IMAGE_LAYER_PROBLEMS_SHOWN)
		image_run_error(r, (int)i, "%u more entries not applied", problems - PROBE_IMAGE_LAYER_PROBLEMS_SHOWN);
	r->cand[i] = p->cand;
	r->n_cand[i] = p->n;
	l->read = true;
	pass1_drop(p);
	free(p);
}

