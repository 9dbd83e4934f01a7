/* SPDX-License-Identifier: Apache-2.0 */
/* Bounding memory the shim is about to read (bound.h): an image pointer
 * was valid when the program passed it, but the program may have freed it
 * since, and registered wrappers point into other objects; libkimg lives
 * in someone else's process and must never fault there. Two ways: the
 * loaded object's PT_LOAD segments (fast, cached per thread) and
 * /proc/self/maps (everything else). */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "bound.h"
#include "fatbin.h"
#include "shim_pins.h"

/* ---- readable memory ---- */

/* Parse "start-end perms ..." at s; false on a malformed line. */
static bool parse_maps_line(const char *s, const char *end, uintptr_t *lo, uintptr_t *hi, bool *readable)
{
	uintptr_t v[2] = { 0, 0 };
	for (int i = 0; i < 2; i++) {
		int digits = 0;
		for (; s < end; s++, digits++) {
			char c = *s;
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (d < 0)
				break;
			v[i] = v[i] << 4 | (uintptr_t)d;
		}
		if (digits == 0 || s >= end || *s != (i == 0 ? '-' : ' '))
			return false;
		s++;
	}
	*lo = v[0];
	*hi = v[1];
	*readable = s < end && *s == 'r';
	return true;
}

uint64_t kimg_readable_run(const void *p, uint64_t limit)
{
	uintptr_t cur = (uintptr_t)p, want = (uintptr_t)p + (uintptr_t)limit;
	if (!p)
		return 0;
	if (want < cur)
		want = UINTPTR_MAX;
	/* /proc/self/maps is sorted by address, so one pass extends the run
	 * across adjacent readable mappings */
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	size_t have = 0;
	bool done = false;
	while (!done && cur < want) {
		ssize_t n = read(fd, buf + have, sizeof buf - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		size_t start = 0;
		for (;;) {
			char *nl = memchr(buf + start, '\n', have - start);
			if (!nl)
				break;
			uintptr_t lo, hi;
			bool r;
			if (parse_maps_line(buf + start, nl, &lo, &hi, &r) && hi > cur) {
				if (lo > cur || !r) {
					done = true;
					break;
				}
				cur = hi;
				if (cur >= want)
					break;
			}
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == sizeof buf)
			break; /* a line longer than the buffer: stop safely */
	}
	close(fd);
	if (cur <= (uintptr_t)p)
		return 0;
	uint64_t run = (uint64_t)(cur - (uintptr_t)p);
	return run < limit ? run : limit;
}

int kimg_image_bound(const void *p, uint64_t limit, const void **target, uint64_t *size, struct kimg_error *err)
{
	uint64_t run = kimg_readable_run(p, limit);
	if (run < 4)
		return kimg_error_set(err, -KIMG_ETRUNC, 0, "image memory is not readable");
	uint32_t magic;
	memcpy(&magic, p, 4);
	if (magic == KIMG_FATBIN_WRAPPER_MAGIC) {
		/* the wrapper's target is a different object: bound it by its own
		 * mapping before the core reads its header */
		uint64_t data;
		if (run < 16)
			return kimg_error_set(err, -KIMG_ETRUNC, 0, "fatbin wrapper memory is not readable");
		memcpy(&data, (const char *)p + 8, 8);
		const void *t = (const void *)(uintptr_t)data;
		uint64_t trun = kimg_readable_run(t, limit);
		if (trun < KIMG_FATBIN_HEADER_SIZE)
			return kimg_error_set(err, -KIMG_ETRUNC, 0, "fatbin wrapper points to unreadable memory");
		return kimg_memory_image_extent(t, trun, target, size, err);
	}
	return kimg_memory_image_extent(p, run, target, size, err);
}

/* ---- bounding memory by the loaded object it lies in ---- */

struct segment {
	uintptr_t lo, hi; /* readable PT_LOAD memory [lo, hi) */
};

/* The last two segments found: a library's registration wrappers and the
 * containers they point to sit in two segments, visited back and forth.
 * Per thread, so no lock; a stale entry is impossible while the object
 * stays loaded, and code is only registered by loaded objects. */
static __thread struct segment seg_cache[2];

struct seg_query {
	uintptr_t addr;
	struct segment found;
};

static int seg_cb(struct dl_phdr_info *info, size_t sz, void *data)
{
	struct seg_query *q = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (q->addr >= lo && q->addr - lo < ph->p_memsz) {
			q->found.lo = lo;
			q->found.hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Bytes readable from p inside its object's segment, up to limit; 0 when
 * p lies in no loaded object (heap, anonymous memory). */
static uint64_t object_run(const void *p, uint64_t limit)
{
	uintptr_t a = (uintptr_t)p;
	struct segment s = { 0, 0 };
	for (int i = 0; i < 2; i++)
		if (a >= seg_cache[i].lo && a < seg_cache[i].hi)
			s = seg_cache[i];
	if (!s.hi) {
		struct seg_query q = { a, { 0, 0 } };
		if (!p || !dl_iterate_phdr(seg_cb, &q))
			return 0;
		s = q.found;
		seg_cache[1] = seg_cache[0];
		seg_cache[0] = s;
	}
	uint64_t run = (uint64_t)(s.hi - a);
	return run < limit ? run : limit;
}

int kimg_loaded_image_bound(const void *p, uint64_t limit, const void **target, uint64_t *size,
			    struct kimg_error *err)
{
	uint64_t run = object_run(p, limit);
	if (run < 16)
		return kimg_image_bound(p, limit, target, size, err);
	uint32_t magic;
	memcpy(&magic, p, 4);
	if (magic == KIMG_FATBIN_WRAPPER_MAGIC) {
		uint64_t data;
		memcpy(&data, (const char *)p + 8, 8);
		const void *t = (const void *)(uintptr_t)data;
		uint64_t trun = object_run(t, limit);
		if (trun < KIMG_FATBIN_HEADER_SIZE)
			return kimg_image_bound(p, limit, target, size, err);
		return kimg_memory_image_extent(t, trun, target, size, err);
	}
	return kimg_memory_image_extent(p, run, target, size, err);
}

