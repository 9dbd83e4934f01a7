/* SPDX-License-Identifier: Apache-2.0 */
/* Opening the KIMG_LOG target (log.c writes to it). The name may be
 * predictable and planted by another user, so: created new (O_EXCL, mode
 * 0600); no symbolic link anywhere on the path (openat2 with
 * RESOLVE_NO_SYMLINKS, or a walk one name at a time with O_NOFOLLOW on a
 * kernel without it); an existing target used only if it belongs to this
 * user (a terminal may be root's; /dev/null and /dev/full anyone's), is a
 * regular file with no other link, a FIFO or a terminal, and is not on a
 * pseudo file system (/proc/self/comm would rename the process). Opened
 * O_NONBLOCK: a FIFO with no reader fails instead of blocking here, and
 * one whose reader stalls never blocks a write. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "diag_internal.h"

/* Raw fstat, as in log.c: the glibc wrapper's 2.33 symbol version would
 * raise libkimg's glibc baseline (tests/scripts/glibc_baseline.sh). */
static int raw_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
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

/* kimg_log_open (diag_internal.h). The fd is O_NONBLOCK (its own file
 * description, not the host's): a reader that stops reading must not stop
 * the program (kimg_log_write drops). */
int kimg_log_open(const char *path, char *why, size_t size)
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
