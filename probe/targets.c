/* SPDX-License-Identifier: Apache-2.0 */
/* The --sm list of `check`: compute capabilities, arch names, GPU names
 * (core/gpus.h) or `native` (the GPUs of this machine, sys/driver_query.h). */
#include <stdlib.h>
#include <string.h>

#include "cluster_groups.h"
#include "driver_query.h"
#include "fleet.h"
#include "gpus.h"
#include "probe.h"
#include "rules.h"

#define MAX_NATIVE 64

static int push(struct probe_target **v, size_t *n, size_t *cap, const struct probe_target *t)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct probe_target *p = realloc(*v, nc * sizeof *p);
		if (!p)
			return -1;
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = *t;
	return 0;
}

/* main: KIMG_NATIVE=cuda (sys/driver_query.h: kimg_native_devices). */
static bool native_ask_driver;

void probe_set_native_ask_driver(bool on)
{
	native_ask_driver = on;
}

static int add_native(struct probe_target **v, size_t *n, size_t *cap)
{
	struct kimg_device devs[MAX_NATIVE];
	struct kimg_error err = { 0, 0, "" };
	int count = kimg_native_devices(devs, MAX_NATIVE, native_ask_driver, &err);
	if (count < 0) {
		fprintf(stderr, "kimg-probe: --sm native: %s\n", err.what);
		return -1;
	}
	for (int i = 0; i < count; i++) {
		struct probe_target t = { devs[i], true, NULL };
		if (push(v, n, cap, &t) < 0)
			return -1;
	}
	return 0;
}

/* Trim spaces around a token in place. */
static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t len = strlen(s);
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		s[--len] = '\0';
	return s;
}

/* 0, or -1 after printing why tok is not a target. */
static int parse_token(const char *tok, int driver_version, struct probe_target *t)
{
	struct kimg_arch arch;
	memset(t, 0, sizeof *t);
	t->dev.ordinal = -1;
	t->dev.driver_version = driver_version;
	if (kimg_arch_parse(tok, &arch, NULL) == 0 && arch.sm >= 10) {
		char cc[16];
		kimg_arch_format_cc((struct kimg_arch){ arch.sm, KIMG_VARIANT_PLAIN }, cc, sizeof cc);
		/* "860" parses as 86.0: a typo of 8.6 must not pass for a GPU. */
		if (!kimg_cc_is_known(arch.sm)) {
			fprintf(stderr, "kimg-probe: --sm: '%s' would be compute capability %s, which no NVIDIA GPU has\n",
				tok, cc);
			return -1;
		}
		/* A device has a plain CC; "sm_90a" names the device 9.0. */
		t->dev.cc.sm = arch.sm;
		t->dev.cc.variant = KIMG_VARIANT_PLAIN;
		t->dev.tegra = kimg_sm_is_tegra(arch.sm);
		snprintf(t->dev.name, sizeof t->dev.name, "%s", tok);
		t->named = false;
		return 0;
	}
	const struct kimg_gpu *g = kimg_gpu_lookup(tok);
	if (!g) {
		fprintf(stderr,
			"kimg-probe: --sm: '%s' is neither a compute capability (9.0, 90, sm_90) "
			"nor a known GPU name\n", tok);
		return -1;
	}
	t->dev.cc.sm = g->sm;
	t->dev.cc.variant = KIMG_VARIANT_PLAIN;
	t->dev.tegra = g->tegra;
	snprintf(t->dev.name, sizeof t->dev.name, "%s", g->name);
	t->named = true;
	return 0;
}

/* The same target twice ("9.0,90,sm_90", a GPU named twice, a device of
 * native listed again) is checked once, where it first appears. */
static bool same_target(const struct probe_target *a, const struct probe_target *b)
{
	if (a->group || b->group) /* a node group is its own target (placement.c maps them) */
		return a->group == b->group;
	if (a->dev.ordinal >= 0 || b->dev.ordinal >= 0)
		return a->dev.ordinal == b->dev.ordinal;
	if (a->named != b->named || a->dev.cc.sm != b->dev.cc.sm)
		return false;
	return !a->named || strcmp(a->dev.name, b->dev.name) == 0;
}

static int push_unique(struct probe_target **v, size_t *n, size_t *cap, const struct probe_target *t)
{
	for (size_t i = 0; i < *n; i++)
		if (same_target(&(*v)[i], t))
			return 0;
	return push(v, n, cap, t);
}

/* A cluster source's targets (cluster_groups.h) into the list. */
struct target_list {
	struct probe_target **v;
	size_t *n, *cap;
};

static int push_group(void *ctx, const struct probe_target *t)
{
	struct target_list *l = ctx;
	return push_unique(l->v, l->n, l->cap, t);
}

/* One --sm LIST into v. Returns 0 or -1 (the problem printed). */
static int parse_list(const char *list, int driver_version, struct probe_target **v, size_t *n, size_t *cap)
{
	char *copy = strdup(list);
	if (!copy)
		return -1;
	int rc = 0;
	char *item = copy;
	if (!*trim(copy)) { /* --sm "": nothing given, "empty list" below */
		free(copy);
		return 0;
	}
	for (;;) {
		char *comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		char *tok = trim(item);
		if (!*tok) {
			/* "9.0,,8.0", a trailing comma: something was left out. */
			fprintf(stderr, "kimg-probe: --sm: empty item in '%s'\n", list);
			rc = -1;
			break;
		} else if (strcmp(tok, "native") == 0) {
			struct probe_target *natives = NULL;
			size_t nn = 0, ncap = 0;
			if (add_native(&natives, &nn, &ncap) < 0) {
				free(natives);
				rc = -1;
				break;
			}
			for (size_t i = 0; i < nn && rc == 0; i++)
				rc = push_unique(v, n, cap, &natives[i]);
			free(natives);
			if (rc < 0)
				break;
		} else if (tok[0] == '@') { /* a fleet file (fleet.c) */
			struct probe_fleet_gpu *fleet = NULL;
			char why[512];
			int k = probe_fleet_read(tok + 1, &fleet, why, sizeof why);
			if (k < 0) {
				fprintf(stderr, "kimg-probe: --sm @FILE: %s\n", why);
				rc = -1;
				break;
			}
			for (int i = 0; i < k && rc == 0; i++) {
				struct probe_target t;
				probe_fleet_target(&fleet[i], &t);
				rc = push_unique(v, n, cap, &t);
			}
			free(fleet);
			if (rc < 0)
				break;
		} else if (probe_cluster_is_source(tok)) { /* k8s:, slurm:, dcgm:, all */
			struct target_list l = { v, n, cap };
			if (probe_cluster_targets(tok, driver_version, push_group, &l) < 0) {
				rc = -1;
				break;
			}
		} else {
			struct probe_target t;
			if (parse_token(tok, driver_version, &t) < 0 || push_unique(v, n, cap, &t) < 0) {
				rc = -1;
				break;
			}
		}
		if (!comma)
			break;
		item = comma + 1;
	}
	free(copy);
	return rc;
}

int probe_parse_targets(char *const *lists, int n_lists, int driver_version, struct probe_target **targets)
{
	struct probe_target *v = NULL;
	size_t n = 0, cap = 0;
	for (int i = 0; i < n_lists; i++) {
		if (parse_list(lists[i] ? lists[i] : "", driver_version, &v, &n, &cap) < 0) {
			free(v);
			return -1;
		}
	}
	if (n == 0) {
		fprintf(stderr, "kimg-probe: --sm: empty list\n");
		free(v);
		return -1;
	}
	*targets = v;
	return (int)n;
}
