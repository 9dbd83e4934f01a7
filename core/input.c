/* SPDX-License-Identifier: Apache-2.0 */
/* Input classification and the module walk for raw inputs (cubin, PTX,
 * fatbin files). Host ELF files: input_elf.c; static archives: archive.c;
 * the helpers they share, the fatbin container walk among them:
 * input_walk.c. */
#include "input_internal.h"

#include <errno.h>
#include <stdio.h>

#include "archive.h"
#include "elf64.h"
#include "fatbin.h"

/* PTX directives are looked for in the first 64 KiB only: a PTX file opens
 * with a short comment block, and classify must stay cheap on huge inputs. */
#define PTX_SNIFF_MAX KIMG_INPUT_HEAD_MAX

/* The stable names of kinds and origins: kimg-probe prints them in its text
 * and JSON output (docs/json-probe.md: file "kind" is "elf" for a host ELF file,
 * module "origin" is "nv_fatbin", "relfatbin", ...), so they are part of
 * the documented interface and live here, once. */
static const char *const kind_names[KIMG_INPUT_KIND_COUNT] = {
	[KIMG_INPUT_UNKNOWN] = "unknown",
	[KIMG_INPUT_HOST_ELF] = "elf",
	[KIMG_INPUT_ARCHIVE] = "archive",
	[KIMG_INPUT_CUBIN] = "cubin",
	[KIMG_INPUT_FATBIN] = "fatbin",
	[KIMG_INPUT_WRAPPER] = "wrapper",
	[KIMG_INPUT_PTX] = "ptx",
	[KIMG_INPUT_ZIP] = "zip",
};

const char *kimg_input_kind_name(enum kimg_input_kind kind)
{
	return (unsigned)kind < KIMG_INPUT_KIND_COUNT ? kind_names[kind] : "unknown";
}

static const char *const origin_names[KIMG_ORIGIN_COUNT] = {
	[KIMG_ORIGIN_NV_FATBIN] = "nv_fatbin",
	[KIMG_ORIGIN_RELFATBIN] = "relfatbin",
	[KIMG_ORIGIN_WRAPPER] = "wrapper",
	[KIMG_ORIGIN_SCAN] = "scan",
	[KIMG_ORIGIN_RAW] = "raw",
};

const char *kimg_module_origin_name(enum kimg_module_origin origin)
{
	return (unsigned)origin < KIMG_ORIGIN_COUNT ? origin_names[origin] : "unknown";
}

/* What the first bytes of a file say about it being PTX text. */
enum ptx_sniff { PTX_NO, PTX_YES, PTX_MORE /* the bytes ended before an answer */ };

/* PTX text: after blank space and comments, the first thing is ".version"
 * (every PTX module begins with it, PTX ISA "PTX Module Directives"; a
 * ".target" first is accepted too). Looking only there, not at any line,
 * keeps source files that carry PTX in a string (Python tests of numba,
 * C++ with an embedded kernel) from being taken for PTX in a walk.
 * Reads the first PTX_SNIFF_MAX bytes at most; PTX_MORE only when `in`
 * holds fewer than that and ends before the answer, so a caller holding
 * a file's head knows whether the rest of the file can change it. */
static enum ptx_sniff sniff_ptx(struct kimg_span in)
{
	static const char *const directives[] = { ".version", ".target" };
	uint64_t n = in.size < PTX_SNIFF_MAX ? in.size : PTX_SNIFF_MAX;
	const uint8_t *p = in.data;
	uint64_t i = 0;
	while (i < n) {
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
			i++;
		} else if (i + 1 < n && p[i] == '/' && p[i + 1] == '/') {
			while (i < n && p[i] != '\n' && p[i] != 0)
				i++;
			if (i < n && p[i] == 0)
				return PTX_NO;
		} else if (i + 1 < n && p[i] == '/' && p[i + 1] == '*') {
			for (i += 2; i + 1 < n && !(p[i] == '*' && p[i + 1] == '/'); i++)
				if (p[i] == 0)
					return PTX_NO;
			if (i + 1 >= n)
				return PTX_MORE; /* an open comment */
			i += 2;
		} else if (i + 1 == n && p[i] == '/') {
			return PTX_MORE; /* a comment may begin */
		} else {
			/* A directive and the blank after it. */
			for (size_t d = 0; d < sizeof directives / sizeof directives[0]; d++) {
				size_t len = strlen(directives[d]);
				uint64_t have = n - i < len ? n - i : len;
				if (memcmp(p + i, directives[d], (size_t)have) != 0)
					continue;
				if (n - i <= len)
					return PTX_MORE;
				if (p[i + len] == ' ' || p[i + len] == '\t')
					return PTX_YES;
			}
			return PTX_NO;
		}
	}
	return PTX_MORE;
}

/* head: the file's first bytes; whole: they are the whole file. */
static bool classify(struct kimg_span head, bool whole, enum kimg_input_kind *kind)
{
	const uint8_t *p = kimg_span_at(&head, 0, 4);
	uint32_t magic;
	uint16_t machine;

	*kind = KIMG_INPUT_UNKNOWN;
	if (!whole && head.size < KIMG_INPUT_HEAD_MIN)
		return false;
	if (!p)
		return true;
	if (head.size >= 8 && (memcmp(p, "!<arch>\n", 8) == 0 || memcmp(p, "!<thin>\n", 8) == 0))
		*kind = KIMG_INPUT_ARCHIVE;
	else if (memcmp(p, "PK\3\4", 4) == 0)
		*kind = KIMG_INPUT_ZIP;
	else if (kimg_span_u32(&head, 0, &magic) && magic == KIMG_FATBIN_MAGIC)
		*kind = KIMG_INPUT_FATBIN;
	else if (magic == KIMG_FATBIN_WRAPPER_MAGIC)
		*kind = KIMG_INPUT_WRAPPER;
	else if (kimg_elf_has_magic(head)) {
		/* e_machine is read little-endian: a big-endian file is never a
		 * cubin and is rejected as a host ELF with a clear message. */
		const uint8_t *id = kimg_span_at(&head, 0, KIMG_EI_DATA + 1);
		if (id && id[KIMG_EI_DATA] == KIMG_ELFDATA2LSB && kimg_span_u16(&head, KIMG_EH_MACHINE_AT, &machine) &&
		    machine == KIMG_EM_CUDA)
			*kind = KIMG_INPUT_CUBIN;
		else
			*kind = KIMG_INPUT_HOST_ELF;
	} else {
		enum ptx_sniff ptx = sniff_ptx(head);
		if (ptx == PTX_MORE && !whole && head.size < PTX_SNIFF_MAX)
			return false;
		if (ptx == PTX_YES)
			*kind = KIMG_INPUT_PTX;
	}
	return true;
}

enum kimg_input_kind kimg_input_classify(struct kimg_span in)
{
	enum kimg_input_kind kind;
	classify(in, true, &kind);
	return kind;
}

bool kimg_input_classify_head(struct kimg_span head, bool whole, enum kimg_input_kind *kind)
{
	return classify(head, whole, kind);
}

/* One input: the whole file, or an archive member (where an archive is
 * refused: members are walked one level deep). */
static int walk_one(struct kimg_walk *w, struct kimg_span in, enum kimg_input_kind kind)
{
	switch (kind) {
	case KIMG_INPUT_HOST_ELF:
		return kimg_walk_host_elf(w, in);
	case KIMG_INPUT_ARCHIVE:
		return kimg_walk_fail(w, -KIMG_ELIMIT, 0, "nested archive not walked");
	case KIMG_INPUT_CUBIN:
	case KIMG_INPUT_PTX:
		kimg_walk_emit(w, kind, KIMG_ORIGIN_RAW, in, 0, NULL);
		return 0;
	case KIMG_INPUT_FATBIN:
		return kimg_walk_containers(w, in, 0, KIMG_ORIGIN_RAW, NULL, true);
	case KIMG_INPUT_WRAPPER:
		return kimg_walk_fail(w, -KIMG_ENOTSUP, 0,
				      "fatbin wrapper: holds a run-time address, meaningful only in memory");
	case KIMG_INPUT_ZIP:
		return kimg_walk_fail(w, -KIMG_ENOTSUP, 0, "zip archive: open its members first");
	default:
		if (in.size == 0)
			return kimg_walk_fail(w, -KIMG_EUNKNOWN, 0, "empty input");
		return kimg_walk_fail(w, -KIMG_EUNKNOWN, 0,
				      "not a host ELF, archive, fatbin, cubin or PTX file");
	}
}

/* A static archive: each member walked as an input of its own, one level
 * deep (walk_one never reaches back here: it refuses a nested archive). */
static int walk_archive(struct kimg_walk *w, struct kimg_span in)
{
	struct kimg_ar ar;
	struct kimg_ar_member m;
	struct kimg_error e = { 0, 0, "" };
	int rc = 0;

	if (kimg_ar_open(in, &ar, &e) < 0)
		return kimg_walk_take(w, &e, 0);
	while (!w->call->stop && (rc = kimg_ar_next(&ar, &m, &e)) > 0) {
		enum kimg_input_kind kind = kimg_input_classify(m.body);
		struct kimg_walk mw = { w->call, m.name, w->base + m.offset };
		switch (kind) {
		case KIMG_INPUT_UNKNOWN:
		case KIMG_INPUT_ZIP:
		case KIMG_INPUT_WRAPPER:
			break; /* not device code: text files, other objects */
		case KIMG_INPUT_HOST_ELF:
			/* 32-bit or big-endian objects (valgrind's x86 archives):
			 * skipped like other non-device members. */
			if (!kimg_elf_is_foreign(m.body))
				walk_one(&mw, m.body, kind);
			break;
		default:
			/* A bad member (a nested archive too) is recorded and
			 * the walk goes on. */
			walk_one(&mw, m.body, kind);
		}
	}
	if (!w->call->stop && rc < 0)
		return kimg_walk_take(w, &e, 0);
	return 0;
}

/* The whole input: an archive is walked member by member. */
static int walk_input(struct kimg_walk *w, struct kimg_span in)
{
	enum kimg_input_kind kind = kimg_input_classify(in);
	return kind == KIMG_INPUT_ARCHIVE ? walk_archive(w, in) : walk_one(w, in, kind);
}

int kimg_input_for_each_module_ex(struct kimg_span in, unsigned flags, kimg_module_fn fn, void *ctx,
				  struct kimg_error *err)
{
	return kimg_input_for_each_module_zeros(in, flags, NULL, fn, ctx, err);
}

int kimg_input_for_each_module_zeros(struct kimg_span in, unsigned flags, const struct kimg_zero_ranges *zeros,
				     kimg_module_fn fn, void *ctx, struct kimg_error *err)
{
	struct kimg_walk_call call = { fn, ctx, err, flags, 0, 0, zeros };
	struct kimg_walk w = { &call, NULL, 0 };
	int rc;

	if (err) {
		err->code = 0;
		err->offset = 0;
		err->what[0] = '\0';
	}
	if (flags & ~KIMG_INPUT_FLAGS_ALL)
		return kimg_error_set(err, -EINVAL, 0, "input walk: unknown flags 0x%x", flags & ~KIMG_INPUT_FLAGS_ALL);
	rc = walk_input(&w, in);
	if (call.stop)
		return call.stop;
	/* Modules already yielded stay valid: a problem after them makes a
	 * partial result (count, err set), not a failure. */
	return rc < 0 && call.count == 0 ? rc : call.count;
}

int kimg_input_for_each_module(struct kimg_span in, kimg_module_fn fn, void *ctx, struct kimg_error *err)
{
	return kimg_input_for_each_module_ex(in, 0, fn, ctx, err);
}
