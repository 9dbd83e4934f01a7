/* kimg-probe summarize: merge the JSON Lines reports that libkimg.so wrote
 * in many processes (ranks of torchrun, mpirun, srun; many hosts) into one
 * table of groups keyed by (module file, module offset, error code).
 *
 * The log files are untrusted input: lines are cut with spans, each is
 * parsed by the bounded core reader (core/json_read.h) into one reusable
 * arena, and any line that is not a kimg report (stray text, a line cut
 * when a rank was killed) is counted and skipped, never fatal. Only the
 * first report line of each group is kept, to copy its fix at the end. */
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "json_read.h"
#include "probe.h"

/* One report line may take this much parsed (a full report is ~30 KB). */
#define LINE_ARENA ((size_t)4 << 20)
/* Distinct values kept per group and column; beyond, "+N more" is counted. */
#define MAX_DISTINCT 4096
#define TEXT_SHOWN 4      /* hosts / GPUs / kernels named in a text cell */
#define JSON_KERNELS 64   /* kernels listed per group in --json */

static const char summarize_help[] =
	"usage: kimg-probe summarize [--json] FILE...\n"
	"\n"
	"Merge the JSON Lines reports libkimg.so wrote (KIMG_FORMAT=json) in many\n"
	"processes and hosts, e.g. one KIMG_LOG=kimg-%h-%r.log per rank, into one\n"
	"table: one row per (module file, module offset, error code) with the\n"
	"number of reports, the hosts, the ranks (\"0-3,7\"), the GPUs (name and\n"
	"SM) and the kernels that failed, then the first fix seen for each row.\n"
	"Lines that are not kimg reports (stray text, a line cut short when a\n"
	"process was killed) are skipped and counted; FILE - reads stdin.\n"
	"\n"
	"  --json   one JSON document on stdout (docs/json.md)\n"
	"\n"
	"Exit status: 0 when the files hold no report; 1 when they hold reports\n"
	"(something failed to load); 2 on a usage error or an unreadable file.\n";

struct devpair {
	char *name, *sm;
};

struct strlist {
	char **v;
	size_t n, cap;
	unsigned long more; /* distinct values not kept */
};

struct group {
	char *file;            /* NULL: in memory / unknown */
	bool offset_known;
	int64_t offset;
	int64_t code;
	char *name;            /* error.name, else error.runtime_name; may be NULL */
	unsigned long reports, unknown_rank;
	struct strlist hosts, kernels;
	struct devpair *devs;
	size_t n_devs, cap_devs;
	int64_t *ranks;        /* sorted, distinct */
	size_t n_ranks, cap_ranks;
	char *first_line;      /* the first report, re-read for its fix */
	size_t first_len;
};

struct summary {
	struct group *g;
	size_t n, cap;
	unsigned long files, reports, skipped;
	unsigned char *arena;
};

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
static void strlist_add(struct strlist *l, const char *s, size_t limit)
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

static void ranks_add(struct group *g, int64_t r)
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

static void devs_add(struct group *g, const char *name, const char *sm)
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

static struct group *find_group(struct summary *s, const char *file, bool off_known, int64_t off, int64_t code)
{
	for (size_t i = 0; i < s->n; i++) {
		struct group *g = &s->g[i];
		if (g->code == code && g->offset_known == off_known && (!off_known || g->offset == off) &&
		    str_eq(g->file, file))
			return g;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->g = xrealloc(s->g, s->cap * sizeof *s->g);
	}
	struct group *g = &s->g[s->n++];
	memset(g, 0, sizeof *g);
	g->file = file ? xstrdup(file) : NULL;
	g->offset_known = off_known;
	g->offset = off;
	g->code = code;
	return g;
}

/* One parsed line into its group; false when it is not a kimg report. */
static bool add_report(struct summary *s, const struct kimg_jval *r, struct kimg_span line)
{
	int64_t code, off = 0, rank;
	if (!r || r->type != KIMG_JOBJECT || !kimg_jval_int(kimg_jval_path(r, "error.code"), &code) ||
	    kimg_jval_get(r, "module") == NULL)
		return false;
	bool off_known = kimg_jval_int(kimg_jval_path(r, "module.offset"), &off);
	struct group *g = find_group(s, kimg_jval_string(kimg_jval_path(r, "module.file")), off_known, off, code);
	if (g->reports++ == 0) {
		const char *name = kimg_jval_string(kimg_jval_path(r, "error.name"));
		if (!name)
			name = kimg_jval_string(kimg_jval_path(r, "error.runtime_name"));
		g->name = name ? xstrdup(name) : NULL;
		g->first_line = memcpy(xrealloc(NULL, (size_t)line.size), line.data, (size_t)line.size);
		g->first_len = (size_t)line.size;
	}
	const struct kimg_jval *p = kimg_jval_get(r, "process");
	strlist_add(&g->hosts, kimg_jval_string(kimg_jval_get(p, "host")), MAX_DISTINCT);
	if (kimg_jval_int(kimg_jval_get(p, "rank"), &rank) && rank >= 0)
		ranks_add(g, rank);
	else
		g->unknown_rank++;
	const struct kimg_jval *d = kimg_jval_get(r, "device");
	if (d && d->type == KIMG_JOBJECT)
		devs_add(g, kimg_jval_string(kimg_jval_get(d, "name")), kimg_jval_string(kimg_jval_get(d, "sm")));
	const char *k = kimg_jval_string(kimg_jval_path(r, "kernel.demangled"));
	strlist_add(&g->kernels, k ? k : kimg_jval_string(kimg_jval_path(r, "kernel.name")), JSON_KERNELS);
	s->reports++;
	return true;
}

static void read_file(struct summary *s, const char *path, struct kimg_span bytes)
{
	struct kimg_jdoc doc;
	unsigned long lineno = 0, skipped = 0, first_bad = 0;
	char why[160] = "";
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
		if (skipped++ == 0) {
			first_bad = lineno;
			snprintf(why, sizeof why, "%s", rc < 0 ? err.what : "a JSON value without error.code and module");
		}
	}
	s->skipped += skipped;
	if (skipped)
		fprintf(stderr, "kimg-probe: %s: skipped %lu line%s that %s not kimg reports (first: line %lu: %s)\n", path,
			skipped, skipped == 1 ? "" : "s", skipped == 1 ? "is" : "are", first_bad, why);
}

/* "0-3,7,9-10" from sorted distinct ranks. */
static void format_ranks(const struct group *g, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < g->n_ranks && used + 1 < size;) {
		size_t j = i;
		while (j + 1 < g->n_ranks && g->ranks[j + 1] == g->ranks[j] + 1)
			j++;
		int n = j == i ? snprintf(buf + used, size - used, "%s%lld", used ? "," : "", (long long)g->ranks[i])
			       : snprintf(buf + used, size - used, "%s%lld-%lld", used ? "," : "", (long long)g->ranks[i],
					  (long long)g->ranks[j]);
		if (n < 0 || (size_t)n >= size - used) {
			buf[used] = '\0';
			break;
		}
		used += (size_t)n;
		i = j + 1;
	}
	if (g->unknown_rank)
		snprintf(buf + used, size - used, "%s?", used ? "," : "");
	if (!buf[0])
		snprintf(buf, size, "-");
}

/* "a, b, c, d +3 more" */
static void format_list(const struct strlist *l, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < l->n && i < TEXT_SHOWN && used + 1 < size; i++) {
		int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", l->v[i]);
		used = n < 0 ? used : (size_t)n >= size - used ? size - 1 : used + (size_t)n;
	}
	unsigned long more = (l->n > TEXT_SHOWN ? l->n - TEXT_SHOWN : 0) + l->more;
	if (more && used + 1 < size)
		snprintf(buf + used, size - used, " +%lu more", more);
	if (!buf[0])
		snprintf(buf, size, "-");
}

static void format_devs(const struct group *g, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < g->n_devs && i < TEXT_SHOWN && used + 1 < size; i++) {
		int n = snprintf(buf + used, size - used, "%s%s (SM %s)", i ? ", " : "", g->devs[i].name, g->devs[i].sm);
		used = n < 0 ? used : (size_t)n >= size - used ? size - 1 : used + (size_t)n;
	}
	if (g->n_devs > TEXT_SHOWN && used + 1 < size)
		snprintf(buf + used, size - used, " +%zu more", g->n_devs - TEXT_SHOWN);
	if (!buf[0])
		snprintf(buf, size, "unknown");
}

/* The fix object of a group's first report, parsed again from its copy. */
static const struct kimg_jval *first_fix(const struct summary *s, const struct group *g, struct kimg_jdoc *doc)
{
	kimg_jdoc_init(doc, s->arena, LINE_ARENA);
	if (kimg_jdoc_parse(doc, kimg_span_make(g->first_line, g->first_len), NULL) < 0)
		return NULL;
	const struct kimg_jval *f = kimg_jval_get(doc->root, "fix");
	return f && f->type == KIMG_JOBJECT ? f : NULL;
}

/* A parsed value written back through the JSON writer. Numbers that are
 * not int64 integers (none in kimg's fix objects) are kept as strings. */
static void write_jval(struct kimg_json *j, const struct kimg_jval *v)
{
	int64_t n;
	switch (v->type) {
	case KIMG_JNULL:
		kimg_json_null(j);
		break;
	case KIMG_JFALSE:
	case KIMG_JTRUE:
		kimg_json_bool(j, v->type == KIMG_JTRUE);
		break;
	case KIMG_JNUMBER:
		if (kimg_jval_int(v, &n))
			kimg_json_int(j, n);
		else
			kimg_json_string(j, v->str);
		break;
	case KIMG_JSTRING:
		kimg_json_string_n(j, v->str, v->len);
		break;
	case KIMG_JARRAY:
	case KIMG_JOBJECT:
		if (v->type == KIMG_JOBJECT)
			kimg_json_begin_object(j);
		else
			kimg_json_begin_array(j);
		for (const struct kimg_jval *c = v->child; c; c = c->next) {
			if (v->type == KIMG_JOBJECT)
				kimg_json_key(j, c->key);
			write_jval(j, c);
		}
		if (v->type == KIMG_JOBJECT)
			kimg_json_end_object(j);
		else
			kimg_json_end_array(j);
		break;
	default:
		kimg_json_null(j);
	}
}

static void print_json(const struct summary *s)
{
	struct kimg_json j;
	struct kimg_jdoc doc;
	kimg_json_init(&j, stdout);
	kimg_json_begin_object(&j);
	kimg_json_key(&j, "groups");
	kimg_json_begin_array(&j);
	for (size_t i = 0; i < s->n; i++) {
		const struct group *g = &s->g[i];
		kimg_json_begin_object(&j);
		kimg_json_key(&j, "module");
		kimg_json_begin_object(&j);
		kimg_json_kv_string(&j, "file", g->file);
		kimg_json_key(&j, "offset");
		if (g->offset_known)
			kimg_json_int(&j, g->offset);
		else
			kimg_json_null(&j);
		kimg_json_end_object(&j);
		kimg_json_key(&j, "error");
		kimg_json_begin_object(&j);
		kimg_json_kv_int(&j, "code", g->code);
		kimg_json_kv_string(&j, "name", g->name);
		kimg_json_end_object(&j);
		kimg_json_kv_uint(&j, "reports", g->reports);
		kimg_json_key(&j, "hosts");
		kimg_json_begin_array(&j);
		for (size_t k = 0; k < g->hosts.n; k++)
			kimg_json_string(&j, g->hosts.v[k]);
		kimg_json_end_array(&j);
		kimg_json_key(&j, "ranks");
		kimg_json_begin_array(&j);
		for (size_t k = 0; k < g->n_ranks; k++)
			kimg_json_int(&j, g->ranks[k]);
		kimg_json_end_array(&j);
		kimg_json_kv_uint(&j, "unknown_rank_reports", g->unknown_rank);
		kimg_json_key(&j, "devices");
		kimg_json_begin_array(&j);
		for (size_t k = 0; k < g->n_devs; k++) {
			kimg_json_begin_object(&j);
			kimg_json_kv_string(&j, "name", g->devs[k].name);
			kimg_json_kv_string(&j, "sm", g->devs[k].sm);
			kimg_json_end_object(&j);
		}
		kimg_json_end_array(&j);
		kimg_json_key(&j, "kernels");
		kimg_json_begin_array(&j);
		for (size_t k = 0; k < g->kernels.n; k++)
			kimg_json_string(&j, g->kernels.v[k]);
		kimg_json_end_array(&j);
		kimg_json_kv_bool(&j, "kernels_truncated", g->kernels.more > 0);
		kimg_json_key(&j, "fix");
		const struct kimg_jval *fix = first_fix(s, g, &doc);
		if (fix)
			write_jval(&j, fix);
		else
			kimg_json_null(&j);
		kimg_json_end_object(&j);
	}
	kimg_json_end_array(&j);
	kimg_json_kv_uint(&j, "files", s->files);
	kimg_json_kv_uint(&j, "reports", s->reports);
	kimg_json_kv_uint(&j, "skipped_lines", s->skipped);
	kimg_json_end_object(&j);
	fputc('\n', stdout);
}

enum { COL_N, COL_MODULE, COL_ERROR, COL_REPORTS, COL_HOSTS, COL_RANKS, COL_GPUS, COL_KERNELS, COL_COUNT };

static void print_text(const struct summary *s)
{
	static const char *const head[COL_COUNT] = { "#", "module", "error", "reports", "hosts", "ranks", "GPUs", "kernels" };
	char (*cell)[COL_COUNT][512] = xrealloc(NULL, (s->n + 1) * sizeof *cell);
	size_t width[COL_COUNT] = { 0 };
	for (int c = 0; c < COL_COUNT; c++)
		snprintf(cell[0][c], sizeof cell[0][c], "%s", head[c]);
	for (size_t i = 0; i < s->n; i++) {
		const struct group *g = &s->g[i];
		char (*row)[512] = cell[i + 1];
		snprintf(row[COL_N], sizeof row[0], "%zu", i + 1);
		if (g->offset_known)
			snprintf(row[COL_MODULE], sizeof row[0], "%s@0x%llx", g->file ? g->file : "(in memory)",
				 (unsigned long long)g->offset);
		else
			snprintf(row[COL_MODULE], sizeof row[0], "%s", g->file ? g->file : "(in memory)");
		snprintf(row[COL_ERROR], sizeof row[0], "%lld %s", (long long)g->code, g->name ? g->name : "?");
		snprintf(row[COL_REPORTS], sizeof row[0], "%lu", g->reports);
		format_list(&g->hosts, row[COL_HOSTS], sizeof row[0]);
		format_ranks(g, row[COL_RANKS], sizeof row[0]);
		format_devs(g, row[COL_GPUS], sizeof row[0]);
		format_list(&g->kernels, row[COL_KERNELS], sizeof row[0]);
	}
	for (size_t i = 0; i <= s->n; i++)
		for (int c = 0; c < COL_COUNT; c++)
			if (strlen(cell[i][c]) > width[c])
				width[c] = strlen(cell[i][c]);
	for (size_t i = 0; s->n > 0 && i <= s->n; i++) {
		for (int c = 0; c < COL_COUNT; c++)
			if (c + 1 < COL_COUNT)
				printf("%-*s  ", (int)width[c], cell[i][c]);
			else
				printf("%s\n", cell[i][c]);
	}
	free(cell);

	struct kimg_jdoc doc;
	for (size_t i = 0; i < s->n; i++) {
		const struct kimg_jval *fix = first_fix(s, &s->g[i], &doc);
		const char *advice = kimg_jval_string(kimg_jval_get(fix, "advice"));
		const char *nvcc = kimg_jval_string(kimg_jval_get(fix, "nvcc"));
		const char *torch = kimg_jval_string(kimg_jval_get(fix, "torch_cuda_arch_list"));
		if (!advice && !nvcc && !torch)
			continue;
		printf("fix %zu: %s\n", i + 1, advice ? advice : "");
		if (nvcc)
			printf("  nvcc: %s\n", nvcc);
		if (torch)
			printf("  PyTorch extensions: TORCH_CUDA_ARCH_LIST=\"%s\"\n", torch);
	}
	/* hosts over all groups, for the summary line */
	struct strlist all = { 0 };
	for (size_t i = 0; i < s->n; i++)
		for (size_t k = 0; k < s->g[i].hosts.n; k++)
			strlist_add(&all, s->g[i].hosts.v[k], MAX_DISTINCT);
	printf("%lu report%s in %zu group%s from %lu file%s on %zu host%s; %lu line%s skipped\n", s->reports,
	       s->reports == 1 ? "" : "s", s->n, s->n == 1 ? "" : "s", s->files, s->files == 1 ? "" : "s", all.n,
	       all.n == 1 ? "" : "s", s->skipped, s->skipped == 1 ? "" : "s");
	for (size_t k = 0; k < all.n; k++)
		free(all.v[k]);
	free(all.v);
}

static void summary_free(struct summary *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct group *g = &s->g[i];
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
}

int probe_cmd_summarize(int argc, char **argv)
{
	bool json = false;
	int first = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(summarize_help, stdout);
			return PROBE_EXIT_OK;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "kimg-probe summarize: unknown option '%s' (see kimg-probe summarize --help)\n",
				argv[i]);
			return PROBE_EXIT_ERROR;
		} else if (!first)
			first = i;
	}
	if (!first) {
		fputs("kimg-probe summarize: no FILE given (see kimg-probe summarize --help)\n", stderr);
		return PROBE_EXIT_ERROR;
	}
	struct summary s = { 0 };
	s.arena = xrealloc(NULL, LINE_ARENA);
	bool io_error = false;
	for (int i = first; i < argc; i++) {
		const char *path = argv[i];
		if (strcmp(path, "--json") == 0)
			continue;
		struct kimg_file f = { 0 };
		struct kimg_error err = { 0 };
		if (kimg_file_open(strcmp(path, "-") == 0 ? "/dev/stdin" : path, &f, &err) < 0) {
			probe_report_error(path, err.what);
			io_error = true;
			continue;
		}
		s.files++;
		read_file(&s, path, f.bytes);
		kimg_file_close(&f);
	}
	if (json)
		print_json(&s);
	else
		print_text(&s);
	int rc = io_error ? PROBE_EXIT_ERROR : s.reports > 0 ? PROBE_EXIT_FAIL : PROBE_EXIT_OK;
	summary_free(&s);
	return rc;
}
