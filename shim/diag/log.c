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
 * careful daemon opens one: created new (O_EXCL, mode 0600), or, when it
 * exists, used only if it is a regular file of this user with no other
 * link, a pipe or socket, or a terminal, /dev/null or /dev/full; never
 * through a symbolic link. Anything else: stderr, and one line saying why.
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

/* Raw fstat: the glibc wrapper got a new symbol version in 2.33, which
 * would raise libkimg's glibc baseline (tests/scripts/glibc_baseline.sh);
 * the kernel's struct stat is glibc's on x86-64 and aarch64. */
static int raw_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

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
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? errno : EIO;
			break;
		}
		buf += w;
		len -= (size_t)w;
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

/* Character devices a report may go to: terminals, /dev/null (1,3) and
 * /dev/full (1,7), whose numbers are the same on every Linux. */
static bool harmless_device(int fd, const struct stat *st)
{
	return isatty(fd) || st->st_rdev == 0x103 || st->st_rdev == 0x107;
}

/* Open the log at path; -1 with why filled when it must not be used. */
static int open_log(const char *path, char *why, size_t size)
{
	/* the names of the process's own streams: they are symbolic links
	 * into /proc, which O_NOFOLLOW would refuse */
	if (strcmp(path, "/dev/stderr") == 0)
		return STDERR_FILENO;
	if (strcmp(path, "/dev/stdout") == 0)
		return STDOUT_FILENO;
	for (int attempt = 0; attempt < 2; attempt++) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd >= 0)
			return fd; /* a new file: ours */
		if (errno != EEXIST)
			break;
		/* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of
		 * blocking the program here */
		fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* removed in between: create it */
			break;
		}
		struct stat st;
		const char *bad = NULL;
		char owner[64];
		if (raw_fstat(fd, &st) != 0) {
			bad = "cannot be examined (fstat failed)";
		} else if (S_ISREG(st.st_mode)) {
			if (st.st_uid != geteuid()) {
				snprintf(owner, sizeof owner, "belongs to another user (uid %lu)", (unsigned long)st.st_uid);
				bad = owner;
			} else if (st.st_nlink != 1) {
				bad = "has other hard links";
			}
		} else if (S_ISCHR(st.st_mode)) {
			if (!harmless_device(fd, &st))
				bad = "is a device other than a terminal, /dev/null or /dev/full";
		} else if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) {
			bad = "is not a regular file, pipe, socket or terminal";
		}
		if (bad) {
			close(fd);
			snprintf(why, size, "KIMG_LOG file %s is not used: it %s", path, bad);
			return -1;
		}
		int flags = fcntl(fd, F_GETFL);
		if (flags >= 0)
			fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
		return fd;
	}
	if (errno == ELOOP)
		snprintf(why, size, "KIMG_LOG file %s is not used: it is a symbolic link", path);
	else if (errno == ENXIO)
		snprintf(why, size, "KIMG_LOG file %s is not used: it is a FIFO with no reader", path);
	else
		snprintf(why, size, "cannot open KIMG_LOG file %s: %s", path, strerror(errno));
	return -1;
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
		fd = open_log(path, why, sizeof why);
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
		} else if (err != 0 && err != EAGAIN) {
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
