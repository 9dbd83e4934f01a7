/* SPDX-License-Identifier: Apache-2.0 */
/* The `sm` string of the API: check's --sm list (probe/targets.c) without
 * @FILE, read into devices without printing. The names and compute
 * capabilities come from the core's tables (core/gpus.c); `native` from
 * sys/driver_query.c, as the probe asks it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "arch.h"
#include "cuda_versions.h"
#include "driver_query.h"
#include "gpus.h"
#include "rules.h"

int api_fail(char *why, size_t why_size, int code, const char *fmt, ...)
{
	if (why && why_size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, why_size, fmt, ap);
		va_end(ap);
	}
	return code;
}

static bool same_target(const struct api_target *a, const struct api_target *b)
{
	if (a->dev.ordinal >= 0 || b->dev.ordinal >= 0)
		return a->dev.ordinal == b->dev.ordinal;
	return a->dev.cc.sm == b->dev.cc.sm && strcmp(a->dev.name, b->dev.name) == 0;
}

static int push(struct api_target *out, size_t cap, size_t *n, const struct api_target *t, char *why, size_t ws)
{
	for (size_t i = 0; i < *n; i++)
		if (same_target(&out[i], t))
			return 0;
	if (*n == cap)
		return api_fail(why, ws, -KIMG_ELIMIT, "sm: more than %zu targets", cap);
	out[*n] = *t;
	kimg_arch_format_cc(t->dev.cc, out[*n].sm, sizeof out[*n].sm);
	(*n)++;
	return 0;
}

static int parse_token(const char *tok, int driver_version, struct api_target *t, char *why, size_t ws)
{
	struct kimg_arch arch;
	memset(t, 0, sizeof *t);
	t->dev.ordinal = -1;
	t->dev.driver_version = driver_version;
	if (kimg_arch_parse(tok, &arch, NULL) == 0 && arch.sm >= 10) {
		if (!kimg_cc_is_known(arch.sm))
			return api_fail(why, ws, -EINVAL, "sm: '%s' would be compute capability %u.%u, which no NVIDIA GPU has",
					tok, arch.sm / 10u, arch.sm % 10u);
		t->dev.cc.sm = arch.sm;
		t->dev.tegra = kimg_sm_is_tegra(arch.sm);
		snprintf(t->dev.name, sizeof t->dev.name, "%s", tok);
		return 0;
	}
	const struct kimg_gpu *g = kimg_gpu_lookup(tok);
	if (!g)
		return api_fail(why, ws, -EINVAL,
				"sm: '%s' is neither a compute capability (9.0, 90, sm_90) nor a known GPU name", tok);
	t->dev.cc.sm = g->sm;
	t->dev.tegra = g->tegra;
	snprintf(t->dev.name, sizeof t->dev.name, "%s", g->name);
	return 0;
}

static int add_native(struct api_target *out, size_t cap, size_t *n, char *why, size_t ws)
{
	struct kimg_device devs[API_TARGETS_MAX];
	struct kimg_error err = { 0, 0, "" };
	int count = kimg_native_devices(devs, API_TARGETS_MAX, false, &err);
	if (count < 0)
		return api_fail(why, ws, count, "sm native: %s", err.what[0] ? err.what : kimg_strerror(count));
	for (int i = 0; i < count; i++) {
		struct api_target t = { .dev = devs[i] };
		int rc = push(out, cap, n, &t, why, ws);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t len = strlen(s);
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		s[--len] = '\0';
	return s;
}

int api_parse_targets(const char *sm, const char *driver, struct api_target *out, size_t cap, char *why,
		      size_t ws)
{
	int driver_version = 0;
	if (driver && (driver_version = kimg_cuda_version_parse(driver)) < 0)
		return api_fail(why, ws, -EINVAL, "driver: '%s' is not a CUDA version X.Y (e.g. 12.4)", driver);
	char *copy = strdup(sm ? sm : "native");
	if (!copy)
		return api_fail(why, ws, -ENOMEM, "out of memory");
	size_t n = 0;
	int rc = 0;
	for (char *item = copy; rc == 0;) {
		char *comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		char *tok = trim(item);
		struct api_target t;
		if (!*tok)
			rc = api_fail(why, ws, -EINVAL, "sm: empty item in '%s'", sm ? sm : "");
		else if (strcmp(tok, "native") == 0)
			rc = add_native(out, cap, &n, why, ws);
		else if ((rc = parse_token(tok, driver_version, &t, why, ws)) == 0)
			rc = push(out, cap, &n, &t, why, ws);
		if (!comma)
			break;
		item = comma + 1;
	}
	free(copy);
	if (rc == 0 && n == 0)
		rc = api_fail(why, ws, -EINVAL, "sm: empty list");
	return rc < 0 ? rc : (int)n;
}
