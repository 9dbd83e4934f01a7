/* SPDX-License-Identifier: Apache-2.0 */
/* The report sink: the KIMG_LOG file or stderr.
 *
 * The file is opened on the first report, not in the constructor, so a
 * program that never fails never creates it. O_APPEND plus one write() per
 * report keeps reports from several processes (MPI ranks, DataLoader
 * workers) sharing one file from interleaving mid-line.
 *
 * kimg is a guest in the process, and on a shared machine the log's name
 * may be predictable (/tmp/kimg-%p.log), so the file is opened like a
 * careful daemon opens one (log_open.c): created new or checked, never
 * through a symbolic link. Anything else: stderr, and one line saying why.
 * The log is written without blocking: a report a stalled reader has no
 * room for is dropped and counted, and the count said at exit.
 *
 * A write must not change the host either: SIGPIPE is blocked around it
 * (a closed stderr pipe would kill the program), EPIPE ends reporting to
 * that target quietly, and a failing log file (full disk) hands over to
 * stderr once, saying why. After fork() a %p log is opened again under the
 * child's own pid. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "diag_internal.h"

/* The target and the pid it was chosen in, in one word so that a reader
 * never pairs one process's fd with another's pid: fd in the low 32 bits,
 * pid in the high. fd -1: not chosen yet; -2: stderr. */
#define TARGET_NONE (-1)
#define TARGET_STDERR (-2)
static _Atomic uint64_t log_state = (uint64_t)(uint32_t)TARGET_NONE;

/* EPIPE seen: the reader is gone, stop writing there. */
static _Atomic int log_closed, stderr_closed;

static uint64_t pack(int fd, long pid)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)fd;
}

static int state_fd(uint64_t s)
{
	return (int)(int32_t)(uint32_t)s;
}

static long state_pid(uint64_t s)
{
	return (long)(int32_t)(uint32_t)(s >> 32);
}

/* How long a report half written to a stalled reader may wait for room. */
#define KIMG_LOG_STALL_MS 200

/* Reports not written because the log's reader did not read (EAGAIN). */
static _Atomic unsigned long log_dropped;

/* The whole buffer, or the errno that stopped it (0: all written).
 * SIGPIPE is blocked for this thread during the write and a SIGPIPE the
 * write raised is taken back, unless one was pending already (the host's). */
static int write_all(int fd, const char *buf, size_t len)
{
	sigset_t pipe_only, old, pending;
	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
	/* per thread on Linux; pthread_sigmask moved to libc in glibc 2.32
	 * under a new symbol version */
	bool blocked = sigprocmask(SIG_BLOCK, &pipe_only, &old) == 0;
	int err = 0;
	size_t written = 0;
	int waited_ms = 0;
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		/* a non-blocking log whose reader is slow: a report begun is
		 * finished if room comes soon (a line is not torn for a short
		 * stall), one not begun is dropped at once */
		if (w < 0 && errno == EAGAIN && written > 0 && waited_ms < KIMG_LOG_STALL_MS) {
			struct pollfd p = { fd, POLLOUT, 0 };
			int r = poll(&p, 1, 10);
			if (r >= 0 || errno == EINTR) {
				waited_ms += 10;
				continue;
			}
		}
		if (w <= 0) {
			err = w < 0 ? errno : EIO;
			break;
		}
		buf += w;
		len -= (size_t)w;
		written += (size_t)w;
	}
	if (err == EPIPE && blocked && !was_pending) {
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR) {
		}
	}
	if (blocked)
		sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

static void write_stderr(const char *buf, size_t len);

static void say(const char *msg)
{
	write_stderr(msg, strlen(msg));
}

/* Expand %p %h %r %% into out; false when the result does not fit or a %
 * is followed by anything else. %h and %r come from env (recorded by
 * kimg_options_parse), so a forked child expands the same spec again with
 * only its pid changed. */
bool kimg_log_path_expand(const char *spec, long pid, const struct kimg_env_snapshot *env, char *out, size_t size)
{
	char num[24];
	size_t n = 0;
	for (const char *s = spec; *s; s++) {
		const char *piece = s;
		size_t len = 1;
		if (*s == '%') {
			switch (s[1]) {
			case 'p':
				snprintf(num, sizeof num, "%ld", pid);
				piece = num;
				break;
			case 'h':
				piece = env->host[0] ? env->host : "localhost";
				break;
			case 'r':
				piece = env->rank_text[0] ? env->rank_text : "0";
				break;
			case '%':
				piece = "%";
				break;
			default:
				return false;
			}
			len = strlen(piece);
			s++;
		}
		if (len >= size - n)
			return false;
		memcpy(out + n, piece, len);
		n += len;
	}
	out[n] = '\0';
	return true;
}

/* This process's KIMG_LOG path: the constructor's expansion, or %p again
 * with the pid of a forked child. */
static bool current_path(long pid, char *out, size_t size)
{
	if (!kimg_env.log_per_process) {
		snprintf(out, size, "%s", kimg_opts.log_path);
		return true;
	}
	return kimg_log_path_expand(kimg_env.log_spec, pid, &kimg_env, out, size);
}

/* The fd to write to: the log (opened on first use), or stderr. */
static int log_target(void)
{
	if (!kimg_opts.log_path[0])
		return STDERR_FILENO;
	uint64_t s = atomic_load_explicit(&log_state, memory_order_acquire);
	long pid = 0;
	if (state_fd(s) != TARGET_NONE) {
		if (!kimg_env.log_per_process)
			return state_fd(s) >= 0 ? state_fd(s) : STDERR_FILENO;
		pid = (long)getpid(); /* a syscall, on the report path only */
		if (state_pid(s) == pid)
			return state_fd(s) >= 0 ? state_fd(s) : STDERR_FILENO;
		/* forked: the parent's %p file is not ours. Its fd stays open
		 * (closing it could hit a descriptor a racing thread writes to);
		 * it is O_CLOEXEC and goes at the next exec. */
		if (!atomic_compare_exchange_strong(&log_state, &s, (uint64_t)(uint32_t)TARGET_NONE) &&
		    state_fd(s) != TARGET_NONE && state_pid(s) == pid)
			return state_fd(s) >= 0 ? state_fd(s) : STDERR_FILENO;
		atomic_store(&log_closed, 0);
	} else {
		pid = (long)getpid();
	}
	char path[sizeof kimg_opts.log_path];
	char why[sizeof path + 128];
	int fd = -1;
	if (current_path(pid, path, sizeof path))
		fd = kimg_log_open(path, why, sizeof why);
	else
		snprintf(why, sizeof why, "KIMG_LOG=%.400s: the name is too long for pid %ld", kimg_env.log_spec, pid);
	uint64_t expected = (uint64_t)(uint32_t)TARGET_NONE;
	if (!atomic_compare_exchange_strong_explicit(&log_state, &expected, pack(fd >= 0 ? fd : TARGET_STDERR, pid),
						     memory_order_acq_rel, memory_order_acquire)) {
		/* another thread chose first: use theirs */
		if (fd > STDERR_FILENO)
			close(fd);
		return state_fd(expected) >= 0 ? state_fd(expected) : STDERR_FILENO;
	}
	if (fd < 0) {
		char line[sizeof why + 64];
		snprintf(line, sizeof line, "kimg: warning: %s; reporting to stderr\n", why);
		say(line);
		return STDERR_FILENO;
	}
	return fd;
}

/* The log file failed with err (ENOSPC, EIO, EDQUOT...): stderr from now
 * on, said once by the thread that makes the switch. */
static void give_up_log(int fd, int err)
{
	uint64_t s = atomic_load(&log_state);
	if (state_fd(s) != fd || !atomic_compare_exchange_strong(&log_state, &s, pack(TARGET_STDERR, state_pid(s))))
		return;
	char path[sizeof kimg_opts.log_path];
	char line[sizeof path + 160];
	if (!current_path(state_pid(s), path, sizeof path))
		snprintf(path, sizeof path, "%s", kimg_opts.log_path);
	snprintf(line, sizeof line, "kimg: warning: cannot write KIMG_LOG file %s: %s; reporting to stderr from now on\n",
		 path, strerror(err));
	say(line);
}

static void write_stderr(const char *buf, size_t len)
{
	if (!atomic_load(&stderr_closed) && write_all(STDERR_FILENO, buf, len) == EPIPE)
		atomic_store(&stderr_closed, 1);
}

void kimg_log_stderr(const char *buf, size_t len)
{
	int saved_errno = errno;
	write_stderr(buf, len);
	errno = saved_errno;
}

void kimg_log_write(const char *buf, size_t len)
{
	int saved_errno = errno;
	int fd = log_target();
	if (fd == STDERR_FILENO) {
		write_stderr(buf, len);
	} else if (!atomic_load(&log_closed)) {
		int err = write_all(fd, buf, len);
		if (err == EPIPE) {
			atomic_store(&log_closed, 1); /* a FIFO whose reader left */
		} else if (err == EAGAIN) {
			atomic_fetch_add(&log_dropped, 1);
		} else if (err != 0) {
			give_up_log(fd, err);
			write_stderr(buf, len); /* the whole report, not the rest */
		}
	}
	errno = saved_errno;
}

/* A KIMG_FORMAT=json log holds JSON objects only, one per line, so any
 * JSON Lines reader can take it whole; the banner and the summary are for
 * people and go to stderr then. */
void kimg_log_write_human(const char *buf, size_t len)
{
	if (kimg_opts.format == KIMG_FORMAT_JSON) {
		int saved_errno = errno;
		write_stderr(buf, len);
		errno = saved_errno;
	} else {
		kimg_log_write(buf, len);
	}
}

/* At exit: how many reports a reader that did not read cost, on stderr
 * (the log is the target that would not take them). */
void kimg_log_say_dropped(void)
{
	unsigned long n = atomic_load(&log_dropped);
	if (n == 0)
		return;
	char path[sizeof kimg_opts.log_path];
	char line[sizeof path + 200];
	if (!current_path((long)getpid(), path, sizeof path))
		snprintf(path, sizeof path, "%s", kimg_opts.log_path);
	snprintf(line, sizeof line,
		 "kimg: warning: %lu report%s not written to KIMG_LOG file %s: its reader was not reading, and "
		 "kimg does not make the program wait\n",
		 n, n == 1 ? "" : "s", path);
	say(line);
}
