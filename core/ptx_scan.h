/* SPDX-License-Identifier: Apache-2.0 */
/* PTX directive scanner, internal to the core (ptx.c, ptx_rewrite.c).
 *
 * Walks PTX text token by token, skipping // and block comments and string
 * literals, and reports the few module-level directives kimg reads, with
 * the exact byte range of their values so that the rewriter can replace
 * them without touching anything else. Reference: docs/format.md §11,
 * docs/rules.md P4/P7, PTX ISA "Directives" (.version, .target, .entry). */
#ifndef KIMG_PTX_SCAN_H
#define KIMG_PTX_SCAN_H

#include "arch.h"
#include "error.h"
#include "span.h"

enum kimg_ptx_dir_kind {
	KIMG_PTX_DIR_VERSION = 0, /* .version X.Y: value = "X.Y", isa set */
	KIMG_PTX_DIR_TARGET,      /* one sm_XY[a|f] item of a .target list: value = that item, arch set */
	KIMG_PTX_DIR_ENTRY,       /* .entry NAME: value = NAME */
	KIMG_PTX_DIR_OTHER,       /* any other directive word (.address_size, .visible ...): value = the word */
	KIMG_PTX_DIR_KIND_COUNT
};

struct kimg_ptx_dir {
	enum kimg_ptx_dir_kind kind;
	uint64_t offset;     /* of the directive word ('.') in the text */
	uint64_t value_off;  /* of the value token */
	uint64_t value_len;
	uint16_t isa;        /* KIMG_PTX_DIR_VERSION: KIMG_ISA(major, minor) */
	struct kimg_arch arch; /* KIMG_PTX_DIR_TARGET */
};

/* Called per directive in text order; a non-zero return stops the scan and
 * is returned. */
typedef int (*kimg_ptx_dir_fn)(void *ctx, const struct kimg_ptx_dir *dir);

/* Length of the PTX text in s: up to the first NUL, else the whole span. */
uint64_t kimg_ptx_text_len(struct kimg_span s);

/* Scans the text of s (see kimg_ptx_text_len). Returns 0, fn's non-zero
 * return, or -KIMG_EFORMAT (with err->offset) for a .version value that is
 * not MAJOR.MINOR (major 1..99, minor 0..99), a .target item that starts
 * with "sm_" but is not sm_N[a|f] (1 <= N <= 65535), a .target or .entry
 * with no value token. Other directives and unknown .target items
 * (texmode_unified, debug, map_f64_to_f32) are reported as OTHER or
 * skipped: kimg reads PTX, it does not validate it. */
int kimg_ptx_scan(struct kimg_span s, kimg_ptx_dir_fn fn, void *ctx, struct kimg_error *err);

/* P7: true when a outranks b as "the highest target": a larger SM, or the
 * same SM with a more specific variant (a over f over plain). */
bool kimg_ptx_target_higher(struct kimg_arch a, struct kimg_arch b);

#endif
