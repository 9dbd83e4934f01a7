/* The report sink: the KIMG_LOG file or stderr.
 *
 * The file is opened on the first report, not in the constructor, so a
 * program that never fails never creates it. O_APPEND plus one write() per
 * report keeps reports from several processes (MPI ranks, DataLoader
 * workers) sharing one file from interleaving mid-line. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

#include "diag.h"

/* -1: not opened yet; -2: open failed, use stderr; else the fd. */
static _Atomic int log_fd = -1;

static int log_target(void)
{
	int fd = atomic_load_explicit(&log_fd, memory_order_acquire);
	if (fd != -1)
		return fd >= 0 ? fd : STDERR_FILENO;
	if (!kimg_opts.log_path[0])
		return STDERR_FILENO;
	int opened = open(kimg_opts.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	int want = opened >= 0 ? opened : -2;
	int expected = -1;
	if (!atomic_compare_exchange_strong_explicit(&log_fd, &expected, want, memory_order_acq_rel,
						     memory_order_acquire)) {
		/* another thread opened it first: use theirs */
		if (opened >= 0)
			close(opened);
		return expected >= 0 ? expected : STDERR_FILENO;
	}
	if (opened < 0) {
		static const char msg[] = "kimg: warning: cannot open KIMG_LOG file; reporting to stderr\n";
		if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
			/* nothing more can be done */
		}
		return STDERR_FILENO;
	}
	return opened;
}

static void write_fd(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		len -= (size_t)w;
	}
}

void kimg_log_write(const char *buf, size_t len)
{
	write_fd(log_target(), buf, len);
}

/* A KIMG_FORMAT=json log holds JSON objects only, one per line, so any
 * JSON Lines reader can take it whole; the banner and the summary are for
 * people and go to stderr then. */
void kimg_log_write_human(const char *buf, size_t len)
{
	if (kimg_opts.format == KIMG_FORMAT_JSON)
		write_fd(STDERR_FILENO, buf, len);
	else
		kimg_log_write(buf, len);
}

void kimg_options_print_banner(void)
{
	char line[1024];
	if (!kimg_opts.verbose)
		return;
	size_t n = kimg_options_banner(&kimg_opts, &kimg_env, line, sizeof line);
	kimg_log_write_human(line, n);
}
