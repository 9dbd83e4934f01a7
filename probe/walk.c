/* SPDX-License-Identifier: Apache-2.0 */
/* Turning command-line paths into inputs: regular files are mapped,
 * directories recursed, .whl/.zip archives read member by member in
 * memory (sys/zip.h). Every problem is reported and the walk goes on.
 * With worker threads (probe_walker.job_begin, pool.c) the main thread
 * only lists the tree: each file, and each problem met while listing, is
 * one job, rendered into its own buffers by a worker and written by the
 * main thread in walk order. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glibc_pins.h"
#include "elf64.h"
#include "image.h"
#include "fatbin.h"
#include "file.h"
#include "probe.h"
#include "thread.h"
#include "source_names.h"
#include "tar.h"
#include "zip.h"

/* Files read ahead of the one whose output is written next, per thread:
 * when a slow file (cuBLASLt's 2,782 modules) holds up the output, the
 * workers go on with the files after it instead of waiting. A warm check
 * of the H200's site-packages took 0.09-0.10 s with 256, 0.10-0.12 s with
 * 16 (-j 8, seven runs each); the memory is the rendered output of those
 * files. */
#define WALK_JOBS_IN_FLIGHT_PER_THREAD 256

/* While the walker's output waits (probe_walker.when_ready), files below
 * this size are held back: what they do before they wait takes little,
 * and each would keep a worker from a large one (with --sm native on the
 * H200, cuBLASLt, found at 11 ms, started only at 33 ms, after 16 small
 * files that had waited for the 22 ms GPU query). */
#define WALK_HOLD_BELOW ((uint64_t)16 << 20)

/* Where a worker's problem lines go while it runs a job (its buffer). */
static _Thread_local FILE *err_stream;

void probe_report_error(const char *path, const char *problem)
{
	struct probe_esc p, q;
	fprintf(err_stream ? err_stream : stderr, "kimg-probe: %s: %s\n", probe_esc(&p, path), probe_esc(&q, problem));
}

void probe_input_unreadable(void *ctx, const char *path, const char *problem)
{
	struct probe_out *out = ctx;
	probe_report_error(path, problem);
	out->errors++;
	if (out->json)
		probe_json_unreadable_file(&out->j, path, problem);
}

void probe_input_unreadable_quiet(void *ctx, const char *path, const char *problem)
{
	struct probe_out *out = ctx;
	out->errors++;
	if (out->json)
		probe_json_unreadable_file(&out->j, path, problem);
}

unsigned long probe_report_problems(const struct probe_file *pf)
{
	unsigned long n = 0;
	if (pf->error[0]) {
		probe_report_error(pf->path, pf->error);
		n++;
	}
	for (size_t i = 0; i < pf->n_mods; i++)
		if (pf->mods[i].error[0]) {
			char place[256], msg[512];
			probe_format_module_place(&pf->mods[i], place, sizeof place);
			snprintf(msg, sizeof msg, "module %s: %s", place, pf->mods[i].error);
			probe_report_error(pf->path, msg);
			n++;
		}
	return n;
}

static bool starts_with(struct kimg_span s, const char *magic, size_t n)
{
	const void *p = kimg_span_at(&s, 0, n);
	return p && memcmp(p, magic, n) == 0;
}

static bool ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n >= k && strcasecmp(name + n - k, suffix) == 0;
}

/* ---- archives: which ones, and how deep ---- */

/* Archives inside archives are read this many levels deep (a wheel in a
 * zip in a zip is 3); deeper ones are reported, not read. */
#define NEST_MAX 4

enum archive_kind { ARCHIVE_NONE = 0, ARCHIVE_ZIP, ARCHIVE_EMPTY_ZIP, ARCHIVE_TAR };

/* Zip by its first local header (or the end record alone: an empty zip);
 * tar packages by their compression magic or the ustar mark. */
static enum archive_kind archive_kind_of(struct kimg_span head)
{
	static const uint8_t zstd[4] = { 0x28, 0xb5, 0x2f, 0xfd }, xz[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 },
			     gz[2] = { 0x1f, 0x8b };
	const uint8_t *ustar = kimg_span_at(&head, 257, 5);
	if (starts_with(head, "PK\3\4", 4))
		return ARCHIVE_ZIP;
	if (starts_with(head, "PK\5\6", 4))
		return ARCHIVE_EMPTY_ZIP;
	if (starts_with(head, "BZh", 3) || starts_with(head, (const char *)zstd, 4) ||
	    starts_with(head, (const char *)xz, 6) || starts_with(head, (const char *)gz, 2) ||
	    (ustar && memcmp(ustar, "ustar", 5) == 0))
		return ARCHIVE_TAR;
	return ARCHIVE_NONE;
}

static bool is_tar_name(const char *name)
{
	static const char *const sfx[] = { ".tar", ".tar.bz2", ".tbz2", ".tar.zst", ".tar.gz", ".tgz", ".tar.xz" };
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
		if (ends_with(name, sfx[i]))
			return true;
	return false;
}

/* Member names that may carry device code, for zips that are not wheels
 * (.zip, .egg, .conda ...): shared objects, static archives and objects,
 * device code files and archives that may hold them. A zip without one
 * (numpy's .npz, data and web archives) inflates nothing. */
static bool code_name(void *ctx, const char *name)
{
	(void)ctx;
	static const char *const sfx[] = { ".so", ".a", ".o", ".cubin", ".fatbin", ".ptx", ".whl", ".zip", ".egg", ".conda" };
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strstr(base, ".so."))
		return true; /* libfoo.so.1.2 */
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
		if (ends_with(base, sfx[i]))
			return true;
	return is_tar_name(base);
}

/* When walking a tree, which archives to open: wheels, conda packages and
 * other zips (their members are filtered by code_name); not numpy .npz
 * data, not tarballs other than conda's .tar.bz2. An archive named on the
 * command line is always opened. */
static bool open_in_walk(const char *path, enum archive_kind kind)
{
	if (kind == ARCHIVE_EMPTY_ZIP)
		return false; /* holds nothing; named on the command line it is an error */
	if (kind == ARCHIVE_TAR)
		return ends_with(path, ".tar.bz2");
	return !ends_with(path, ".npz");
}

/* Archives that could not be read because a library is missing: one line
 * per library at the end of the walk, not one per archive. */
struct unread {
	char *paths;   /* ", "-separated */
	size_t len, cap;
	unsigned long count;
	char why[120];
};

struct walk_state {
	const struct probe_walker *w;
	struct unread zlib, tar;
	unsigned long dangling;        /* links inside the trees that lead nowhere */
	char *first_dangling;
	struct probe_pool *pool;       /* main thread with workers, else NULL */
	bool gated;                    /* the pool's gate waits for when_ready */
};

static void unread_add(struct walk_state *ws, struct unread *u, const char *path, const char *why)
{
	size_t n = strlen(path);
	/* the same archive reported by several members: once */
	if (u->len >= n && strcmp(u->paths + u->len - n, path) == 0)
		return;
	if (u->len + n + 3 > u->cap) {
		size_t cap = (u->cap + n + 3) * 2;
		char *p = realloc(u->paths, cap);
		if (!p)
			return;
		u->paths = p;
		u->cap = cap;
	}
	u->len += (size_t)snprintf(u->paths + u->len, u->cap - u->len, "%s%s", u->count ? ", " : "", path);
	u->count++;
	snprintf(u->why, sizeof u->why, "%s", why);
	if (ws->w->on_quiet_error)
		ws->w->on_quiet_error(ws->w->ctx, path, why);
}

static void unread_report(const struct walk_state *ws, const struct unread *u, const char *how)
{
	if (!u->count)
		return;
	fprintf(stderr, "kimg-probe: %lu archive%s not read (%s; %s): %s\n", u->count, u->count == 1 ? "" : "s",
		u->why, how, u->paths);
	if (!ws->w->on_quiet_error)
		ws->w->on_error(ws->w->ctx, "(archives)", u->why);
}

static void walk_archive(struct walk_state *ws, const char *path, struct kimg_span bytes, enum archive_kind kind,
			 bool every_member, int depth);

/* Worth reading from an archive: anything that may hold device code, and
 * archives that may hold it in turn. The head is a prefix of the member,
 * so shape checks only look at magic numbers (a truncated ELF must not be
 * judged by its section table). */
static bool member_want(void *ctx, const char *name, struct kimg_span head)
{
	(void)ctx;
	uint32_t magic;
	if (kimg_elf_has_magic(head))
		return !kimg_elf_is_foreign(head); /* 32-bit, big-endian: no device code kimg can read */
	if (starts_with(head, "!<arch>\n", 8))
		return true;
	if (kimg_span_u32(&head, 0, &magic) && magic == KIMG_FATBIN_MAGIC)
		return true;
	enum archive_kind ak = archive_kind_of(head);
	if (ak == ARCHIVE_ZIP)
		return !ends_with(name, ".npz");
	if (ak == ARCHIVE_EMPTY_ZIP)
		return false; /* holds nothing */
	if (ak == ARCHIVE_TAR)
		return is_tar_name(name);
	enum kimg_input_kind k = kimg_input_classify(head);
	return k == KIMG_INPUT_PTX || k == KIMG_INPUT_CUBIN || k == KIMG_INPUT_FATBIN;
}

struct archive_ctx {
	struct walk_state *ws;
	const char *archive_path;
	int depth;                /* of the members: 1 for members of a file on disk */
	bool tar;
};

static int archive_member(void *ctx, const char *name, struct kimg_span bytes, const struct kimg_error *merr)
{
	struct archive_ctx *a = ctx;
	const struct probe_walker *w = a->ws->w;
	size_t len = strlen(a->archive_path) + strlen(name) + 3;
	char *path = malloc(len);
	if (!path)
		return -ENOMEM;
	snprintf(path, len, "%s!/%s", a->archive_path, name);
	enum archive_kind kind = merr ? ARCHIVE_NONE : archive_kind_of(bytes);
	if (merr && merr->code == -KIMG_ENOCODEC)
		unread_add(a->ws, &a->ws->zlib, a->archive_path, merr->what);
	else if (merr)
		w->on_error(w->ctx, path, merr->what);
	else if (kind != ARCHIVE_NONE)
		walk_archive(a->ws, path, bytes, kind, ends_with(name, ".whl"), a->depth);
	else
		w->on_input(w->ctx, path, bytes, false);
	free(path);
	return 0;
}

/* depth: of the archive itself (0 on disk). every_member: sniff each
 * member (wheels, archives named on the command line); otherwise zips
 * inflate only members with code_name names. */
static void walk_archive(struct walk_state *ws, const char *path, struct kimg_span bytes, enum archive_kind kind,
			 bool every_member, int depth)
{
	const struct probe_walker *w = ws->w;
	struct archive_ctx a = { ws, path, depth + 1, kind == ARCHIVE_TAR };
	struct kimg_error err = { 0, 0, "" };
	int rc;
	if (depth >= NEST_MAX) {
		char msg[96];
		snprintf(msg, sizeof msg, "archive nested %d levels deep, more than %d: not read", depth + 1, NEST_MAX);
		w->on_error(w->ctx, path, msg);
		return;
	}
	if (kind == ARCHIVE_EMPTY_ZIP) {
		w->on_error(w->ctx, path, "empty zip archive: no members, nothing to check");
		return;
	}
	if (kind == ARCHIVE_TAR) {
		rc = kimg_tar_for_each_member(bytes, member_want, archive_member, &a, &err);
		if (rc == -KIMG_ENOCODEC) {
			unread_add(ws, &ws->tar, path, err.what);
			return;
		}
	} else {
		struct kimg_zip_walk zw = { every_member ? NULL : code_name, member_want, archive_member, &a };
		rc = kimg_zip_walk(bytes, &zw, &err);
	}
	if (rc < 0)
		w->on_error(w->ctx, path, err.what[0] ? err.what : kimg_strerror(rc));
}

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

/* ---- several threads inside one input (probe_input_parallel) ---- */

struct parallel {
	const struct kimg_file *f;
	size_t n;
	atomic_size_t next;
	atomic_bool changed;           /* some helper's guard tripped */
	void (*fn)(void *ctx, size_t i);
	void *ctx;
};

/* fn(ctx) under a SIGBUS guard of f (none when f is NULL): false when the
 * file changed under it. */
static bool run_guarded(const struct kimg_file *f, void (*fn)(void *ctx), void *ctx)
{
	struct kimg_error err = { 0, 0, "" };
	if (!f) {
		fn(ctx);
		return true;
	}
	return kimg_file_guard(f, fn, ctx, &err) == 0;
}

static void parallel_loop(void *arg)
{
	struct parallel *p = arg;
	for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;)
		p->fn(p->ctx, i);
}

static void *parallel_helper(void *arg)
{
	struct parallel *p = arg;
	if (!run_guarded(p->f, parallel_loop, p)) {
		atomic_store(&p->changed, true);
		atomic_store(&p->next, p->n); /* the others stop early */
	}
	return NULL;
}

void probe_input_parallel(size_t n, unsigned threads, void (*fn)(void *ctx, size_t i), void *ctx)
{
	struct parallel p = { current_file, n, 0, false, fn, ctx };
	struct probe_thread t[PROBE_JOBS_MAX];
	unsigned started = 0;
	if (threads > PROBE_JOBS_MAX)
		threads = PROBE_JOBS_MAX;
	if (threads > n)
		threads = (unsigned)n;
	if (threads <= 1) {
		parallel_loop(&p);
		return;
	}
	/* This thread takes part too, under a guard of its own, so that a
	 * change it meets does not unwind its stack under the helpers. A
	 * helper that gets no thread runs at join and finds nothing left. */
	for (; started + 1 < threads; started++)
		probe_thread_create(&t[started], parallel_helper, &p, PROBE_THREAD_INLINE_AT_JOIN);
	parallel_helper(&p);
	for (unsigned i = 0; i < started; i++)
		probe_thread_join(&t[i]);
	if (atomic_load(&p.changed))
		kimg_file_guard_fail();
}

/* ---- one task beside this thread's own (probe_input_beside) ---- */

struct beside {
	const struct kimg_file *f;
	void (*fn)(void *ctx);
	void *ctx;
	bool changed;                  /* its guard tripped */
};

static void *beside_run(void *arg)
{
	struct beside *b = arg;
	b->changed = !run_guarded(b->f, b->fn, b->ctx);
	return NULL;
}

void probe_input_beside(void (*here)(void *ctx), void *here_ctx, void (*aside)(void *ctx), void *aside_ctx)
{
	struct beside mine = { current_file, here, here_ctx, false }, other = { current_file, aside, aside_ctx, false };
	struct probe_thread t;
	/* Without a thread the other part runs at join, after this one. */
	probe_thread_create(&t, beside_run, &other, PROBE_THREAD_INLINE_AT_JOIN);
	/* This thread's part under a guard of its own too: a change it meets
	 * must not unwind its stack while the helper still uses it. */
	beside_run(&mine);
	probe_thread_join(&t);
	if (mine.changed || other.changed)
		kimg_file_guard_fail();
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
static bool walk_reads(const char *path, struct kimg_span head, enum archive_kind ak, enum kimg_input_kind kind)
{
	if (ak != ARCHIVE_NONE)
		return open_in_walk(path, ak);
	return kind != KIMG_INPUT_UNKNOWN && !kimg_elf_is_foreign(head);
}

/* Everything that reads a mapped file's bytes, under kimg_file_guard. */
static void walk_mapped(void *ctx)
{
	struct file_walk *fw = ctx;
	const struct probe_walker *w = fw->ws->w;
	enum archive_kind ak = archive_kind_of(fw->bytes);
	enum kimg_input_kind kind = kimg_input_classify(fw->bytes);
	if (!fw->explicit_path && !walk_reads(fw->path, fw->bytes, ak, kind))
		return;
	if (ak != ARCHIVE_NONE) {
		/* Archives are inflated member by member: they read front to back. */
		if (fw->random_access)
			kimg_file_advise_normal(fw->f);
		walk_archive(fw->ws, fw->path, fw->bytes, ak, fw->explicit_path || ends_with(fw->path, ".whl"), 0);
	} else {
		w->on_input(w->ctx, fw->path, fw->bytes, fw->explicit_path);
	}
}

/* The run called off (probe_walker.called_off): nothing more to read. */
static bool called_off(const struct walk_state *ws)
{
	return ws->w->called_off && ws->w->called_off(ws->w->ctx);
}

/* May the walk write its output (probe_walker.output_ready)? Main thread. */
static bool output_ready(const struct walk_state *ws)
{
	return !ws->w->output_ready || ws->w->output_ready(ws->w->ctx);
}

static bool tree_stop(void *ctx)
{
	return called_off(ctx);
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
static bool want_file(void *ctx, int dirfd, const char *name, const char *path)
{
	const struct walk_state *ws = ctx;
	if (called_off(ws) || (ws->w->skip_file && ws->w->skip_file(ws->w->ctx, path)))
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
			wanted = walk_reads(path, h, archive_kind_of(h), kind);
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
	enum archive_kind kind = archive_kind_of(bytes);
	if (kind == ARCHIVE_NONE)
		ws->w->on_input(ws->w->ctx, path, bytes, false);
	else if (open_in_walk(path, kind))
		walk_archive(ws, path, bytes, kind, ends_with(path, ".whl"), 1);
}

static bool image_want(void *ctx, const char *name, struct kimg_span head)
{
	(void)ctx;
	return member_want(NULL, name, head);
}

static void image_error(void *ctx, const char *path, const char *problem)
{
	struct walk_state *ws = ctx;
	ws->w->on_error(ws->w->ctx, path, problem);
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

static void walk_file_now(struct walk_state *ws, const char *path, bool explicit_path)
{
	const struct probe_walker *w = ws->w;
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	if (explicit_path && probe_image_detect(path)) {
		walk_image(ws, path);
		return;
	}
	if (kimg_file_open_small_read(path, &f, KIMG_FILE_SMALL_READ, &err) < 0) {
		w->on_error(w->ctx, path, err.what);
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
		w->on_error(w->ctx, path, err.what);
	}
	kimg_file_close(&f);
}

/* ---- one file (or one listing problem) as a worker's job ---- */

struct walk_job {
	struct probe_pool_job base;
	struct walk_state *ws;         /* the main thread's */
	char *path;
	char *problem;                 /* a problem of the listing itself, or NULL */
	bool explicit_path;
	struct probe_out *out;         /* the job's copy of the command state */
	struct unread zlib, tar;
	char *out_buf, *err_buf;
	size_t out_len, err_len;
	bool in_finish;                /* no buffers, or run by the submitter in order: finish does the work */
};

static void job_run(struct probe_pool_job *base)
{
	struct walk_job *job = (struct walk_job *)base;
	const struct probe_walker *w = job->ws->w;
	if (called_off(job->ws))
		return; /* finish drops the job */
	if (base->in_order) {
		job->in_finish = true; /* its finish follows at once, on this thread: no buffers */
		return;
	}
	FILE *out = open_memstream(&job->out_buf, &job->out_len);
	FILE *err = open_memstream(&job->err_buf, &job->err_len);
	if (!out || !err) {
		if (out)
			fclose(out);
		if (err)
			fclose(err);
		free(job->out_buf);
		free(job->err_buf);
		job->out_buf = job->err_buf = NULL;
		job->in_finish = true; /* finish runs it on the main thread instead */
		return;
	}
	struct probe_out *o = job->out;
	o->f = out;
	o->j.out = out;
	struct probe_walker jw = *w;
	jw.ctx = o;
	jw.out = o;
	struct walk_state jws;
	memset(&jws, 0, sizeof jws);
	jws.w = &jw;
	err_stream = err;
	if (job->problem)
		jw.on_error(jw.ctx, job->path, job->problem);
	else
		walk_file_now(&jws, job->path, job->explicit_path);
	err_stream = NULL;
	fclose(out);
	fclose(err);
	job->zlib = jws.zlib;
	job->tar = jws.tar;
}

/* Archives a job could not read, after those of the jobs before it (two
 * files never share an archive: no duplicates to drop at the seam). */
static void unread_merge(struct unread *into, struct unread *from)
{
	if (!from->count)
		return;
	size_t need = into->len + from->len + 3;
	if (need > into->cap) {
		char *p = realloc(into->paths, need * 2);
		if (!p)
			goto out;
		into->paths = p;
		into->cap = need * 2;
	}
	into->len += (size_t)snprintf(into->paths + into->len, into->cap - into->len, "%s%s", into->count ? ", " : "",
				      from->paths);
	into->count += from->count;
	snprintf(into->why, sizeof into->why, "%s", from->why);
out:
	free(from->paths);
}

static void job_finish(struct probe_pool_job *base)
{
	struct walk_job *job = (struct walk_job *)base;
	struct walk_state *ws = job->ws;
	const struct probe_walker *w = ws->w;
	struct probe_out *main_out = w->out, *o = job->out;
	if (!output_ready(ws)) {
		o->errors = 0;
		w->job_end(w->ctx, o); /* called off: the job's output dropped */
		free(job->zlib.paths);
		free(job->tar.paths);
	} else if (job->in_finish) {
		/* Out of memory for buffers, or the job's turn came before a
		 * worker took it: the same work, here and unbuffered. */
		w->job_end(w->ctx, o);
		struct probe_pool *pool = ws->pool;
		ws->pool = NULL;
		if (job->problem)
			w->on_error(w->ctx, job->path, job->problem);
		else
			walk_file_now(ws, job->path, job->explicit_path);
		ws->pool = pool;
	} else {
		if (job->err_len)
			fwrite(job->err_buf, 1, job->err_len, stderr);
		if (job->out_len) {
			/* The job wrote its file objects as if first in "files":
			 * the comma between them and the ones before is added here. */
			int d = main_out->j.depth;
			if (main_out->json && !o->j.first[d]) {
				if (!main_out->j.first[d])
					fputc(',', main_out->f);
				main_out->j.first[d] = false;
			}
			fwrite(job->out_buf, 1, job->out_len, main_out->f);
		}
		main_out->errors += o->errors;
		o->errors = 0;
		w->job_end(w->ctx, o);
		unread_merge(&ws->zlib, &job->zlib);
		unread_merge(&ws->tar, &job->tar);
	}
	free(job->out_buf);
	free(job->err_buf);
	free(job->path);
	free(job->problem);
	free(job);
}

/* A file, or a problem found while listing, in walk order: as a job when
 * there are workers, else at once. */
static void walk_submit(struct walk_state *ws, const char *path, const char *problem, bool explicit_path)
{
	const struct probe_walker *w = ws->w;
	struct walk_job *job = NULL;
	if (called_off(ws))
		return;
	if (ws->pool && (job = calloc(1, sizeof *job)) != NULL) {
		job->path = strdup(path);
		job->problem = problem ? strdup(problem) : NULL;
		job->out = job->path && (!problem || job->problem) ? w->job_begin(w->ctx) : NULL;
		if (!job->out) {
			free(job->path);
			free(job->problem);
			free(job);
			job = NULL;
		}
	}
	if (!job) {
		/* One thread, or no memory for a job: the work itself, here. */
		if (!output_ready(ws))
			return;
		if (problem)
			w->on_error(w->ctx, path, problem);
		else
			walk_file_now(ws, path, explicit_path);
		return;
	}
	struct probe_out *o = job->out;
	o->errors = 0;
	o->j = w->out->j;
	o->j.first[o->j.depth] = true;
	o->j.after_key = false;
	job->ws = ws;
	job->explicit_path = explicit_path;
	job->base.run = job_run;
	job->base.finish = job_finish;
	if (ws->gated && probe_pool_gate_closed(ws->pool)) {
		struct stat st;
		job->base.held = problem || kimg_file_stat(path, &st, true) != 0 || !S_ISREG(st.st_mode) ||
				 (uint64_t)st.st_size < WALK_HOLD_BELOW;
	}
	probe_pool_submit(ws->pool, &job->base);
}

static void walk_file(struct walk_state *ws, const char *path, bool explicit_path)
{
	walk_submit(ws, path, NULL, explicit_path);
}

static void walk_error(struct walk_state *ws, const char *path, const char *problem)
{
	walk_submit(ws, path, problem, false);
}

static void open_gate(void *pool)
{
	probe_pool_open_gate(pool);
}

static void tree_file(void *ctx, const char *path)
{
	walk_file(ctx, path, false);
}

static void tree_problem(void *ctx, const char *path, const char *problem)
{
	walk_error(ctx, path, problem);
}

/* On the main thread, in walk order. */
static void tree_dangling(void *ctx, const char *path, const char *problem)
{
	struct walk_state *ws = ctx;
	if (ws->w->strict_links) {
		walk_error(ws, path, problem);
		return;
	}
	if (ws->dangling++ == 0)
		ws->first_dangling = strdup(path);
}

static void dangling_report(const struct walk_state *ws)
{
	if (!ws->dangling)
		return;
	struct probe_esc e;
	fprintf(stderr,
		"kimg-probe: %lu symbolic link%s inside the directories lead%s nowhere and %s no device code (not an "
		"error; check --strict makes %s): %s%s\n",
		ws->dangling, ws->dangling == 1 ? "" : "s", ws->dangling == 1 ? "s" : "", ws->dangling == 1 ? "holds" : "hold",
		ws->dangling == 1 ? "it one" : "each one", probe_esc(&e, ws->first_dangling ? ws->first_dangling : "?"),
		ws->dangling > 1 ? " and others" : "");
}

void probe_walk(char *const *paths, int n, const struct probe_walker *w)
{
	struct walk_state ws;
	memset(&ws, 0, sizeof ws);
	ws.w = w;
	unsigned jobs = w->out ? probe_jobs(w->out->jobs) : 1;
	if (jobs > 1 && w->job_begin && w->job_end)
		ws.pool = probe_pool_start(jobs, WALK_JOBS_IN_FLIGHT_PER_THREAD * jobs);
	if (ws.pool && w->when_ready && w->output_ready) {
		probe_pool_close_gate(ws.pool);
		ws.gated = true;
		w->when_ready(w->ctx, open_gate, ws.pool);
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (kimg_file_stat(paths[i], &st, true) != 0) {
			walk_error(&ws, paths[i], strerror(errno));
			continue;
		}
		if (S_ISDIR(st.st_mode) && probe_image_detect(paths[i])) {
			walk_file(&ws, paths[i], true); /* an OCI image layout: read as an image */
		} else if (S_ISDIR(st.st_mode)) {
			struct probe_tree_visitor v = { &ws, want_file, tree_file, tree_problem, tree_stop, tree_dangling };
			probe_tree_walk(paths[i], jobs, &v);
		}
		else
			walk_file(&ws, paths[i], true); /* named explicitly: pipes and devices are read too */
	}
	/* Returns once when_ready's call is over: the pool outlives it. A
	 * lone job (one file) runs here meanwhile, beside the wait. */
	if (ws.gated) {
		probe_pool_help(ws.pool);
		(void)output_ready(&ws);
	}
	probe_pool_end(ws.pool);
	ws.pool = NULL;
	if (output_ready(&ws)) {
		unread_report(&ws, &ws.zlib, "install zlib (Debian: zlib1g) or name it with KIMG_ZLIB");
		unread_report(&ws, &ws.tar, "install libarchive (Debian: libarchive13) or name it with KIMG_LIBARCHIVE");
		dangling_report(&ws);
	}
	free(ws.first_dangling);
	free(ws.zlib.paths);
	free(ws.tar.paths);
}
