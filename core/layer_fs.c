/* SPDX-License-Identifier: Apache-2.0 */
/* The final file system of an image's layers (layer_fs.h): a hash table of
 * the paths met, each with the entry that last defined it and the layers
 * at which it (or its children) were removed; an entry survives when no
 * later removal covers it. Removals are recorded, not applied, so a
 * whiteout of a large directory costs one store, and the survival of a
 * path is decided by looking at it and its ancestors. */
#include "layer_fs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fs_node {
	char *path;                 /* "/a/b", NUL-terminated */
	char *link;                 /* SYMLINK target, or NULL */
	uint32_t len, hash;
	int32_t def_layer;          /* -1: never defined (only removals, or an ancestor) */
	uint32_t def_ordinal;
	int32_t remove_layer;       /* this path and its subtree removed below this layer */
	int32_t opaque_layer;       /* its children removed below this layer */
	int32_t src_layer;          /* FILE / HARDLINK: the entry holding the bytes */
	uint32_t src_ordinal;
	uint8_t kind;
};

struct fs_layer {
	int32_t *node_of;           /* entry -> node, -1: none */
	int32_t *want;              /* after finish: entry -> node naming its bytes */
	uint32_t n, cap;
	uint64_t files;
};

struct str_block {
	struct str_block *next;
	size_t used, size;
	char data[];
};

struct kimg_layer_fs {
	struct fs_node *nodes;
	uint32_t n_nodes, cap_nodes;
	uint32_t *table;            /* node index + 1, 0 empty */
	uint32_t table_size;        /* power of two */
	struct fs_layer *layers;
	unsigned n_layers;
	uint64_t entries, max_entries;
	struct str_block *strs;
};

static uint32_t hash_of(const char *s, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static char *str_dup(struct kimg_layer_fs *fs, const char *s, size_t n)
{
	struct str_block *b = fs->strs;
	if (!b || b->size - b->used < n + 1) {
		size_t size = n + 1 > 65536 ? n + 1 : 65536;
		b = malloc(sizeof *b + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		b->next = fs->strs;
		fs->strs = b;
	}
	char *p = b->data + b->used;
	memcpy(p, s, n);
	p[n] = '\0';
	b->used += n + 1;
	return p;
}

struct kimg_layer_fs *kimg_layer_fs_new(unsigned n_layers, uint64_t max_entries)
{
	struct kimg_layer_fs *fs = calloc(1, sizeof *fs);
	if (!fs)
		return NULL;
	fs->layers = calloc(n_layers ? n_layers : 1, sizeof *fs->layers);
	fs->table_size = 1024;
	fs->table = calloc(fs->table_size, sizeof *fs->table);
	if (!fs->layers || !fs->table) {
		kimg_layer_fs_free(fs);
		return NULL;
	}
	fs->n_layers = n_layers;
	fs->max_entries = max_entries;
	return fs;
}

void kimg_layer_fs_free(struct kimg_layer_fs *fs)
{
	if (!fs)
		return;
	for (unsigned i = 0; fs->layers && i < fs->n_layers; i++) {
		free(fs->layers[i].node_of);
		free(fs->layers[i].want);
	}
	free(fs->layers);
	free(fs->nodes);
	free(fs->table);
	while (fs->strs) {
		struct str_block *n = fs->strs->next;
		free(fs->strs);
		fs->strs = n;
	}
	free(fs);
}

static int32_t find(const struct kimg_layer_fs *fs, const char *path, size_t len)
{
	uint32_t h = hash_of(path, len), mask = fs->table_size - 1;
	for (uint32_t i = h & mask;; i = (i + 1) & mask) {
		uint32_t v = fs->table[i];
		if (!v)
			return -1;
		const struct fs_node *n = &fs->nodes[v - 1];
		if (n->hash == h && n->len == len && memcmp(n->path, path, len) == 0)
			return (int32_t)(v - 1);
	}
}

static int grow_table(struct kimg_layer_fs *fs)
{
	uint32_t size = fs->table_size * 2, mask = size - 1;
	uint32_t *t = calloc(size, sizeof *t);
	if (!t)
		return -ENOMEM;
	for (uint32_t n = 0; n < fs->n_nodes; n++) {
		uint32_t i = fs->nodes[n].hash & mask;
		while (t[i])
			i = (i + 1) & mask;
		t[i] = n + 1;
	}
	free(fs->table);
	fs->table = t;
	fs->table_size = size;
	return 0;
}

/* The node of path, made when missing. -ENOMEM. */
static int32_t node_for(struct kimg_layer_fs *fs, const char *path, size_t len)
{
	int32_t found = find(fs, path, len);
	if (found >= 0)
		return found;
	if ((uint64_t)fs->n_nodes * 2 >= fs->table_size && grow_table(fs) < 0)
		return -ENOMEM;
	if (fs->n_nodes == fs->cap_nodes) {
		uint32_t cap = fs->cap_nodes ? fs->cap_nodes * 2 : 256;
		struct fs_node *nn = realloc(fs->nodes, (size_t)cap * sizeof *nn);
		if (!nn)
			return -ENOMEM;
		fs->nodes = nn;
		fs->cap_nodes = cap;
	}
	struct fs_node *n = &fs->nodes[fs->n_nodes];
	if (!(n->path = str_dup(fs, path, len)))
		return -ENOMEM;
	n->link = NULL;
	n->len = (uint32_t)len;
	n->hash = hash_of(path, len);
	n->def_layer = n->remove_layer = n->opaque_layer = n->src_layer = -1;
	n->def_ordinal = n->src_ordinal = 0;
	n->kind = KIMG_FS_DIR;
	uint32_t mask = fs->table_size - 1, i = n->hash & mask;
	while (fs->table[i])
		i = (i + 1) & mask;
	fs->table[i] = fs->n_nodes + 1;
	return (int32_t)fs->n_nodes++;
}

int kimg_layer_fs_normalize(const char *name, bool forbid_abs, bool forbid_up, char *out, unsigned size)
{
	size_t o = 0;
	const char *p = name;
	if (*p == '/' && forbid_abs)
		return -KIMG_EFORMAT;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == 1 && p[0] == '.') {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (o == 0) {
				if (forbid_up)
					return -KIMG_EFORMAT;
			} else {
				while (o > 0 && out[o - 1] != '/')
					o--;
				o--; /* the '/' */
			}
		} else {
			if (o + 1 + n + 1 > size)
				return -KIMG_ELIMIT;
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = '\0';
	return (int)o;
}

/* Is node n's definition still in the file system, given every removal
 * recorded so far? Its ancestors are looked up by prefix. */
static bool node_live(const struct kimg_layer_fs *fs, const struct fs_node *n)
{
	if (n->def_layer < 0 || n->remove_layer > n->def_layer)
		return false;
	for (uint32_t i = n->len; i > 0;) {
		while (i > 0 && n->path[i - 1] != '/')
			i--;
		if (i == 0)
			break;
		i--; /* the '/' */
		int32_t a = find(fs, n->path, i);
		if (a < 0)
			continue;
		const struct fs_node *an = &fs->nodes[a];
		if (an->remove_layer > n->def_layer || an->opaque_layer > n->def_layer)
			return false;
	}
	return true;
}

/* Resolve the directories of a normalised path through live symlinks, in
 * place (buf of KIMG_LAYER_FS_PATH_MAX). The last component is not
 * followed. Returns the new length, or -ELOOP / -KIMG_ELIMIT. */
static int resolve_dirs(const struct kimg_layer_fs *fs, char *buf, int len)
{
	unsigned hops = 0;
restart:
	for (int i = 1; i < len; i++) {
		if (buf[i] != '/')
			continue;
		int32_t ni = find(fs, buf, (size_t)i);
		if (ni < 0)
			continue;
		const struct fs_node *n = &fs->nodes[ni];
		if (n->kind != KIMG_FS_SYMLINK || !n->link || !node_live(fs, n))
			continue;
		if (++hops > KIMG_LAYER_FS_HOPS)
			return -ELOOP;
		/* prefix dir + "/" + target + rest; ".." clamped at the root */
		char tmp[2 * KIMG_LAYER_FS_PATH_MAX + 2];
		int dir = i;
		while (dir > 0 && buf[dir - 1] != '/')
			dir--;
		size_t t = 0;
		if (n->link[0] != '/') {
			memcpy(tmp, buf, (size_t)dir);
			t = (size_t)dir;
		}
		size_t ll = strlen(n->link), rest = (size_t)(len - i);
		if (t + ll + rest + 2 > sizeof tmp)
			return -KIMG_ELIMIT;
		memcpy(tmp + t, n->link, ll);
		t += ll;
		tmp[t++] = '/';
		memcpy(tmp + t, buf + i + 1, rest - 1);
		t += rest - 1;
		tmp[t] = '\0';
		int r = kimg_layer_fs_normalize(tmp, false, false, buf, KIMG_LAYER_FS_PATH_MAX);
		if (r < 0)
			return r;
		len = r;
		goto restart;
	}
	return len;
}

static int record_entry(struct kimg_layer_fs *fs, unsigned layer, uint32_t ordinal, int32_t node)
{
	struct fs_layer *l = &fs->layers[layer];
	while (l->n <= ordinal) {
		if (l->n == l->cap) {
			uint32_t cap = l->cap ? l->cap * 2 : 64;
			int32_t *p = realloc(l->node_of, (size_t)cap * sizeof *p);
			if (!p)
				return -ENOMEM;
			l->node_of = p;
			l->cap = cap;
		}
		l->node_of[l->n++] = -1;
	}
	l->node_of[ordinal] = node;
	return 0;
}

int kimg_layer_fs_add(struct kimg_layer_fs *fs, unsigned layer, uint32_t ordinal, const char *name,
		      enum kimg_fs_kind kind, const char *link, struct kimg_error *err)
{
	char path[KIMG_LAYER_FS_PATH_MAX];
	if (layer >= fs->n_layers)
		return kimg_error_set(err, -KIMG_EFORMAT, 0, "layer %u out of range", layer + 1);
	if (fs->entries >= fs->max_entries)
		return kimg_error_set(err, -KIMG_ELIMIT, 0, "more than %llu entries in the image's layers",
				      (unsigned long long)fs->max_entries);
	fs->entries++;
	int len = kimg_layer_fs_normalize(name, true, true, path, sizeof path);
	if (len == -KIMG_ELIMIT)
		return kimg_error_set(err, len, 0, "member name longer than %u bytes", KIMG_LAYER_FS_PATH_MAX);
	if (len < 0)
		return kimg_error_set(err, len, 0, name[0] == '/' ? "absolute member name '%.200s': not applied"
								: "member name '%.200s' leaves the image root: not applied",
				      name);
	if (len == 0)
		return 0; /* "./": the root itself */
	len = resolve_dirs(fs, path, len);
	if (len == -ELOOP)
		return kimg_error_set(err, len, 0, "'%.200s': more than %u symbolic links in its directories (a loop?): "
						   "not applied", name, KIMG_LAYER_FS_HOPS);
	if (len < 0)
		return kimg_error_set(err, len, 0, "'%.200s': name too long once links are followed", name);
	char *base = strrchr(path, '/') + 1;
	if (strncmp(base, ".wh.", 4) == 0) {
		bool opaque = strcmp(base, ".wh..wh..opq") == 0;
		int32_t n;
		if (opaque) {
			n = node_for(fs, path, (size_t)(base - 1 - path));
		} else {
			if (!base[4] || strcmp(base + 4, ".") == 0 || strcmp(base + 4, "..") == 0)
				return kimg_error_set(err, -KIMG_EFORMAT, 0, "whiteout '%.200s' names nothing: not applied", name);
			memmove(base, base + 4, strlen(base + 4) + 1);
			n = node_for(fs, path, strlen(path));
		}
		if (n < 0)
			return kimg_error_set(err, n, 0, "out of memory");
		int32_t *slot = opaque ? &fs->nodes[n].opaque_layer : &fs->nodes[n].remove_layer;
		if (*slot < (int32_t)layer)
			*slot = (int32_t)layer;
		return record_entry(fs, layer, ordinal, -1);
	}
	int32_t src_layer = (int32_t)layer;
	uint32_t src_ordinal = ordinal;
	if (kind == KIMG_FS_HARDLINK) {
		char target[KIMG_LAYER_FS_PATH_MAX];
		int tl = link ? kimg_layer_fs_normalize(link, false, true, target, sizeof target) : -KIMG_EFORMAT;
		if (tl > 0)
			tl = resolve_dirs(fs, target, tl);
		int32_t t = tl > 0 ? find(fs, target, (size_t)tl) : -1;
		const struct fs_node *tn = t >= 0 ? &fs->nodes[t] : NULL;
		if (!tn || !node_live(fs, tn) || (tn->kind != KIMG_FS_FILE && tn->kind != KIMG_FS_HARDLINK))
			return kimg_error_set(err, -KIMG_EFORMAT, 0, "hard link '%.200s' to '%.200s': no such file in the image",
					      name, link ? link : "");
		src_layer = tn->src_layer;
		src_ordinal = tn->src_ordinal;
	}
	int32_t ni = node_for(fs, path, (size_t)len);
	if (ni < 0)
		return kimg_error_set(err, ni, 0, "out of memory");
	struct fs_node *n = &fs->nodes[ni];
	n->def_layer = (int32_t)layer;
	n->def_ordinal = ordinal;
	n->kind = (uint8_t)kind;
	n->link = NULL;
	n->src_layer = -1;
	if (kind == KIMG_FS_SYMLINK && link && !(n->link = str_dup(fs, link, strlen(link))))
		return kimg_error_set(err, -ENOMEM, 0, "out of memory");
	if (kind == KIMG_FS_FILE || kind == KIMG_FS_HARDLINK) {
		n->src_layer = src_layer;
		n->src_ordinal = src_ordinal;
	}
	/* A non-directory replaces a directory and what it held. */
	if (kind != KIMG_FS_DIR && n->remove_layer < (int32_t)layer)
		n->remove_layer = (int32_t)layer;
	return record_entry(fs, layer, ordinal, ni);
}

int kimg_layer_fs_finish(struct kimg_layer_fs *fs)
{
	for (unsigned l = 0; l < fs->n_layers; l++) {
		struct fs_layer *ly = &fs->layers[l];
		free(ly->want);
		ly->want = NULL;
		ly->files = 0;
		if (ly->n && !(ly->want = malloc((size_t)ly->n * sizeof *ly->want)))
			return -ENOMEM;
		for (uint32_t i = 0; i < ly->n; i++)
			ly->want[i] = -1;
	}
	for (uint32_t i = 0; i < fs->n_nodes; i++) {
		const struct fs_node *n = &fs->nodes[i];
		if ((n->kind != KIMG_FS_FILE && n->kind != KIMG_FS_HARDLINK) || n->src_layer < 0 || !node_live(fs, n))
			continue;
		struct fs_layer *ly = &fs->layers[n->src_layer];
		if (n->src_ordinal >= ly->n)
			continue;
		int32_t *w = &ly->want[n->src_ordinal];
		/* The file's own name first; else the first hard link met. */
		bool own = n->def_layer == n->src_layer && n->def_ordinal == n->src_ordinal;
		if (*w < 0)
			ly->files++;
		if (*w < 0 || own)
			*w = (int32_t)i;
	}
	return 0;
}

const char *kimg_layer_fs_judged_as(const struct kimg_layer_fs *fs, unsigned layer, uint32_t ordinal)
{
	if (layer >= fs->n_layers)
		return NULL;
	const struct fs_layer *ly = &fs->layers[layer];
	if (!ly->want || ordinal >= ly->n || ly->want[ordinal] < 0)
		return NULL;
	return fs->nodes[ly->want[ordinal]].path;
}

uint64_t kimg_layer_fs_layer_files(const struct kimg_layer_fs *fs, unsigned layer)
{
	return layer < fs->n_layers ? fs->layers[layer].files : 0;
}

int kimg_layer_fs_lookup(const struct kimg_layer_fs *fs, const char *path, unsigned *layer)
{
	char buf[KIMG_LAYER_FS_PATH_MAX];
	int len = kimg_layer_fs_normalize(path, false, false, buf, sizeof buf);
	if (len <= 0 || (len = resolve_dirs(fs, buf, len)) < 0)
		return -1;
	int32_t ni = find(fs, buf, (size_t)len);
	if (ni < 0 || !node_live(fs, &fs->nodes[ni]))
		return -1;
	if (layer)
		*layer = (unsigned)fs->nodes[ni].def_layer;
	return fs->nodes[ni].kind;
}
