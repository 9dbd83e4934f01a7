/* Finding the code behind a failed call: from a handle through the
 * registry to the image or file it was loaded from, then bounding the
 * image in memory without ever touching an unmapped page, and naming the
 * file (and offset) an in-memory image was mapped from.
 *
 * Why the care: a module's image pointer was valid when the program passed
 * it to cuModuleLoadData, but the program may have freed it since (the
 * driver copies modules), and registered wrappers point to other objects.
 * The shim lives in someone else's process and must never fault there. */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "diag_internal.h"
#include "fatbin.h"
#include "locate.h"

/* ---- registry walk ---- */

/* Kinds a parent handle may have, tried in order: a CUfunction comes from
 * a module (cuModuleGetFunction) or a kernel (cuKernelGetFunction); a
 * kernel from a library; a host stub from a registered fatbin. */
static const enum kimg_handle_kind parent_kinds[KIMG_HANDLE_KIND_COUNT][2] = {
	[KIMG_HANDLE_MODULE] = { KIMG_HANDLE_KIND_COUNT, KIMG_HANDLE_KIND_COUNT },
	[KIMG_HANDLE_LIBRARY] = { KIMG_HANDLE_KIND_COUNT, KIMG_HANDLE_KIND_COUNT },
	[KIMG_HANDLE_FUNCTION] = { KIMG_HANDLE_MODULE, KIMG_HANDLE_KERNEL },
	[KIMG_HANDLE_KERNEL] = { KIMG_HANDLE_LIBRARY, KIMG_HANDLE_KIND_COUNT },
	[KIMG_HANDLE_FATBIN] = { KIMG_HANDLE_KIND_COUNT, KIMG_HANDLE_KIND_COUNT },
	[KIMG_HANDLE_HOST_STUB] = { KIMG_HANDLE_FATBIN, KIMG_HANDLE_KIND_COUNT },
};

static const char *how_loaded(enum kimg_handle_kind kind, bool from_path)
{
	switch (kind) {
	case KIMG_HANDLE_MODULE:
		return from_path ? "cuModuleLoad" : "cuModuleLoadData";
	case KIMG_HANDLE_LIBRARY:
		return from_path ? "cuLibraryLoadFromFile" : "cuLibraryLoadData";
	case KIMG_HANDLE_FATBIN:
		return "__cudaRegisterFatBinary";
	default:
		return NULL;
	}
}

bool kimg_locate(const struct kimg_failure *f, struct kimg_located *out)
{
	memset(out, 0, sizeof *out);
	out->kernel = f->kernel;
	if (f->image || f->path) {
		out->image = f->image;
		out->path = f->path;
		out->how = f->call;
		out->size = f->image_size;
		return true;
	}
	enum kimg_handle_kind kind = f->handle_kind;
	const void *h = f->handle;
	/* each hop moves up one level; 4 hops reach the top from any kind */
	for (int hop = 0; hop < 4 && h && (unsigned)kind < KIMG_HANDLE_KIND_COUNT; hop++) {
		struct kimg_origin o;
		/* [V] under CUDA 13 a kernel handle is also its CUfunction, and
		 * runtimes launch it as one */
		if (!kimg_registry_find(kind, h, &o)) {
			if (kind != KIMG_HANDLE_FUNCTION || !kimg_registry_find(KIMG_HANDLE_KERNEL, h, &o))
				return false;
			kind = KIMG_HANDLE_KERNEL;
		}
		if (!out->kernel && o.name)
			out->kernel = o.name;
		if (o.image || o.path) {
			out->image = o.image;
			out->path = o.path;
			out->how = how_loaded(kind, o.path != NULL);
			return true;
		}
		enum kimg_handle_kind next = KIMG_HANDLE_KIND_COUNT;
		for (int i = 0; i < 2 && next == KIMG_HANDLE_KIND_COUNT; i++) {
			enum kimg_handle_kind k = parent_kinds[kind][i];
			struct kimg_origin probe;
			if (k != KIMG_HANDLE_KIND_COUNT && kimg_registry_find(k, o.parent, &probe))
				next = k;
		}
		kind = next;
		h = o.parent;
	}
	return false;
}

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

/* ---- which file an address was mapped from ---- */

struct phdr_query {
	uintptr_t addr;
	bool found, in_file, is_main;
	uint64_t file_off;
	char name[512];
};

static int phdr_cb(struct dl_phdr_info *info, size_t sz, void *data)
{
	struct phdr_query *q = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (q->addr < start || q->addr - start >= ph->p_memsz)
			continue;
		q->found = true;
		q->in_file = q->addr - start < ph->p_filesz;
		q->file_off = ph->p_offset + (q->addr - start);
		q->is_main = !info->dlpi_name || !info->dlpi_name[0];
		snprintf(q->name, sizeof q->name, "%s", q->is_main ? "" : info->dlpi_name);
		return 1;
	}
	return 0;
}

bool kimg_locate_file(const void *addr, char *path, size_t size, uint64_t *file_off, bool *off_known)
{
	struct phdr_query q;
	memset(&q, 0, sizeof q);
	q.addr = (uintptr_t)addr;
	dl_iterate_phdr(phdr_cb, &q);
	if (!q.found)
		return false;
	if (q.is_main) {
		/* the main program has no name in the link map */
		ssize_t n = readlink("/proc/self/exe", path, size - 1);
		path[n > 0 ? n : 0] = '\0';
	} else {
		snprintf(path, size, "%s", q.name);
	}
	*off_known = q.in_file;
	*file_off = q.in_file ? q.file_off : 0;
	return true;
}

/* ---- a module file given by path ---- */

/* Not sys/file.c: that one uses fstat, whose glibc 2.33 symbol version
 * would raise libkimg's glibc baseline (tests/scripts/glibc_baseline.sh);
 * open + lseek + mmap are as old as glibc's versioning. */
int kimg_map_path(const char *path, struct kimg_mapped_file *f, struct kimg_error *err)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kimg_error_set(err, -errno, 0, "open %s: %s", path, strerror(errno));
	off_t end = lseek(fd, 0, SEEK_END);
	if (end <= 0) {
		int e = end < 0 ? errno : 0;
		close(fd);
		return kimg_error_set(err, e ? -e : -KIMG_ETRUNC, 0, "%s: %s", path, e ? strerror(e) : "empty file");
	}
	void *m = mmap(NULL, (size_t)end, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (m == MAP_FAILED)
		return kimg_error_set(err, -e, 0, "mmap %s: %s", path, strerror(e));
	f->map = m;
	f->size = (size_t)end;
	f->bytes = kimg_span_make(m, (uint64_t)end);
	return 0;
}

void kimg_unmap_path(struct kimg_mapped_file *f)
{
	if (f->map)
		munmap(f->map, f->size);
	memset(f, 0, sizeof *f);
}
