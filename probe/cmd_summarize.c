/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe summarize: merge the JSON Lines reports that libkimg.so wrote
 * in many processes (ranks of torchrun, mpirun, srun; many hosts) into one
 * table of groups keyed by (module file, module offset, error code). This
 * file handles the arguments and renders (text table or --json); the
 * merging is probe/summary.c. */
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "probe.h"
#include "summary.h"

static const char summarize_help[] =
	"usage: kimg-probe summarize [--json] FILE...\n"
	"\n"
	"Merge the JSON Lines reports libkimg.so wrote (KIMG_FORMAT=json) in many\n"
	"processes and hosts, e.g. one KIMG_LOG=kimg-%h-%r.log per rank, into one\n"
	"table: one row per (module file, module offset, error code) with the\n"
	"number of reports, the hosts, the ranks (\"0-3,7\"), the GPUs (name and\n"
	"SM) and the kernels that failed, then the first fix seen for each row.\n"
	"Lines that are not kimg reports (stray text, a line cut short when a\n"
	"process was killed) are skipped and counted; FILE - reads stdin. A line\n"
	"that opens like a report ('{') but is not valid JSON (cut short, damaged,\n"
	"not UTF-8) is an unreadable report: a failure that cannot be shown, so\n"
	"the exit status is then 2. So is a report-shaped object (with \"error\"\n"
	"and \"module\") whose error is null, not an object or has no numeric code.\n"
	"Lines that are 'kimg-probe device --json' documents (a fleet inventory,\n"
	"as srun or a Kubernetes job on every node collects them) are merged into\n"
	"a GPU inventory table: distinct GPU + driver, with GPU and host counts.\n"
	"\n"
	"  --json   one JSON document on stdout (docs/json-probe.md)\n"
	"\n"
	"Exit status: 0 when the files hold no report; 1 when they hold reports\n"
	"(something failed to load); 2 on a usage error, an unreadable file or an\n"
	"unreadable report.\n";

/* "0-3,7,9-10" from sorted distinct ranks. */
static void format_ranks(const struct probe_summary_group *g, char *buf, size_t size)
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
static void format_list(const struct probe_strlist *l, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < l->n && i < TEXT_SHOWN && used + 1 < size; i++) {
		struct probe_esc e;
		int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", probe_esc(&e, l->v[i]));
		used = n < 0 ? used : (size_t)n >= size - used ? size - 1 : used + (size_t)n;
	}
	unsigned long more = (l->n > TEXT_SHOWN ? l->n - TEXT_SHOWN : 0) + l->more;
	if (more && used + 1 < size)
		snprintf(buf + used, size - used, " +%lu more", more);
	if (!buf[0])
		snprintf(buf, size, "-");
}

static void format_devs(const struct probe_summary_group *g, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < g->n_devs && i < TEXT_SHOWN && used + 1 < size; i++) {
		struct probe_esc e, f;
		int n = snprintf(buf + used, size - used, "%s%s (SM %s)", i ? ", " : "", probe_esc(&e, g->devs[i].name),
				 probe_esc(&f, g->devs[i].sm));
		used = n < 0 ? used : (size_t)n >= size - used ? size - 1 : used + (size_t)n;
	}
	if (g->n_devs > TEXT_SHOWN && used + 1 < size)
		snprintf(buf + used, size - used, " +%zu more", g->n_devs - TEXT_SHOWN);
	if (!buf[0])
		snprintf(buf, size, "unknown");
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

static void print_json(const struct probe_summary *s)
{
	struct kimg_json j;
	struct kimg_jdoc doc;
	kimg_json_init(&j, stdout);
	kimg_json_begin_document(&j);
	kimg_json_key(&j, "groups");
	kimg_json_begin_array(&j);
	for (size_t i = 0; i < s->n; i++) {
		const struct probe_summary_group *g = &s->g[i];
		kimg_json_begin_object(&j);
		kimg_json_kv_string(&j, "kind", g->driver_mismatch ? "driver_mismatch" : "image");
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
		const struct kimg_jval *fix = probe_summary_first_fix(s, g, &doc);
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
	kimg_json_kv_uint(&j, "unreadable_reports", s->unreadable);
	probe_summary_json_inventory(s, &j);
	kimg_json_end_object(&j);
	fputc('\n', stdout);
}

enum { COL_N, COL_MODULE, COL_ERROR, COL_REPORTS, COL_HOSTS, COL_RANKS, COL_GPUS, COL_KERNELS, COL_COUNT };

static void print_text(const struct probe_summary *s)
{
	static const char *const head[COL_COUNT] = { "#", "module", "error", "reports", "hosts", "ranks", "GPUs", "kernels" };
	char (*cell)[COL_COUNT][512] = malloc((s->n + 1) * sizeof *cell);
	if (!cell) {
		fputs("kimg-probe summarize: out of memory\n", stderr);
		return;
	}
	size_t width[COL_COUNT] = { 0 };
	for (int c = 0; c < COL_COUNT; c++)
		snprintf(cell[0][c], sizeof cell[0][c], "%s", head[c]);
	for (size_t i = 0; i < s->n; i++) {
		const struct probe_summary_group *g = &s->g[i];
		char (*row)[512] = cell[i + 1];
		snprintf(row[COL_N], sizeof row[0], "%zu", i + 1);
		struct probe_esc e;
		const char *file = g->file ? probe_esc(&e, g->file) : g->driver_mismatch ? "(driver mismatch)" : "(in memory)";
		if (g->offset_known)
			snprintf(row[COL_MODULE], sizeof row[0], "%s@0x%llx", file, (unsigned long long)g->offset);
		else
			snprintf(row[COL_MODULE], sizeof row[0], "%s", file);
		snprintf(row[COL_ERROR], sizeof row[0], "%lld %s", (long long)g->code, g->name ? probe_esc(&e, g->name) : "?");
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
		const struct kimg_jval *fix = probe_summary_first_fix(s, &s->g[i], &doc);
		/* a driver mismatch's fix is one sentence */
		const char *advice = kimg_jval_string(fix && fix->type == KIMG_JSTRING ? fix : kimg_jval_get(fix, "advice"));
		const char *nvcc = kimg_jval_string(kimg_jval_get(fix, "nvcc"));
		const char *torch = kimg_jval_string(kimg_jval_get(fix, "torch_cuda_arch_list"));
		if (!advice && !nvcc && !torch)
			continue;
		struct probe_esc e;
		printf("fix %zu: %s\n", i + 1, advice ? probe_esc(&e, advice) : "");
		if (nvcc)
			printf("  nvcc: %s\n", probe_esc(&e, nvcc));
		if (torch)
			printf("  PyTorch extensions: TORCH_CUDA_ARCH_LIST=\"%s\"\n", probe_esc(&e, torch));
	}
	/* hosts over all groups, for the summary line */
	struct probe_strlist all = { 0 };
	for (size_t i = 0; i < s->n; i++)
		for (size_t k = 0; k < s->g[i].hosts.n; k++)
			probe_summary_strlist_add(&all, s->g[i].hosts.v[k], MAX_DISTINCT);
	printf("%lu report%s in %zu group%s from %lu file%s on %zu host%s; %lu line%s skipped\n", s->reports,
	       s->reports == 1 ? "" : "s", s->n, s->n == 1 ? "" : "s", s->files, s->files == 1 ? "" : "s", all.n,
	       all.n == 1 ? "" : "s", s->skipped, s->skipped == 1 ? "" : "s");
	if (s->unreadable)
		printf("%lu report%s could not be read: failures not shown above (exit 2)\n", s->unreadable,
		       s->unreadable == 1 ? "" : "s");
	for (size_t k = 0; k < all.n; k++)
		free(all.v[k]);
	free(all.v);
}

struct summary_read {
	struct probe_summary *s;
	const char *path;
	struct kimg_span bytes;
};

static void summary_read_guarded(void *ctx)
{
	struct summary_read *r = ctx;
	probe_summary_read(r->s, r->path, r->bytes);
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
	struct probe_summary s;
	probe_summary_init(&s);
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
		struct summary_read sr = { &s, path, f.bytes };
		if (kimg_file_guard(&f, summary_read_guarded, &sr, &err) < 0) {
			/* A log rotated or truncated while read: what was merged stays. */
			probe_report_error(path, err.what);
			io_error = true;
		}
		kimg_file_close(&f);
	}
	if (json)
		print_json(&s);
	else
		print_text(&s);
	if (!json)
		probe_summary_print_inventory(&s);
	/* A report that could not be read is a failure nobody can see: never "no failures". */
	int rc = io_error || s.unreadable ? PROBE_EXIT_ERROR : s.reports > 0 ? PROBE_EXIT_FAIL : PROBE_EXIT_OK;
	probe_summary_free(&s);
	return rc;
}
