/* SPDX-License-Identifier: Apache-2.0 */
/* PTX rewriter: lower .version and .target value tokens, copy the rest.
 *
 * Two scans over the text: the first plans (what to replace, where a
 * missing .version goes, the exact output length), the second copies the
 * gaps between edits. Planning first means the capacity check happens
 * before any byte is written, and nothing needs to be allocated to hold a
 * list of edits. */
#include "ptx_rewrite.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "image.h"
#include "ptx_scan.h"

/* Longest value this file writes: ".version 99.99\n" is 15 bytes; a lowered
 * "X.Y" grows by at most 2 ("2.0" -> "1.99"), and a lowered sm_ item never
 * grows (fewer or equal digits, no suffix). */
#define INSERT_MAX 16

size_t kimg_ptx_rewrite_bound(uint64_t in_size)
{
	if (in_size > (uint64_t)SIZE_MAX - INSERT_MAX - 1)
		return SIZE_MAX;
	return (size_t)in_size + INSERT_MAX + 1;
}

struct rewrite {
	struct kimg_span text;
	uint16_t new_isa;
	unsigned new_sm;
	char isa_text[8], sm_text[12];
	size_t isa_len, sm_len;
	/* plan */
	bool have_version, have_dir;
	uint64_t first_dir;   /* offset of the first directive: insertion point */
	uint64_t out_len;
	struct kimg_ptx_rewrite_info info;
	/* copy */
	char *out;
	uint64_t pos;         /* next input byte to copy */
	uint64_t wpos;        /* next output byte */
	bool seen_version;    /* the first .version has been handled in the copy pass */
	bool inserted;
};

static bool isa_lowers(const struct rewrite *r, uint16_t isa)
{
	return r->new_isa && isa > r->new_isa;
}

/* A target item is lowered when above new_sm, or at new_sm with a suffix. */
static bool sm_lowers(const struct rewrite *r, struct kimg_arch a)
{
	return r->new_sm && (a.sm > r->new_sm || (a.sm == r->new_sm && a.variant != KIMG_VARIANT_PLAIN));
}

static int plan_dir(void *ctx, const struct kimg_ptx_dir *d)
{
	struct rewrite *r = ctx;
	struct kimg_ptx_rewrite_info *in = &r->info;
	if (!r->have_dir) {
		r->have_dir = true;
		r->first_dir = d->offset;
	}
	if (d->kind == KIMG_PTX_DIR_VERSION && !r->have_version) {
		r->have_version = true;
		in->old_isa = in->new_isa = d->isa;
		if (isa_lowers(r, d->isa)) {
			in->new_isa = r->new_isa;
			in->version_lowered = true;
			r->out_len = r->out_len - d->value_len + r->isa_len;
		}
	} else if (d->kind == KIMG_PTX_DIR_TARGET) {
		struct kimg_arch after = d->arch;
		if (kimg_ptx_target_higher(d->arch, in->old_target))
			in->old_target = d->arch;
		if (sm_lowers(r, d->arch)) {
			after.sm = (uint16_t)r->new_sm;
			after.variant = KIMG_VARIANT_PLAIN;
			in->targets_lowered++;
			r->out_len = r->out_len - d->value_len + r->sm_len;
		}
		if (kimg_ptx_target_higher(after, in->new_target))
			in->new_target = after;
	}
	return 0;
}

/* Bounded write; the plan guaranteed the room, the check keeps it so. */
static void put(struct rewrite *r, const void *p, uint64_t n)
{
	if (n && r->wpos + n <= r->out_len) {
		memcpy(r->out + r->wpos, p, (size_t)n);
		r->wpos += n;
	}
}

/* Copy input bytes [pos, upto) unchanged. */
static void copy_to(struct rewrite *r, uint64_t upto)
{
	const void *p = kimg_span_at(&r->text, r->pos, upto - r->pos);
	if (p && upto > r->pos) {
		put(r, p, upto - r->pos);
		r->pos = upto;
	}
}

static void replace(struct rewrite *r, const struct kimg_ptx_dir *d, const char *with, size_t len)
{
	copy_to(r, d->value_off);
	put(r, with, len);
	r->pos = d->value_off + d->value_len;
}

/* A directive starts a token, so the insertion point is never inside a
 * comment or string. */
static void insert_version(struct rewrite *r, uint64_t at)
{
	char line[INSERT_MAX + 1];
	int n = snprintf(line, sizeof line, ".version %s\n", r->isa_text);
	copy_to(r, at);
	put(r, line, (uint64_t)n);
	r->inserted = true;
}

static int copy_dir(void *ctx, const struct kimg_ptx_dir *d)
{
	struct rewrite *r = ctx;
	if (r->info.version_inserted && !r->inserted && d->offset == r->first_dir)
		insert_version(r, d->offset);
	if (d->kind == KIMG_PTX_DIR_VERSION && !r->seen_version) {
		r->seen_version = true;
		if (r->info.version_lowered)
			replace(r, d, r->isa_text, r->isa_len);
	} else if (d->kind == KIMG_PTX_DIR_TARGET && sm_lowers(r, d->arch)) {
		replace(r, d, r->sm_text, r->sm_len);
	}
	return 0;
}

int kimg_ptx_rewrite(struct kimg_span in, uint16_t new_isa, unsigned new_sm, char *out, size_t out_cap,
		     size_t *out_len, struct kimg_ptx_rewrite_info *info, struct kimg_error *err)
{
	struct rewrite r;
	int rc;
	memset(&r, 0, sizeof r);
	*out_len = 0;
	if (info)
		memset(info, 0, sizeof *info);
	if (new_isa && (KIMG_ISA_MAJOR(new_isa) < 1 || KIMG_ISA_MAJOR(new_isa) > 99))
		return kimg_error_set(err, -EINVAL, 0, "PTX ISA %u.%u out of range", KIMG_ISA_MAJOR(new_isa),
				      KIMG_ISA_MINOR(new_isa));
	if (new_sm > UINT16_MAX)
		return kimg_error_set(err, -EINVAL, 0, "target sm_%u out of range", new_sm);
	r.text = kimg_span_sub(&in, 0, kimg_ptx_text_len(in));
	r.new_isa = new_isa;
	r.new_sm = new_sm;
	r.isa_len = (size_t)snprintf(r.isa_text, sizeof r.isa_text, "%u.%u", KIMG_ISA_MAJOR(new_isa),
				     KIMG_ISA_MINOR(new_isa));
	r.sm_len = (size_t)snprintf(r.sm_text, sizeof r.sm_text, "sm_%u", new_sm);
	r.out_len = r.text.size;

	rc = kimg_ptx_scan(r.text, plan_dir, &r, err);
	if (rc)
		return rc;
	if (!r.have_version && new_isa) {
		r.info.new_isa = new_isa;
		r.info.version_inserted = true;
		r.out_len += 10 + r.isa_len; /* ".version " + value + "\n" */
	}
	r.info.changed = r.info.version_lowered || r.info.version_inserted || r.info.targets_lowered;
	if (info)
		*info = r.info;
	*out_len = (size_t)r.out_len;
	if (!out || r.out_len >= out_cap)
		return kimg_error_set(err, -ENOSPC, 0, "PTX rewrite needs %llu bytes, buffer has %zu",
				      (unsigned long long)r.out_len + 1, out_cap);

	r.out = out;
	if (r.info.version_inserted && !r.have_dir)
		insert_version(&r, 0); /* no directive: first, so never inside a trailing comment */
	rc = kimg_ptx_scan(r.text, copy_dir, &r, err);
	if (rc)
		return rc; /* cannot happen: the same text scanned cleanly above */
	copy_to(&r, r.text.size);
	out[r.wpos] = '\0';
	if (r.wpos != r.out_len)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "PTX rewrite wrote %llu bytes, planned %llu",
				      (unsigned long long)r.wpos, (unsigned long long)r.out_len);
	return 0;
}
