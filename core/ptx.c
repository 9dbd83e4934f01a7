/* SPDX-License-Identifier: Apache-2.0 */
/* PTX reader: the .version, the highest .target and the .entry names.
 * The lexing lives in ptx_scan.c; this file only folds its directives into
 * struct kimg_ptx_info or hands entry names to the caller.
 * Reference: docs/format.md §11, docs/rules.md P4 (ISA) and P7 (targets). */
#include "ptx.h"

#include <limits.h>
#include <string.h>

#include "ptx_scan.h"

struct parse_ctx {
	struct kimg_ptx_info *info;
	bool have_version;
	struct kimg_error *err;
};

static int parse_dir(void *vctx, const struct kimg_ptx_dir *d)
{
	struct parse_ctx *c = vctx;
	switch (d->kind) {
	case KIMG_PTX_DIR_VERSION:
		/* PTX allows one .version; should a broken producer write
		 * more, the first is the one a reader meets first. */
		if (!c->have_version)
			c->info->isa = d->isa;
		c->have_version = true;
		break;
	case KIMG_PTX_DIR_TARGET:
		/* P7: the module needs every feature of its highest target. */
		if (kimg_ptx_target_higher(d->arch, c->info->target))
			c->info->target = d->arch;
		break;
	case KIMG_PTX_DIR_ENTRY:
		if (c->info->entry_count >= INT_MAX)
			return kimg_error_set(c->err, -KIMG_ELIMIT, d->offset, "more than %d PTX entries", INT_MAX);
		c->info->entry_count++;
		break;
	default:
		break;
	}
	return 0;
}

int kimg_ptx_parse(struct kimg_span text, struct kimg_ptx_info *info, struct kimg_error *err)
{
	struct parse_ctx c = { info, false, err };
	memset(info, 0, sizeof *info);
	int rc = kimg_ptx_scan(text, parse_dir, &c, err);
	return rc < 0 ? rc : 0;
}

struct entry_ctx {
	struct kimg_span text;
	kimg_name_fn fn;
	void *ctx;
	int count;
	struct kimg_error *err;
};

/* The name is not NUL-terminated in the text, so it goes out through a
 * bounded copy (the callback contract promises a C string). Mangled
 * template names run to a few KiB (CUTLASS); longer ones are refused rather
 * than cut, since a cut name would never match a kernel. */
static int entry_dir(void *vctx, const struct kimg_ptx_dir *d)
{
	struct entry_ctx *c = vctx;
	char name[8192];
	if (d->kind != KIMG_PTX_DIR_ENTRY)
		return 0;
	const void *p = kimg_span_at(&c->text, d->value_off, d->value_len);
	if (!p)
		return kimg_error_set(c->err, -KIMG_EFORMAT, d->value_off, "PTX entry name outside the text");
	if (d->value_len >= sizeof name)
		return kimg_error_set(c->err, -KIMG_ELIMIT, d->value_off, "PTX entry name longer than %zu bytes",
				      sizeof name - 1);
	if (c->count >= INT_MAX)
		return kimg_error_set(c->err, -KIMG_ELIMIT, d->offset, "more than %d PTX entries", INT_MAX);
	memcpy(name, p, (size_t)d->value_len);
	name[d->value_len] = '\0';
	c->count++;
	return c->fn ? c->fn(c->ctx, name, (size_t)d->value_len) : 0;
}

int kimg_ptx_for_each_entry(struct kimg_span text, kimg_name_fn fn, void *ctx, struct kimg_error *err)
{
	struct entry_ctx c = { text, fn, ctx, 0, err };
	int rc = kimg_ptx_scan(text, entry_dir, &c, err);
	return rc ? rc : c.count;
}
