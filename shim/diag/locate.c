/* SPDX-License-Identifier: Apache-2.0 */
/* Finding the code behind a failed call: from a handle through the
 * registry to the image or file it was loaded from, and naming the file
 * (and offset) an in-memory image was mapped from. Bounding the image in
 * memory is bound.c.
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
