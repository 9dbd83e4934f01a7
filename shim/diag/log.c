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
#include <poll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

/* Character devices a report may go to: /dev/null (1,3) and /dev/full
 * (1,7), whose numbers are the same on every Linux, and terminals. */
static bool null_device(const struct stat *st)
{
	return st->st_rdev == 0x103 || st->st_rdev == 0x107;
}

/* File systems whose files are controls, not storage: a report written to
 * /proc/self/comm renames the process, one to /proc/sys or /sys changes the
 * kernel. Magic numbers from <linux/magic.h>; a kernel without one of them
 * simply never reports it. */
static const struct {
	unsigned long magic;
	const char *name;
} pseudo_fs[] = {
	{ 0x9fa0, "proc" },	       { 0x62656572, "sysfs" },	    { 0x27e0eb, "cgroup" },
	{ 0x63677270, "cgroup2" },     { 0x64626720, "debugfs" },   { 0x74726163, "tracefs" },
	{ 0x73636673, "securityfs" },  { 0xcafe4a11, "bpf" },	    { 0x62656570, "configfs" },
	{ 0xde5e81e4, "efivarfs" },    { 0x6165676c, "pstore" },    { 0xf97cff8c, "selinuxfs" },
	{ 0x43415d53, "smackfs" },     { 0x65735543, "fusectl" },   { 0x42494e4d, "binfmt_misc" },
	{ 0x6e736673, "nsfs" },	       { 0x50495045, "pipefs" },    { 0x534f434b, "sockfs" },
};

/* The pseudo file system fd lives on, or NULL for an ordinary one. Raw
 * fstatfs, like raw_fstat: the kernel's struct statfs is glibc's on the
 * 64-bit targets. */
static const char *pseudo_fs_of(int fd)
{
	struct statfs sfs;
	if (syscall(SYS_fstatfs, fd, &sfs) != 0)
		return "unknown (fstatfs failed)";
	for (size_t i = 0; i < sizeof pseudo_fs / sizeof pseudo_fs[0]; i++)
		if ((unsigned long)sfs.f_type == pseudo_fs[i].magic)
			return pseudo_fs[i].name;
	return NULL;
}

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on x86-64 and aarch64 */
#endif
struct kimg_open_how {
	uint64_t flags, mode, resolve;
};
#define KIMG_RESOLVE_NO_MAGICLINKS 0x02
#define KIMG_RESOLVE_NO_SYMLINKS 0x04

/* dir opened O_PATH without following a symbolic link anywhere on the
 * way, by walking it one name at a time (a kernel without openat2, or a
 * seccomp filter that refuses it). ELOOP when one is a link. */
int kimg_log_walk_dir(const char *dir)
{
	int fd = open(dir[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (const char *s = dir; fd >= 0 && *s;) {
		while (*s == '/')
			s++;
		size_t len = strcspn(s, "/");
		if (len == 0)
			break;
		char name[256];
		if (len >= sizeof name) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(name, s, len);
		name[len] = '\0';
		s += len;
		if (strcmp(name, ".") == 0)
			continue;
		int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		int err = 0;
		if (next < 0)
			err = errno;
		else if (raw_fstat(next, &st) != 0)
			err = errno;
		else if (S_ISLNK(st.st_mode))
			err = ELOOP;
		else if (!S_ISDIR(st.st_mode))
			err = ENOTDIR;
		close(fd);
		if (err) {
			if (next >= 0)
				close(next);
			errno = err;
			return -1;
		}
		fd = next;
	}
	return fd;
}

/* The directory part of a KIMG_LOG path, opened without symbolic links:
 * openat2(RESOLVE_NO_SYMLINKS) where the kernel has it, else the walk. */
static int open_dir(const char *dir)
{
	struct kimg_open_how how = { O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
				     KIMG_RESOLVE_NO_SYMLINKS | KIMG_RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != E2BIG && errno != EINVAL))
		return fd;
	return kimg_log_walk_dir(dir);
}

/* Why the open file fd must not get a report, or NULL. Every kind must
 * belong to this user (a FIFO of another user is that user's reader),
 * but /dev/null and /dev/full; a terminal may also be root's (a console);
 * nothing on a pseudo file system. */
static const char *refusal(int fd, char *buf, size_t size)
{
	struct stat st;
	if (raw_fstat(fd, &st) != 0)
		return "cannot be examined (fstat failed)";
	const char *fs = pseudo_fs_of(fd);
	if (fs) {
		snprintf(buf, size, "is on a pseudo file system (%s), not an ordinary one", fs);
		return buf;
	}
	uid_t me = geteuid();
	if (S_ISCHR(st.st_mode)) {
		if (null_device(&st))
			return NULL;
		if (!isatty(fd))
			return "is a device other than a terminal, /dev/null or /dev/full";
		if (st.st_uid != me && st.st_uid != 0)
			goto other_user;
		return NULL;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		return "is not a regular file, pipe, socket or terminal";
	if (st.st_uid != me)
		goto other_user;
	if (S_ISREG(st.st_mode) && st.st_nlink != 1)
		return "has other hard links";
	return NULL;
other_user:
	snprintf(buf, size, "belongs to another user (uid %lu)", (unsigned long)st.st_uid);
	return buf;
}

/* Open the log at path; -1 with why filled when it must not be used. The
 * fd is O_NONBLOCK (its own file description, not the host's): a reader
 * that stops reading must not stop the program (kimg_log_write drops). */
static int open_log(const char *path, char *why, size_t size)
{
	/* the names of the process's own streams: they are symbolic links
	 * into /proc, which O_NOFOLLOW would refuse */
	if (strcmp(path, "/dev/stderr") == 0)
		return STDERR_FILENO;
	if (strcmp(path, "/dev/stdout") == 0)
		return STDOUT_FILENO;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char dir[sizeof kimg_opts.log_path];
	if (!*base) {
		snprintf(why, size, "KIMG_LOG file %s is not used: it names a directory", path);
		return -1;
	}
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	int dfd = open_dir(dir);
	if (dfd < 0) {
		if (errno == ELOOP || errno == EXDEV)
			snprintf(why, size, "KIMG_LOG file %s is not used: a directory on its path is a symbolic link", path);
		else
			snprintf(why, size, "cannot open KIMG_LOG file %s: %s", path, strerror(errno));
		return -1;
	}
	int fd = -1;
	for (int attempt = 0; attempt < 2; attempt++) {
		fd = openat(dfd, base, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
			    0600);
		if (fd >= 0 || errno != EEXIST)
			break;
		/* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of
		 * blocking the program here */
		fd = openat(dfd, base, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0 || errno != ENOENT)
			break; /* ENOENT: removed in between, create it */
	}
	int err = errno;
	struct stat named;
	if (fd < 0 && err == ENXIO && syscall(SYS_newfstatat, dfd, base, &named, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(named.st_mode))
		err = ENOTSOCK; /* open() cannot reach a socket: say which */
	close(dfd);
	char detail[96];
	const char *bad = fd >= 0 ? refusal(fd, detail, sizeof detail) : NULL;
	if (bad) {
		close(fd);
		snprintf(why, size, "KIMG_LOG file %s is not used: it %s", path, bad);
		return -1;
	}
	if (fd >= 0)
		return fd;
	if (err == ELOOP)
		snprintf(why, size, "KIMG_LOG file %s is not used: it is a symbolic link", path);
	else if (err == ENXIO)
		snprintf(why, size, "KIMG_LOG file %s is not used: it is a FIFO with no reader", path);
	else if (err == ENOTSOCK)
		snprintf(why, size, "KIMG_LOG file %s is not used: it is a socket, which a file name cannot open", path);
	else
		snprintf(why, size, "cannot open KIMG_LOG file %s: %s", path, strerror(err));
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
