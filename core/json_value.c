/* SPDX-License-Identifier: Apache-2.0 */
/* Questions asked of a parsed JSON document (core/json_read.h): a member
 * by key or by dotted path, an array element, a string, an integer. The
 * reader that builds the tree is json_read.c; these only follow its
 * links and never allocate. */
#include "json_read.h"

#include <stdint.h>
#include <string.h>

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

const struct kimg_jval *kimg_jval_get(const struct kimg_jval *v, const char *key)
{
	if (!v || v->type != KIMG_JOBJECT || !key)
		return NULL;
	size_t n = strlen(key);
	for (const struct kimg_jval *m = v->child; m; m = m->next)
		if (m->key_len == n && memcmp(m->key, key, n) == 0)
			return m;
	return NULL;
}

const struct kimg_jval *kimg_jval_path(const struct kimg_jval *v, const char *path)
{
	char part[128];
	while (v && path && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof part)
			return NULL;
		memcpy(part, path, n);
		part[n] = '\0';
		v = kimg_jval_get(v, part);
		path = dot ? dot + 1 : path + n;
	}
	return v;
}

const struct kimg_jval *kimg_jval_at(const struct kimg_jval *v, size_t i)
{
	if (!v || v->type != KIMG_JARRAY)
		return NULL;
	const struct kimg_jval *e = v->child;
	for (; e && i > 0; i--)
		e = e->next;
	return e;
}

const char *kimg_jval_string(const struct kimg_jval *v)
{
	return v && v->type == KIMG_JSTRING ? v->str : NULL;
}

bool kimg_jval_int(const struct kimg_jval *v, int64_t *out)
{
	*out = 0;
	if (!v || v->type != KIMG_JNUMBER || !v->str)
		return false;
	const char *s = v->str;
	bool neg = *s == '-';
	if (neg)
		s++;
	/* accumulate as a negative number: INT64_MIN has no positive twin */
	int64_t n = 0;
	for (; *s; s++) {
		if (!is_digit(*s))
			return false; /* fraction or exponent */
		int d = *s - '0';
		if (n < (INT64_MIN + d) / 10)
			return false;
		n = n * 10 - d;
	}
	if (!neg && n == INT64_MIN)
		return false;
	*out = neg ? n : -n;
	return true;
}

bool kimg_jval_is_null(const struct kimg_jval *v)
{
	return !v || v->type == KIMG_JNULL;
}
