/* SPDX-License-Identifier: Apache-2.0 */
/* dcgm-exporter's metrics (cluster.h): the Prometheus text exposition
 * format (prometheus.io docs "Exposition formats": a sample is
 * `name{label="value",...} value [timestamp]`, label values escaped with
 * \\ \" \n; # lines are comments or HELP/TYPE). dcgm-exporter labels every
 * GPU series with gpu, UUID, device, modelName, Hostname and, in recent
 * versions, DCGM_FI_DRIVER_VERSION; MIG series add GPU_I_PROFILE and
 * GPU_I_ID (NVIDIA/dcgm-exporter README). */
#include "cluster.h"

#include <stdio.h>
#include <string.h>

static bool name_char(uint8_t c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

struct labels {
	struct kimg_cluster_node *n;
	struct kimg_name_cache *cache;
	char last_release[32];       /* the release last turned into a CUDA version, */
	int last_cuda;               /* and that version: every series repeats it */
	bool has_model, has_uuid;
};

/* One label's value, unescaped, into the record's field it fills. */
static void take_label(struct labels *l, const char *key, size_t key_len, const char *val, size_t val_len)
{
	struct kimg_cluster_gpu *g = &l->n->gpus[0];
	char release[32];
#define IS(k) (key_len == sizeof(k) - 1 && memcmp(key, k, key_len) == 0)
	if (IS("modelName")) {
		l->has_model = true;
		char mig[sizeof g->mig];
		memcpy(mig, g->mig, sizeof mig); /* GPU_I_PROFILE may come first */
		kimg_cluster_gpu_set_product_cached(g, val, val_len, l->cache);
		if (mig[0])
			snprintf(g->mig, sizeof g->mig, "%s", mig);
	} else if (IS("UUID")) {
		l->has_uuid = true;
		kimg_cluster_copy(g->uuid, sizeof g->uuid, val, val_len);
	} else if (IS("Hostname")) {
		kimg_cluster_copy(l->n->name, sizeof l->n->name, val, val_len);
	} else if (IS("GPU_I_PROFILE")) {
		kimg_cluster_copy(g->mig, sizeof g->mig, val, val_len);
	} else if (IS("DCGM_FI_DRIVER_VERSION")) {
		kimg_cluster_copy(release, sizeof release, val, val_len);
		snprintf(g->release, sizeof g->release, "%s", release);
		if (strcmp(release, l->last_release) != 0) {
			snprintf(l->last_release, sizeof l->last_release, "%s", release);
			l->last_cuda = kimg_driver_release_cuda_version(release);
		}
		g->driver_version = l->last_cuda;
	}
#undef IS
}

/* The labels of one sample, from just after '{'. Returns the offset after
 * '}' or 0 with err set. */
static uint64_t read_labels(const char *s, uint64_t pos, uint64_t end, struct labels *l, unsigned long line,
			    struct kimg_error *err)
{
	char val[512];
	for (;;) {
		while (pos < end && (s[pos] == ' ' || s[pos] == '\t'))
			pos++;
		if (pos < end && s[pos] == '}')
			return pos + 1;
		uint64_t ks = pos;
		while (pos < end && name_char((uint8_t)s[pos], pos == ks))
			pos++;
		if (pos == ks || pos + 1 >= end || s[pos] != '=' || s[pos + 1] != '"') {
			kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: a label name=\"value\" expected at column %llu", line,
				       (unsigned long long)(ks + 1));
			return 0;
		}
		size_t key_len = (size_t)(pos - ks), n = 0;
		pos += 2;
		for (;;) {
			if (pos >= end) {
				kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: a label value without its closing quote", line);
				return 0;
			}
			char c = s[pos++];
			if (c == '"')
				break;
			if (c == '\\') {
				if (pos >= end) {
					kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: a backslash at the end", line);
					return 0;
				}
				c = s[pos++];
				c = c == 'n' ? '\n' : c;
			}
			if (n < sizeof val)
				val[n++] = c;
		}
		take_label(l, s + ks, key_len, val, n);
		while (pos < end && (s[pos] == ' ' || s[pos] == '\t'))
			pos++;
		if (pos < end && s[pos] == ',') {
			pos++;
			continue;
		}
		if (pos < end && s[pos] == '}')
			return pos + 1;
		kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: ',' or '}' expected at column %llu", line,
			       (unsigned long long)(pos + 1));
		return 0;
	}
}

/* A sample value: a float as Prometheus writes it (Go's ParseFloat:
 * digits, sign, '.', exponent, NaN, +Inf, -Inf). */
static bool value_ok(const char *s, size_t len)
{
	if (len == 0)
		return false;
	if ((len == 3 && memcmp(s, "NaN", 3) == 0) || (len == 4 && (memcmp(s, "+Inf", 4) == 0 || memcmp(s, "-Inf", 4) == 0)))
		return true;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '-' || s[i] == '+' || s[i] == 'e' || s[i] == 'E'))
			return false;
	return true;
}

int kimg_dcgm_parse(struct kimg_span in, kimg_cluster_node_fn fn, void *ctx, struct kimg_error *err)
{
	struct kimg_cluster_node n;
	struct kimg_name_cache cache;
	struct labels l;
	const char *text = (const char *)in.data;
	memset(&cache, 0, sizeof cache);
	memset(&l, 0, sizeof l);
	l.cache = &cache;
	unsigned long line = 0, count = 0;
	for (uint64_t pos = 0; pos < in.size;) {
		const char *nl = memchr(text + pos, '\n', (size_t)(in.size - pos));
		uint64_t end = nl ? (uint64_t)(nl - text) : in.size, p = pos;
		uint64_t next = nl ? end + 1 : in.size;
		line++;
		if (memchr(text + pos, '\0', (size_t)(end - pos)))
			return kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: a NUL byte: not metrics text", line);
		while (p < end && (text[p] == ' ' || text[p] == '\t' || text[p] == '\r'))
			p++;
		if (p == end || text[p] == '#') {
			pos = next;
			continue;
		}
		uint64_t name_start = p;
		while (p < end && name_char((uint8_t)text[p], p == name_start))
			p++;
		if (p == name_start)
			return kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: not a metric sample", line);
		bool dcgm = p - name_start > 5 && memcmp(text + name_start, "DCGM_", 5) == 0;
		/* one kind per series: only it is cleared (the whole record is 4 KiB) */
		n.name[0] = n.why[0] = '\0';
		n.n_gpus = 0;
		memset(&n.gpus[0], 0, sizeof n.gpus[0]);
		l.n = &n;
		l.has_model = l.has_uuid = false;
		if (p < end && text[p] == '{') {
			p = read_labels(text, p + 1, end, &l, line, err);
			if (p == 0)
				return err ? err->code : -KIMG_EFORMAT;
		}
		uint64_t vs = p;
		while (vs < end && (text[vs] == ' ' || text[vs] == '\t'))
			vs++;
		uint64_t ve = vs;
		while (ve < end && text[ve] != ' ' && text[ve] != '\t' && text[ve] != '\r')
			ve++;
		if (vs == p || !value_ok(text + vs, (size_t)(ve - vs)))
			return kimg_error_set(err, -KIMG_EFORMAT, line, "line %lu: a sample without a number", line);
		pos = next;
		if (!dcgm || (!l.has_model && !l.has_uuid))
			continue; /* the exporter's own metrics, or a series of no GPU */
		n.n_gpus = 1;
		n.gpus[0].count = 1;
		if (!n.gpus[0].sm)
			snprintf(n.gpus[0].unknown, sizeof n.gpus[0].unknown, "%s%s%s", l.has_model ? "model \"" : "no modelName label",
				 l.has_model ? n.gpus[0].product : "", l.has_model ? "\" is not in kimg's GPU-name table" : "");
		count++;
		int rc = fn(ctx, &n);
		if (rc != 0)
			return rc;
	}
	return (int)(count > 0x7fffffff ? 0x7fffffff : count);
}
