/* SPDX-License-Identifier: Apache-2.0 */
/* kimg_tar_stream_walk (sys/tar.h) without libarchive: a container image
 * layer, plain, gzip or zstd by its first bytes, read once front to back
 * through a fixed window. Headers are core/tar_header.c's (ustar, pax
 * 'x' records, GNU 'L'/'K' long names); gzip and zstd are zlib's inflate
 * and ZSTD_decompressStream, loaded lazily (sys/codecs.h). Layers in any
 * other format go to libarchive (sys/tar_la.h). Machines without
 * libarchive (gVisor GPU hosts, minimal CI images) read every layer that
 * docker, podman, buildah, skopeo and umoci write. */
#include "tar.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs.h"
#include "tar_header.h"
#include "tar_la.h"

/* Decoded bytes held between reads; larger reads decode straight into
 * the caller's buffer. */
#define STREAM_WINDOW ((size_t)256 << 10)
/* Extended headers ('x', 'g', 'L', 'K') before one entry: a real archive
 * has at most three; a run of them is a way to inflate without entries. */
#define STREAM_EXT_RUN_MAX 16u
/* What is read of a compressed layer after the tar's end, to reach the
 * end of its stream and so its check value (gzip's CRC-32, zstd's
 * checksum): tar writers pad to 10 KiB records; more is left unread. */
#define STREAM_TAIL_MAX ((uint64_t)1 << 20)

enum layer_codec { CODEC_PLAIN, CODEC_GZIP, CODEC_ZSTD, CODEC_OTHER };

struct kimg_tar_stream {
	kimg_tar_source_fn src;
	void *src_ctx;
	/* raw input: the sniffed prefix (when the first chunks were short),
	 * then the rest of the chunk it ended in, then the source's chunks */
	unsigned char pre[KIMG_TAR_BLOCK];
	size_t pre_len;
	const unsigned char *rest, *in;
	size_t rest_len, in_len;
	bool in_eof, replayed;
	enum layer_codec codec;
	struct kimg_codec_stream cs;
	unsigned char *win;          /* STREAM_WINDOW bytes (compressed layers) */
	size_t win_pos, win_len;
	uint64_t left;               /* of the current entry's data */
	int fail;                    /* a read of the entry failed: the walk ends after fn */
	struct kimg_error ferr;
	void *la;                    /* libarchive's stream, for the layers it reads */
	/* the walk's own */
	struct kimg_tar_header h, pax;
	char long_name[KIMG_TAR_NAME_MAX], long_link[KIMG_TAR_NAME_MAX];
};

static const char *codec_name(enum layer_codec c)
{
	return c == CODEC_GZIP ? "gzip" : c == CODEC_ZSTD ? "zstd" : "tar";
}

/* Make in/in_len non-empty unless the input has ended. */
static int raw_more(struct kimg_tar_stream *s, struct kimg_error *err)
{
	if (s->in_len || s->in_eof)
		return 0;
	if (s->rest_len) {
		s->in = s->rest;
		s->in_len = s->rest_len;
		s->rest_len = 0;
		return 0;
	}
	const void *b;
	int64_t n = s->src(s->src_ctx, &b);
	if (n < 0)
		return kimg_error_set(err, (int)n, 0, "reading the layer: %s", kimg_strerror((int)n));
	if (n == 0)
		s->in_eof = true;
	s->in = b;
	s->in_len = (size_t)n;
	return 0;
}

/* Up to cap decoded bytes into out: the count, 0 at the end of the
 * stream, or a negative error with err set. */
static int64_t decode(struct kimg_tar_stream *s, unsigned char *out, size_t cap, struct kimg_error *err)
{
	for (;;) {
		int rc = raw_more(s, err);
		if (rc < 0)
			return rc;
		if (s->codec == CODEC_PLAIN) {
			size_t n = s->in_len < cap ? s->in_len : cap;
			memcpy(out, s->in, n);
			s->in += n;
			s->in_len -= n;
			return (int64_t)n;
		}
		if (!s->in_len) {
			if (s->cs.at_end)
				return 0;
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "the %s stream ends early (truncated)",
					      codec_name(s->codec));
		}
		size_t had = s->in_len;
		int64_t n = kimg_codec_stream_run(&s->cs, &s->in, &s->in_len, out, cap, err);
		if (n != 0)
			return n;
		if (s->in_len == had && !s->cs.at_end)
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "the %s stream makes no progress", codec_name(s->codec));
	}
}

/* Up to len bytes of the tar into dst (NULL: dropped): short only at the
 * end of the stream. */
static int64_t take(struct kimg_tar_stream *s, unsigned char *dst, uint64_t len, struct kimg_error *err)
{
	uint64_t got = 0;
	while (got < len) {
		uint64_t want = len - got;
		if (s->win_pos < s->win_len) {
			size_t n = s->win_len - s->win_pos;
			if (n > want)
				n = (size_t)want;
			if (dst)
				memcpy(dst + got, s->win + s->win_pos, n);
			s->win_pos += n;
			got += n;
			continue;
		}
		if (s->codec == CODEC_PLAIN) {
			int rc = raw_more(s, err);
			if (rc < 0)
				return rc;
			size_t n = s->in_len < want ? s->in_len : (size_t)want;
			if (!n)
				break;
			if (dst)
				memcpy(dst + got, s->in, n);
			s->in += n;
			s->in_len -= n;
			got += n;
			continue;
		}
		int64_t n;
		if (dst && want >= STREAM_WINDOW) {
			n = decode(s, dst + got, want > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)want, err);
			if (n > 0)
				got += (uint64_t)n;
		} else {
			n = decode(s, s->win, STREAM_WINDOW, err);
			s->win_pos = 0;
			s->win_len = n > 0 ? (size_t)n : 0;
		}
		if (n < 0)
			return n;
		if (n == 0)
			break;
	}
	return (int64_t)got;
}

int64_t kimg_tar_stream_read(struct kimg_tar_stream *s, void *buf, uint64_t len, struct kimg_error *err)
{
	if (s->la)
		return kimg_tar_la_read(s->la, buf, len, err);
	if (s->fail) {
		if (err)
			*err = s->ferr;
		return -1;
	}
	if (len > s->left)
		len = s->left;
	if (!len)
		return 0;
	int64_t n = take(s, buf, len, &s->ferr);
	if (n == 0)
		n = kimg_error_set(&s->ferr, -KIMG_EFORMAT, 0, "entry data ends early (truncated)");
	if (n < 0) {
		s->fail = (int)n;
		if (err)
			*err = s->ferr;
		return -1;
	}
	s->left -= (uint64_t)n;
	return n;
}

/* The layer's format from its first bytes: gzip (1f 8b), zstd (28 b5 2f
 * fd), a plain tar (a valid header checksum, or the all-zero end block of
 * an empty tar; an empty blob too); else libarchive's. */
static int sniff(struct kimg_tar_stream *s, struct kimg_error *err)
{
	const void *b;
	int64_t n = s->src(s->src_ctx, &b);
	if (n < 0)
		return kimg_error_set(err, (int)n, 0, "reading the layer: %s", kimg_strerror((int)n));
	const unsigned char *head = b;
	size_t have = (size_t)n;
	if (n > 0 && (size_t)n < KIMG_TAR_BLOCK) {
		/* short chunks: gather one block */
		while (n > 0) {
			size_t k = KIMG_TAR_BLOCK - s->pre_len < (size_t)n ? KIMG_TAR_BLOCK - s->pre_len : (size_t)n;
			memcpy(s->pre + s->pre_len, b, k);
			s->pre_len += k;
			if (k < (size_t)n) {
				s->rest = (const unsigned char *)b + k;
				s->rest_len = (size_t)n - k;
			}
			if (s->pre_len == KIMG_TAR_BLOCK)
				break;
			n = s->src(s->src_ctx, &b);
			if (n < 0)
				return kimg_error_set(err, (int)n, 0, "reading the layer: %s", kimg_strerror((int)n));
		}
		if (n == 0)
			s->in_eof = true;
		head = s->pre;
		have = s->pre_len;
	} else if (n == 0) {
		s->in_eof = true;
	}
	s->in = head;
	s->in_len = have;
	struct kimg_tar_header *h = &s->h;
	if (have >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		s->codec = CODEC_GZIP;
	else if (have >= 4 && memcmp(head, "\x28\xb5\x2f\xfd", 4) == 0)
		s->codec = CODEC_ZSTD;
	else if (have == 0 || kimg_tar_header_parse(kimg_span_make(head, have), h, NULL) >= 0)
		s->codec = CODEC_PLAIN;
	else
		s->codec = CODEC_OTHER;
	return 0;
}

/* ---- layers for libarchive: the sniffed bytes given again, then the rest ---- */

struct la_trampoline {
	struct kimg_tar_stream *s;
	kimg_tar_entry_fn fn;
	void *ctx;
};

static int64_t replay_source(void *ctx, const void **buf)
{
	struct kimg_tar_stream *s = ctx;
	if (!s->replayed) {
		s->replayed = true;
		if (s->in_len) {
			*buf = s->in;
			return (int64_t)s->in_len;
		}
	}
	if (s->rest_len) {
		*buf = s->rest;
		size_t n = s->rest_len;
		s->rest_len = 0;
		return (int64_t)n;
	}
	if (s->in_eof)
		return 0;
	return s->src(s->src_ctx, buf);
}

static int la_entry(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e, void *la)
{
	struct la_trampoline *t = ctx;
	t->s->la = la;
	return t->fn(t->ctx, ordinal, e, t->s);
}

/* The magic numbers of the formats libarchive reads for kimg, to name
 * them when it is missing. */
static const struct {
	const char *magic;
	size_t len;
	const char *name;
} other_formats[] = {
	{ "BZh", 3, "bzip2" },
	{ "\xfd" "7zXZ\0", 6, "xz" },
	{ "\x04\x22\x4d\x18", 4, "lz4" },
	{ "\x1f\x9d", 2, "compress (.Z)" },
	{ "LZIP", 4, "lzip" },
	{ "\x5d\0\0", 3, "lzma" },
};

static int walk_other(struct kimg_tar_stream *s, kimg_tar_entry_fn fn, void *ctx, struct kimg_error *err)
{
	const char *name = NULL;
	for (size_t i = 0; i < sizeof other_formats / sizeof other_formats[0]; i++)
		if (s->in_len >= other_formats[i].len && memcmp(s->in, other_formats[i].magic, other_formats[i].len) == 0)
			name = other_formats[i].name;
	struct la_trampoline t = { s, fn, ctx };
	struct kimg_error lerr = { 0, 0, "" };
	int rc = kimg_tar_la_walk(replay_source, s, la_entry, &t, &lerr);
	if (rc == -KIMG_ENOCODEC && !name)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not a tar archive, nor a gzip or zstd stream (first bytes %02x %02x %02x %02x)",
				      s->in_len > 0 ? s->in[0] : 0, s->in_len > 1 ? s->in[1] : 0,
				      s->in_len > 2 ? s->in[2] : 0, s->in_len > 3 ? s->in[3] : 0);
	if (rc == -KIMG_ENOCODEC)
		return kimg_error_set(err, rc, 0, "a %s layer: %s", name, lerr.what);
	if (err && rc < 0)
		*err = lerr;
	return rc;
}

/* ---- the native walk ---- */

/* An extended header's data, whole: NULL with err set when it is too
 * large or cut short. The caller frees it. */
static char *read_ext(struct kimg_tar_stream *s, uint64_t size, uint32_t ordinal, struct kimg_error *err)
{
	if (size > KIMG_TAR_EXT_MAX) {
		kimg_error_set(err, -KIMG_ELIMIT, ordinal, "tar entry %u: extended header of %llu bytes (limit %llu)",
			       (unsigned)ordinal + 1, (unsigned long long)size, (unsigned long long)KIMG_TAR_EXT_MAX);
		return NULL;
	}
	char *buf = malloc(size + 1);
	if (!buf) {
		kimg_error_set(err, -ENOMEM, ordinal, "out of memory");
		return NULL;
	}
	struct kimg_error e = { 0, 0, "" };
	int64_t n = take(s, (unsigned char *)buf, size, &e);
	int64_t pad = n == (int64_t)size ? take(s, NULL, kimg_tar_padded(size) - size, &e) : 0;
	if (n != (int64_t)size || pad < 0) {
		kimg_error_set(err, n < 0 ? (int)n : pad < 0 ? (int)pad : -KIMG_EFORMAT, ordinal, "tar entry %u: %s",
			       (unsigned)ordinal + 1, n < 0 || pad < 0 ? e.what : "extended header cut short (truncated)");
		free(buf);
		return NULL;
	}
	buf[size] = '\0';
	return buf;
}

static int walk_native(struct kimg_tar_stream *s, kimg_tar_entry_fn fn, void *ctx, struct kimg_error *err)
{
	struct kimg_tar_header *h = &s->h, *pax = &s->pax;
	bool have_pax = false, have_long = false, have_link = false;
	unsigned ext_run = 0;
	uint32_t ordinal = 0;
	for (;;) {
		unsigned char blk[KIMG_TAR_BLOCK];
		struct kimg_error e = { 0, 0, "" };
		int64_t n = take(s, blk, sizeof blk, &e);
		if (n < 0)
			return kimg_error_set(err, (int)n, ordinal, "tar entry %u: %s", (unsigned)ordinal + 1, e.what);
		if (n == 0 && !have_pax && !have_long && !have_link)
			break; /* the end without its zero blocks, as libarchive and GNU tar accept */
		if (n < (int64_t)sizeof blk)
			return kimg_error_set(err, -KIMG_EFORMAT, ordinal, "tar entry %u: header cut short (truncated)",
					      (unsigned)ordinal + 1);
		int r = kimg_tar_header_parse(kimg_span_make(blk, sizeof blk), h, &e);
		if (r < 0)
			return kimg_error_set(err, -KIMG_EFORMAT, ordinal, "tar entry %u: %s", (unsigned)ordinal + 1, e.what);
		if (r == 0)
			break; /* a zero block: the end (the second is read as the tail) */
		if (h->type == KIMG_TAR_PAX || h->type == KIMG_TAR_PAX_GLOBAL || h->type == KIMG_TAR_GNU_LONGNAME ||
		    h->type == KIMG_TAR_GNU_LONGLINK) {
			if (++ext_run > STREAM_EXT_RUN_MAX)
				return kimg_error_set(err, -KIMG_EFORMAT, ordinal,
						      "tar entry %u: more than %u extended headers before it",
						      (unsigned)ordinal + 1, STREAM_EXT_RUN_MAX);
			enum kimg_tar_type type = h->type;
			char *ext = read_ext(s, h->size, ordinal, err);
			if (!ext)
				return err ? err->code : -KIMG_EFORMAT;
			int rc = 0;
			if (type == KIMG_TAR_PAX) {
				if (!have_pax) {
					pax->name[0] = pax->link[0] = '\0';
					pax->size = UINT64_MAX;
				}
				have_pax = true;
				rc = kimg_tar_pax_apply(kimg_span_make(ext, h->size), pax, &e);
			} else if (type != KIMG_TAR_PAX_GLOBAL) {
				/* GNU: the name, NUL terminated, as the data */
				char *dst = type == KIMG_TAR_GNU_LONGNAME ? s->long_name : s->long_link;
				size_t len = strlen(ext);
				if (len >= KIMG_TAR_NAME_MAX)
					rc = kimg_error_set(&e, -KIMG_EFORMAT, 0, "GNU long name of %zu bytes (limit %u)", len,
							    KIMG_TAR_NAME_MAX - 1);
				else
					memcpy(dst, ext, len + 1);
				*(type == KIMG_TAR_GNU_LONGNAME ? &have_long : &have_link) = rc == 0;
			}
			free(ext);
			if (rc < 0)
				return kimg_error_set(err, -KIMG_EFORMAT, ordinal, "tar entry %u: %s", (unsigned)ordinal + 1, e.what);
			continue;
		}
		/* pax records beat GNU long names, which beat the header */
		if (have_long)
			memcpy(h->name, s->long_name, sizeof h->name);
		if (have_link)
			memcpy(h->link, s->long_link, sizeof h->link);
		if (have_pax) {
			if (pax->name[0])
				memcpy(h->name, pax->name, sizeof h->name);
			if (pax->link[0])
				memcpy(h->link, pax->link, sizeof h->link);
			if (pax->size != UINT64_MAX)
				h->size = pax->size;
		}
		have_pax = have_long = have_link = false;
		ext_run = 0;
		if (h->size > (uint64_t)INT64_MAX - KIMG_TAR_BLOCK)
			return kimg_error_set(err, -KIMG_EFORMAT, ordinal, "tar entry %u (%.200s): size %llu is not possible",
					      (unsigned)ordinal + 1, h->name, (unsigned long long)h->size);
		struct kimg_tar_entry te = { h->name, NULL, KIMG_TAR_ENTRY_OTHER, (int64_t)h->size };
		switch (h->type) {
		case KIMG_TAR_REG: te.type = KIMG_TAR_ENTRY_FILE; break;
		case KIMG_TAR_DIR: te.type = KIMG_TAR_ENTRY_DIR; break;
		case KIMG_TAR_SYMLINK: te.type = KIMG_TAR_ENTRY_SYMLINK; te.link = h->link; break;
		case KIMG_TAR_HARDLINK: te.type = KIMG_TAR_ENTRY_HARDLINK; te.link = h->link; break;
		default: break;
		}
		s->left = h->size;
		int rc = fn(ctx, ordinal, &te, s);
		if (rc)
			return rc;
		if (s->fail)
			return kimg_error_set(err, s->fail, ordinal, "tar entry %u (%.200s): %s", (unsigned)ordinal + 1, h->name,
					      s->ferr.what);
		/* what fn left of the data, and the padding */
		uint64_t skip = s->left + (kimg_tar_padded(h->size) - h->size);
		n = take(s, NULL, skip, &e);
		if (n != (int64_t)skip)
			return kimg_error_set(err, n < 0 ? (int)n : -KIMG_EFORMAT, ordinal, "tar entry %u (%.200s): %s",
					      (unsigned)ordinal + 1, h->name, n < 0 ? e.what : "data ends early (truncated)");
		s->left = 0;
		if (++ordinal == INT32_MAX)
			return kimg_error_set(err, -KIMG_ELIMIT, ordinal, "more than %d tar entries", INT32_MAX - 1);
	}
	if (s->codec != CODEC_PLAIN) {
		struct kimg_error e = { 0, 0, "" };
		int64_t n = take(s, NULL, STREAM_TAIL_MAX, &e);
		if (n < 0)
			return kimg_error_set(err, (int)n, ordinal, "after the end of the tar: %s", e.what);
	}
	return (int)ordinal;
}

static int stream_walk(kimg_tar_source_fn src, void *src_ctx, kimg_tar_entry_fn fn, void *ctx, bool check,
		       struct kimg_error *err)
{
	struct kimg_tar_stream *s = calloc(1, sizeof *s);
	if (!s)
		return kimg_error_set(err, -ENOMEM, 0, "out of memory");
	s->src = src;
	s->src_ctx = src_ctx;
	int rc = sniff(s, err);
	if (rc < 0)
		goto out;
	if (s->codec == CODEC_OTHER) {
		rc = walk_other(s, fn, ctx, err);
		goto out;
	}
	if (s->codec != CODEC_PLAIN) {
		if ((rc = kimg_codec_stream_open(&s->cs, s->codec == CODEC_GZIP ? KIMG_CODEC_GZIP : KIMG_CODEC_ZSTD, check,
						  err)) < 0)
			goto out;
		if (!(s->win = malloc(STREAM_WINDOW))) {
			rc = kimg_error_set(err, -ENOMEM, 0, "out of memory");
			goto out;
		}
	}
	rc = walk_native(s, fn, ctx, err);
out:
	kimg_codec_stream_close(&s->cs);
	free(s->win);
	free(s);
	return rc;
}

int kimg_tar_stream_walk(kimg_tar_source_fn src, void *src_ctx, kimg_tar_entry_fn fn, void *ctx,
			 struct kimg_error *err)
{
	return stream_walk(src, src_ctx, fn, ctx, true, err);
}

int kimg_tar_stream_walk_digested(kimg_tar_source_fn src, void *src_ctx, kimg_tar_entry_fn fn, void *ctx,
				  struct kimg_error *err)
{
	return stream_walk(src, src_ctx, fn, ctx, false, err);
}
