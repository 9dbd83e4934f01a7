/* SPDX-License-Identifier: Apache-2.0 */
#include "tar.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "lazylib.h"
#include "tar_la.h"

/* libarchive's ABI as far as kimg uses it (archive.h, archive_entry.h of
 * libarchive 3.x; the soname has been .13 since 3.0). */
#define LA_OK 0
#define LA_EOF 1
#define LA_WARN (-20)
#define LA_FATAL (-30)
#define LA_IFMT 0170000
#define LA_IFREG 0100000

struct archive;
struct archive_entry;

struct libarchive_api {
	struct archive *(*read_new)(void);
	int (*support_format_tar)(struct archive *);
	int (*support_filter_all)(struct archive *);
	int (*open_memory)(struct archive *, const void *, size_t);
	int (*next_header)(struct archive *, struct archive_entry **);
	ssize_t (*read_data)(struct archive *, void *, size_t);
	int (*data_skip)(struct archive *);
	const char *(*error_string)(struct archive *);
	int (*read_free)(struct archive *);
	const char *(*entry_pathname)(struct archive_entry *);
	int64_t (*entry_size)(struct archive_entry *);
	int (*entry_size_is_set)(struct archive_entry *);
	unsigned (*entry_filetype)(struct archive_entry *);
	/* streaming (kimg_tar_stream_walk) */
	int (*read_open)(struct archive *, void *, int (*)(struct archive *, void *),
			 ssize_t (*)(struct archive *, void *, const void **), int (*)(struct archive *, void *));
	const char *(*entry_symlink)(struct archive_entry *);
	const char *(*entry_hardlink)(struct archive_entry *);
};

/* Process state, as sys/ may hold: the library is loaded once and kept. */
static struct libarchive_api api;
static const struct kimg_lazy_fn libarchive_fns[] = {
	KIMG_LAZY_FN("archive_read_new", api.read_new),
	KIMG_LAZY_FN("archive_read_support_format_tar", api.support_format_tar),
	KIMG_LAZY_FN("archive_read_support_filter_all", api.support_filter_all),
	KIMG_LAZY_FN("archive_read_open_memory", api.open_memory),
	KIMG_LAZY_FN("archive_read_next_header", api.next_header),
	KIMG_LAZY_FN("archive_read_data", api.read_data),
	KIMG_LAZY_FN("archive_read_data_skip", api.data_skip),
	KIMG_LAZY_FN("archive_error_string", api.error_string),
	KIMG_LAZY_FN("archive_read_free", api.read_free),
	KIMG_LAZY_FN("archive_entry_pathname", api.entry_pathname),
	KIMG_LAZY_FN("archive_entry_size", api.entry_size),
	KIMG_LAZY_FN("archive_entry_size_is_set", api.entry_size_is_set),
	KIMG_LAZY_FN("archive_entry_filetype", api.entry_filetype),
	KIMG_LAZY_FN("archive_read_open", api.read_open),
	KIMG_LAZY_FN("archive_entry_symlink", api.entry_symlink),
	KIMG_LAZY_FN("archive_entry_hardlink", api.entry_hardlink),
};
static struct kimg_lazylib libarchive = {
	.sonames = { "libarchive.so.13" }, .flags = RTLD_NOW, .fns = libarchive_fns,
	.n_fns = sizeof libarchive_fns / sizeof libarchive_fns[0], .once = PTHREAD_ONCE_INIT,
};
static uint64_t member_max = KIMG_TAR_MEMBER_MAX_DEFAULT;
static unsigned ratio_max = KIMG_TAR_RATIO_MAX_DEFAULT;

void kimg_tar_set_member_max(uint64_t max)
{
	member_max = max ? max : KIMG_TAR_MEMBER_MAX_DEFAULT;
}

void kimg_tar_set_ratio_max(unsigned ratio)
{
	ratio_max = ratio ? ratio : KIMG_TAR_RATIO_MAX_DEFAULT;
}

/* What one archive's members may come to in all: ratio_max times the
 * archive's (compressed) size, plus KIMG_TAR_RATIO_FLOOR. A tar stream
 * has no per-member stored size, so the zip cap becomes one per archive;
 * a 93 KB .tar.zst no longer inflates 3 GB. */
static uint64_t archive_budget(uint64_t size)
{
	return size > (UINT64_MAX - KIMG_TAR_RATIO_FLOOR) / ratio_max ? UINT64_MAX
								      : size * ratio_max + KIMG_TAR_RATIO_FLOOR;
}

void kimg_tar_set_library(const char *soname)
{
	kimg_lazylib_set_soname(&libarchive, soname);
}

/* Loaded once, whichever thread asks first (the probe's workers). */
static bool api_ready(struct kimg_error *err)
{
	if (!kimg_lazylib_load(&libarchive)) {
		kimg_error_set(err, -KIMG_ENOCODEC, 0, "cannot read tar archives: %s", libarchive.why);
		return false;
	}
	return true;
}

static const char *la_why(struct archive *a)
{
	const char *s = api.error_string(a);
	return s ? s : "unknown libarchive error";
}

/* Read up to cap bytes of the current member's data into buf. Returns the
 * count, or -1 with err set; *fatal tells whether the walk can go on. */
static int64_t read_some(struct archive *a, unsigned char *buf, uint64_t cap, struct kimg_error *err,
			 bool *fatal)
{
	uint64_t len = 0;
	while (len < cap) {
		ssize_t n = api.read_data(a, buf + len, (size_t)(cap - len));
		if (n == 0)
			break;
		if (n < 0) {
			*fatal = n <= LA_FATAL;
			kimg_error_set(err, -KIMG_EFORMAT, len, "%s", la_why(a));
			return -1;
		}
		len += (uint64_t)n;
	}
	return (int64_t)len;
}

/* Inflate the rest of a wanted member after its head. The declared size
 * (when set) sizes the buffer; members without one grow by doubling. */
static int budget_error(struct kimg_error *err, uint64_t at, uint64_t total)
{
	return kimg_error_set(err, -KIMG_ELIMIT, at,
			      "member passes what the archive may hold in all (%u times its size plus %llu MiB: %llu "
			      "bytes; limit)",
			      ratio_max, (unsigned long long)(KIMG_TAR_RATIO_FLOOR >> 20), (unsigned long long)total);
}

static int read_member(struct archive *a, struct archive_entry *e, const unsigned char *head,
		       uint64_t head_len, unsigned char **out,
		       uint64_t *out_len, uint64_t *budget_left, uint64_t budget, struct kimg_error *err, bool *fatal)
{
	uint64_t cap = api.entry_size_is_set(e) && api.entry_size(e) > 0 ? (uint64_t)api.entry_size(e) : 1 << 20;
	if (cap > member_max)
		return kimg_error_set(err, -KIMG_ELIMIT, 0, "member larger than the limit (%llu bytes)",
				      (unsigned long long)member_max);
	/* the limit is the smaller of the member cap and what is left */
	uint64_t limit = member_max < *budget_left ? member_max : *budget_left;
	if (cap > limit)
		return budget_error(err, 0, budget);
	if (cap < head_len)
		cap = head_len;
	unsigned char *buf = malloc(cap + 1);
	if (!buf)
		return kimg_error_set(err, -ENOMEM, 0, "out of memory");
	memcpy(buf, head, head_len);
	uint64_t len = head_len;
	for (;;) {
		int64_t n = read_some(a, buf + len, cap - len, err, fatal);
		if (n < 0) {
			free(buf);
			return err ? err->code : -KIMG_EFORMAT;
		}
		len += (uint64_t)n;
		if (len < cap)
			break;
		/* Full: probe for one more byte before growing. */
		unsigned char extra;
		int64_t m = read_some(a, &extra, 1, err, fatal);
		if (m < 0) {
			free(buf);
			return err ? err->code : -KIMG_EFORMAT;
		}
		if (m == 0)
			break;
		if (cap * 2 > limit) {
			free(buf);
			if (cap * 2 > member_max)
				return kimg_error_set(err, -KIMG_ELIMIT, len, "member larger than the limit (%llu bytes)",
						      (unsigned long long)member_max);
			return budget_error(err, len, budget);
		}
		unsigned char *nb = realloc(buf, cap * 2 + 1);
		if (!nb) {
			free(buf);
			return kimg_error_set(err, -ENOMEM, len, "out of memory");
		}
		buf = nb;
		cap *= 2;
		buf[len++] = extra;
	}
	*out = buf;
	*out_len = len;
	*budget_left -= len < *budget_left ? len : *budget_left;
	return 0;
}

int kimg_tar_for_each_member(struct kimg_span zip, kimg_tar_want_fn want, kimg_tar_member_fn fn,
			     void *ctx, struct kimg_error *err)
{
	if (!api_ready(err))
		return err ? err->code : -KIMG_ENOCODEC;
	struct archive *a = api.read_new();
	if (!a)
		return kimg_error_set(err, -ENOMEM, 0, "out of memory");
	int delivered = 0, rc = 0;
	if (api.support_format_tar(a) != LA_OK || api.support_filter_all(a) < LA_WARN || api.open_memory(a, zip.data, (size_t)zip.size) != LA_OK) {
		rc = kimg_error_set(err, -KIMG_EFORMAT, 0, "not a readable tar archive: %s", la_why(a));
		goto out;
	}
	unsigned char head[KIMG_TAR_HEAD_SIZE];
	uint64_t budget = archive_budget(zip.size), budget_left = budget;
	for (;;) {
		struct archive_entry *e;
		int r = api.next_header(a, &e);
		if (r == LA_EOF)
			break;
		if (r < LA_WARN) {
			rc = kimg_error_set(err, -KIMG_EFORMAT, 0, "tar archive: %s", la_why(a));
			goto out;
		}
		if ((api.entry_filetype(e) & LA_IFMT) != LA_IFREG)
			continue;
		const char *pn = api.entry_pathname(e);
		char name[1024];
		snprintf(name, sizeof name, "%s", pn ? pn : "?");
		struct kimg_error merr = { 0, 0, "" };
		bool fatal = false;
		int64_t hn = read_some(a, head, sizeof head, &merr, &fatal);
		if (hn < 0) {
			int s = fn(ctx, name, kimg_span_make(NULL, 0), &merr);
			delivered++;
			if (s)
				rc = s;
			if (s || fatal) /* fn has reported it; libarchive cannot go on */
				goto out;
			continue;
		}
		if (want && !want(ctx, name, kimg_span_make(head, (uint64_t)hn))) {
			(void)api.data_skip(a);
			continue;
		}
		unsigned char *buf = NULL;
		uint64_t len = 0;
		int s;
		if ((uint64_t)hn < sizeof head) /* the head was the whole member */
			s = fn(ctx, name, kimg_span_make(head, (uint64_t)hn), NULL);
		else if (read_member(a, e, head, (uint64_t)hn, &buf, &len, &budget_left, budget, &merr, &fatal) == 0)
			s = fn(ctx, name, kimg_span_make(buf, len), NULL);
		else
			s = fn(ctx, name, kimg_span_make(NULL, 0), &merr);
		free(buf);
		delivered++;
		if (s) {
			rc = s;
			goto out;
		}
		if (fatal) /* reported through fn; nothing after it is reachable */
			goto out;
	}
out:
	api.read_free(a);
	return rc ? rc : delivered;
}

const char *kimg_tar_library(void)
{
	return kimg_lazylib_name(&libarchive);
}

/* ---- streaming through libarchive: the layers sys/tar_stream.c does not
 * read itself (bzip2, xz, ...: sys/tar_la.h) ---- */

#define LA_IFDIR 0040000
#define LA_IFLNK 0120000

struct la_stream {
	struct archive *a;
	kimg_tar_source_fn src;
	void *src_ctx;
	int src_rc;                  /* the source's error, kept for the message */
	bool fatal;
};

static ssize_t stream_read_cb(struct archive *a, void *ctx, const void **buf)
{
	struct la_stream *s = ctx;
	(void)a;
	int64_t n = s->src(s->src_ctx, buf);
	if (n < 0) {
		s->src_rc = (int)n;
		return -1;
	}
	return (ssize_t)n;
}

int64_t kimg_tar_la_read(void *la, void *buf, uint64_t len, struct kimg_error *err)
{
	struct la_stream *s = la;
	return read_some(s->a, buf, len, err, &s->fatal);
}

int kimg_tar_la_walk(kimg_tar_source_fn src, void *src_ctx, kimg_tar_la_entry_fn fn, void *ctx,
		     struct kimg_error *err)
{
	if (!api_ready(err))
		return err ? err->code : -KIMG_ENOCODEC;
	struct la_stream s = { api.read_new(), src, src_ctx, 0, false };
	if (!s.a)
		return kimg_error_set(err, -ENOMEM, 0, "out of memory");
	int rc = 0;
	uint32_t ordinal = 0;
	if (api.support_format_tar(s.a) != LA_OK || api.support_filter_all(s.a) < LA_WARN ||
	    api.read_open(s.a, &s, NULL, stream_read_cb, NULL) != LA_OK) {
		rc = kimg_error_set(err, s.src_rc ? s.src_rc : -KIMG_EFORMAT, 0, "not a readable tar stream: %s",
				    la_why(s.a));
		goto out;
	}
	for (;; ordinal++) {
		struct archive_entry *e;
		int r = api.next_header(s.a, &e);
		if (r == LA_EOF)
			break;
		if (r < LA_WARN) {
			rc = kimg_error_set(err, s.src_rc ? s.src_rc : -KIMG_EFORMAT, ordinal, "tar entry %u: %s",
					    (unsigned)ordinal + 1, la_why(s.a));
			goto out;
		}
		struct kimg_tar_entry te = { api.entry_pathname(e), NULL, KIMG_TAR_ENTRY_OTHER, 0 };
		const char *hard = api.entry_hardlink(e);
		unsigned ft = api.entry_filetype(e) & LA_IFMT;
		if (hard) {
			te.type = KIMG_TAR_ENTRY_HARDLINK;
			te.link = hard;
		} else if (ft == LA_IFREG) {
			te.type = KIMG_TAR_ENTRY_FILE;
		} else if (ft == LA_IFDIR) {
			te.type = KIMG_TAR_ENTRY_DIR;
		} else if (ft == LA_IFLNK) {
			te.type = KIMG_TAR_ENTRY_SYMLINK;
			te.link = api.entry_symlink(e);
		}
		if (!te.name)
			te.name = "";
		te.size = api.entry_size_is_set(e) ? api.entry_size(e) : -1;
		if ((rc = fn(ctx, ordinal, &te, &s)) != 0)
			goto out;
		if (s.fatal) {
			rc = kimg_error_set(err, s.src_rc ? s.src_rc : -KIMG_EFORMAT, ordinal, "tar entry %u: %s",
					    (unsigned)ordinal + 1, la_why(s.a));
			goto out;
		}
	}
out:
	api.read_free(s.a);
	return rc ? rc : (int)(ordinal > INT32_MAX ? INT32_MAX : ordinal);
}
