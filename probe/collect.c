/* SPDX-License-Identifier: Apache-2.0 */
/* From an input's bytes to the probe's module list: the core finds the
 * modules (kimg_input_for_each_module), core/module_images.c reads each
 * one's images (fatbin entry headers; a raw cubin or PTX input is one). Only headers
 * are touched, so scanning a 456 MB library faults in a few pages per
 * container instead of reading the file. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module_images.h"
#include "elf64.h"
#include "probe.h"

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The module's problem: at most 159 bytes, as snprintf into 160 writes. */
static const char module_no_memory[] = "out of memory";
static void module_fail(struct probe_module *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void module_fail(struct probe_module *m, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (m->error != module_no_memory)
		free(m->error);
	m->error = strdup(msg);
	if (!m->error)
		m->error = (char *)module_no_memory;
}

/* A module's images: room for 2 at first (cuBLASLt's 2,782 modules hold
 * 5,737, 2.06 each), then doubled. Room for 8 spread a large scan's heap
 * over 2.3 MB, and the page faults on it were a third of the scan's. */
static struct kimg_image *push_image(struct probe_module *m)
{
	if (m->n_imgs == m->cap_imgs) {
		size_t cap = m->cap_imgs ? m->cap_imgs * 2 : 2;
		struct kimg_image *p = realloc(m->imgs, cap * sizeof *p);
		if (!p)
			return NULL;
		m->imgs = p;
		m->cap_imgs = cap;
	}
	struct kimg_image *img = &m->imgs[m->n_imgs++];
	memset(img, 0, sizeof *img);
	return img;
}

/* Header read-ahead (probe_set_header_window): with the mapping set to
 * random access, each header read would be one page-sized request. Before
 * the walk reads a header, the `window` bytes from it are asked for in one
 * request (MADV_WILLNEED), so a run of dense headers (small payloads) costs
 * one request, and a sparse one costs a window per header, not the
 * kernel's readahead window (up to several MiB) around it. */
static uint64_t header_window = PROBE_HEADER_WINDOW_DEFAULT;

void probe_set_header_window(uint64_t bytes)
{
	header_window = bytes;
}

struct ahead {
	const uint8_t *from, *until;     /* asked for already */
};

/* A header is at most a few hundred bytes: this much must be in the range
 * asked for already, else a new window starts at the header. */
#define HEADER_SPAN 512

static void read_ahead(struct ahead *a, struct kimg_span in, uint64_t at)
{
	if (!header_window || at >= in.size)
		return;
	const uint8_t *p = in.data + at;
	if (a->until && p >= a->from && (uint64_t)(a->until - p) >= HEADER_SPAN)
		return;
	uint64_t n = in.size - at < header_window ? in.size - at : header_window;
	kimg_file_will_need(kimg_span_make(p, n));
	a->from = p;
	a->until = p + n;
}

/* One module's images, read by core/module_images.c, with the header
 * read-ahead before each fatbin entry header. */
struct module_collect {
	struct probe_module *m;
	struct ahead ahead;
};

static void before_header(void *ctx, struct kimg_span container, uint64_t at)
{
	struct module_collect *mc = ctx;
	read_ahead(&mc->ahead, container, at);
}

static int add_image(void *ctx, const struct kimg_image *img)
{
	struct module_collect *mc = ctx;
	struct kimg_image *p = push_image(mc->m);
	if (!p)
		return 1;
	*p = *img;
	p->offset += mc->m->offset;
	return 0;
}

/* A malformed fatbin entry stops that container (docs/format.md section
 * 9) and is recorded on the module, as is a bad raw cubin or PTX text.
 * Returns 1 for a problem recorded, else 0. */
static int collect_images(struct probe_module *m, const struct kimg_module_ref *ref)
{
	struct module_collect mc = { m, { NULL, NULL } };
	struct kimg_error err = { 0, 0, "" };
	enum kimg_module_step step = KIMG_MODULE_CONTAINER;
	int rc = kimg_module_images_ex(ref, before_header, add_image, &mc, &step, &err);
	if (rc == 0)
		return 0;
	const char *what = err.what[0] ? err.what : kimg_strerror(err.code);
	if (rc > 0)
		module_fail(m, "out of memory");
	else if (step == KIMG_MODULE_CONTAINER)
		module_fail(m, "fatbin at 0x%llx: %s", (unsigned long long)(m->offset + err.offset), what);
	else if (step == KIMG_MODULE_ENTRY)
		module_fail(m, "entry at 0x%llx: %s", (unsigned long long)(m->offset + err.offset),
			 err.what[0] ? err.what : kimg_strerror(rc));
	else
		module_fail(m, "%s: %s", step == KIMG_MODULE_CUBIN ? "cubin" : "PTX", what);
	return 1;
}

struct collect_ctx {
	struct probe_file *pf;
	int problems;
	struct ahead ahead;              /* past the modules: the next container's header */
};

static int on_module(void *ctx, const struct kimg_module_ref *ref)
{
	struct collect_ctx *c = ctx;
	struct probe_file *pf = c->pf;
	if (pf->n_mods == pf->cap_mods) {
		size_t cap = pf->cap_mods ? pf->cap_mods * 2 : 8;
		struct probe_module *p = realloc(pf->mods, cap * sizeof *p);
		if (!p)
			return -1;
		pf->mods = p;
		pf->cap_mods = cap;
	}
	struct probe_module *m = &pf->mods[pf->n_mods++];
	memset(m, 0, sizeof *m);
	m->kind = ref->kind;
	m->origin = ref->origin;
	m->offset = ref->offset;
	m->size = ref->bytes.size;
	m->section = dup_or_null(ref->section);
	m->member = dup_or_null(ref->member);
	if ((ref->section && !m->section) || (ref->member && !m->member)) {
		/* a module shown without its section or member would be a
		 * different module: said instead, and not judged */
		m->error = (char *)module_no_memory;
		c->problems++;
		return 0;
	}
	switch (ref->kind) {
	case KIMG_INPUT_FATBIN:
		c->problems += collect_images(m, ref);
		/* The walk reads the next container's header right after this one. */
		if (ref->bytes.data >= pf->bytes.data && ref->bytes.data + ref->bytes.size <= pf->bytes.data + pf->bytes.size)
			read_ahead(&c->ahead, pf->bytes, (uint64_t)(ref->bytes.data - pf->bytes.data) + ref->bytes.size);
		break;
	case KIMG_INPUT_CUBIN:
	case KIMG_INPUT_PTX:
		c->problems += collect_images(m, ref);
		break;
	default:
		module_fail(m, "module of kind %s not supported", kimg_input_kind_name(ref->kind));
		c->problems++;
		break;
	}
	return 0;
}

/* ---- GNU thin archives: members are files next to the archive ---- */

struct thin_ctx {
	struct collect_ctx *c;
	char *dir;         /* the archive's directory, with a trailing '/' */
	const char *member;
	unsigned problems;
};

static void thin_problem(struct thin_ctx *t, const char *name, const char *what)
{
	struct probe_file *pf = t->c->pf;
	if (t->problems++ == 0)
		snprintf(pf->error, sizeof pf->error, "member %.60s: %.120s", name, what);
	t->c->problems++;
}

static int on_thin_module(void *ctx, const struct kimg_module_ref *ref)
{
	struct thin_ctx *t = ctx;
	struct kimg_module_ref r = *ref;
	char both[600];
	if (ref->member) { /* a regular archive named in the thin one */
		snprintf(both, sizeof both, "%s(%s)", t->member, ref->member);
		r.member = both;
	} else {
		r.member = t->member;
	}
	return on_module(t->c, &r);
}

static int on_thin_member(void *ctx, const char *name, uint64_t size)
{
	struct thin_ctx *t = ctx;
	struct probe_file *pf = t->c->pf;
	if (pf->n_members >= PROBE_THIN_MEMBERS_MAX) {
		thin_problem(t, name, "more members than kimg reads (65536): the rest not read");
		return 1;
	}
	size_t len = strlen(t->dir) + strlen(name) + 1;
	char *path = malloc(len);
	/* an array of pointers: kimg_file_guard_add keeps f's address, which
	 * a realloc of the files themselves would move (found by make
	 * asan-test: the guard list kept stale pointers) */
	struct kimg_file **members = realloc(pf->members, (pf->n_members + 1) * sizeof *members);
	struct kimg_file *f = calloc(1, sizeof *f);
	if (!path || !members || !f) {
		free(path);
		free(f);
		if (members)
			pf->members = members;
		thin_problem(t, name, "out of memory");
		return 1;
	}
	pf->members = members;
	snprintf(path, len, "%s%s", name[0] == '/' ? "" : t->dir, name);
	struct kimg_error err = { 0, 0, "" };
	if (kimg_file_open(path, f, &err) < 0) {
		char what[300];
		snprintf(what, sizeof what, "%s: %s", path, err.what);
		thin_problem(t, name, what);
		free(path);
		free(f);
		return 0;
	}
	free(path);
	pf->members[pf->n_members++] = f;
	(void)kimg_file_guard_add(f); /* read under the archive's guard, and later for payloads */
	if (kimg_input_is_thin_archive(f->bytes)) {
		thin_problem(t, name, "a thin archive inside a thin archive: not followed");
		return 0;
	}
	if (f->bytes.size != size) {
		char what[120];
		snprintf(what, sizeof what, "file is %llu bytes, the archive recorded %llu (changed since archived)",
			 (unsigned long long)f->bytes.size, (unsigned long long)size);
		thin_problem(t, name, what);
		return 0;
	}
	enum kimg_input_kind kind = kimg_input_classify(f->bytes);
	if (kind == KIMG_INPUT_UNKNOWN || kind == KIMG_INPUT_ZIP || kind == KIMG_INPUT_WRAPPER ||
	    kimg_elf_is_foreign(f->bytes))
		return 0; /* not device code, as in a regular archive */
	struct kimg_error werr = { 0, 0, "" };
	t->member = name;
	int rc = kimg_input_for_each_module_zeros(f->bytes, pf->walk_flags, f->zeros.n ? &f->zeros : NULL,
						  on_thin_module, t, &werr);
	if (rc < 0 || werr.code != 0)
		thin_problem(t, name, werr.what[0] ? werr.what : kimg_strerror(rc < 0 ? rc : werr.code));
	return 0;
}

static void collect_thin(struct probe_file *pf, struct collect_ctx *c)
{
	const char *fs_path = probe_input_fs_path(pf->bytes);
	if (!fs_path) {
		snprintf(pf->error, sizeof pf->error,
			 "thin archive inside a zip or an archive: its members are files next to it, not in it");
		c->problems++;
		return;
	}
	const char *slash = strrchr(fs_path, '/');
	size_t dlen = slash ? (size_t)(slash - fs_path) + 1 : 0;
	struct thin_ctx t = { c, malloc(dlen + 1), NULL, 0 };
	if (!t.dir) {
		snprintf(pf->error, sizeof pf->error, "out of memory");
		c->problems++;
		return;
	}
	memcpy(t.dir, fs_path, dlen);
	t.dir[dlen] = '\0';
	struct kimg_error err = { 0, 0, "" };
	int rc = kimg_thin_archive_for_each_member(pf->bytes, on_thin_member, &t, &err);
	if (rc < 0 && t.problems == 0) {
		snprintf(pf->error, sizeof pf->error, "%s (at offset 0x%llx)", err.what, (unsigned long long)err.offset);
		c->problems++;
	}
	free(t.dir);
}

/* A linked file: ELF e_type ET_EXEC or ET_DYN. */
static bool is_linked_elf(const struct probe_file *pf)
{
	struct kimg_elf_ehdr eh;
	return pf->kind == KIMG_INPUT_HOST_ELF && kimg_elf_ehdr_read(&pf->bytes, &eh) &&
	       (eh.type == KIMG_ET_EXEC || eh.type == KIMG_ET_DYN);
}

/* In a linked executable or shared object, __nv_relfatbin holds the
 * relocatable inputs of the device link (-rdc): the driver never loads
 * them on their own. cuobjdump lists them only with -all when the file has
 * an executable .nv_fatbin; kimg does the same. In archives and .o files
 * they are what the user links, and stay ordinary modules. */
static void mark_link_inputs(struct probe_file *pf)
{
	size_t rel = 0;
	pf->n_link_inputs = 0;
	if (!is_linked_elf(pf))
		return;
	for (size_t i = 0; i < pf->n_mods; i++)
		rel += pf->mods[i].origin == KIMG_ORIGIN_RELFATBIN;
	if (rel == 0 || rel == pf->n_mods)
		return;
	for (size_t i = 0; i < pf->n_mods; i++)
		if (pf->mods[i].origin == KIMG_ORIGIN_RELFATBIN) {
			pf->mods[i].link_input = true;
			pf->n_link_inputs++;
		}
}

static void module_free(struct probe_module *m)
{
	if (m->error != module_no_memory)
		free(m->error);
	free(m->imgs);
	free(m->section);
	free(m->member);
}

void probe_drop_link_inputs(struct probe_file *pf)
{
	size_t kept = 0;
	for (size_t i = 0; i < pf->n_mods; i++) {
		if (pf->mods[i].link_input)
			module_free(&pf->mods[i]);
		else
			pf->mods[kept++] = pf->mods[i];
	}
	pf->n_mods = kept;
	pf->n_link_inputs = 0;
}

int probe_collect(struct probe_file *pf)
{
	struct collect_ctx c = { pf, 0, { NULL, NULL } };
	struct kimg_error err = { 0, 0, "" };
	pf->kind = kimg_input_classify(pf->bytes);
	if (pf->bytes.size == 0) {
		snprintf(pf->error, sizeof pf->error, "empty file");
		return 1;
	}
	if (pf->kind == KIMG_INPUT_UNKNOWN) {
		snprintf(pf->error, sizeof pf->error, "not an ELF file, static archive, fatbin, cubin or PTX");
		return 1;
	}
	if (kimg_input_is_thin_archive(pf->bytes)) {
		collect_thin(pf, &c);
		return c.problems;
	}
	int rc = kimg_input_for_each_module_zeros(pf->bytes, pf->walk_flags, probe_input_zeros(pf->bytes), on_module,
						 &c, &err);
	mark_link_inputs(pf);
	if (rc < 0 || err.code != 0) {
		const char *what = err.what[0] ? err.what : kimg_strerror(rc < 0 ? rc : err.code);
		if (err.offset)
			snprintf(pf->error, sizeof pf->error, "%s (at offset 0x%llx)", what, (unsigned long long)err.offset);
		else
			snprintf(pf->error, sizeof pf->error, "%s", what);
		c.problems++;
	}
	return c.problems;
}

void probe_file_free(struct probe_file *pf)
{
	for (size_t i = 0; i < pf->n_mods; i++)
		module_free(&pf->mods[i]);
	free(pf->mods);
	pf->mods = NULL;
	pf->n_mods = pf->cap_mods = 0;
	for (size_t i = pf->n_members; i-- > 0;) {
		kimg_file_close(pf->members[i]);
		free(pf->members[i]);
	}
	free(pf->members);
	pf->members = NULL;
	pf->n_members = 0;
}
