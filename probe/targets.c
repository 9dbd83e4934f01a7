/* The --sm list of `check`: compute capabilities, arch names, GPU names
 * (core/gpus.h) or `native` (the GPUs of this machine, sys/driver_query.h). */
#include <stdlib.h>
#include <string.h>

#include "driver_query.h"
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

static int add_native(struct probe_target **v, size_t *n, size_t *cap)
{
	struct kimg_device devs[MAX_NATIVE];
	struct kimg_driver_info info;
	struct kimg_error err = { 0, 0, "" };
	int count = kimg_driver_query(&info, devs, MAX_NATIVE, &err);
	if (count < 0) {
		fprintf(stderr, "kimg-probe: --sm native: %s\n", err.what);
		return -1;
	}
	for (int i = 0; i < count; i++) {
		struct probe_target t = { devs[i], true };
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

static int parse_token(const char *tok, int driver_version, struct probe_target *t)
{
	struct kimg_arch arch;
	memset(t, 0, sizeof *t);
	t->dev.ordinal = -1;
	t->dev.driver_version = driver_version;
	if (kimg_arch_parse(tok, &arch, NULL) == 0 && arch.sm >= 10) {
		/* A device has a plain CC; "sm_90a" names the device 9.0. */
		t->dev.cc.sm = arch.sm;
		t->dev.cc.variant = KIMG_VARIANT_PLAIN;
		t->dev.tegra = kimg_sm_is_tegra(arch.sm);
		snprintf(t->dev.name, sizeof t->dev.name, "%s", tok);
		t->named = false;
		return 0;
	}
	const struct kimg_gpu *g = kimg_gpu_lookup(tok);
	if (!g)
		return -1;
	t->dev.cc.sm = g->sm;
	t->dev.cc.variant = KIMG_VARIANT_PLAIN;
	t->dev.tegra = g->tegra;
	snprintf(t->dev.name, sizeof t->dev.name, "%s", g->name);
	t->named = true;
	return 0;
}

int probe_parse_targets(const char *list, int driver_version, struct probe_target **targets)
{
	struct probe_target *v = NULL;
	size_t n = 0, cap = 0;
	char *copy = strdup(list ? list : "");
	if (!copy)
		return -1;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		tok = trim(tok);
		if (!*tok)
			continue;
		if (strcmp(tok, "native") == 0) {
			if (add_native(&v, &n, &cap) < 0)
				goto fail;
			continue;
		}
		struct probe_target t;
		if (parse_token(tok, driver_version, &t) < 0) {
			fprintf(stderr,
				"kimg-probe: --sm: '%s' is neither a compute capability (9.0, 90, sm_90) "
				"nor a known GPU name\n", tok);
			goto fail;
		}
		if (push(&v, &n, &cap, &t) < 0)
			goto fail;
	}
	free(copy);
	if (n == 0) {
		fprintf(stderr, "kimg-probe: --sm: empty list\n");
		free(v);
		return -1;
	}
	*targets = v;
	return (int)n;
fail:
	free(copy);
	free(v);
	return -1;
}
