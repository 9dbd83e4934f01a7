/* SPDX-License-Identifier: Apache-2.0 */
/* The model of kimg-probe summarize (probe/summary.h): report lines into
 * groups. Log files are untrusted input: lines are cut with spans, each is
 * parsed by the bounded core reader into one reusable arena, and any line
 * that is not a kimg report (stray text, a line cut when a rank was
 * killed) is counted and skipped, never fatal. Only the first report line
 * of each group is kept, to copy its fix at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "summary.h"

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fputs("kimg-probe summarize: out of memory\n", stderr);
		exit(PROBE_EXIT_ERROR);
	}
	return q;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xrealloc(NULL, n), s, n);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Add s when new; keeps insertion order. */
void probe_summary_strlist_add(struct probe_strlist *l, const char *s, size_t limit)
{
	if (!s)
		return;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return;
	if (l->n >= limit) {
		l->more++; /* counts repeats of unkept values too: an upper bound */
		return;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = xstrdup(s);
}

static void ranks_add(struct probe_summary_group *g, int64_t r)
{
	size_t lo = 0, hi = g->n_ranks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->ranks[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < g->n_ranks && g->ranks[lo] == r)
		return;
	if (g->n_ranks >= MAX_DISTINCT)
		return;
	if (g->n_ranks == g->cap_ranks) {
		g->cap_ranks = g->cap_ranks ? g->cap_ranks * 2 : 16;
		g->ranks = xrealloc(g->ranks, g->cap_ranks * sizeof *g->ranks);
	}
	memmove(g->ranks + lo + 1, g->ranks + lo, (g->n_ranks - lo) * sizeof *g->ranks);
	g->ranks[lo] = r;
	g->n_ranks++;
}

static void devs_add(struct probe_summary_group *g, const char *name, const char *sm)
{
	name = name ? name : "GPU";
	sm = sm ? sm : "?";
	for (size_t i = 0; i < g->n_devs; i++)
		if (strcmp(g->devs[i].name, name) == 0 && strcmp(g->devs[i].sm, sm) == 0)
			return;
	if (g->n_devs >= MAX_DISTINCT)
		return;
	if (g->n_devs == g->cap_devs) {
		g->cap_devs = g->cap_devs ? g->cap_devs * 2 : 4;
		g->devs = xrealloc(g->devs, g->cap_devs * sizeof *g->devs);
	}
	g->devs[g->n_devs].name = xstrdup(name);
	g->devs[g->n_devs++].sm = xstrdup(sm);
}

static struct probe_summary_group *find_group(struct probe_summary *s, const char *file, bool off_known, int64_t off,
					      int64_t code, bool driver_mismatch)
{
	for (size_t i = 0; i < s->n; i++) {
		struct probe_summary_group *g = &s->g[i];
		if (g->code == code && g->offset_known == off_known && (!off_known || g->offset == off) &&
		    str_eq(g->file, file) && g->driver_mismatch == driver_mismatch)
			return g;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->g = xrealloc(s->g, s->cap * sizeof *s->g);
	}
	struct probe_summary_group *g = &s->g[s->n++];
	memset(g, 0, sizeof *g);
	g->file = file ? xstrdup(file) : NULL;
	g->offset_known = off_known;
	g->offset = off;
	g->code = code;
	g->driver_mismatch = driver_mismatch;
	return g;
}

/* The other kind of report libkimg.so writes (docs/json-shim-report.md, "Driver
 * mismatch object"): no module, its own "report" name. */
static bool is_driver_mismatch(const struct kimg_jval *r)
{
	const char *kind = kimg_jval_string(kimg_jval_get(r, "report"));
	return kind && strcmp(kind, "driver_mismatch") == 0;
}

/* One parsed line into its group; false when it is not a kimg report. */
static bool add_report(struct probe_summary *s, const struct kimg_jval *r, struct kimg_span line)
{
	int64_t code, off = 0, rank;
	if (!r || r->type != KIMG_JOBJECT || !kimg_jval_int(kimg_jval_path(r, "error.code"), &code))
		return false;
	bool mismatch = is_driver_mismatch(r);
	if (!mismatch && kimg_jval_get(r, "module") == NULL)
		return false;
	bool off_known = kimg_jval_int(kimg_jval_path(r, "module.offset"), &off);
	const char *file = kimg_jval_string(kimg_jval_path(r, "module.file"));
	struct probe_summary_group *g = find_group(s, file, off_known, off, code, mismatch);
	if (g->reports++ == 0) {
		const char *name = kimg_jval_string(kimg_jval_path(r, "error.name"));
		if (!name)
			name = kimg_jval_string(kimg_jval_path(r, "error.runtime_name"));
		g->name = name ? xstrdup(name) : NULL;
		g->first_line = memcpy(xrealloc(NULL, (size_t)line.size), line.data, (size_t)line.size);
		g->first_len = (size_t)line.size;
	}
	const struct kimg_jval *p = kimg_jval_get(r, "process");
	probe_summary_strlist_add(&g->hosts, kimg_jval_string(kimg_jval_get(p, "host")), MAX_DISTINCT);
	if (kimg_jval_int(kimg_jval_get(p, "rank"), &rank) && rank >= 0)
		ranks_add(g, rank);
	else
		g->unknown_rank++;
	const struct kimg_jval *d = kimg_jval_get(r, "device");
	if (d && d->type == KIMG_JOBJECT)
		devs_add(g, kimg_jval_string(kimg_jval_get(d, "name")), kimg_jval_string(kimg_jval_get(d, "sm")));
	const char *k = kimg_jval_string(kimg_jval_path(r, "kernel.demangled"));
	probe_summary_strlist_add(&g->kernels, k ? k : kimg_jval_string(kimg_jval_path(r, "kernel.name")), JSON_KERNELS);
	s->reports++;
	return true;
}

/* A line shaped like a kimg report (an object with both "error" and
 * "module", keys every report has) that add_report refused is a damaged
 * report, not stray text: a failure that cannot be shown (exit 2). What
 * is wrong, or NULL when it is not report-shaped. */
static const char *damaged_report(const struct kimg_jval *r)
{
	if (!r || r->type != KIMG_JOBJECT)
		return NULL;
	const struct kimg_jval *e = kimg_jval_get(r, "error"), *m = kimg_jval_get(r, "module");
	if (!e || !m)
		return NULL;
	int64_t code;
	if (e->type == KIMG_JNULL)
		return "a report whose error is null";
	if (e->type != KIMG_JOBJECT)
		return "a report whose error is not an object";
	if (!kimg_jval_int(kimg_jval_get(e, "code"), &code))
		return "a report without a numeric error.code";
	return NULL;
}

void probe_summary_read(struct probe_summary *s, const char *path, struct kimg_span bytes)
{
	struct kimg_jdoc doc;
	unsigned long lineno = 0, skipped = 0, first_bad = 0, unreadable = 0, first_unreadable = 0;
	char why[160] = "", unreadable_why[160] = "";
	for (uint64_t pos = 0; pos < bytes.size;) {
		const uint8_t *start = kimg_span_at(&bytes, pos, 1);
		const uint8_t *nl = memchr(start, '\n', (size_t)(bytes.size - pos));
		uint64_t len = nl ? (uint64_t)(nl - start) : bytes.size - pos;
		struct kimg_span line = kimg_span_sub(&bytes, pos, len);
		pos += len + (nl ? 1 : 0);
		lineno++;
		while (line.size > 0 && (line.data[line.size - 1] == '\r' || line.data[line.size - 1] == ' '))
			line.size--;
		if (line.size == 0)
			continue; /* blank lines are not "skipped": they carry nothing */
		struct kimg_error err = { 0 };
		kimg_jdoc_init(&doc, s->arena, LINE_ARENA);
		int rc = kimg_jdoc_parse(&doc, line, &err);
		if (rc == 0 && add_report(s, doc.root, line))
			continue;
		if (rc == 0 && probe_summary_add_inventory(s, doc.root, line))
			continue;
		const char *damage = rc == 0 ? damaged_report(doc.root) : NULL;
		if (skipped++ == 0) {
			first_bad = lineno;
			snprintf(why, sizeof why, "%s",
				 rc < 0 ? err.what : damage ? damage : "a JSON value without error.code and module (or \"report\")");
		}
		if (((rc < 0 && line.data[0] == '{') || damage) && unreadable++ == 0) {
			first_unreadable = lineno;
			snprintf(unreadable_why, sizeof unreadable_why, "%s", rc < 0 ? err.what : damage);
		}
	}
	s->skipped += skipped;
	s->unreadable += unreadable;
	struct probe_esc p, q;
	if (skipped)
		fprintf(stderr, "kimg-probe: %s: skipped %lu line%s that %s not kimg reports (first: line %lu: %s)\n",
			probe_esc(&p, path), skipped, skipped == 1 ? "" : "s", skipped == 1 ? "is" : "are", first_bad,
			probe_esc(&q, why));
	if (unreadable)
		fprintf(stderr, "kimg-probe: %s: %lu of them %s a report that could not be read (first: line %lu: %s)\n",
			probe_esc(&p, path), unreadable, unreadable == 1 ? "is" : "are", first_unreadable,
			probe_esc(&q, unreadable_why));
}

/* The fix object of a group's first report, parsed again from its copy. */
const struct kimg_jval *probe_summary_first_fix(const struct probe_summary *s, const struct probe_summary_group *g,
						struct kimg_jdoc *doc)
{
	kimg_jdoc_init(doc, s->arena, LINE_ARENA);
	if (kimg_jdoc_parse(doc, kimg_span_make(g->first_line, g->first_len), NULL) < 0)
		return NULL;
	const struct kimg_jval *f = kimg_jval_get(doc->root, "fix");
	/* an image report's fix is an object; a driver mismatch's, a sentence */
	return f && (f->type == KIMG_JOBJECT || (g->driver_mismatch && f->type == KIMG_JSTRING)) ? f : NULL;
}

void probe_summary_free(struct probe_summary *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct probe_summary_group *g = &s->g[i];
		for (size_t k = 0; k < g->hosts.n; k++)
			free(g->hosts.v[k]);
		for (size_t k = 0; k < g->kernels.n; k++)
			free(g->kernels.v[k]);
		for (size_t k = 0; k < g->n_devs; k++) {
			free(g->devs[k].name);
			free(g->devs[k].sm);
		}
		free(g->hosts.v);
		free(g->kernels.v);
		free(g->devs);
		free(g->ranks);
		free(g->file);
		free(g->name);
		free(g->first_line);
	}
	free(s->g);
	free(s->arena);
	probe_summary_free_inventory(s);
}

void probe_summary_init(struct probe_summary *s)
{
	memset(s, 0, sizeof *s);
	s->arena = xrealloc(NULL, LINE_ARENA);
}
