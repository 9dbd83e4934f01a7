/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer entry for sys/tar_stream.c: a container image layer (plain,
 * gzip or zstd, through the real zlib and libzstd, loaded as the product
 * loads them) walked entry by entry. Byte 0 picks the source's chunk size
 * (the walk must not depend on it) and how much of each entry is read; the
 * rest is the layer. libarchive is named absent: only the native reader is
 * reached. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	kimg_tar_set_library("libkimg-fuzz-absent.so.13");
	return 0;
}

struct src {
	const uint8_t *p;
	size_t n, pos, chunk;
	uint8_t *copy; /* each chunk handed out in its own allocation: ASan sees reads past it */
};

static int64_t source(void *ctx, const void **buf)
{
	struct src *s = ctx;
	free(s->copy);
	s->copy = NULL;
	size_t k = s->n - s->pos < s->chunk ? s->n - s->pos : s->chunk;
	if (!k)
		return 0;
	s->copy = malloc(k);
	if (!s->copy)
		return -12;
	memcpy(s->copy, s->p + s->pos, k);
	s->pos += k;
	*buf = s->copy;
	return (int64_t)k;
}

struct seen {
	unsigned read_len;
	unsigned sum;
	uint32_t entries;
};

static int entry(void *ctx, uint32_t ordinal, const struct kimg_tar_entry *e, struct kimg_tar_stream *s)
{
	struct seen *o = ctx;
	o->sum += (unsigned)strlen(e->name) + (e->link ? (unsigned)strlen(e->link) : 0u) + (unsigned)e->type;
	uint8_t buf[4096];
	struct kimg_error err;
	uint64_t want = (ordinal % 3 == 0 ? o->read_len : sizeof buf);
	int64_t n = kimg_tar_stream_read(s, buf, want < sizeof buf ? want : sizeof buf, &err);
	for (int64_t i = 0; i < n; i++)
		o->sum += buf[i];
	return ++o->entries > 100000; /* stop a long walk: the fuzzer's time is better spent elsewhere */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const size_t chunks[] = { 1, 3, 511, 512, 4096, 1 << 20 };
	struct src s = { data + 1, size - 1, 0, chunks[data[0] % 6], NULL };
	struct seen o = { (unsigned)(data[0] >> 3) * 37, 0, 0 };
	struct kimg_error err;
	/* the top bit: the walk of a digest-checked blob (no CRC-32) */
	int rc = data[0] & 0x80 ? kimg_tar_stream_walk_digested(source, &s, entry, &o, &err)
				: kimg_tar_stream_walk(source, &s, entry, &o, &err);
	free(s.copy);
	if (rc < 0 && !err.what[0])
		__builtin_trap(); /* every error says why */
	return 0;
}
