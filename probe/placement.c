/* SPDX-License-Identifier: Apache-2.0 */
/* Where a job may run (cluster_groups.h): after check's verdicts, per cluster
 * source, the groups that run everything checked and those that do not
 * (with the first fix met), the nodes without GPU facts, and a constraint
 * keeping the job on the groups that run it: a Kubernetes nodeAffinity on
 * GPU Feature Discovery's labels, a Slurm --gres or --constraint line.
 *
 * The affinity selects each running compute capability; where a group of
 * that capability fails and another runs, the difference is the driver
 * (a PTX JIT or CUDA runtime needing a newer one), so the term adds the
 * lowest running driver as a floor: a newer driver never runs less. */
#include <stdlib.h>
#include <string.h>

#include "cluster_groups.h"
#include "fix.h"
#include "probe.h"

void probe_place_fix(const struct kimg_fix *fix, char *buf, size_t size)
{
	if (fix && fix->nvcc[0])
		snprintf(buf, size, "nvcc %.300s", fix->nvcc);
	else if (fix && fix->advice[0])
		snprintf(buf, size, "%s", fix->advice);
	else if (fix && fix->min_driver[0])
		snprintf(buf, size, "a driver >= %s", fix->min_driver);
	else
		snprintf(buf, size, "rebuild for this GPU");
}

void probe_place_merge(struct probe_place_row *total, const struct probe_place_row *a, int n)
{
	for (int i = 0; i < n; i++) {
		total[i].fails += a[i].fails;
		if (!total[i].fix[0] && a[i].fix[0])
			snprintf(total[i].fix, sizeof total[i].fix, "%s", a[i].fix);
	}
}

static int target_of(const struct probe_target *t, int n, const struct probe_group *g)
{
	for (int i = 0; i < n; i++)
		if (t[i].group == g)
			return i;
	return -1;
}

static bool any_group(const struct probe_target *t, int n)
{
	for (int i = 0; i < n; i++)
		if (t[i].group)
			return true;
	return false;
}

static bool runs(const struct probe_place_row *rows, int i)
{
	return i >= 0 && rows[i].fails == 0;
}

/* The driver floor of capability sm for the affinity: 0 when no failing
 * group shares sm (the capability alone tells) or a running one has no
 * known driver. */
static int driver_floor(const struct probe_cluster *c, unsigned sm, const struct probe_target *t, int n,
			const struct probe_place_row *rows)
{
	bool fails_here = false;
	int floor = 0;
	for (size_t i = 0; i < c->n_groups; i++) {
		const struct probe_group *g = &c->groups[i];
		if (g->sm != sm)
			continue;
		int ti = target_of(t, n, g);
		if (!runs(rows, ti))
			fails_here = true;
		else if (g->driver_version == 0)
			return 0;
		else if (!floor || g->driver_version < floor)
			floor = g->driver_version;
	}
	return fails_here ? floor : 0;
}

/* Each capability that runs, once, in group order. */
static size_t running_ccs(const struct probe_cluster *c, const struct probe_target *t, int n,
			  const struct probe_place_row *rows, unsigned *ccs, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < c->n_groups && k < max; i++) {
		if (!runs(rows, target_of(t, n, &c->groups[i])))
			continue;
		bool seen = false;
		for (size_t j = 0; j < k; j++)
			seen |= ccs[j] == c->groups[i].sm;
		if (!seen)
			ccs[k++] = c->groups[i].sm;
	}
	return k;
}

/* ---- the Kubernetes affinity ---- */

struct term {
	unsigned sm;
	int major_gt;     /* -1: none */
	int major_in;     /* -1: none */
	int minor_gt;     /* -1: none */
};

static size_t affinity_terms(const struct probe_cluster *c, const struct probe_target *t, int n,
			     const struct probe_place_row *rows, struct term *terms, size_t max)
{
	unsigned ccs[PROBE_CLUSTER_GROUPS_MAX];
	size_t k = running_ccs(c, t, n, rows, ccs, PROBE_CLUSTER_GROUPS_MAX), m = 0;
	for (size_t i = 0; i < k && m + 2 <= max; i++) {
		int d = driver_floor(c, ccs[i], t, n, rows);
		int major = d / 1000, minor = d % 1000 / 10;
		if (!d) {
			terms[m++] = (struct term){ ccs[i], -1, -1, -1 };
		} else if (minor == 0) {
			terms[m++] = (struct term){ ccs[i], major - 1, -1, -1 };
		} else {
			terms[m++] = (struct term){ ccs[i], major, -1, -1 };
			terms[m++] = (struct term){ ccs[i], -1, major, minor - 1 };
		}
	}
	return m;
}

static void text_affinity(FILE *f, const struct term *terms, size_t m)
{
	fprintf(f, "    Kubernetes (GPU Feature Discovery labels; paste under the pod's spec):\n"
		   "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
		   "            nodeSelectorTerms:\n");
	for (size_t i = 0; i < m; i++) {
		const struct term *x = &terms[i];
		fprintf(f, "            - matchExpressions:\n");
		fprintf(f, "              - {key: nvidia.com/gpu.compute.major, operator: In, values: [\"%u\"]}\n", x->sm / 10);
		fprintf(f, "              - {key: nvidia.com/gpu.compute.minor, operator: In, values: [\"%u\"]}\n", x->sm % 10);
		if (x->major_gt >= 0)
			fprintf(f, "              - {key: nvidia.com/cuda.runtime.major, operator: Gt, values: [\"%d\"]}\n", x->major_gt);
		if (x->major_in >= 0)
			fprintf(f, "              - {key: nvidia.com/cuda.runtime.major, operator: In, values: [\"%d\"]}\n", x->major_in);
		if (x->minor_gt >= 0)
			fprintf(f, "              - {key: nvidia.com/cuda.runtime.minor, operator: Gt, values: [\"%d\"]}\n", x->minor_gt);
	}
}

static void json_expr(struct kimg_json *j, const char *key, const char *op, int value)
{
	char v[16];
	snprintf(v, sizeof v, "%d", value);
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "key", key);
	kimg_json_kv_string(j, "operator", op);
	kimg_json_key(j, "values");
	kimg_json_begin_array(j);
	kimg_json_string(j, v);
	kimg_json_end_array(j);
	kimg_json_end_object(j);
}

static void json_affinity(struct kimg_json *j, const struct term *terms, size_t m)
{
	kimg_json_begin_object(j);
	kimg_json_key(j, "nodeAffinity");
	kimg_json_begin_object(j);
	kimg_json_key(j, "requiredDuringSchedulingIgnoredDuringExecution");
	kimg_json_begin_object(j);
	kimg_json_key(j, "nodeSelectorTerms");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < m; i++) {
		const struct term *x = &terms[i];
		kimg_json_begin_object(j);
		kimg_json_key(j, "matchExpressions");
		kimg_json_begin_array(j);
		json_expr(j, "nvidia.com/gpu.compute.major", "In", (int)(x->sm / 10));
		json_expr(j, "nvidia.com/gpu.compute.minor", "In", (int)(x->sm % 10));
		if (x->major_gt >= 0)
			json_expr(j, "nvidia.com/cuda.runtime.major", "Gt", x->major_gt);
		if (x->major_in >= 0)
			json_expr(j, "nvidia.com/cuda.runtime.major", "In", x->major_in);
		if (x->minor_gt >= 0)
			json_expr(j, "nvidia.com/cuda.runtime.minor", "Gt", x->minor_gt);
		kimg_json_end_array(j);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_end_object(j);
	kimg_json_end_object(j);
	kimg_json_end_object(j);
}

/* ---- the Slurm line ---- */

/* "--gres=gpu:h100:1", "--constraint=\"h100|h200\"", "--nodelist=a,b" (dcgm),
 * or "" with why. */
static void slurm_line(const struct probe_cluster *c, const struct probe_target *t, int n,
		       const struct probe_place_row *rows, char *line, size_t size, char *why, size_t why_size)
{
	char types[512] = "";
	unsigned n_types = 0;
	bool untyped = false;
	line[0] = why[0] = '\0';
	if (c->kind == PROBE_CLUSTER_DCGM) {
		size_t used = (size_t)snprintf(line, size, "--nodelist=");
		for (size_t i = 0; i < c->n_groups; i++) {
			const struct probe_group *g = &c->groups[i];
			if (!runs(rows, target_of(t, n, g)))
				continue;
			if (g->n_names < g->nodes) {
				snprintf(why, why_size, "more than %d hosts in a group: no host list", PROBE_GROUP_NAMES);
				line[0] = '\0';
				return;
			}
			for (unsigned k = 0; k < g->n_names && used < size; k++)
				used += (size_t)snprintf(line + used, size - used, "%s%s", line[used - 1] == '=' ? "" : ",",
							 g->names[k]);
		}
		if (used >= size) {
			snprintf(why, why_size, "the host list is too long for one line");
			line[0] = '\0';
		}
		return;
	}
	for (size_t i = 0; i < c->n_groups; i++) {
		const struct probe_group *g = &c->groups[i];
		if (!runs(rows, target_of(t, n, g)))
			continue;
		untyped |= g->n_types == 0 || g->more_types;
		for (unsigned k = 0; k < g->n_types; k++) {
			char key[80];
			snprintf(key, sizeof key, "|%s|", g->types[k]);
			char padded[520];
			snprintf(padded, sizeof padded, "|%s|", types);
			if (strstr(padded, key))
				continue;
			size_t l = strlen(types);
			snprintf(types + l, sizeof types - l, "%s%s", l ? "|" : "", g->types[k]);
			n_types++;
		}
	}
	if (untyped) {
		snprintf(why, why_size, "some nodes that run it have GPUs of no GRES type: no --gres line selects them");
		return;
	}
	if (n_types == 1)
		snprintf(line, size, "--gres=gpu:%s:1", types);
	else
		snprintf(line, size, "--constraint=\"%s\"", types);
	if (n_types > 1)
		snprintf(why, why_size, "--constraint needs node Features named as these GRES types; otherwise submit with "
			 "--gres=gpu:TYPE:N for one of them");
}

/* ---- the report ---- */

static const char *const kind_name[] = { "Kubernetes", "Slurm", "dcgm-exporter", "kimg's GPU-name table" };

static void group_line(FILE *f, const char *what, const struct probe_target *t)
{
	char cc[16];
	kimg_arch_format_cc(t->dev.cc, cc, sizeof cc);
	struct probe_esc e;
	fprintf(f, "    %-13s %s (%s)\n", what, cc, probe_esc(&e, t->dev.name));
}

static void text_source(FILE *f, const struct probe_cluster *c, const struct probe_target *t, int n,
			const struct probe_place_row *rows)
{
	struct probe_esc e;
	unsigned long run = 0, fail = 0;
	for (size_t i = 0; i < c->n_groups; i++)
		runs(rows, target_of(t, n, &c->groups[i])) ? run++ : fail++;
	if (c->kind == PROBE_CLUSTER_ALL)
		fprintf(f, "  %s: %zu compute capabilities\n", c->input, c->n_groups);
	else
		fprintf(f, "  %s (%s): %lu node%s, %zu group%s, %lu without GPU facts%s\n", probe_esc(&e, c->input),
			kind_name[c->kind], c->nodes, c->nodes == 1 ? "" : "s", c->n_groups, c->n_groups == 1 ? "" : "s",
			c->no_facts, c->duplicates ? "" : "");
	if (c->duplicates)
		fprintf(f, "    %lu record%s of a node already read (first: %s) read once\n", c->duplicates,
			c->duplicates == 1 ? "" : "s", probe_esc(&e, c->first_duplicate));
	const char *runs_word = c->kind == PROBE_CLUSTER_ALL ? "runs on" : "runs";
	const char *fails_word = c->kind == PROBE_CLUSTER_ALL ? "does not run on" : "does not run";
	for (size_t i = 0; i < c->n_groups; i++) {
		int ti = target_of(t, n, &c->groups[i]);
		if (runs(rows, ti))
			group_line(f, runs_word, &t[ti]);
	}
	for (size_t i = 0; i < c->n_groups; i++) {
		int ti = target_of(t, n, &c->groups[i]);
		if (ti < 0 || runs(rows, ti))
			continue;
		group_line(f, fails_word, &t[ti]);
		if (rows[ti].fix[0])
			fprintf(f, "                  fix: %s\n", rows[ti].fix);
	}
	if (c->no_facts) {
		char names[400] = "";
		for (unsigned k = 0; k < c->n_no_facts_names; k++) {
			size_t l = strlen(names);
			snprintf(names + l, sizeof names - l, "%s%s", k ? ", " : "", c->no_facts_names[k]);
		}
		fprintf(f, "    %-13s %lu node%s: %s%s (never a failure)\n", "no GPU facts", c->no_facts,
			c->no_facts == 1 ? "" : "s", probe_esc(&e, names), c->no_facts > c->n_no_facts_names ? ", …" : "");
	}
	for (unsigned k = 0; k < c->n_reasons; k++)
		fprintf(f, "      %s: %lu node%s (first %s)\n", probe_esc(&e, c->reasons[k].why), c->reasons[k].nodes,
			c->reasons[k].nodes == 1 ? "" : "s", c->reasons[k].first);
	if (c->other_reasons)
		fprintf(f, "      other reasons: %lu nodes\n", c->other_reasons);
	if (run == 0) {
		int first = c->n_groups ? target_of(t, n, &c->groups[0]) : -1;
		fprintf(f, "    no group can run it%s%s\n", first >= 0 && rows[first].fix[0] ? "; fix: " : "",
			first >= 0 ? rows[first].fix : "");
		return;
	}
	if (c->kind == PROBE_CLUSTER_ALL)
		return;
	if (c->kind == PROBE_CLUSTER_K8S || c->kind == PROBE_CLUSTER_DCGM) {
		struct term terms[2 * PROBE_CLUSTER_GROUPS_MAX];
		size_t m = affinity_terms(c, t, n, rows, terms, sizeof terms / sizeof terms[0]);
		text_affinity(f, terms, m);
	}
	if (c->kind == PROBE_CLUSTER_SLURM || c->kind == PROBE_CLUSTER_DCGM) {
		char line[1024], why[200];
		slurm_line(c, t, n, rows, line, sizeof line, why, sizeof why);
		if (line[0])
			fprintf(f, "    Slurm: sbatch %s ...\n", probe_esc(&e, line));
		if (why[0])
			fprintf(f, "    %s%s\n", line[0] ? "note: " : "Slurm: ", why);
	}
}

void probe_placement_text(FILE *f, const struct probe_target *t, int n, const struct probe_place_row *rows)
{
	if (!any_group(t, n) || !rows)
		return;
	fprintf(f, "Where it may run:\n");
	for (size_t s = 0; probe_cluster_at(s); s++)
		if (target_of(t, n, &probe_cluster_at(s)->groups[0]) >= 0)
			text_source(f, probe_cluster_at(s), t, n, rows);
}

static void json_group(struct kimg_json *j, const struct probe_group *g, const struct probe_target *t, int ti,
		       const struct probe_place_row *rows)
{
	char cc[16], drv[16];
	kimg_arch_format_cc((struct kimg_arch){ (uint16_t)g->sm, KIMG_VARIANT_PLAIN }, cc, sizeof cc);
	probe_format_cuda_version(g->driver_version, drv, sizeof drv);
	kimg_json_begin_object(j);
	kimg_json_key(j, "target");
	kimg_json_int(j, ti);
	kimg_json_kv_string(j, "device", t[ti].dev.name);
	kimg_json_kv_string(j, "sm", cc);
	kimg_json_kv_bool(j, "tegra", g->tegra);
	kimg_json_kv_string(j, "driver_cuda_version", drv[0] ? drv : NULL);
	kimg_json_kv_uint(j, "nodes", g->nodes);
	kimg_json_kv_uint(j, "gpus", g->gpus);
	kimg_json_kv_uint(j, "uncounted_nodes", g->uncounted);
	kimg_json_kv_string(j, "mig", g->mig[0] ? g->mig : NULL);
	kimg_json_key(j, "node_names");
	kimg_json_begin_array(j);
	for (unsigned k = 0; k < g->n_names; k++)
		kimg_json_string(j, g->names[k]);
	kimg_json_end_array(j);
	kimg_json_kv_bool(j, "node_names_complete", g->n_names == g->nodes);
	kimg_json_key(j, "products");
	kimg_json_begin_array(j);
	for (unsigned k = 0; k < g->n_products; k++) {
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "name", g->products[k].name);
		kimg_json_kv_uint(j, "gpus", g->products[k].gpus);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_key(j, "gres_types");
	kimg_json_begin_array(j);
	for (unsigned k = 0; k < g->n_types; k++)
		kimg_json_string(j, g->types[k]);
	kimg_json_end_array(j);
	kimg_json_kv_bool(j, "runs", runs(rows, ti));
	kimg_json_kv_uint(j, "fails", rows[ti].fails);
	kimg_json_kv_string(j, "fix", rows[ti].fix[0] ? rows[ti].fix : NULL);
	kimg_json_end_object(j);
}

static void json_source(struct kimg_json *j, const struct probe_cluster *c, const struct probe_target *t, int n,
			const struct probe_place_row *rows)
{
	static const char *const ids[] = { "k8s", "slurm", "dcgm", "all" };
	unsigned long run = 0;
	kimg_json_begin_object(j);
	kimg_json_kv_string(j, "source", ids[c->kind]);
	kimg_json_kv_string(j, "input", c->input);
	kimg_json_kv_uint(j, "nodes", c->nodes);
	kimg_json_kv_uint(j, "records", c->records);
	kimg_json_kv_uint(j, "duplicates", c->duplicates);
	kimg_json_key(j, "groups");
	kimg_json_begin_array(j);
	for (size_t i = 0; i < c->n_groups; i++) {
		int ti = target_of(t, n, &c->groups[i]);
		if (ti < 0)
			continue;
		run += runs(rows, ti);
		json_group(j, &c->groups[i], t, ti, rows);
	}
	kimg_json_end_array(j);
	kimg_json_key(j, "no_gpu_facts");
	kimg_json_begin_object(j);
	kimg_json_kv_uint(j, "nodes", c->no_facts);
	kimg_json_key(j, "node_names");
	kimg_json_begin_array(j);
	for (unsigned k = 0; k < c->n_no_facts_names; k++)
		kimg_json_string(j, c->no_facts_names[k]);
	kimg_json_end_array(j);
	kimg_json_end_object(j);
	kimg_json_key(j, "reasons");
	kimg_json_begin_array(j);
	for (unsigned k = 0; k < c->n_reasons; k++) {
		kimg_json_begin_object(j);
		kimg_json_kv_string(j, "why", c->reasons[k].why);
		kimg_json_kv_uint(j, "nodes", c->reasons[k].nodes);
		kimg_json_kv_string(j, "first", c->reasons[k].first);
		kimg_json_end_object(j);
	}
	kimg_json_end_array(j);
	kimg_json_kv_bool(j, "any_runs", run > 0);
	int first = c->n_groups ? target_of(t, n, &c->groups[0]) : -1;
	kimg_json_kv_string(j, "fix", run == 0 && first >= 0 && rows[first].fix[0] ? rows[first].fix : NULL);
	kimg_json_key(j, "kubernetes_affinity");
	if (run > 0 && (c->kind == PROBE_CLUSTER_K8S || c->kind == PROBE_CLUSTER_DCGM)) {
		struct term terms[2 * PROBE_CLUSTER_GROUPS_MAX];
		size_t m = affinity_terms(c, t, n, rows, terms, sizeof terms / sizeof terms[0]);
		json_affinity(j, terms, m);
	} else {
		kimg_json_null(j);
	}
	char line[1024] = "", why[200] = "";
	if (run > 0 && (c->kind == PROBE_CLUSTER_SLURM || c->kind == PROBE_CLUSTER_DCGM))
		slurm_line(c, t, n, rows, line, sizeof line, why, sizeof why);
	kimg_json_kv_string(j, "slurm", line[0] ? line : NULL);
	kimg_json_kv_string(j, "slurm_note", why[0] ? why : NULL);
	kimg_json_end_object(j);
}

void probe_placement_json(struct kimg_json *j, const struct probe_target *t, int n, const struct probe_place_row *rows)
{
	kimg_json_key(j, "placement");
	if (!any_group(t, n) || !rows) {
		kimg_json_null(j);
		return;
	}
	kimg_json_begin_array(j);
	for (size_t s = 0; probe_cluster_at(s); s++)
		if (target_of(t, n, &probe_cluster_at(s)->groups[0]) >= 0)
			json_source(j, probe_cluster_at(s), t, n, rows);
	kimg_json_end_array(j);
}
