/* SPDX-License-Identifier: Apache-2.0 */
/* sys/file.c: mapping inputs (sys/file.h contract): regular files by mmap,
 * pipes by read(), devices refused, errors carrying errno text. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "file.h"

static char dir[] = "/tmp/kimg-test-file.XXXXXX";

static void make_dir(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	fclose(f);
}

START_TEST(regular_file_maps_exact_bytes)
{
	char path[256];
	unsigned char data[10000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(i * 7);
	make_dir();
	snprintf(path, sizeof path, "%s/f.bin", dir);
	write_file(path, data, sizeof data);
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_file_open(path, &f, &err), 0);
	ck_assert_uint_eq(f.bytes.size, sizeof data);
	ck_assert_int_eq(memcmp(f.bytes.data, data, sizeof data), 0);
	ck_assert_ptr_nonnull(f.map); /* mmap, not a copy: scans touch only headers */
	ck_assert_ptr_null(f.buf);
	kimg_file_close(&f);
	ck_assert_ptr_null(f.map);
	ck_assert_uint_eq(f.bytes.size, 0);
}
END_TEST

START_TEST(empty_file_is_an_empty_span_not_an_error)
{
	char path[256];
	make_dir();
	snprintf(path, sizeof path, "%s/empty", dir);
	write_file(path, "", 0);
	struct kimg_file f;
	ck_assert_int_eq(kimg_file_open(path, &f, NULL), 0);
	ck_assert_uint_eq(f.bytes.size, 0);
	kimg_file_close(&f);
}
END_TEST

START_TEST(missing_file_is_enoent_with_strerror_text)
{
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_file_open("/nonexistent/kimg/x", &f, &err), -ENOENT);
	ck_assert_int_eq(err.code, -ENOENT);
	ck_assert_str_eq(err.what, "No such file or directory");
}
END_TEST

START_TEST(directory_is_eisdir)
{
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_file_open("/tmp", &f, &err), -EISDIR);
	ck_assert_str_eq(err.what, "Is a directory");
}
END_TEST

START_TEST(dev_zero_is_refused_instead_of_read_forever)
{
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_file_open("/dev/zero", &f, &err), -ENODEV);
	ck_assert_str_eq(err.what, "not a regular file, pipe or terminal");
}
END_TEST

START_TEST(pipe_is_read_whole)
{
	int fds[2];
	char path[64], data[100000];
	memset(data, 'x', sizeof data);
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) { /* writer: more than a pipe buffer, so reads must loop */
		close(fds[0]);
		ssize_t left = sizeof data;
		while (left > 0) {
			ssize_t n = write(fds[1], data + sizeof data - left, (size_t)left);
			if (n <= 0)
				_exit(1);
			left -= n;
		}
		_exit(0);
	}
	close(fds[1]);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_file_open(path, &f, &err), 0);
	ck_assert_uint_eq(f.bytes.size, sizeof data);
	ck_assert_ptr_null(f.map);
	ck_assert_ptr_nonnull(f.buf);
	kimg_file_close(&f);
	close(fds[0]);
}
END_TEST

START_TEST(fifo_without_writer_reads_empty_at_once)
{
	char path[256];
	make_dir();
	snprintf(path, sizeof path, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	struct kimg_file f;
	ck_assert_int_eq(kimg_file_open(path, &f, NULL), 0);
	ck_assert_uint_eq(f.bytes.size, 0);
	kimg_file_close(&f);
}
END_TEST

START_TEST(close_of_a_zeroed_file_is_harmless)
{
	struct kimg_file f;
	memset(&f, 0, sizeof f);
	kimg_file_close(&f);
	ck_assert_ptr_null(f.buf);
}
END_TEST

/* issue 12 item 3: a mapped file that shrinks while it is read. Without
 * the guard the read past the new end kills the test with SIGBUS. */
struct shrink_ctx {
	const char *path;
	const struct kimg_file *f;
	uint64_t read_at;
	volatile unsigned sum;
	bool reached_end;
};

static void shrink_then_read(void *ctx)
{
	struct shrink_ctx *c = ctx;
	ck_assert_int_eq(truncate(c->path, 0), 0);
	c->sum += c->f->bytes.data[c->read_at]; /* faults: the page is gone */
	c->reached_end = true;
}

static void just_read(void *ctx)
{
	struct shrink_ctx *c = ctx;
	c->sum += c->f->bytes.data[c->read_at];
	c->reached_end = true;
}

START_TEST(file_shrinking_while_read_is_eio_not_sigbus)
{
	char path[256];
	static unsigned char data[1 << 16];
	memset(data, 0x5a, sizeof data);
	make_dir();
	snprintf(path, sizeof path, "%s/shrinks.bin", dir);
	write_file(path, data, sizeof data);
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_file_open(path, &f, &err), 0);
	ck_assert_ptr_nonnull(f.map);
	struct shrink_ctx c = { path, &f, 40000, 0, false };
	/* An untouched file: fn runs to its end. */
	ck_assert_int_eq(kimg_file_guard(&f, just_read, &c, &err), 0);
	ck_assert(c.reached_end);
	c.reached_end = false;
	c.read_at = 50000;
	ck_assert_int_eq(kimg_file_guard(&f, shrink_then_read, &c, &err), -EIO);
	ck_assert(!c.reached_end);
	ck_assert_str_eq(err.what, "file changed while it was read");
	/* The handler is gone again and a second guard works the same way. */
	kimg_file_close(&f);
	write_file(path, data, sizeof data);
	ck_assert_int_eq(kimg_file_open(path, &f, &err), 0);
	c.f = &f;
	ck_assert_int_eq(kimg_file_guard(&f, shrink_then_read, &c, &err), -EIO);
	struct sigaction now;
	sigaction(SIGBUS, NULL, &now);
	ck_assert(now.sa_handler == SIG_DFL);
	kimg_file_close(&f);
}
END_TEST

/* A SIGBUS in a mapping that neither the active guard nor a file added
 * to it (kimg_file_guard_add) holds is not kimg's: its previous
 * disposition (here the default) ends the process with SIGBUS, after the
 * handler has looked at each added file and no further. */
struct unheld_ctx {
	const char *path;
	struct kimg_file *added, *other;
	volatile unsigned sum;
};

static void add_then_fault_elsewhere(void *ctx)
{
	struct unheld_ctx *c = ctx;
	ck_assert_int_eq(kimg_file_guard_add(c->added), 0);
	ck_assert_int_eq(truncate(c->path, 0), 0);
	c->sum += c->other->bytes.data[50000]; /* SIGBUS, in no guarded file */
}

START_TEST(sigbus_outside_guarded_files_keeps_its_disposition)
{
	char pa[256], pb[256], pc[256];
	static unsigned char data[1 << 16];
	memset(data, 0x5a, sizeof data);
	make_dir();
	snprintf(pa, sizeof pa, "%s/a.bin", dir);
	snprintf(pb, sizeof pb, "%s/b.bin", dir);
	snprintf(pc, sizeof pc, "%s/c.bin", dir);
	write_file(pa, data, sizeof data);
	write_file(pb, data, sizeof data);
	write_file(pc, data, sizeof data);
	struct kimg_file a, b, c;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_file_open(pa, &a, &err), 0);
	ck_assert_int_eq(kimg_file_open(pb, &b, &err), 0);
	ck_assert_int_eq(kimg_file_open(pc, &c, &err), 0);
	ck_assert(a.map && b.map && c.map);
	struct unheld_ctx u = { pc, &b, &c, 0 };
	kimg_file_guard(&a, add_then_fault_elsewhere, &u, &err);
	ck_abort_msg("the read of the truncated, unguarded file did not end the process");
}
END_TEST

/* The guard of the file that shrank catches it, also from inside the guard
 * of another file (thin archive members are read inside their archive's). */
struct nest_ctx {
	struct kimg_file *inner;
	struct shrink_ctx *shrink;
	int inner_rc;
};

static void nested(void *ctx)
{
	struct nest_ctx *n = ctx;
	struct kimg_error err = { 0, 0, "" };
	n->inner_rc = kimg_file_guard(n->inner, shrink_then_read, n->shrink, &err);
}

START_TEST(nested_guards_the_shrunk_file_wins)
{
	char a[256], b[256];
	static unsigned char data[1 << 16];
	make_dir();
	snprintf(a, sizeof a, "%s/outer.bin", dir);
	snprintf(b, sizeof b, "%s/inner.bin", dir);
	write_file(a, data, sizeof data);
	write_file(b, data, sizeof data);
	struct kimg_file fa, fb;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_file_open(a, &fa, &err), 0);
	ck_assert_int_eq(kimg_file_open(b, &fb, &err), 0);
	/* The outer file shrinks while the inner guard runs: the outer guard gets it. */
	struct shrink_ctx c = { a, &fa, 60000, 0, false };
	struct nest_ctx n = { &fb, &c, 12345 };
	ck_assert_int_eq(kimg_file_guard(&fa, nested, &n, &err), -EIO);
	ck_assert_int_eq(n.inner_rc, 12345); /* the inner call never returned */
	kimg_file_close(&fa);
	/* The inner file shrinks: the inner guard gets it, the outer goes on. */
	write_file(a, data, sizeof data);
	ck_assert_int_eq(kimg_file_open(a, &fa, &err), 0);
	struct shrink_ctx c2 = { b, &fb, 60000, 0, false };
	struct nest_ctx n2 = { &fb, &c2, 12345 };
	ck_assert_int_eq(kimg_file_guard(&fa, nested, &n2, &err), 0);
	ck_assert_int_eq(n2.inner_rc, -EIO);
	kimg_file_close(&fa);
	kimg_file_close(&fb);
}
END_TEST

/* issue 15: guards are per thread. Four threads each read their own file
 * under their own guard at the same time; one file shrinks: only its
 * thread's guard trips, the others run to their end, and the handler is
 * gone once all have left. */
struct thread_read {
	struct kimg_file f;
	struct shrink_ctx c;
	bool shrink;
	int rc;
	pthread_barrier_t *together;
};

static void read_together(void *ctx)
{
	struct thread_read *t = ctx;
	pthread_barrier_wait(t->together); /* every thread inside its guard */
	if (t->shrink)
		shrink_then_read(&t->c);
	else
		just_read(&t->c);
}

static void *guarded_reader(void *arg)
{
	struct thread_read *t = arg;
	struct kimg_error err = { 0, 0, "" };
	t->rc = kimg_file_guard(&t->f, read_together, t, &err);
	return NULL;
}

START_TEST(threads_guard_their_own_files)
{
	static unsigned char data[1 << 16];
	char path[4][256];
	struct thread_read t[4];
	pthread_t th[4];
	pthread_barrier_t together;
	struct kimg_error err = { 0, 0, "" };
	memset(data, 0x11, sizeof data);
	make_dir();
	pthread_barrier_init(&together, NULL, 4);
	for (int i = 0; i < 4; i++) {
		snprintf(path[i], sizeof path[i], "%s/thread%d.bin", dir, i);
		write_file(path[i], data, sizeof data);
		memset(&t[i], 0, sizeof t[i]);
		ck_assert_int_eq(kimg_file_open(path[i], &t[i].f, &err), 0);
		t[i].c = (struct shrink_ctx){ path[i], &t[i].f, 50000, 0, false };
		t[i].shrink = i == 2;
		t[i].rc = 12345;
		t[i].together = &together;
	}
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, guarded_reader, &t[i]), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(t[i].rc, i == 2 ? -EIO : 0);
		ck_assert(t[i].c.reached_end == (i != 2));
		kimg_file_close(&t[i].f);
	}
	struct sigaction now;
	sigaction(SIGBUS, NULL, &now);
	ck_assert(now.sa_handler == SIG_DFL);
	pthread_barrier_destroy(&together);
}
END_TEST

/* kimg_file_guard_fail leaves the innermost guard as a SIGBUS would; with
 * no guard active it returns. */
static void fail_here(void *ctx)
{
	bool *after = ctx;
	kimg_file_guard_fail();
	*after = true;
}

START_TEST(guard_fail_leaves_the_innermost_guard)
{
	static unsigned char data[8192];
	char path[256];
	make_dir();
	snprintf(path, sizeof path, "%s/fail.bin", dir);
	write_file(path, data, sizeof data);
	struct kimg_file f;
	struct kimg_error err = { 0, 0, "" };
	ck_assert_int_eq(kimg_file_open(path, &f, &err), 0);
	bool after = false;
	ck_assert_int_eq(kimg_file_guard(&f, fail_here, &after, &err), -EIO);
	ck_assert(!after);
	ck_assert_str_eq(err.what, "file changed while it was read");
	kimg_file_guard_fail(); /* no guard: nothing happens */
	struct sigaction now;
	sigaction(SIGBUS, NULL, &now);
	ck_assert(now.sa_handler == SIG_DFL);
	kimg_file_close(&f);
}
END_TEST

/* issue 15: in a walk, files below the threshold are read, not mapped;
 * at the threshold and above they are mapped; the bytes are the same. */
START_TEST(small_files_are_read_large_ones_mapped)
{
	char path[256];
	static unsigned char data[KIMG_FILE_SMALL_READ + 1];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(i * 13 + 1);
	make_dir();
	snprintf(path, sizeof path, "%s/sized.bin", dir);
	const size_t sizes[] = { 1, 10000, KIMG_FILE_SMALL_READ - 1, KIMG_FILE_SMALL_READ, KIMG_FILE_SMALL_READ + 1 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		write_file(path, data, sizes[k]);
		struct kimg_file f;
		struct kimg_error err = { 0, 0, "" };
		ck_assert_int_eq(kimg_file_open_small_read(path, &f, KIMG_FILE_SMALL_READ, &err), 0);
		ck_assert_uint_eq(f.bytes.size, sizes[k]);
		ck_assert_int_eq(memcmp(f.bytes.data, data, sizes[k]), 0);
		if (sizes[k] < KIMG_FILE_SMALL_READ) {
			ck_assert_ptr_null(f.map);
			ck_assert_ptr_nonnull(f.buf);
		} else {
			ck_assert_ptr_nonnull(f.map);
			ck_assert_ptr_null(f.buf);
		}
		kimg_file_close(&f);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("file");
	TCase *tc = tcase_create("file");
	tcase_add_test(tc, regular_file_maps_exact_bytes);
	tcase_add_test(tc, empty_file_is_an_empty_span_not_an_error);
	tcase_add_test(tc, missing_file_is_enoent_with_strerror_text);
	tcase_add_test(tc, directory_is_eisdir);
	tcase_add_test(tc, dev_zero_is_refused_instead_of_read_forever);
	tcase_add_test(tc, pipe_is_read_whole);
	tcase_add_test(tc, fifo_without_writer_reads_empty_at_once);
	tcase_add_test(tc, close_of_a_zeroed_file_is_harmless);
	tcase_add_test(tc, file_shrinking_while_read_is_eio_not_sigbus);
	tcase_add_test(tc, nested_guards_the_shrunk_file_wins);
	tcase_add_test_raise_signal(tc, sigbus_outside_guarded_files_keeps_its_disposition, SIGBUS);
	tcase_add_test(tc, threads_guard_their_own_files);
	tcase_add_test(tc, guard_fail_leaves_the_innermost_guard);
	tcase_add_test(tc, small_files_are_read_large_ones_mapped);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
