/* SPDX-License-Identifier: Apache-2.0 */
/* Tars built field by field for the unit tests that read them
 * (test_tar_stream, test_tar, test_image_source): ustar headers, pax
 * records, GNU long names, in memory, so that the oracle is the bytes
 * written here, not a reader. */
#ifndef KIMG_TEST_TARBUILD_H
#define KIMG_TEST_TARBUILD_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tb {
	unsigned char *p;
	size_t n, cap;
};

static inline void tb_raw(struct tb *t, const void *d, size_t n)
{
	if (t->n + n > t->cap) {
		t->cap = (t->n + n) * 2 + 4096;
		t->p = realloc(t->p, t->cap);
		ck_assert(t->p != NULL);
	}
	if (d)
		memcpy(t->p + t->n, d, n);
	else
		memset(t->p + t->n, 0, n);
	t->n += n;
}

/* A ustar header; size_field NULL: the octal of size. */
static inline void tb_header_ex(struct tb *t, const char *name, char type, uint64_t size, const char *link, bool base256)
{
	unsigned char h[512] = { 0 };
	memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	if (base256) {
		h[124] = 0x80;
		for (int i = 0; i < 8; i++)
			h[135 - i] = (unsigned char)(size >> (8 * i));
	} else {
		char f[32];
		snprintf(f, sizeof f, "%011llo", (unsigned long long)size);
		memcpy(h + 124, f, 11);
	}
	memcpy(h + 136, "00000000000", 11);
	h[156] = (unsigned char)type;
	if (link)
		memcpy(h + 157, link, strlen(link) < 100 ? strlen(link) : 100);
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	char c[8];
	snprintf(c, sizeof c, "%06o", sum);
	memcpy(h + 148, c, 7);
	tb_raw(t, h, sizeof h);
}

static inline void tb_header(struct tb *t, const char *name, char type, uint64_t size, const char *link)
{
	tb_header_ex(t, name, type, size, link, false);
}

static inline void tb_data(struct tb *t, const void *d, size_t n)
{
	tb_raw(t, d, n);
	if (n % 512)
		tb_raw(t, NULL, 512 - n % 512);
}

static inline void tb_file(struct tb *t, const char *name, const char *data)
{
	tb_header(t, name, '0', strlen(data), NULL);
	tb_data(t, data, strlen(data));
}

/* One pax record, its length counting itself. */
static inline size_t pax_record(char *out, size_t cap, const char *kv)
{
	size_t len = strlen(kv) + 3;
	for (;;) {
		int n = snprintf(out, cap, "%zu %s\n", len, kv);
		if ((size_t)n == len)
			return len;
		len = (size_t)n;
	}
}

static inline void tb_pax(struct tb *t, const char *records)
{
	tb_header(t, "./PaxHeaders/x", 'x', strlen(records), NULL);
	tb_data(t, records, strlen(records));
}

static inline void tb_end(struct tb *t)
{
	tb_raw(t, NULL, 1024);
}

/* t through a compressor (gzip -c -n, zstd -q -c, bzip2 -c: scripts/setup-debian.sh
 * installs them). */
static inline struct tb compress(const struct tb *t, const char *tool)
{
	char in[] = "/tmp/kimg-tarbuild-XXXXXX";
	int fd = mkstemp(in);
	ck_assert(fd >= 0);
	ck_assert_int_eq(write(fd, t->p, t->n), (ssize_t)t->n);
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "%s <%s", tool, in);
	FILE *p = popen(cmd, "r");
	ck_assert_msg(p != NULL, "cannot run %s", tool);
	struct tb out = { 0 };
	unsigned char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, p)) > 0)
		tb_raw(&out, buf, n);
	ck_assert_msg(pclose(p) == 0, "%s failed (installed? scripts/setup-debian.sh)", tool);
	unlink(in);
	return out;
}

#endif
