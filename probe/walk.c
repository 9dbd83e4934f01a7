/* Turning command-line paths into inputs: regular files are mapped,
 * directories recursed, .whl/.zip archives read member by member in
 * memory (sys/zip.h). Every problem is reported and the walk goes on. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_host.h"
#include "fatbin.h"
#include "file.h"
#include "probe.h"
#include "zip.h"

/* Directory depth cap: bind mounts can make trees that never end even
 * without following symlinks. */
#define WALK_MAX_DEPTH 64

void probe_report_error(const char *path, const char *problem)
{
	struct probe_esc p, q;
	fprintf(stderr, "kimg-probe: %s: %s\n", probe_esc(&p, path), probe_esc(&q, problem));
}

void probe_input_unreadable(void *ctx, const char *path, const char *problem)
{
	struct probe_out *out = ctx;
	probe_report_error(path, problem);
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

/* Worth inflating from a wheel: anything that may hold device code. The
 * head is a prefix of the member, so shape checks only look at magic
 * numbers (a truncated ELF must not be judged by its section table). */
static bool zip_want(void *ctx, const char *name, struct kimg_span head)
{
	(void)ctx;
	(void)name;
	uint32_t magic;
	if (starts_with(head, "\177ELF", 4))
		return !kimg_elf_is_foreign(head); /* 32-bit, big-endian: no device code kimg can read */
	if (starts_with(head, "!<arch>\n", 8))
		return true;
	if (kimg_span_u32(&head, 0, &magic) && magic == KIMG_FATBIN_MAGIC)
		return true;
	enum kimg_input_kind k = kimg_input_classify(head);
	return k == KIMG_INPUT_PTX || k == KIMG_INPUT_CUBIN || k == KIMG_INPUT_FATBIN;
}

struct zip_ctx {
	const struct probe_walker *w;
	const char *zip_path;
};

static int zip_member(void *ctx, const char *name, struct kimg_span bytes, const struct kimg_error *merr)
{
	struct zip_ctx *z = ctx;
	size_t len = strlen(z->zip_path) + strlen(name) + 3;
	char *path = malloc(len);
	if (!path)
		return -ENOMEM;
	snprintf(path, len, "%s!/%s", z->zip_path, name);
	if (merr)
		z->w->on_error(z->w->ctx, path, merr->what);
	else
		z->w->on_input(z->w->ctx, path, bytes, false);
	free(path);
	return 0;
}

static void walk_zip(const char *path, struct kimg_span bytes, const struct probe_walker *w)
{
	struct zip_ctx z = { w, path };
	struct kimg_error err = { 0, 0, "" };
	int rc = kimg_zip_for_each_member(bytes, zip_want, zip_member, &z, &err);
	if (rc < 0)
		w->on_error(w->ctx, path, err.what[0] ? err.what : kimg_strerror(rc));
}

/* The mapped file being walked, so that probe_input_zeros can give its
 * holes to the core (the walk is single threaded; nested files of a thin
 * archive are pushed and popped around their own walk). */
static const struct kimg_file *current_file;
static const char *current_path;

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

struct file_walk {
	const struct probe_walker *w;
	const char *path;
	struct kimg_span bytes;
	bool explicit_path;
};

/* Everything that reads a mapped file's bytes, under kimg_file_guard. */
static void walk_mapped(void *ctx)
{
	struct file_walk *fw = ctx;
	enum kimg_input_kind kind = kimg_input_classify(fw->bytes);
	if (kind == KIMG_INPUT_ZIP)
		walk_zip(fw->path, fw->bytes, fw->w);
	else if (fw->explicit_path || (kind != KIMG_INPUT_UNKNOWN && !kimg_elf_is_foreign(fw->bytes)))
		fw->w->on_input(fw->w->ctx, fw->path, fw->bytes, fw->explicit_path);
}

static void walk_file(const char *path, bool explicit_path, const struct probe_walker *w)
{
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	if (kimg_file_open(path, &f, &err) < 0) {
		w->on_error(w->ctx, path, err.what);
		return;
	}
	struct file_walk fw = { w, path, f.bytes, explicit_path };
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

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk_dir(const char *path, int depth, const struct probe_walker *w);

/* One directory entry: lstat decides, so symlinked directories are not
 * followed (no loops, no escaping the tree) while symlinked files are. */
static void walk_entry(const char *path, int depth, const struct probe_walker *w)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		w->on_error(w->ctx, path, strerror(errno));
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		if (stat(path, &st) != 0) {
			w->on_error(w->ctx, path, strerror(errno)); /* dangling or looping link */
			return;
		}
		if (S_ISDIR(st.st_mode))
			return;
	}
	if (S_ISDIR(st.st_mode))
		walk_dir(path, depth + 1, w);
	else if (S_ISREG(st.st_mode))
		walk_file(path, false, w);
	/* FIFOs, sockets, devices inside a tree: skipped, reading one could block or never end. */
}

static void walk_dir(const char *path, int depth, const struct probe_walker *w)
{
	if (depth > WALK_MAX_DEPTH) {
		w->on_error(w->ctx, path, "directories nested too deeply, not descending");
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		w->on_error(w->ctx, path, strerror(errno));
		return;
	}
	/* Sorted, so output is the same on every file system. */
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 32;
			char **p = realloc(names, nc * sizeof *p);
			if (!p)
				break;
			names = p;
			cap = nc;
		}
		if ((names[n] = strdup(de->d_name)) != NULL)
			n++;
	}
	if (errno)
		w->on_error(w->ctx, path, strerror(errno));
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, compare_names);
	size_t plen = strlen(path);
	bool slash = plen > 0 && path[plen - 1] == '/';
	for (size_t i = 0; i < n; i++) {
		size_t len = plen + strlen(names[i]) + 2;
		char *child = malloc(len);
		if (child) {
			snprintf(child, len, "%s%s%s", path, slash ? "" : "/", names[i]);
			walk_entry(child, depth, w);
			free(child);
		}
		free(names[i]);
	}
	free(names);
}

void probe_walk(char *const *paths, int n, const struct probe_walker *w)
{
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(paths[i], &st) != 0) {
			w->on_error(w->ctx, paths[i], strerror(errno));
			continue;
		}
		if (S_ISDIR(st.st_mode))
			walk_dir(paths[i], 0, w);
		else
			walk_file(paths[i], true, w); /* named explicitly: pipes and devices are read too */
	}
}
