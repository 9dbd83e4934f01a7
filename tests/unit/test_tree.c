/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of probe/tree.c, the directory lister of a walk, in its
 * 8-entry-window build (tree-ahead8.o: TREE_AHEAD_MAX 8): files visited
 * depth first in name order on the calling thread, however many listers;
 * listers never more than the window (plus the one directory a lister
 * has in hand) ahead of the visit; FIFOs left out; the depth cap. The
 * oracle is the tree each case builds itself and the order it was built
 * in, not a second run of the lister. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "probe.h"

#define AHEAD_WINDOW 8 /* tree-ahead8.o */

static char root[256];

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };
	nanosleep(&ts, NULL);
}

static void put_file(const char *path)
{
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	fputs("x", f);
	fclose(f);
}

static void rm_tree(const char *path)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
	ck_assert_int_eq(system(cmd), 0);
}

struct walk {
	_Atomic int listed;     /* want_file calls (lister threads) */
	int visited;            /* on_file calls (this thread) */
	_Atomic int max_ahead;  /* files listed, not yet visited, at most */
	char order[64][256];
	int n_order;
	char problems[8][256];
	int n_problems;
	unsigned visit_ms;
	pthread_t self;
	bool off_thread_visit;
};

static bool want_file(void *ctx, int dirfd, const char *name, const char *path)
{
	struct walk *w = ctx;
	(void)dirfd;
	(void)name;
	(void)path;
	int ahead = atomic_fetch_add(&w->listed, 1) + 1 - __atomic_load_n(&w->visited, __ATOMIC_SEQ_CST);
	int seen = atomic_load(&w->max_ahead);
	while (ahead > seen && !atomic_compare_exchange_weak(&w->max_ahead, &seen, ahead))
		;
	return true;
}

static void on_file(void *ctx, const char *path)
{
	struct walk *w = ctx;
	if (!pthread_equal(pthread_self(), w->self))
		w->off_thread_visit = true;
	if (w->n_order < 64)
		snprintf(w->order[w->n_order++], 256, "%s", path + strlen(root));
	__atomic_add_fetch(&w->visited, 1, __ATOMIC_SEQ_CST);
	if (w->visit_ms)
		sleep_ms(w->visit_ms);
}

static void on_problem(void *ctx, const char *path, const char *problem)
{
	struct walk *w = ctx;
	if (w->n_problems < 8)
		snprintf(w->problems[w->n_problems++], 256, "%s: %s", path + strlen(root), problem);
}

static void walk(struct walk *w, unsigned threads)
{
	memset(w, 0, sizeof *w);
	w->self = pthread_self();
	struct probe_tree_visitor v = { w, want_file, on_file, on_problem, NULL };
	probe_tree_walk(root, threads, &v);
}

static void make_root(const char *name)
{
	snprintf(root, sizeof root, "%s/kimg-tree-%s.%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name,
		 (int)getpid());
	rm_tree(root);
	ck_assert_int_eq(mkdir(root, 0700), 0);
}

/* b/, a/ and files made out of order: the visit is by name, depth first,
 * the same for 1 and 4 threads, all on the calling thread. */
START_TEST(visit_in_name_order)
{
	make_root("order");
	static const char *const dirs[] = { "/b", "/a", "/a/z", "/a/c" };
	static const char *const files[] = { "/b/2", "/b/1", "/a/z/9", "/a/c/x", "/a/m", "/0", "/a/c/w" };
	static const char *const want[] = { "/0", "/a/c/w", "/a/c/x", "/a/m", "/a/z/9", "/b/1", "/b/2" };
	char path[512];
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(path, sizeof path, "%s%s", root, dirs[i]);
		ck_assert_int_eq(mkdir(path, 0700), 0);
	}
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s%s", root, files[i]);
		put_file(path);
	}
	snprintf(path, sizeof path, "%s/a/fifo", root);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	for (unsigned threads = 1; threads <= 4; threads += 3) {
		struct walk w;
		walk(&w, threads);
		ck_assert_int_eq(w.n_order, (int)(sizeof want / sizeof want[0]));
		for (int i = 0; i < w.n_order; i++)
			ck_assert_msg(strcmp(w.order[i], want[i]) == 0, "-j %u: file %d is %s, want %s", threads, i,
				      w.order[i], want[i]);
		ck_assert_msg(!w.off_thread_visit, "-j %u: on_file called off the walking thread", threads);
		ck_assert_int_eq(w.n_problems, 0);
	}
	rm_tree(root);
}
END_TEST

/* A chain of 30 directories of 3 files each (90 files), visited slowly
 * (2 ms a file) by 4 threads: the listers may run ahead of the visit by
 * the window and the directory in a lister's hands (3 files + 1 dir), no
 * further; without the back-pressure they list all 90 at once. */
START_TEST(listers_stay_within_the_window)
{
	make_root("ahead");
	char path[512];
	size_t len = (size_t)snprintf(path, sizeof path, "%s", root);
	for (int d = 0; d < 30; d++) {
		len += (size_t)snprintf(path + len, sizeof path - len, "/d");
		ck_assert_int_eq(mkdir(path, 0700), 0);
		for (int f = 0; f < 3; f++) {
			char file[600];
			snprintf(file, sizeof file, "%s/a%d", path, f); /* before "d" */
			put_file(file);
		}
	}
	struct walk w;
	memset(&w, 0, sizeof w);
	w.self = pthread_self();
	w.visit_ms = 2;
	struct probe_tree_visitor v = { &w, want_file, on_file, on_problem, NULL };
	probe_tree_walk(root, 4, &v);
	ck_assert_int_eq(atomic_load(&w.listed), 90);
	ck_assert_int_eq(w.visited, 90);
	ck_assert_msg(atomic_load(&w.max_ahead) <= AHEAD_WINDOW + 4, "%d files listed ahead of the visit (window %d)",
		      atomic_load(&w.max_ahead), AHEAD_WINDOW);
	rm_tree(root);
}
END_TEST

/* Deeper than PROBE_WALK_MAX_DEPTH: one problem, the files above it visited. */
START_TEST(depth_cap)
{
	make_root("deep");
	char path[1024];
	size_t len = (size_t)snprintf(path, sizeof path, "%s", root);
	for (int d = 0; d < PROBE_WALK_MAX_DEPTH + 2; d++) {
		len += (size_t)snprintf(path + len, sizeof path - len, "/d");
		ck_assert_int_eq(mkdir(path, 0700), 0);
	}
	snprintf(path, sizeof path, "%s/top", root);
	put_file(path);
	struct walk w;
	walk(&w, 2);
	ck_assert_int_eq(w.n_order, 1);
	ck_assert_str_eq(w.order[0], "/top");
	ck_assert_int_eq(w.n_problems, 1);
	ck_assert_msg(strstr(w.problems[0], "directories nested too deeply") != NULL, "%s", w.problems[0]);
	rm_tree(root);
}
END_TEST

/* A root that is not there: one problem naming it, nothing visited. */
START_TEST(missing_root)
{
	snprintf(root, sizeof root, "/nonexistent/kimg-tree");
	struct walk w;
	walk(&w, 3);
	ck_assert_int_eq(w.n_order, 0);
	ck_assert_int_eq(w.n_problems, 1);
}
END_TEST

static Suite *tree_suite(void)
{
	Suite *s = suite_create("tree");
	TCase *tc = tcase_create("tree");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, visit_in_name_order);
	tcase_add_test(tc, listers_stay_within_the_window);
	tcase_add_test(tc, depth_cap);
	tcase_add_test(tc, missing_root);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(tree_suite());
}
