/* SPDX-License-Identifier: Apache-2.0 */
/* Tar header blocks: ustar fields (name 0..99, size 124..135, checksum
 * 148..155, type 156, linkname 157..256, magic 257, prefix 345..499), the
 * GNU base-256 size, and pax records (POSIX.1-2008, pax "Extended Header
 * Keyword Descriptions"). */
#include "tar_header.h"

#include <stdio.h>
#include <string.h>

/* An octal field (NUL or space terminated), or GNU base-256 (high bit of
 * the first byte). false when it is neither. */
static bool tar_number(const uint8_t *p, unsigned n, uint64_t *out)
{
	uint64_t v = 0;
	unsigned i = 0;
	if (p[0] & 0x80) {
		if (p[0] != 0x80)
			return false; /* negative or more than 64 bits */
		for (i = 1; i < n; i++) {
			if (v >> 56)
				return false;
			v = v << 8 | p[i];
		}
		*out = v;
		return true;
	}
	while (i < n && p[i] == ' ')
		i++;
	unsigned digits = 0;
	for (; i < n && p[i] >= '0' && p[i] <= '7'; i++, digits++) {
		if (v >> 61)
			return false;
		v = v << 3 | (uint64_t)(p[i] - '0');
	}
	for (; i < n; i++)
		if (p[i] != ' ' && p[i] != '\0')
			return false;
	*out = v;
	return digits > 0 || n == 0;
}

static void copy_field(char *dst, size_t dst_size, const uint8_t *src, size_t n)
{
	const uint8_t *nul = memchr(src, 0, n);
	size_t len = nul ? (size_t)(nul - src) : n;
	if (len >= dst_size)
		len = dst_size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

int kimg_tar_header_parse(struct kimg_span block, struct kimg_tar_header *h, struct kimg_error *err)
{
	const uint8_t *b = kimg_span_at(&block, 0, KIMG_TAR_BLOCK);
	if (!b)
		return kimg_error_set(err, -KIMG_ETRUNC, block.size, "tar header truncated");
	unsigned sum = 0;
	bool zero = true;
	for (unsigned i = 0; i < KIMG_TAR_BLOCK; i++) {
		zero &= b[i] == 0;
		sum += i >= 148 && i < 156 ? ' ' : b[i];
	}
	if (zero)
		return 0;
	uint64_t want;
	if (!tar_number(b + 148, 8, &want) || want != sum)
		return kimg_error_set(err, -KIMG_EFORMAT, 148, "tar header checksum mismatch: not a tar archive, or damaged");
	if (!tar_number(b + 124, 12, &h->size))
		return kimg_error_set(err, -KIMG_EFORMAT, 124, "tar header: size is not a number");
	switch (b[156]) {
	case '0': case '\0': case '7': h->type = KIMG_TAR_REG; break;
	case '1': h->type = KIMG_TAR_HARDLINK; break;
	case '2': h->type = KIMG_TAR_SYMLINK; break;
	case '5': h->type = KIMG_TAR_DIR; break;
	case 'x': h->type = KIMG_TAR_PAX; break;
	case 'g': h->type = KIMG_TAR_PAX_GLOBAL; break;
	case 'L': h->type = KIMG_TAR_GNU_LONGNAME; break;
	case 'K': h->type = KIMG_TAR_GNU_LONGLINK; break;
	default: h->type = KIMG_TAR_OTHER; break;
	}
	char name[101], prefix[156];
	copy_field(name, sizeof name, b, 100);
	prefix[0] = '\0';
	if (memcmp(b + 257, "ustar", 5) == 0 && memcmp(b + 257, "ustar  ", 8) != 0)
		copy_field(prefix, sizeof prefix, b + 345, 155); /* POSIX ustar; GNU keeps times there */
	if (prefix[0])
		snprintf(h->name, sizeof h->name, "%s/%s", prefix, name);
	else
		snprintf(h->name, sizeof h->name, "%s", name);
	copy_field(h->link, sizeof h->link, b + 157, 100);
	return 1;
}

int kimg_tar_pax_apply(struct kimg_span records, struct kimg_tar_header *h, struct kimg_error *err)
{
	uint64_t pos = 0;
	while (pos < records.size) {
		/* "LEN KEY=VALUE\n", LEN counting the whole record */
		uint64_t len = 0, i = pos;
		while (i < records.size && records.data[i] >= '0' && records.data[i] <= '9' && len < KIMG_TAR_EXT_MAX)
			len = len * 10 + (uint64_t)(records.data[i++] - '0');
		if (i == pos || i >= records.size || records.data[i] != ' ' || len < i - pos + 3 ||
		    len > records.size - pos || records.data[pos + len - 1] != '\n')
			return kimg_error_set(err, -KIMG_EFORMAT, pos, "pax header: malformed record");
		const char *kv = (const char *)records.data + i + 1;
		size_t kv_len = (size_t)(pos + len - 1 - (i + 1));
		const char *eq = memchr(kv, '=', kv_len);
		if (!eq)
			return kimg_error_set(err, -KIMG_EFORMAT, pos, "pax header: record without '='");
		size_t klen = (size_t)(eq - kv), vlen = kv_len - klen - 1;
		const char *val = eq + 1;
		char *dst = NULL;
		if (klen == 4 && memcmp(kv, "path", 4) == 0)
			dst = h->name;
		else if (klen == 8 && memcmp(kv, "linkpath", 8) == 0)
			dst = h->link;
		else if (klen == 4 && memcmp(kv, "size", 4) == 0) {
			uint64_t v = 0;
			size_t d = 0;
			for (; d < vlen && val[d] >= '0' && val[d] <= '9' && v < ((uint64_t)1 << 59); d++)
				v = v * 10 + (uint64_t)(val[d] - '0');
			if (d == 0 || d != vlen)
				return kimg_error_set(err, -KIMG_EFORMAT, pos, "pax header: size is not a number");
			h->size = v;
		}
		if (dst) {
			if (vlen >= KIMG_TAR_NAME_MAX || memchr(val, 0, vlen))
				return kimg_error_set(err, -KIMG_EFORMAT, pos, "pax header: name too long or holds a NUL");
			memcpy(dst, val, vlen);
			dst[vlen] = '\0';
		}
		pos += len;
	}
	return 0;
}
