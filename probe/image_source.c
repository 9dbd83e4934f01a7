/* SPDX-License-Identifier: Apache-2.0 */
/* Where an image's blobs are (image_int.h): the image given as a
 * directory (an OCI layout) or a tar (docker archive, OCI archive),
 * indexed by its member headers without reading their data; blobs opened
 * by name within it; small documents (manifest, index, config) read whole
 * with their SHA-256 checked; layer bytes handed out in chunks with the
 * blob's digest taken on the same bytes. Also the detection of an image
 * among the inputs. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "file.h"
#include "image_format.h"
#include "image_int.h"
#include "layer_fs.h"
#include "probe.h"
#include "sha256.h"
#include "tar_header.h"

static void strip_dot(const char *in, char *out, size_t size)
{
	while (in[0] == '.' && in[1] == '/')
		in += 2;
	while (in[0] == '/')
		in++;
	snprintf(out, size, "%s", in);
}

int image_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -KIMG_ETRUNC;
		got += (size_t)r;
	}
	return 0;
}

/* List the tar's regular members by header, skipping their data. */
static int index_tar(struct source *s, struct kimg_error *err)
{
	struct stat st;
	if (kimg_file_fstat(s->fd, &st) < 0)
		return kimg_error_set(err, -errno, 0, "%s", strerror(errno));
	uint64_t pos = 0, end = (uint64_t)st.st_size;
	struct kimg_tar_header *h = malloc(sizeof *h);
	char *long_name = NULL, *long_link = NULL;
	bool pax = false;
	struct kimg_tar_header *pax_h = malloc(sizeof *pax_h);
	int rc = 0;
	if (!h || !pax_h) {
		rc = kimg_error_set(err, -ENOMEM, 0, "out of memory");
		goto out;
	}
	while (pos + KIMG_TAR_BLOCK <= end) {
		uint8_t blk[KIMG_TAR_BLOCK];
		if ((rc = image_pread_all(s->fd, blk, sizeof blk, pos)) < 0) {
			kimg_error_set(err, rc, pos, "reading the tar: %s", kimg_strerror(rc));
			goto out;
		}
		int r = kimg_tar_header_parse(kimg_span_make(blk, sizeof blk), h, err);
		if (r < 0) {
			rc = r;
			goto out;
		}
		if (r == 0)
			break;
		uint64_t data = pos + KIMG_TAR_BLOCK;
		if (h->size > end - data) {
			rc = kimg_error_set(err, -KIMG_ETRUNC, pos, "tar member '%.200s' passes the end of the file", h->name);
			goto out;
		}
		pos = data + kimg_tar_padded(h->size);
		if (h->type == KIMG_TAR_PAX || h->type == KIMG_TAR_GNU_LONGNAME || h->type == KIMG_TAR_GNU_LONGLINK) {
			if (h->size > KIMG_TAR_EXT_MAX) {
				rc = kimg_error_set(err, -KIMG_ELIMIT, data, "tar extended header larger than %llu bytes",
						    (unsigned long long)KIMG_TAR_EXT_MAX);
				goto out;
			}
			char *buf = malloc(h->size + 1);
			if (!buf || (rc = image_pread_all(s->fd, buf, h->size, data)) < 0) {
				free(buf);
				rc = kimg_error_set(err, rc ? rc : -ENOMEM, data, "reading a tar extended header");
				goto out;
			}
			buf[h->size] = '\0';
			if (h->type == KIMG_TAR_PAX) {
				memset(pax_h, 0, sizeof *pax_h);
				pax_h->size = UINT64_MAX;
				if ((rc = kimg_tar_pax_apply(kimg_span_make(buf, h->size), pax_h, err)) < 0) {
					free(buf);
					goto out;
				}
				pax = true;
				free(buf);
			} else if (h->type == KIMG_TAR_GNU_LONGNAME) {
				free(long_name);
				long_name = buf;
			} else {
				free(long_link);
				long_link = buf;
			}
			continue;
		}
		if (pax) {
			if (pax_h->name[0])
				snprintf(h->name, sizeof h->name, "%s", pax_h->name);
			/* a symbolic link's target past ustar's 100 bytes */
			if (pax_h->link[0])
				snprintf(h->link, sizeof h->link, "%s", pax_h->link);
			if (pax_h->size != UINT64_MAX && pax_h->size != h->size) {
				rc = kimg_error_set(err, -KIMG_ENOTSUP, pos, "tar member '%.200s': pax size differs from the header",
						    h->name);
				goto out;
			}
			pax = false;
		}
		if (long_name) {
			snprintf(h->name, sizeof h->name, "%s", long_name);
			free(long_name);
			long_name = NULL;
		}
		if (long_link) {
			snprintf(h->link, sizeof h->link, "%s", long_link);
			free(long_link);
			long_link = NULL;
		}
		if (h->type != KIMG_TAR_REG && h->type != KIMG_TAR_SYMLINK)
			continue;
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 64;
			struct tar_member *m = realloc(s->m, cap * sizeof *m);
			if (!m) {
				rc = kimg_error_set(err, -ENOMEM, 0, "out of memory");
				goto out;
			}
			s->m = m;
			s->cap = cap;
		}
		char name[KIMG_TAR_NAME_MAX];
		strip_dot(h->name, name, sizeof name);
		if (!(s->m[s->n].name = strdup(name))) {
			rc = kimg_error_set(err, -ENOMEM, 0, "out of memory");
			goto out;
		}
		s->m[s->n].off = data;
		s->m[s->n].size = h->type == KIMG_TAR_REG ? h->size : 0;
		s->m[s->n].link = NULL;
		if (h->type == KIMG_TAR_SYMLINK && !(s->m[s->n].link = strdup(h->link))) {
			free(s->m[s->n].name);
			rc = kimg_error_set(err, -ENOMEM, 0, "out of memory");
			goto out;
		}
		s->n++;
	}
out:
	free(long_name);
	free(long_link);
	free(h);
	free(pax_h);
	return rc;
}

const struct tar_member *image_tar_find(const struct source *s, const char *name)
{
	char want[KIMG_TAR_NAME_MAX];
	strip_dot(name, want, sizeof want);
	for (int hops = 0; hops < 8; hops++) {
		const struct tar_member *m = NULL;
		/* the last member of a name wins, as tar extraction has it */
		for (size_t i = s->n; i-- > 0 && !m;)
			if (strcmp(s->m[i].name, want) == 0)
				m = &s->m[i];
		if (!m || !m->link)
			return m;
		/* a symlink member, relative to its directory, within the archive */
		char joined[2 * KIMG_TAR_NAME_MAX + 2], norm[KIMG_TAR_NAME_MAX];
		const char *slash = strrchr(m->name, '/');
		snprintf(joined, sizeof joined, "%.*s%s%s", slash ? (int)(slash - m->name) : 0, m->name, slash ? "/" : "",
			 m->link);
		if (m->link[0] == '/' || kimg_layer_fs_normalize(joined, false, true, norm, sizeof norm) <= 0)
			return NULL;
		snprintf(want, sizeof want, "%s", norm + 1);
	}
	return NULL;
}

void image_source_close(struct source *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->m[i].name);
		free(s->m[i].link);
	}
	free(s->m);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

int image_source_open(const char *path, struct source *s, struct kimg_error *err)
{
	memset(s, 0, sizeof *s);
	s->path = path;
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return kimg_error_set(err, -errno, 0, "%s", strerror(errno));
	struct stat st;
	if (kimg_file_fstat(s->fd, &st) < 0)
		return kimg_error_set(err, -errno, 0, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		s->is_dir = true;
		s->format = "oci-layout";
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "not a regular file");
	int rc = index_tar(s, err);
	if (rc < 0)
		return rc;
	s->format = image_tar_find(s, "manifest.json") ? "docker-archive" : "oci-archive";
	return 0;
}

bool image_source_has(const struct source *s, const char *name)
{
	if (s->is_dir) {
		struct stat st;
		return kimg_file_stat_at(s->fd, name, &st, true) == 0 && S_ISREG(st.st_mode);
	}
	return image_tar_find(s, name) != NULL;
}

int image_blob_open(const struct source *s, const char *name, struct blob *b, struct kimg_error *err)
{
	memset(b, 0, sizeof *b);
	b->fd = -1;
	if (s->is_dir) {
		char clean[KIMG_LAYER_FS_PATH_MAX];
		/* a layout names its blobs itself: never outside the directory */
		if (kimg_layer_fs_normalize(name, true, true, clean, sizeof clean) <= 0)
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "blob name '%.200s' leaves the layout", name);
		int fd = openat(s->fd, clean + 1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return kimg_error_set(err, -errno, 0, "blob %s missing: %s", clean + 1, strerror(errno));
		struct stat st;
		if (kimg_file_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "blob %s is not a regular file", clean + 1);
		}
		b->fd = fd;
		b->own_fd = true;
		b->size = (uint64_t)st.st_size;
		return 0;
	}
	const struct tar_member *m = image_tar_find(s, name);
	if (!m)
		return kimg_error_set(err, -ENOENT, 0, "blob %.200s missing from the archive", name);
	b->fd = s->fd;
	b->off = m->off;
	b->size = m->size;
	return 0;
}

void image_blob_close(struct blob *b)
{
	if (b->own_fd && b->fd >= 0)
		close(b->fd);
	b->fd = -1;
}

/* A small blob (manifest, index, config) whole, its SHA-256 checked
 * against want_hex when given. */
int image_blob_read_doc(const struct source *s, const char *name, const char *want_hex, unsigned char **out,
			 uint64_t *len, struct kimg_error *err)
{
	struct blob b;
	int rc = image_blob_open(s, name, &b, err);
	if (rc < 0)
		return rc;
	if (b.size > KIMG_IMAGE_DOC_MAX) {
		image_blob_close(&b);
		return kimg_error_set(err, -KIMG_ELIMIT, 0, "%s: larger than %llu bytes", name,
				      (unsigned long long)KIMG_IMAGE_DOC_MAX);
	}
	unsigned char *buf = malloc(b.size + 1);
	if (!buf || (rc = image_pread_all(b.fd, buf, b.size, b.off)) < 0) {
		free(buf);
		image_blob_close(&b);
		return kimg_error_set(err, rc ? rc : -ENOMEM, 0, "%s: cannot read it", name);
	}
	image_blob_close(&b);
	buf[b.size] = '\0';
	if (want_hex) {
		struct kimg_sha256 h;
		char got[65];
		kimg_sha256_init(&h);
		kimg_sha256_update(&h, buf, b.size);
		kimg_sha256_hex(&h, got);
		if (strcmp(got, want_hex) != 0) {
			free(buf);
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "%s: digest mismatch (bytes: %.12s...)", name, got);
		}
	}
	*out = buf;
	*len = b.size;
	return 0;
}


/* The blob is mapped a window at a time rather than copied out by pread:
 * the decompressor and the digest read the page cache's pages in place
 * (the copy was a tenth of a check's time), and unmapping each window
 * when the next is asked for keeps the resident set to one window. */
#define LAYER_WINDOW ((uint64_t)8 << 20)

static void layer_unmap(struct layer_source *ls)
{
	if (ls->map)
		munmap(ls->map, ls->map_len);
	ls->map = NULL;
	ls->map_len = 0;
}

void image_layer_end(struct layer_source *ls)
{
	layer_unmap(ls);
}

int64_t image_layer_read(void *ctx, const void **buf)
{
	struct layer_source *ls = ctx;
	layer_unmap(ls);
	uint64_t left = ls->size - ls->pos;
	if (left == 0)
		return 0;
	uint64_t at = ls->off + ls->pos, start = at & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
	uint64_t n = left < LAYER_WINDOW ? left : LAYER_WINDOW;
	/* a blob cut short since it was opened is read, not mapped: pread
	 * says so where a mapped page past the end would raise SIGBUS */
	struct stat st;
	bool whole = kimg_file_fstat(ls->fd, &st) == 0 && (uint64_t)st.st_size >= at + n;
	void *map = whole ? mmap(NULL, (size_t)(at - start + n), PROT_READ, MAP_PRIVATE | MAP_POPULATE, ls->fd, (off_t)start)
			  : MAP_FAILED;
	const unsigned char *bytes;
	if (map != MAP_FAILED) {
		ls->map = map;
		ls->map_len = (size_t)(at - start + n);
		bytes = (const unsigned char *)map + (at - start);
	} else {
		/* a file that cannot be mapped (a pipe, a FUSE file): copied */
		n = n < IMAGE_CHUNK ? n : IMAGE_CHUNK;
		int rc = image_pread_all(ls->fd, ls->buf, (size_t)n, at);
		if (rc < 0)
			return rc;
		bytes = ls->buf;
	}
	if (ls->sha)
		kimg_digest_update(ls->sha, bytes, (size_t)n);
	ls->pos += n;
	*buf = bytes;
	return (int64_t)n;
}

bool probe_image_detect(const char *path)
{
	struct stat st;
	if (kimg_file_stat(path, &st, true) != 0)
		return false;
	if (S_ISDIR(st.st_mode)) {
		char p[KIMG_LAYER_FS_PATH_MAX];
		struct stat a, b;
		snprintf(p, sizeof p, "%s/oci-layout", path);
		bool layout = kimg_file_stat(p, &a, true) == 0 && S_ISREG(a.st_mode);
		snprintf(p, sizeof p, "%s/index.json", path);
		return layout && kimg_file_stat(p, &b, true) == 0 && S_ISREG(b.st_mode);
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)(2 * KIMG_TAR_BLOCK))
		return false;
	/* a tar's first header, then its member names */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	uint8_t blk[KIMG_TAR_BLOCK];
	struct kimg_tar_header *h = malloc(sizeof *h);
	bool tar = h && image_pread_all(fd, blk, sizeof blk, 0) == 0 &&
		   kimg_tar_header_parse(kimg_span_make(blk, sizeof blk), h, NULL) == 1;
	free(h);
	if (!tar) {
		close(fd);
		return false;
	}
	struct source s;
	memset(&s, 0, sizeof s);
	s.fd = fd;
	s.path = path;
	struct kimg_error err = { 0, 0, "" };
	bool image = index_tar(&s, &err) == 0 && (image_tar_find(&s, "manifest.json") ||
						  (image_tar_find(&s, "oci-layout") && image_tar_find(&s, "index.json")));
	image_source_close(&s);
	return image;
}

