/* SPDX-License-Identifier: Apache-2.0 */
/* One file of a walk: a tree's files sniffed by their head before they
 * are opened, then mapped under a SIGBUS guard and handed on as an input,
 * an archive's members or a container image's files. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "glibc_pins.h"
#include "elf64.h"
#include "file.h"
#include "gate.h"
#include "image.h"
#include "probe.h"
#include "source_names.h"
#include "walk.h"

/* The mapped file being walked, so that probe_input_zeros can give its
 * holes to the core (per thread: each worker walks its own file; nested
 * files of a thin archive are pushed and popped around their own walk). */
static _Thread_local const struct kimg_file *current_file;
static _Thread_local const char *current_path;

const char *probe_input_fs_path(struct kimg_span bytes)
{
	const struct kimg_file *f = current_file;
	if (f && bytes.data == f->bytes.data && bytes.size == f->bytes.size)
		return current_path;
	return NULL;
}

const struct kimg_zero_ranges *probe_input_zeros(struct kimg_span bytes)
{
	const struct kimg_file *f = current_file;
	if (f && f->zeros.n && bytes.data == f->bytes.data && bytes.size == f->bytes.size)
		return &f->zeros;
	return NULL;
}

const struct kimg_file *walk_current_file(void)
{
	return current_file;
}

struct file_walk {
	struct walk_state *ws;
	const char *path;
	struct kimg_span bytes;
	bool explicit_path;
	const struct kimg_file *f;
	bool random_access;            /* marked for random access when opened */
};

/* $KIMG_READAHEAD=kernel (main): leave the kernel's readahead on, for
 * disks where one large read costs little more than one page (a cold
 * network volume with a long round trip per request). */
static bool kernel_readahead;

void probe_set_kernel_readahead(bool on)
{
	kernel_readahead = on;
}

/* Whether the walk of a tree reads a file whose bytes begin with head
 * (kind: kimg_input_classify's): archives it opens, device code, host
 * ELF files of this machine's shape. A file named on the command line is
 * read whatever it holds. */
static bool walk_reads(const char *path, struct kimg_span head, enum walk_archive_kind ak, enum kimg_input_kind kind)
{
	if (ak != ARCHIVE_NONE)
		return walk_opens_archive(path, ak);
	return kind != KIMG_INPUT_UNKNOWN && !kimg_elf_is_foreign(head);
}

/* Everything that reads a mapped file's bytes, under kimg_file_guard. */
static void walk_mapped(void *ctx)
{
	struct file_walk *fw = ctx;
	const struct probe_walker *w = fw->ws->w;
	enum walk_archive_kind ak = walk_archive_kind_of(fw->bytes);
	enum kimg_input_kind kind = kimg_input_classify(fw->bytes);
	if (!fw->explicit_path && !walk_reads(fw->path, fw->bytes, ak, kind))
		return;
	if (ak != ARCHIVE_NONE) {
		/* Archives are inflated member by member: they read front to back. */
		if (fw->random_access)
			kimg_file_advise_normal(fw->f);
		walk_archive(fw->ws, fw->path, fw->bytes, ak, fw->explicit_path || walk_name_ends_with(fw->path, ".whl"), 0);
	} else {
		w->on_input(w->ctx, fw->path, fw->bytes, fw->explicit_path);
	}
}

/* First bytes read of a file found in a tree: most files are not read at
 * all (Python sources, data), and this much decides nearly all of them. */
#define HEAD_FIRST_READ 4096u

/* probe_tree_visitor.want_file: read the file's head (a page, not the
 * kernel's readahead window) and decide as walk_mapped would. A file that
 * cannot be opened or read is wanted: walk_file_now's open says why. Files
 * named as source are not opened (source_names.h: a cold walk pays a disk
 * read or two for every file it opens) unless --every-file is given; named
 * on the command line, any file is read. */
bool walk_tree_wants(void *ctx, int dirfd, const char *name, const char *path)
{
	const struct walk_state *ws = ctx;
	if (probe_gate_called_off(ws->w->gate) || (ws->w->skip_file && ws->w->skip_file(ws->w->ctx, path)))
		return false;
	if (!(ws->w->out && ws->w->out->every_file) && kimg_name_is_source(name, strlen(name)))
		return false;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return true;
	if (!kernel_readahead)
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	uint8_t head[KIMG_INPUT_HEAD_MAX];
	size_t have = 0, want = HEAD_FIRST_READ;
	bool whole = false, wanted = true;
	enum kimg_input_kind kind;
	for (;;) {
		ssize_t r = pread(fd, head + have, want - have, (off_t)have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break; /* wanted: the walk's own read reports it */
		have += (size_t)r;
		whole = r == 0;
		if (!whole && have < want)
			continue;
		if (kimg_input_classify_head(kimg_span_make(head, have), whole, &kind)) {
			struct kimg_span h = kimg_span_make(head, have);
			wanted = walk_reads(path, h, walk_archive_kind_of(h), kind);
			break;
		}
		want = KIMG_INPUT_HEAD_MAX; /* text behind a long comment: up to 64 KiB decide */
	}
	close(fd);
	return wanted;
}

/* ---- container images (image.h): their files handed on as a tree's ---- */

static void image_file(void *ctx, const char *path, struct kimg_span bytes)
{
	struct walk_state *ws = ctx;
	enum walk_archive_kind kind = walk_archive_kind_of(bytes);
	if (kind == ARCHIVE_NONE)
		ws->w->on_input(ws->w->ctx, path, bytes, false);
	else if (walk_opens_archive(path, kind))
		walk_archive(ws, path, bytes, kind, walk_name_ends_with(path, ".whl"), 1);
}

static bool image_want(void *ctx, const char *name, struct kimg_span head)
{
	(void)ctx;
	return walk_member_wanted(NULL, name, head);
}

static void image_error(void *ctx, const char *path, const char *problem)
{
	struct walk_state *ws = ctx;
	ws->w->on_error(ws->w->ctx, path, problem, false);
}

static void image_told(void *ctx, const struct probe_image_info *image)
{
	struct walk_state *ws = ctx;
	if (ws->w->on_image)
		ws->w->on_image(ws->w->ctx, image);
}

static void walk_image(struct walk_state *ws, const char *path)
{
	const struct probe_out *o = ws->w->out;
	struct probe_image_walker iw = { ws, image_file, image_want, image_error, image_told, o ? o->platform : NULL,
					 o && (o->reads_payloads || (o->walk_flags & KIMG_INPUT_SCAN_DATA)) };
	probe_image_walk(path, &iw);
}

void walk_file_now(struct walk_state *ws, const char *path, bool explicit_path)
{
	const struct probe_walker *w = ws->w;
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	if (explicit_path && probe_image_detect(path)) {
		walk_image(ws, path);
		return;
	}
	if (kimg_file_open_small_read(path, &f, KIMG_FILE_SMALL_READ, &err) < 0) {
		w->on_error(w->ctx, path, err.what, false);
		return;
	}
	/* The walk of a file jumps from header to header: no readahead around
	 * each one, from the first read on (the kernel's window is 128 KiB to
	 * several MiB per fault). --deep reads data sections whole: those
	 * keep the readahead. */
	bool random_access = !kernel_readahead && !(w->out && (w->out->walk_flags & KIMG_INPUT_SCAN_DATA));
	if (random_access)
		kimg_file_advise_random(&f);
	struct file_walk fw = { ws, path, f.bytes, explicit_path, &f, random_access };
	int depth = w->out ? w->out->j.depth : 0;
	const struct kimg_file *outer = current_file;
	const char *outer_path = current_path;
	current_file = &f;
	current_path = path;
	int rc = kimg_file_guard(&f, walk_mapped, &fw, &err);
	current_file = outer;
	current_path = outer_path;
	if (rc < 0) {
		/* Left midway: JSON may have open containers (text, half a line). */
		if (w->out && w->out->json)
			kimg_json_close_to(&w->out->j, depth);
		w->on_error(w->ctx, path, err.what, false);
	}
	kimg_file_close(&f);
}

