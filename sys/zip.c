/* SPDX-License-Identifier: Apache-2.0 */
/* Zip members through the core's directory parser and a lazily loaded
 * zlib (sys/zip.h). */
#include "zip.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lazylib.h"
#include "zip_dir.h"
#include "zlib_abi.h"

#define Z_RAW_DEFLATE (-15) /* windowBits for a zip member: raw deflate, 32 KiB window */

struct zlib_api {
	const char *(*version)(void);
	int (*inflate_init2)(struct z_stream_abi *, int, const char *, int);
	int (*inflate)(struct z_stream_abi *, int);
	int (*inflate_end)(struct z_stream_abi *);
	unsigned long (*crc32)(unsigned long, const unsigned char *, unsigned);
};

/* Process state, as sys/ may hold: the library is loaded once and kept. */
static struct zlib_api api;
static const struct kimg_lazy_fn zlib_fns[] = {
	KIMG_LAZY_FN("zlibVersion", api.version),
	KIMG_LAZY_FN("inflateInit2_", api.inflate_init2),
	KIMG_LAZY_FN("inflate", api.inflate),
	KIMG_LAZY_FN("inflateEnd", api.inflate_end),
	KIMG_LAZY_FN("crc32", api.crc32),
};
static struct kimg_lazylib zlib = {
	.sonames = { "libz.so.1" }, .flags = RTLD_NOW, .fns = zlib_fns,
	.n_fns = sizeof zlib_fns / sizeof zlib_fns[0], .lacks = "the inflate functions", .once = PTHREAD_ONCE_INIT,
};
static uint64_t limit_member = KIMG_ZIP_MEMBER_MAX;
static unsigned limit_ratio = KIMG_ZIP_RATIO_MAX;

void kimg_zip_set_library(const char *soname)
{
	kimg_lazylib_set_soname(&zlib, soname);
}

void kimg_zip_set_limits(uint64_t max_member, unsigned max_ratio)
{
	limit_member = max_member ? max_member : KIMG_ZIP_MEMBER_MAX;
	limit_ratio = max_ratio ? max_ratio : KIMG_ZIP_RATIO_MAX;
}

/* Loaded once, whichever thread asks first (the probe's workers). */
static bool api_ready(struct kimg_error *err)
{
	if (!kimg_lazylib_load(&zlib)) {
		kimg_error_set(err, -KIMG_ENOCODEC, 0, "cannot inflate: %s", zlib.why);
		return false;
	}
	return true;
}

/* Size and ratio limits, checked on the declared sizes before any
 * allocation; inflation later stops at the declared size. */
static int check_limits(const struct kimg_zip_entry *e, struct kimg_error *err)
{
	if (e->size > limit_member)
		return kimg_error_set(err, -KIMG_ELIMIT, e->local_offset,
				      "member of %llu bytes is larger than the limit (%llu bytes)",
				      (unsigned long long)e->size, (unsigned long long)limit_member);
	if (e->method == KIMG_ZIP_DEFLATED && e->size > KIMG_ZIP_RATIO_FLOOR &&
	    e->size / (e->stored_size ? e->stored_size : 1) >= limit_ratio)
		return kimg_error_set(err, -KIMG_ELIMIT, e->local_offset,
				      "member inflates %llu bytes to %llu, more than %u times (limit)",
				      (unsigned long long)e->stored_size, (unsigned long long)e->size, limit_ratio);
	return 0;
}

/* One inflate stream over a member, feeding at most UINT_MAX at a time. */
struct inflater {
	struct z_stream_abi z;
	struct kimg_span in;
	uint64_t in_pos;
	bool open, ended;
};

static int inflater_open(struct inflater *f, struct kimg_span in, struct kimg_error *err)
{
	memset(f, 0, sizeof *f);
	f->in = in;
	if (api.inflate_init2(&f->z, Z_RAW_DEFLATE, api.version(), (int)sizeof f->z) != Z_OK)
		return kimg_error_set(err, -ENOMEM, 0, "zlib: cannot start inflating");
	f->open = true;
	return 0;
}

/* Inflate into out[*len, cap); *len grows. Stops when out is full or the
 * stream ends. */
static int inflater_fill(struct inflater *f, unsigned char *out, uint64_t cap, uint64_t *len, struct kimg_error *err)
{
	while (*len < cap && !f->ended) {
		uint64_t in_left = f->in.size - f->in_pos, out_left = cap - *len;
		f->z.next_in = f->in.data + f->in_pos;
		f->z.avail_in = in_left > UINT32_MAX ? UINT32_MAX : (unsigned)in_left;
		f->z.next_out = out + *len;
		f->z.avail_out = out_left > UINT32_MAX ? UINT32_MAX : (unsigned)out_left;
		unsigned in_before = f->z.avail_in, out_before = f->z.avail_out;
		int rc = api.inflate(&f->z, Z_NO_FLUSH);
		f->in_pos += in_before - f->z.avail_in;
		*len += out_before - f->z.avail_out;
		if (rc == Z_STREAM_END) {
			f->ended = true;
		} else if (rc != Z_OK) {
			return kimg_error_set(err, -KIMG_ECODEC, f->in_pos, "corrupt deflate data%s%s",
					      f->z.msg ? ": " : "", f->z.msg ? f->z.msg : "");
		} else if (in_before == f->z.avail_in && out_before == f->z.avail_out) {
			return kimg_error_set(err, -KIMG_ECODEC, f->in_pos, "deflate data ends early");
		}
	}
	return 0;
}

static void inflater_close(struct inflater *f)
{
	if (f->open)
		api.inflate_end(&f->z);
	f->open = false;
}

/* What one archive may inflate in all (issue 22): KIMG_ZIP_RATIO_MAX (or
 * the set ratio) times its size, plus the floor below which one member
 * needs no ratio. Members are checked on their declared sizes, which
 * inflation never passes. */
struct budget {
	uint64_t left;
	uint64_t total;
};

static void budget_init(struct budget *b, uint64_t archive_size)
{
	uint64_t r = archive_size > (UINT64_MAX - KIMG_ZIP_RATIO_FLOOR) / limit_ratio
			     ? UINT64_MAX
			     : archive_size * limit_ratio + KIMG_ZIP_RATIO_FLOOR;
	b->left = b->total = r;
}

struct member {
	const struct kimg_zip_walk *walk;
	const struct kimg_zip_dir *dir;
	const struct kimg_zip_entry *e;
	const char *name;
	struct budget *budget;
	bool overlaps;   /* its bytes are another member's too */
	bool delivered;  /* fn was called for this member */
};

/* Hand the member (or why it could not be read) to fn; returns fn's value. */
static int deliver(struct member *m, struct kimg_span bytes, const struct kimg_error *merr)
{
	m->delivered = true;
	return m->walk->fn(m->walk->ctx, m->name, bytes, merr);
}

static int deliver_error(struct member *m, const struct kimg_error *merr)
{
	return deliver(m, kimg_span_make(NULL, 0), merr);
}

static int read_stored(struct member *m, struct kimg_span data)
{
	struct kimg_error merr = { 0, 0, "" };
	if (data.size != m->e->size) {
		kimg_error_set(&merr, -KIMG_EFORMAT, m->e->local_offset, "stored member of %llu bytes declares %llu",
			       (unsigned long long)data.size, (unsigned long long)m->e->size);
		return deliver_error(m, &merr);
	}
	struct kimg_span head = kimg_span_sub(&data, 0, data.size < KIMG_ZIP_HEAD_SIZE ? data.size : KIMG_ZIP_HEAD_SIZE);
	if (m->walk->want_head && !m->walk->want_head(m->walk->ctx, m->name, head))
		return 0; /* not wanted: nothing delivered */
	return deliver(m, data, NULL);
}

static int read_deflated(struct member *m, struct kimg_span data)
{
	struct kimg_error merr = { 0, 0, "" };
	struct inflater f;
	if (!api_ready(&merr))
		return deliver_error(m, &merr);
	/* The head is inflated into a small buffer and shown to want_head
	 * first: an unwanted member costs 4 KiB, whatever size it declares. */
	uint64_t size = m->e->size, len = 0;
	unsigned char head_buf[KIMG_ZIP_HEAD_SIZE];
	uint64_t head = size < KIMG_ZIP_HEAD_SIZE ? size : KIMG_ZIP_HEAD_SIZE;
	int rc = inflater_open(&f, data, &merr);
	if (rc == 0)
		rc = inflater_fill(&f, head_buf, head, &len, &merr);
	if (rc == 0 && len < head)
		rc = kimg_error_set(&merr, -KIMG_ECODEC, 0, "member shorter than its declared %llu bytes",
				    (unsigned long long)size);
	if (rc == 0 && m->walk->want_head && !m->walk->want_head(m->walk->ctx, m->name, kimg_span_make(head_buf, len))) {
		inflater_close(&f);
		return 0;
	}
	if (rc < 0) {
		inflater_close(&f);
		return deliver_error(m, &merr);
	}
	if (size > m->budget->left) {
		inflater_close(&f);
		kimg_error_set(&merr, -KIMG_ELIMIT, m->e->local_offset,
			       "member of %llu bytes passes what the archive may inflate in all (%u times its size "
			       "plus %llu MiB: %llu bytes, %llu left; limit)",
			       (unsigned long long)size, limit_ratio, (unsigned long long)(KIMG_ZIP_RATIO_FLOOR >> 20),
			       (unsigned long long)m->budget->total, (unsigned long long)m->budget->left);
		return deliver_error(m, &merr);
	}
	m->budget->left -= size;
	unsigned char *buf = malloc(size + 1);
	if (!buf) {
		inflater_close(&f);
		kimg_error_set(&merr, -ENOMEM, 0, "out of memory for a %llu-byte member", (unsigned long long)size);
		return deliver_error(m, &merr);
	}
	memcpy(buf, head_buf, (size_t)len);
	if (rc == 0)
		rc = inflater_fill(&f, buf, size, &len, &merr);
	if (rc == 0 && len < size)
		rc = kimg_error_set(&merr, -KIMG_ECODEC, 0, "member shorter than its declared %llu bytes",
				    (unsigned long long)size);
	if (rc == 0 && !f.ended) {
		/* one more byte tells "longer than declared" from "ends here" */
		unsigned char extra;
		uint64_t one = 0;
		rc = inflater_fill(&f, &extra, 1, &one, &merr);
		if (rc == 0 && one)
			rc = kimg_error_set(&merr, -KIMG_ECODEC, 0, "member inflates past its declared %llu bytes",
					    (unsigned long long)size);
	}
	inflater_close(&f);
	uint64_t crc = 0;
	for (uint64_t p = 0; rc == 0 && p < len; p += UINT32_MAX) {
		uint64_t n = len - p > UINT32_MAX ? UINT32_MAX : len - p;
		crc = api.crc32((unsigned long)crc, buf + p, (unsigned)n);
	}
	if (rc == 0 && (uint32_t)crc != m->e->crc32)
		rc = kimg_error_set(&merr, -KIMG_ECODEC, 0, "CRC mismatch");
	int s = rc == 0 ? deliver(m, kimg_span_make(buf, len), NULL) : deliver_error(m, &merr);
	free(buf);
	return s;
}

/* Returns fn's value (0: go on); m->delivered tells whether fn was called. */
static int read_member(struct member *m)
{
	struct kimg_error merr = { 0, 0, "" };
	struct kimg_span data;
	int rc = kimg_zip_entry_data(m->dir, m->e, &data, &merr);
	if (rc == 0 && m->overlaps)
		rc = kimg_error_set(&merr, -KIMG_ELIMIT, m->e->local_offset,
				    "member's bytes overlap another member's (a zip bomb's shape): not read");
	if (rc == 0)
		rc = check_limits(m->e, &merr);
	if (rc == 0 && m->e->method != KIMG_ZIP_STORED && m->e->method != KIMG_ZIP_DEFLATED)
		rc = kimg_error_set(&merr, -KIMG_ENOTSUP, m->e->local_offset, "compression method %u not supported",
				    m->e->method);
	if (rc < 0)
		return deliver_error(m, &merr);
	return m->e->method == KIMG_ZIP_STORED ? read_stored(m, data) : read_deflated(m, data);
}

struct range {
	uint64_t start, end;
	size_t index;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The members (by central-directory index) whose bytes, local header to
 * end of data, overlap another's: a bitmap, or NULL when none does or it
 * cannot be told (then *failed). Real archives never overlap; a bomb
 * points thousands of entries at one large member. */
static unsigned char *find_overlaps(const struct kimg_zip_dir *dir, bool *failed)
{
	struct range *r = NULL;
	size_t n = 0, cap = 0, index = 0;
	uint64_t cursor = 0;
	struct kimg_zip_entry e;
	unsigned char *bits = NULL;
	*failed = false;
	while (kimg_zip_dir_next(dir, &cursor, &e, NULL) == 1) {
		struct kimg_span data;
		size_t i = index++;
		if (e.is_dir || e.is_symlink || kimg_zip_entry_data(dir, &e, &data, NULL) < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct range *nr = realloc(r, cap * sizeof *nr);
			if (!nr)
				goto fail;
			r = nr;
		}
		uint64_t start = e.local_offset, end = (uint64_t)(data.data - dir->zip.data) + data.size;
		r[n++] = (struct range){ start, end > start ? end : start + 1, i };
	}
	if (n > 1) /* qsort(NULL, 0): undefined (found by make asan-test) */
		qsort(r, n, sizeof *r, range_cmp);
	uint64_t reach = 0;
	size_t holder = 0;
	for (size_t k = 0; k < n; k++) {
		if (k > 0 && r[k].start < reach) {
			if (!bits && !(bits = calloc(index / 8 + 1, 1)))
				goto fail;
			bits[r[k].index / 8] |= (unsigned char)(1u << r[k].index % 8);
			bits[holder / 8] |= (unsigned char)(1u << holder % 8);
		}
		if (k == 0 || r[k].end > reach) {
			reach = r[k].end;
			holder = r[k].index;
		}
	}
	free(r);
	return bits;
fail:
	free(r);
	free(bits);
	*failed = true;
	return NULL;
}

int kimg_zip_walk(struct kimg_span zip, const struct kimg_zip_walk *walk, struct kimg_error *err)
{
	struct kimg_zip_dir dir;
	int rc = kimg_zip_dir_open(zip, &dir, err);
	if (rc < 0)
		return rc;
	bool failed;
	unsigned char *overlaps = find_overlaps(&dir, &failed);
	if (failed)
		return kimg_error_set(err, -ENOMEM, 0, "out of memory for the archive's member table");
	struct budget budget;
	budget_init(&budget, zip.size);
	int delivered = 0;
	uint64_t cursor = 0;
	size_t index = 0;
	struct kimg_zip_entry e;
	while ((rc = kimg_zip_dir_next(&dir, &cursor, &e, err)) == 1) {
		size_t i = index++;
		if (e.is_dir || e.is_symlink)
			continue;
		/* a NUL in the name would cut it short: carried as C0 80, which
		 * the renderers show as \x00 (report/text_escape.h) */
		char name[1024];
		size_t n = 0;
		for (uint64_t k = 0; k < e.name.size && n + 2 < sizeof name; k++) {
			if (e.name.data[k] == 0) {
				name[n++] = (char)0xc0;
				name[n++] = (char)0x80;
			} else {
				name[n++] = (char)e.name.data[k];
			}
		}
		name[n] = '\0';
		if (walk->want_name && !walk->want_name(walk->ctx, name))
			continue;
		struct member m = { walk, &dir, &e, name, &budget, overlaps && (overlaps[i / 8] >> i % 8 & 1), false };
		int s = read_member(&m);
		delivered += m.delivered;
		if (s) {
			free(overlaps);
			return s;
		}
	}
	free(overlaps);
	return rc < 0 ? rc : delivered;
}

int kimg_zip_for_each_member(struct kimg_span zip, kimg_zip_want_fn want, kimg_zip_member_fn fn,
			     void *ctx, struct kimg_error *err)
{
	struct kimg_zip_walk w = { NULL, want, fn, ctx };
	return kimg_zip_walk(zip, &w, err);
}
