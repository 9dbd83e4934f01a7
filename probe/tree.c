/* SPDX-License-Identifier: Apache-2.0 */
/* A directory tree listed on several threads, visited in order.
 *
 * A tree of 70,000 files (a Python environment) holds a few hundred with
 * device code. Listing it and looking at the first bytes of every file is
 * most of a warm walk's time, and is independent work per directory: here
 * lister threads take directories from a stack, list and sort them, stat
 * what readdir does not say, and ask want_file about each regular file,
 * while the calling thread visits the listed directories depth first in
 * name order, as a one-thread walk would. The caller never waits for a
 * directory that no lister has started: it lists that one itself, so the
 * walk ends even when no thread can be had. Listers stop listing ahead
 * once TREE_AHEAD_MAX entries wait for the visit (memory stays bounded on
 * a tree of millions of files). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "glibc_pins.h"
#include "file.h"
#include "probe.h"
#include "thread.h"

#ifndef TREE_AHEAD_MAX
#define TREE_AHEAD_MAX (1u << 20) /* -D for tests of the back-pressure path */
#endif

enum node_state { NODE_QUEUED, NODE_LISTING, NODE_LISTED };

enum item_kind { ITEM_FILE, ITEM_DIR, ITEM_PROBLEM, ITEM_DANGLING };

struct node;

struct item {
	enum item_kind kind;
	char *path;
	char *problem;               /* ITEM_PROBLEM, ITEM_DANGLING */
	struct node *dir;            /* ITEM_DIR */
};

struct node {
	char *path;
	int depth;
	_Atomic int state;           /* enum node_state */
	char *problem;               /* the directory's own, visited before its items */
	struct item *items;
	size_t n_items;
	struct node *prev, *next;    /* on the stack (under the tree's lock) */
	bool stacked;
};

struct tree {
	const struct probe_tree_visitor *v;
	pthread_mutex_t lock;
	pthread_cond_t work;         /* a node was pushed, room ahead, or stop */
	pthread_cond_t listed;       /* a node was listed */
	struct node *stack;
	size_t n_stacked;            /* nodes on the stack */
	size_t ahead;                /* items listed, not yet visited */
	bool stop;
	/* Listers start as directories wait for one, not all at once: a
	 * tree of one directory starts none (under the lock). */
	struct probe_thread tid[PROBE_JOBS_MAX];
	unsigned started, max_helpers;
	unsigned idle, starting;     /* listers waiting for work; started, not yet waiting */
};

static char *join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	bool slash = dl > 0 && dir[dl - 1] == '/';
	char *p = malloc(dl + nl + 2);
	if (p) {
		memcpy(p, dir, dl);
		if (!slash)
			p[dl++] = '/';
		memcpy(p + dl, name, nl + 1);
	}
	return p;
}

static char *errno_text(int e)
{
	char buf[128];
	return strdup(strerror_r(e, buf, sizeof buf));
}

static struct node *node_new(char *path, int depth)
{
	struct node *nd = calloc(1, sizeof *nd);
	if (!nd) {
		free(path);
		return NULL;
	}
	nd->path = path;
	nd->depth = depth;
	atomic_init(&nd->state, NODE_QUEUED);
	return nd;
}

/* One directory's listing is read this much at a time (glibc's readdir
 * buffer is as large). */
#define TREE_DENTS_BUF 32768

/* The kernel's record for getdents64 (<dirent.h> has no declaration of
 * the call before glibc 2.30). */
struct tree_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct entry {
	char *name;
	unsigned char type;
};

static int compare_entries(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* What an entry is, as lstat would say, then through a symlink as stat
 * would: symlinked directories are not followed (no loops, no escaping
 * the tree), symlinked files are. Returns the item to keep, or false. */
static bool entry_item(struct tree *t, int dfd, const struct node *nd, const struct entry *e, struct item *it,
		       bool *short_of_memory)
{
	const struct probe_tree_visitor *v = t->v;
	unsigned char type = e->type;
	struct stat st;
	memset(it, 0, sizeof *it);
	if ((it->path = join(nd->path, e->name)) == NULL) {
		*short_of_memory = true;
		return false;
	}
	if (type != DT_REG && type != DT_DIR) {
		/* DT_LNK, DT_UNKNOWN (file systems that do not fill d_type), others. */
		if (type != DT_LNK && type != DT_UNKNOWN)
			goto drop; /* FIFOs, sockets, devices: reading one could block or never end */
		if (kimg_file_stat_at(dfd, e->name, &st, false) != 0)
			goto problem;
		if (S_ISLNK(st.st_mode)) {
			if (kimg_file_stat_at(dfd, e->name, &st, true) != 0) {
				if (errno == ENOENT || errno == ELOOP)
					goto dangling; /* leads nowhere: holds no device code */
				goto problem;
			}
			if (S_ISDIR(st.st_mode))
				goto drop;
		}
		type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
	}
	if (type == DT_DIR) {
		it->kind = ITEM_DIR;
		it->dir = node_new(it->path, nd->depth + 1);
		it->path = NULL;
		if (!it->dir)
			*short_of_memory = true; /* a directory dropped: said, not lost */
		return it->dir != NULL;
	}
	if (type == DT_REG && v->want_file(v->ctx, dfd, e->name, it->path)) {
		it->kind = ITEM_FILE;
		return true;
	}
drop:
	free(it->path);
	return false;
dangling:
	it->kind = ITEM_DANGLING;
	it->problem = errno_text(errno);
	if (!it->problem) {
		*short_of_memory = true;
		free(it->path);
		return false;
	}
	return true;
problem:
	it->kind = ITEM_PROBLEM;
	it->problem = errno_text(errno);
	if (!it->problem) {
		*short_of_memory = true;
		free(it->path);
		return false;
	}
	return true;
}

/* Stack operations, under t->lock. */
static void stack_push(struct tree *t, struct node *nd)
{
	nd->prev = NULL;
	nd->next = t->stack;
	if (t->stack)
		t->stack->prev = nd;
	t->stack = nd;
	nd->stacked = true;
	t->n_stacked++;
}

static void stack_remove(struct tree *t, struct node *nd)
{
	if (!nd->stacked)
		return;
	if (nd->prev)
		nd->prev->next = nd->next;
	else
		t->stack = nd->next;
	if (nd->next)
		nd->next->prev = nd->prev;
	nd->prev = nd->next = NULL;
	nd->stacked = false;
	t->n_stacked--;
}

static void *lister(void *arg);

/* One more lister for each directory waiting that no lister would take
 * now, up to max_helpers, under t->lock. Before the node that pushed them
 * is LISTED: the visit cannot end, and join what it counts, before. */
static void start_listers_locked(struct tree *t)
{
	while (t->started < t->max_helpers && t->n_stacked > t->idle + t->starting) {
		/* One that gets no thread runs at join, finds the walk stopped. */
		probe_thread_create(&t->tid[t->started++], lister, t, PROBE_THREAD_INLINE_AT_JOIN);
		t->starting++;
	}
}

/* Publish a listed node: its children on the stack, its state LISTED. */
static void push_children(struct tree *t, struct node *nd)
{
	/* Last child first, so the first one is on top: listers go where the
	 * visit goes next. */
	size_t dirs = 0;
	pthread_mutex_lock(&t->lock);
	for (size_t i = nd->n_items; i-- > 0;)
		if (nd->items[i].kind == ITEM_DIR) {
			stack_push(t, nd->items[i].dir);
			dirs++;
		}
	t->ahead += nd->n_items;
	if (dirs)
		start_listers_locked(t);
	/* Listed only now, under the lock: the visit must not reach (and
	 * claim, list, free) a child before it is on the stack. */
	atomic_store(&nd->state, NODE_LISTED);
	/* One lister woken per directory to list, not all of them for each
	 * directory listed (5,000 directories, 15 listers at -j 16); the
	 * visit is the one waiter on `listed`. */
	if (dirs > 1)
		pthread_cond_broadcast(&t->work);
	else if (dirs == 1)
		pthread_cond_signal(&t->work);
	pthread_cond_signal(&t->listed);
	pthread_mutex_unlock(&t->lock);
}

/* List nd (its state is NODE_LISTING, owned by this thread). */
static void list_node(struct tree *t, struct node *nd)
{
	struct entry *ents = NULL;
	size_t n = 0, cap = 0;
	/* an entry left out for want of memory: said as the directory's
	 * problem, never a listing that looks whole */
	bool short_of_memory = false;
	if (t->v->stop && t->v->stop(t->v->ctx))
		goto done;
	if (nd->depth > PROBE_WALK_MAX_DEPTH) {
		nd->problem = strdup("directories nested too deeply, not descending");
		goto done;
	}
	/* getdents64 on the descriptor itself, not fdopendir/readdir: those
	 * add an fstat and an fcntl to every directory (11,000 of them in a
	 * large site-packages, as many calls as the files read). */
	int dfd = open(nd->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *dents = dfd >= 0 ? malloc(TREE_DENTS_BUF) : NULL;
	if (!dents) {
		nd->problem = errno_text(dfd < 0 ? errno : ENOMEM);
		if (dfd >= 0)
			close(dfd);
		goto done;
	}
	for (;;) {
		long got = syscall(SYS_getdents64, dfd, dents, TREE_DENTS_BUF);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			nd->problem = errno_text(errno);
			break;
		}
		if (got == 0)
			break;
		for (long off = 0; off < got && !short_of_memory;) {
			struct tree_dirent64 *de = (struct tree_dirent64 *)(dents + off);
			if (de->d_reclen == 0 || de->d_reclen > got - off)
				break; /* the kernel's records always fit: never reached */
			off += de->d_reclen;
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 32;
				struct entry *p = realloc(ents, nc * sizeof *p);
				if (!p) {
					short_of_memory = true;
					break;
				}
				ents = p;
				cap = nc;
			}
			if ((ents[n].name = strdup(de->d_name)) != NULL)
				ents[n++].type = de->d_type;
			else
				short_of_memory = true;
		}
		if (short_of_memory)
			break;
	}
	free(dents);
	/* Sorted, so output is the same on every file system. */
	if (n)
		qsort(ents, n, sizeof *ents, compare_entries);
	if (n && (nd->items = malloc(n * sizeof *nd->items)) == NULL)
		short_of_memory = true;
	for (size_t i = 0; nd->items && i < n; i++)
		if (entry_item(t, dfd, nd, &ents[i], &nd->items[nd->n_items], &short_of_memory))
			nd->n_items++;
	if (short_of_memory && !nd->problem)
		nd->problem = errno_text(ENOMEM);
	for (size_t i = 0; i < n; i++)
		free(ents[i].name);
	free(ents);
	close(dfd);
done:
	push_children(t, nd);
}

/* Take nd off the stack to list it, under t->lock: true when nobody else
 * has (a node on the stack is always NODE_QUEUED, and only leaves it
 * here, so a lister never touches a node the visit may have freed). */
static bool claim_locked(struct tree *t, struct node *nd)
{
	if (atomic_load(&nd->state) != NODE_QUEUED)
		return false;
	stack_remove(t, nd);
	atomic_store(&nd->state, NODE_LISTING);
	return true;
}

static void *lister(void *arg)
{
	struct tree *t = arg;
	pthread_mutex_lock(&t->lock);
	if (t->starting)
		t->starting--; /* now counted among the idle when it waits */
	for (;;) {
		while (!t->stop && (!t->stack || t->ahead >= TREE_AHEAD_MAX)) {
			t->idle++;
			pthread_cond_wait(&t->work, &t->lock);
			t->idle--;
		}
		if (t->stop)
			break;
		struct node *nd = t->stack;
		claim_locked(t, nd);
		pthread_mutex_unlock(&t->lock);
		list_node(t, nd);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static void visit(struct tree *t, struct node *nd)
{
	const struct probe_tree_visitor *v = t->v;
	pthread_mutex_lock(&t->lock);
	bool mine = claim_locked(t, nd);
	while (!mine && atomic_load(&nd->state) != NODE_LISTED)
		pthread_cond_wait(&t->listed, &t->lock); /* a lister is on it */
	pthread_mutex_unlock(&t->lock);
	if (mine)
		list_node(t, nd);
	if (nd->problem)
		v->on_problem(v->ctx, nd->path, nd->problem);
	for (size_t i = 0; i < nd->n_items; i++) {
		struct item *it = &nd->items[i];
		if (it->kind == ITEM_DIR) {
			visit(t, it->dir);
		} else {
			if (it->kind == ITEM_FILE)
				v->on_file(v->ctx, it->path);
			else if (it->kind == ITEM_DANGLING && v->on_dangling)
				v->on_dangling(v->ctx, it->path, it->problem);
			else
				v->on_problem(v->ctx, it->path, it->problem);
			free(it->path);
			free(it->problem);
		}
	}
	pthread_mutex_lock(&t->lock);
	/* Listers wait for room ahead only past TREE_AHEAD_MAX. */
	bool room = t->ahead >= TREE_AHEAD_MAX && t->ahead - nd->n_items < TREE_AHEAD_MAX;
	t->ahead -= nd->n_items;
	if (room)
		pthread_cond_broadcast(&t->work);
	pthread_mutex_unlock(&t->lock);
	free(nd->items);
	free(nd->problem);
	free(nd->path);
	free(nd);
}

void probe_tree_walk(const char *root, unsigned threads, const struct probe_tree_visitor *v)
{
	struct tree t = { .v = v, .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
			  .listed = PTHREAD_COND_INITIALIZER };

	char *path = strdup(root);
	struct node *top = path ? node_new(path, 0) : NULL;
	if (!top) {
		v->on_problem(v->ctx, root, strerror(ENOMEM));
		return;
	}
	if (threads > PROBE_JOBS_MAX)
		threads = PROBE_JOBS_MAX;
	/* This thread lists too (whatever it reaches first): threads - 1
	 * helpers at most, started as directories wait (push_children). */
	t.max_helpers = threads > 0 ? threads - 1 : 0;
	visit(&t, top);
	pthread_mutex_lock(&t.lock);
	t.stop = true;
	pthread_cond_broadcast(&t.work);
	unsigned started = t.started;
	pthread_mutex_unlock(&t.lock);
	for (unsigned i = 0; i < started; i++)
		probe_thread_join(&t.tid[i]);
}
