/* SPDX-License-Identifier: Apache-2.0 */
/* NVIDIA_REQUIRE_* expressions (nvidia_require.h): the toolkit's grammar
 * and version order, with a third answer for facts kimg does not have. */
#include "nvidia_require.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* CUDA version a driver branch reports -> the branch. Source: CUDA Toolkit
 * Release Notes, table 3 "CUDA Toolkit and Corresponding Driver Versions"
 * (the driver shipped with each toolkit, whose cuDriverGetVersion is that
 * toolkit's version). */
static const struct { int cuda; int branch; } branches[] = {
	{ 11000, 450 }, { 11010, 455 }, { 11020, 460 }, { 11030, 465 }, { 11040, 470 }, { 11050, 495 },
	{ 11060, 510 }, { 11070, 515 }, { 11080, 520 }, { 12000, 525 }, { 12010, 530 }, { 12020, 535 },
	{ 12030, 545 }, { 12040, 550 }, { 12050, 555 }, { 12060, 560 }, { 12070, 565 }, { 12080, 570 },
	{ 12090, 575 }, { 13000, 580 },
};

int kimg_require_driver_branch(int cuda_version)
{
	for (size_t i = 0; i < sizeof branches / sizeof branches[0]; i++)
		if (branches[i].cuda == cuda_version)
			return branches[i].branch;
	return 0;
}

int kimg_require_branch_cuda(int branch)
{
	for (size_t i = 0; i < sizeof branches / sizeof branches[0]; i++)
		if (branches[i].branch == branch)
			return branches[i].cuda;
	return 0;
}

enum op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_BAD };

static enum op op_of(const char *s, size_t n)
{
	static const char *const names[] = { "=", "!=", "<", "<=", ">", ">=" };
	for (int i = 0; i < OP_BAD; i++)
		if (strlen(names[i]) == n && strncmp(s, names[i], n) == 0)
			return (enum op)i;
	return OP_BAD;
}

static bool version_chars(const char *s)
{
	return *s && strspn(s, "0123456789.") == strlen(s);
}

/* libnvidia-container's dsl_compare_version, restated. */
static int compare_version(const char *v1, enum op cmp, const char *v2)
{
	if (!version_chars(v1) || !version_chars(v2))
		return -1;
	while (*v1 && *v2) {
		char *e1, *e2;
		unsigned long long n1 = strtoull(v1, &e1, 10), n2 = strtoull(v2, &e2, 10);
		if (e1 == v1 || e2 == v2)
			return -1;
		if (n1 != n2) {
			if (cmp == OP_EQ)
				return 0;
			if (cmp == OP_NE)
				return 1;
			if (cmp == OP_LT || cmp == OP_LE)
				return n1 < n2;
			return n1 > n2;
		}
		v1 = e1 + strspn(e1, ".");
		v2 = e2 + strspn(e2, ".");
	}
	v1 += strspn(v1, ".0");
	v2 += strspn(v2, ".0");
	if (cmp == OP_NE)
		return *v1 || *v2;
	if (cmp == OP_EQ || cmp == OP_LE || cmp == OP_GE) {
		if (!*v1 && !*v2)
			return 1;
		if (cmp == OP_EQ)
			return 0;
	}
	if (cmp == OP_LT || cmp == OP_LE)
		return !*v1 && *v2;
	return *v1 && !*v2;
}

int kimg_require_compare_version(const char *have, const char *op, const char *want)
{
	enum op o = op_of(op, strlen(op));
	return o == OP_BAD ? -1 : compare_version(have, o, want);
}

/* A driver known only by its branch B: every real driver of it is B.x
 * with x > 0, so a bound of one number is decided; a finer bound of the
 * same branch is not. */
static enum kimg_tri driver_by_branch(int branch, enum op cmp, const char *want)
{
	char lo[16], hi[24];
	snprintf(lo, sizeof lo, "%d.1", branch);
	snprintf(hi, sizeof hi, "%d.99999.99", branch);
	int a = compare_version(lo, cmp, want), b = compare_version(hi, cmp, want);
	if (a < 0 || b < 0)
		return KIMG_TRI_UNKNOWN;
	return a == b ? (a ? KIMG_TRI_YES : KIMG_TRI_NO) : KIMG_TRI_UNKNOWN;
}

/* One NAME OP VALUE. -1: invalid. */
static int judge_one(const char *c, size_t n, const struct kimg_require_facts *f, enum kimg_tri *out)
{
	char buf[128];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, c, n);
	buf[n] = '\0';
	size_t name_len = strcspn(buf, "<>=!");
	size_t op_len = strspn(buf + name_len, "<>=!");
	if (name_len == 0 || op_len == 0)
		return -1;
	enum op cmp = op_of(buf + name_len, op_len);
	const char *val = buf + name_len + op_len;
	if (cmp == OP_BAD || !*val)
		return -1;
	buf[name_len] = '\0';
	int r;
	if (strcasecmp(buf, "cuda") == 0) {
		if (!f->cuda_version) {
			*out = version_chars(val) ? KIMG_TRI_UNKNOWN : KIMG_TRI_NO;
			return 0;
		}
		char have[16];
		snprintf(have, sizeof have, "%d.%d", f->cuda_version / 1000, f->cuda_version % 1000 / 10);
		r = compare_version(have, cmp, val);
	} else if (strcasecmp(buf, "driver") == 0) {
		if (!f->driver[0]) {
			int branch = kimg_require_driver_branch(f->cuda_version);
			*out = branch ? driver_by_branch(branch, cmp, val) : KIMG_TRI_UNKNOWN;
			return 0;
		}
		r = compare_version(f->driver, cmp, val);
	} else if (strcasecmp(buf, "arch") == 0) {
		if (!f->arch[0]) {
			*out = KIMG_TRI_UNKNOWN;
			return 0;
		}
		r = compare_version(f->arch, cmp, val);
	} else if (strcasecmp(buf, "brand") == 0) {
		if (cmp != OP_EQ && cmp != OP_NE)
			return -1;
		if (!f->brand[0]) {
			*out = KIMG_TRI_UNKNOWN;
			return 0;
		}
		r = (strcasecmp(f->brand, val) == 0) == (cmp == OP_EQ);
	} else {
		return -1;
	}
	/* a value that is not a version: dsl_compare_version fails, the
	 * expression is invalid */
	if (r < 0)
		return -1;
	*out = r ? KIMG_TRI_YES : KIMG_TRI_NO;
	return 0;
}

int kimg_require_judge(const char *expr, const struct kimg_require_facts *f, struct kimg_require_verdict *v,
		       struct kimg_error *err)
{
	enum kimg_tri any = KIMG_TRI_NO;
	char first_unknown[128] = "", last_false[128] = "";
	bool seen = false;
	memset(v, 0, sizeof *v);
	for (const char *p = expr; *p;) {
		size_t alt_len = strcspn(p, " ");
		enum kimg_tri all = KIMG_TRI_YES;
		char alt_false[128] = "", alt_unknown[128] = "";
		bool alt_seen = false;
		for (const char *c = p; c < p + alt_len;) {
			size_t n = strcspn(c, ",");
			if (c + n > p + alt_len)
				n = (size_t)(p + alt_len - c);
			/* as dsl_evaluate: after a false constraint the rest of its
			 * alternative is not read (so not checked either) */
			if (n > 0 && all != KIMG_TRI_NO) {
				enum kimg_tri t;
				alt_seen = true;
				if (judge_one(c, n, f, &t) < 0) {
					v->satisfied = KIMG_TRI_NO;
					snprintf(v->decided_by, sizeof v->decided_by, "%.*s", (int)(n > 100 ? 100 : n), c);
					return kimg_error_set(err, -KIMG_EFORMAT, (uint64_t)(c - expr),
							      "invalid constraint '%.*s'", (int)(n > 100 ? 100 : n), c);
				}
				if (t == KIMG_TRI_NO && all != KIMG_TRI_NO) {
					all = KIMG_TRI_NO;
					snprintf(alt_false, sizeof alt_false, "%.*s", (int)(n > 100 ? 100 : n), c);
				} else if (t == KIMG_TRI_UNKNOWN && all == KIMG_TRI_YES) {
					all = KIMG_TRI_UNKNOWN;
					snprintf(alt_unknown, sizeof alt_unknown, "%.*s", (int)(n > 100 ? 100 : n), c);
				}
			}
			c += n + (c + n < p + alt_len);
		}
		if (alt_seen) {
			seen = true;
			if (all == KIMG_TRI_YES) {
				v->satisfied = KIMG_TRI_YES;
				return 0;
			}
			if (all == KIMG_TRI_UNKNOWN && any == KIMG_TRI_NO) {
				any = KIMG_TRI_UNKNOWN;
				snprintf(first_unknown, sizeof first_unknown, "%s", alt_unknown);
			}
			if (all == KIMG_TRI_NO && !last_false[0])
				snprintf(last_false, sizeof last_false, "%s", alt_false);
		}
		p += alt_len;
		p += strspn(p, " ");
	}
	if (!seen) {
		v->satisfied = KIMG_TRI_YES; /* an empty expression holds nothing back */
		return 0;
	}
	v->satisfied = any;
	snprintf(v->decided_by, sizeof v->decided_by, "%s", any == KIMG_TRI_UNKNOWN ? first_unknown : last_false);
	return 0;
}
