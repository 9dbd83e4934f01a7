/* SPDX-License-Identifier: Apache-2.0 */
/* Static archives ("!<arch>\n"): the member iterator (archive.h) and the
 * thin-archive member list; input.c walks each member as an input of its
 * own, with its name reported in every module.
 * Format: System V / GNU ar with the "//" long-name table and "/" or
 * "/SYM64/" symbol tables, and BSD "#1/N" inline names. */
#include "archive.h"

#include <string.h>


#include <limits.h>
#include <stdio.h>

#define AR_MAGIC_SIZE 8u
#define AR_HDR_SIZE 60u
#define AR_NAME_MAX KIMG_AR_NAME_MAX

/* Decimal, space padded; -1 on anything else. */
static int64_t ar_decimal(const uint8_t *p, unsigned n)
{
	int64_t v = 0;
	unsigned i = 0;
	for (; i < n && p[i] >= '0' && p[i] <= '9'; i++)
		v = v * 10 + (p[i] - '0'); /* at most 10 digits: no overflow */
	if (i == 0)
		return -1;
	for (; i < n; i++)
		if (p[i] != ' ')
			return -1;
	return v;
}

static void copy_name(char *dst, const uint8_t *src, uint64_t n)
{
	if (n > AR_NAME_MAX)
		n = AR_NAME_MAX;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Member name into `name`. Returns the number of data bytes the name
 * occupies at the start of the member (BSD "#1/N"), or -1 if malformed. */
static int64_t ar_name(const uint8_t *hdr, struct kimg_span longnames, struct kimg_span data, char *name)
{
	uint64_t n;
	if (hdr[0] == '#' && hdr[1] == '1' && hdr[2] == '/') {
		int64_t len = ar_decimal(hdr + 3, 13);
		if (len < 0 || (uint64_t)len > data.size)
			return -1;
		/* The inline name may be NUL padded. */
		const uint8_t *nul = memchr(data.data, 0, (size_t)len);
		copy_name(name, data.data, nul ? (uint64_t)(nul - data.data) : (uint64_t)len);
		return len;
	}
	if (hdr[0] == '/' && hdr[1] >= '0' && hdr[1] <= '9') {
		/* GNU: "/123" is an offset into "//", names end with "/\n". */
		int64_t off = ar_decimal(hdr + 1, 15);
		const uint8_t *end;
		if (off < 0 || (uint64_t)off >= longnames.size)
			return -1;
		end = memchr(longnames.data + off, '\n', longnames.size - (uint64_t)off);
		n = end ? (uint64_t)(end - (longnames.data + off)) : longnames.size - (uint64_t)off;
		if (n > 0 && longnames.data[off + n - 1] == '/')
			n--;
		copy_name(name, longnames.data + off, n);
		return 0;
	}
	/* Short name: GNU ends it with '/', BSD pads it with spaces. */
	for (n = 0; n < 16 && hdr[n] != '/' && hdr[n] != ' '; n++)
		;
	copy_name(name, hdr, n);
	return 0;
}

bool kimg_input_is_thin_archive(struct kimg_span in)
{
	const void *p = kimg_span_at(&in, 0, AR_MAGIC_SIZE);
	return p && memcmp(p, "!<thin>\n", AR_MAGIC_SIZE) == 0;
}

/* Thin archives: the same headers and "//" table, but a member's bytes
 * are not stored (only the tables' are), so the next header follows the
 * current one at once. */
int kimg_thin_archive_for_each_member(struct kimg_span in, kimg_thin_member_fn fn, void *ctx,
				      struct kimg_error *err)
{
	struct kimg_span longnames = { NULL, 0 };
	uint64_t pos = AR_MAGIC_SIZE;
	char name[AR_NAME_MAX + 1];
	int count = 0;

	if (!kimg_input_is_thin_archive(in))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not a thin archive");
	while (pos < in.size) {
		const uint8_t *hdr = kimg_span_at(&in, pos, AR_HDR_SIZE);
		if (!hdr) {
			if (in.size - pos == 1 && in.data[pos] == '\n')
				break;
			return kimg_error_set(err, -KIMG_ETRUNC, pos, "thin archive: member header truncated");
		}
		int64_t size = ar_decimal(hdr + 48, 10);
		if (hdr[58] != '`' || hdr[59] != '\n' || size < 0)
			return kimg_error_set(err, -KIMG_EFORMAT, pos, "thin archive: bad member header");
		bool table = memcmp(hdr, "//              ", 16) == 0 || memcmp(hdr, "/               ", 16) == 0 ||
			     memcmp(hdr, "/SYM64/         ", 16) == 0;
		if (table) {
			if (!kimg_span_has(&in, pos + AR_HDR_SIZE, (uint64_t)size))
				return kimg_error_set(err, -KIMG_ETRUNC, pos, "thin archive: table of %lld bytes passes the end",
						      (long long)size);
			if (hdr[1] == '/')
				longnames = kimg_span_sub(&in, pos + AR_HDR_SIZE, (uint64_t)size);
			pos += AR_HDR_SIZE + (uint64_t)size;
			pos += pos & 1;
			continue;
		}
		/* BSD "#1/N" names live in member data, which a thin archive lacks. */
		if ((hdr[0] == '#' && hdr[1] == '1' && hdr[2] == '/') ||
		    ar_name(hdr, longnames, kimg_span_make(NULL, 0), name) < 0 || !name[0])
			return kimg_error_set(err, -KIMG_EFORMAT, pos, "thin archive: bad member name");
		if (count == INT_MAX)
			return kimg_error_set(err, -KIMG_ELIMIT, pos, "thin archive: too many members");
		count++;
		int rc = fn ? fn(ctx, name, (uint64_t)size) : 0;
		if (rc)
			return rc;
		pos += AR_HDR_SIZE;
	}
	return count;
}

int kimg_ar_open(struct kimg_span in, struct kimg_ar *ar, struct kimg_error *err)
{
	memset(ar, 0, sizeof *ar);
	if (kimg_input_is_thin_archive(in))
		return kimg_error_set(err, -KIMG_ENOTSUP, 0,
				      "thin archive: its members are separate files (named by path), not inside it");
	if (!kimg_span_has(&in, 0, AR_MAGIC_SIZE) || memcmp(in.data, "!<arch>\n", AR_MAGIC_SIZE) != 0)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not an archive");
	ar->in = in;
	ar->pos = AR_MAGIC_SIZE;
	return 0;
}

int kimg_ar_next(struct kimg_ar *ar, struct kimg_ar_member *m, struct kimg_error *err)
{
	const struct kimg_span in = ar->in;
	while (ar->pos < in.size) {
		uint64_t pos = ar->pos;
		const uint8_t *hdr = kimg_span_at(&in, pos, AR_HDR_SIZE);
		int64_t size, skip;
		struct kimg_span data;

		/* A lone '\n' may pad the last member to an even offset. */
		if (!hdr) {
			if (in.size - pos == 1 && in.data[pos] == '\n')
				break;
			return kimg_error_set(err, -KIMG_ETRUNC, pos, "archive: member header truncated");
		}
		size = ar_decimal(hdr + 48, 10);
		if (hdr[58] != '`' || hdr[59] != '\n' || size < 0)
			return kimg_error_set(err, -KIMG_EFORMAT, pos, "archive: bad member header");
		if (!kimg_span_has(&in, pos + AR_HDR_SIZE, (uint64_t)size))
			return kimg_error_set(err, -KIMG_ETRUNC, pos, "archive: member of %lld bytes passes the end",
					      (long long)size);
		data = kimg_span_sub(&in, pos + AR_HDR_SIZE, (uint64_t)size);
		ar->pos = pos + AR_HDR_SIZE + (uint64_t)size;
		ar->pos += ar->pos & 1; /* members start at even offsets */

		if (memcmp(hdr, "//              ", 16) == 0) {
			ar->longnames = data;
			continue;
		}
		if (memcmp(hdr, "/               ", 16) == 0 || memcmp(hdr, "/SYM64/         ", 16) == 0 ||
		    memcmp(hdr, "__.SYMDEF", 9) == 0)
			continue; /* symbol tables */
		if ((skip = ar_name(hdr, ar->longnames, data, ar->name)) < 0)
			return kimg_error_set(err, -KIMG_EFORMAT, pos, "archive: bad member name");
		/* Symbol tables named "__.SYMDEF SORTED" come with BSD names. */
		if (strncmp(ar->name, "__.SYMDEF", 9) == 0)
			continue;
		m->name = ar->name;
		m->body = kimg_span_sub(&data, (uint64_t)skip, data.size - (uint64_t)skip);
		m->offset = pos + AR_HDR_SIZE + (uint64_t)skip;
		return 1;
	}
	ar->pos = in.size;
	return 0;
}
