/* SPDX-License-Identifier: Apache-2.0 */
/* Pass two over a layer (image_int.h): the files of the final file system
 * that may hold device code, read again from the layer and handed on to
 * the walker under their image path; large ELF files read sparsely, the
 * pages the check does not read given back as the stream passes them
 * (core/elf_sparse.h). The layer is left after its last such file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "elf_sparse.h"
#include "image_int.h"
#include "layer_fs.h"
#include "tar.h"

static const struct kimg_sparse_plan *sparse_plan_of(const struct run *r, unsigned layer, uint32_t ordinal)
{
	for (size_t i = 0; i < r->n_sparse; i++)
		if (r->sparse[i].layer == layer && r->sparse[i].ordinal == ordinal)
			return &r->sparse[i].plan;
	return NULL;
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
/* The whole pages inside range d: [*a, *b), empty when it has none. */
static void inner_pages(const struct kimg_sparse_range *d, uint64_t *a, uint64_t *b)
{
	*a = (d->off + 4095) / 4096 * 4096;
	*b = (d->off + d->size) / 4096 * 4096;
	if (*b < *a)
		*b = *a;
}

/* How far, from have, the bytes may go to scratch rather than map (0: not
 * inside a dropped range), and how far into map otherwise (*limit). */
static uint64_t skip_end(uint64_t have, const struct kimg_sparse_range *ranges[2], uint64_t *limit)
{
	uint64_t to = 0;
	for (int k = 0; k < 2; k++) {
		if (!ranges[k] || !ranges[k]->size)
			continue;
		uint64_t a, b;
		inner_pages(ranges[k], &a, &b);
		if (a <= have && have < b && b > to)
			to = b;
		else if (a > have && a < *limit)
			*limit = a;
	}
	return to;
}

static int read_sparse(struct kimg_tar_stream *s, unsigned char *map, uint64_t size, const struct kimg_sparse_plan *plan,
		       unsigned char *scratch, struct kimg_error *err)
{
	uint64_t have = 0, done_to = 0; /* plan->drop[di] given back up to done_to */
	unsigned di = 0, fi = 0;
	struct kimg_fatbin_stream fs;
	struct kimg_sparse_range pending = { 0, 0 };
	bool in_fatbin = false;
	while (have < size) {
		uint64_t want = size - have < IMAGE_CHUNK ? size - have : IMAGE_CHUNK, limit = have + want;
		/* Bytes of a dropped range's whole pages go to scratch: those
		 * pages of map are never touched, so never faulted in, zeroed
		 * and given back (that was a fifth of a check's time). */
		const struct kimg_sparse_range *ranges[2] = { di < plan->n_drop ? &plan->drop[di] : NULL,
							      pending.size ? &pending : NULL };
		uint64_t to = skip_end(have, ranges, &limit);
		int64_t n;
		if (to) {
			n = kimg_tar_stream_read(s, scratch, to - have < IMAGE_CHUNK ? to - have : IMAGE_CHUNK, err);
		} else {
			n = kimg_tar_stream_read(s, map + have, limit - have, err);
		}
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
	unsigned char *scratch;         /* IMAGE_CHUNK bytes: what read_sparse drops */
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
		image_run_error(r, (int)p->layer, "%s: larger than %llu bytes: not read", as,
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
		image_run_error(r, (int)p->layer, "%s: out of memory for %llu bytes", as, (unsigned long long)size);
		return 0;
	}
	int rrc = plan ? read_sparse(s, buf, size, plan, p->scratch, &err) : image_read_rest(s, buf, 0, size, &err);
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

void image_pass2_layer(struct run *r, unsigned i, unsigned char *chunk)
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
	if (image_blob_open(r->src, l->member, &b, &err) < 0) {
		image_run_error(r, (int)i, "%s", err.what);
		return;
	}
	struct layer_source ls = { b.fd, b.off, b.size, 0, chunk, NULL, NULL, 0 };
	struct pass2 p = { r, i, last, malloc(IMAGE_CHUNK) };
	/* digested: pass one checked this blob (and pass two stops at its
	 * last file, before any trailer) */
	int rc = p.scratch ? kimg_tar_stream_walk_digested(image_layer_read, &ls, pass2_entry, &p, &err)
			   : kimg_error_set(&err, -ENOMEM, 0, "out of memory");
	if (rc < 0)
		image_run_error(r, (int)i, "second read: %s", err.what);
	free(p.scratch);
	image_layer_end(&ls);
	image_blob_close(&b);
}

