/* SPDX-License-Identifier: Apache-2.0 */
/* Archives met in a walk: which ones are opened, which members are read,
 * how deep, and the line for those not read for a missing library. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "elf64.h"
#include "fatbin.h"
#include "probe.h"
#include "tar.h"
#include "walk.h"
#include "zip.h"

static bool starts_with(struct kimg_span s, const char *magic, size_t n)
{
	const void *p = kimg_span_at(&s, 0, n);
	return p && memcmp(p, magic, n) == 0;
}

bool walk_name_ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n >= k && strcasecmp(name + n - k, suffix) == 0;
}

/* ---- archives: which ones, and how deep ---- */

/* Archives inside archives are read this many levels deep (a wheel in a
 * zip in a zip is 3); deeper ones are reported, not read. */
#define NEST_MAX 4

enum walk_archive_kind walk_archive_kind_of(struct kimg_span head)
{
	static const uint8_t zstd[4] = { 0x28, 0xb5, 0x2f, 0xfd }, xz[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 },
			     gz[2] = { 0x1f, 0x8b };
	const uint8_t *ustar = kimg_span_at(&head, 257, 5);
	if (starts_with(head, "PK\3\4", 4))
		return ARCHIVE_ZIP;
	if (starts_with(head, "PK\5\6", 4))
		return ARCHIVE_EMPTY_ZIP;
	if (starts_with(head, "BZh", 3) || starts_with(head, (const char *)zstd, 4) ||
	    starts_with(head, (const char *)xz, 6) || starts_with(head, (const char *)gz, 2) ||
	    (ustar && memcmp(ustar, "ustar", 5) == 0))
		return ARCHIVE_TAR;
	return ARCHIVE_NONE;
}

static bool is_tar_name(const char *name)
{
	static const char *const sfx[] = { ".tar", ".tar.bz2", ".tbz2", ".tar.zst", ".tar.gz", ".tgz", ".tar.xz" };
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
		if (walk_name_ends_with(name, sfx[i]))
			return true;
	return false;
}

/* Member names that may carry device code, for zips that are not wheels
 * (.zip, .egg, .conda ...): shared objects, static archives and objects,
 * device code files and archives that may hold them. A zip without one
 * (numpy's .npz, data and web archives) inflates nothing. */
static bool code_name(void *ctx, const char *name)
{
	(void)ctx;
	static const char *const sfx[] = { ".so", ".a", ".o", ".cubin", ".fatbin", ".ptx", ".whl", ".zip", ".egg", ".conda" };
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strstr(base, ".so."))
		return true; /* libfoo.so.1.2 */
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
		if (walk_name_ends_with(base, sfx[i]))
			return true;
	return is_tar_name(base);
}

/* When walking a tree, which archives to open: wheels, conda packages and
 * other zips (their members are filtered by code_name); not numpy .npz
 * data, not tarballs other than conda's .tar.bz2. An archive named on the
 * command line is always opened. */
bool walk_opens_archive(const char *path, enum walk_archive_kind kind)
{
	if (kind == ARCHIVE_EMPTY_ZIP)
		return false; /* holds nothing; named on the command line it is an error */
	if (kind == ARCHIVE_TAR)
		return walk_name_ends_with(path, ".tar.bz2");
	return !walk_name_ends_with(path, ".npz");
}

/* One more archive not read for want of a library (its line names it). */
static void unread_add(struct walk_state *ws, struct walk_unread *u, const char *path, const char *why)
{
	size_t n = strlen(path);
	/* the same archive reported by several members: once */
	if (u->len >= n && strcmp(u->paths + u->len - n, path) == 0)
		return;
	if (u->len + n + 3 > u->cap) {
		size_t cap = (u->cap + n + 3) * 2;
		char *p = realloc(u->paths, cap);
		if (!p)
			return;
		u->paths = p;
		u->cap = cap;
	}
	u->len += (size_t)snprintf(u->paths + u->len, u->cap - u->len, "%s%s", u->count ? ", " : "", path);
	u->count++;
	snprintf(u->why, sizeof u->why, "%s", why);
	if (ws->w->unread_each)
		ws->w->on_error(ws->w->ctx, path, why, true);
}

void walk_unread_report(const struct walk_state *ws, const struct walk_unread *u, const char *how)
{
	if (!u->count)
		return;
	fprintf(stderr, "kimg-probe: %lu archive%s not read (%s; %s): %s\n", u->count, u->count == 1 ? "" : "s",
		u->why, how, u->paths);
	if (!ws->w->unread_each)
		ws->w->on_error(ws->w->ctx, "(archives)", u->why, false);
}

/* Worth reading from an archive: anything that may hold device code, and
 * archives that may hold it in turn. The head is a prefix of the member,
 * so shape checks only look at magic numbers (a truncated ELF must not be
 * judged by its section table). */
bool walk_member_wanted(void *ctx, const char *name, struct kimg_span head)
{
	(void)ctx;
	uint32_t magic;
	if (kimg_elf_has_magic(head))
		return !kimg_elf_is_foreign(head); /* 32-bit, big-endian: no device code kimg can read */
	if (starts_with(head, "!<arch>\n", 8))
		return true;
	if (kimg_span_u32(&head, 0, &magic) && magic == KIMG_FATBIN_MAGIC)
		return true;
	enum walk_archive_kind ak = walk_archive_kind_of(head);
	if (ak == ARCHIVE_ZIP)
		return !walk_name_ends_with(name, ".npz");
	if (ak == ARCHIVE_EMPTY_ZIP)
		return false; /* holds nothing */
	if (ak == ARCHIVE_TAR)
		return is_tar_name(name);
	enum kimg_input_kind k = kimg_input_classify(head);
	return k == KIMG_INPUT_PTX || k == KIMG_INPUT_CUBIN || k == KIMG_INPUT_FATBIN;
}

struct archive_ctx {
	struct walk_state *ws;
	const char *archive_path;
	int depth;                /* of the members: 1 for members of a file on disk */
	bool tar;
};

static int archive_member(void *ctx, const char *name, struct kimg_span bytes, const struct kimg_error *merr)
{
	struct archive_ctx *a = ctx;
	const struct probe_walker *w = a->ws->w;
	size_t len = strlen(a->archive_path) + strlen(name) + 3;
	char *path = malloc(len);
	if (!path)
		return -ENOMEM;
	snprintf(path, len, "%s!/%s", a->archive_path, name);
	enum walk_archive_kind kind = merr ? ARCHIVE_NONE : walk_archive_kind_of(bytes);
	if (merr && merr->code == -KIMG_ENOCODEC)
		unread_add(a->ws, &a->ws->zlib, a->archive_path, merr->what);
	else if (merr)
		w->on_error(w->ctx, path, merr->what, false);
	else if (kind != ARCHIVE_NONE)
		walk_archive(a->ws, path, bytes, kind, walk_name_ends_with(name, ".whl"), a->depth);
	else
		w->on_input(w->ctx, path, bytes, false);
	free(path);
	return 0;
}

/* depth: of the archive itself (0 on disk). every_member: sniff each
 * member (wheels, archives named on the command line); otherwise zips
 * inflate only members with code_name names. */
void walk_archive(struct walk_state *ws, const char *path, struct kimg_span bytes, enum walk_archive_kind kind,
			 bool every_member, int depth)
{
	const struct probe_walker *w = ws->w;
	struct archive_ctx a = { ws, path, depth + 1, kind == ARCHIVE_TAR };
	struct kimg_error err = { 0, 0, "" };
	int rc;
	if (depth >= NEST_MAX) {
		char msg[96];
		snprintf(msg, sizeof msg, "archive nested %d levels deep, more than %d: not read", depth + 1, NEST_MAX);
		w->on_error(w->ctx, path, msg, false);
		return;
	}
	if (kind == ARCHIVE_EMPTY_ZIP) {
		w->on_error(w->ctx, path, "empty zip archive: no members, nothing to check", false);
		return;
	}
	if (kind == ARCHIVE_TAR) {
		rc = kimg_tar_for_each_member(bytes, walk_member_wanted, archive_member, &a, &err);
		if (rc == -KIMG_ENOCODEC) {
			unread_add(ws, &ws->tar, path, err.what);
			return;
		}
	} else {
		struct kimg_zip_walk zw = { every_member ? NULL : code_name, walk_member_wanted, archive_member, &a };
		rc = kimg_zip_walk(bytes, &zw, &err);
	}
	if (rc < 0)
		w->on_error(w->ctx, path, err.what[0] ? err.what : kimg_strerror(rc), false);
}

/* Archives a job could not read, after those of the jobs before it (two
 * files never share an archive: no duplicates to drop at the seam). */
void walk_unread_merge(struct walk_unread *into, struct walk_unread *from)
{
	if (!from->count)
		return;
	size_t need = into->len + from->len + 3;
	if (need > into->cap) {
		char *p = realloc(into->paths, need * 2);
		if (!p)
			goto out;
		into->paths = p;
		into->cap = need * 2;
	}
	into->len += (size_t)snprintf(into->paths + into->len, into->cap - into->len, "%s%s", into->count ? ", " : "",
				      from->paths);
	into->count += from->count;
	snprintf(into->why, sizeof into->why, "%s", from->why);
out:
	free(from->paths);
}
