/* sys/file.c: mapping inputs (sys/file.h contract): regular files by mmap,
 * pipes by read(), devices refused, errors carrying errno text. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
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
	suite_add_tcase(s, tc);
	return run_suite(s);
}
