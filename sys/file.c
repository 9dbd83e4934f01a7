/* SPDX-License-Identifier: Apache-2.0 */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* stat, lstat and fstat are functions of libc.so only since glibc 2.33
 * (GLIBC_2.33); before, <sys/stat.h> made them inline calls of __xstat,
 * __lxstat and __fxstat with a layout version, which every glibc still
 * exports. Calling those directly keeps kimg-probe free of GLIBC_2.33.
 * The layout version is _STAT_VER_LINUX (1) on x86-64 and _STAT_VER (0)
 * on aarch64, the struct stat of the headers on both. Not in the
 * sanitizer build (KIMG_NO_GLIBC_PINS), whose interceptors are stat's. */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(KIMG_NO_GLIBC_PINS)
#if defined(__x86_64__)
#define XSTAT_VERSION 1
__asm__(".symver __xstat,__xstat@GLIBC_2.2.5");
__asm__(".symver __lxstat,__lxstat@GLIBC_2.2.5");
__asm__(".symver __fxstat,__fxstat@GLIBC_2.2.5");
__asm__(".symver __fxstatat,__fxstatat@GLIBC_2.4");
#else
#define XSTAT_VERSION 0
__asm__(".symver __xstat,__xstat@GLIBC_2.17");
__asm__(".symver __lxstat,__lxstat@GLIBC_2.17");
__asm__(".symver __fxstat,__fxstat@GLIBC_2.17");
__asm__(".symver __fxstatat,__fxstatat@GLIBC_2.17");
#endif
extern int __xstat(int ver, const char *path, struct stat *st);
extern int __lxstat(int ver, const char *path, struct stat *st);
extern int __fxstat(int ver, int fd, struct stat *st);
extern int __fxstatat(int ver, int dirfd, const char *name, struct stat *st, int flags);

static int file_fstat(int fd, struct stat *st)
{
	return __fxstat(XSTAT_VERSION, fd, st);
}

int kimg_file_stat(const char *path, struct stat *st, bool follow_links)
{
	return follow_links ? __xstat(XSTAT_VERSION, path, st) : __lxstat(XSTAT_VERSION, path, st);
}

int kimg_file_fstat(int fd, struct stat *st)
{
	return file_fstat(fd, st);
}

int kimg_file_stat_at(int dirfd, const char *name, struct stat *st, bool follow_links)
{
	return __fxstatat(XSTAT_VERSION, dirfd, name, st, follow_links ? 0 : AT_SYMLINK_NOFOLLOW);
}
#else
static int file_fstat(int fd, struct stat *st)
{
	return fstat(fd, st);
}

int kimg_file_stat(const char *path, struct stat *st, bool follow_links)
{
	return follow_links ? stat(path, st) : lstat(path, st);
}

int kimg_file_fstat(int fd, struct stat *st)
{
	return file_fstat(fd, st);
}

int kimg_file_stat_at(int dirfd, const char *name, struct stat *st, bool follow_links)
{
	return fstatat(dirfd, name, st, follow_links ? 0 : AT_SYMLINK_NOFOLLOW);
}
#endif

/* read() everything from fd; used where mmap cannot work (pipes, ttys,
 * character devices, procfs files that report size 0). */
static int read_all(int fd, size_t first_cap, struct kimg_file *f, struct kimg_error *err)
{
	size_t cap = first_cap, len = 0;
	unsigned char *buf = malloc(cap);
	if (!buf)
		return kimg_error_set(err, -ENOMEM, 0, "out of memory");
	for (;;) {
		if (len == cap) {
			if ((uint64_t)cap * 2 > KIMG_FILE_READ_MAX) {
				free(buf);
				return kimg_error_set(err, -KIMG_ELIMIT, len,
						      "input larger than %llu bytes",
						      (unsigned long long)KIMG_FILE_READ_MAX);
			}
			unsigned char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return kimg_error_set(err, -ENOMEM, len, "out of memory");
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* A FIFO opened non-blocking without data yet: that is
			 * "no writer", treat as the end rather than spin. */
			if (errno == EAGAIN)
				break;
			int e = errno;
			free(buf);
			return kimg_error_set(err, -e, len, "read: %s", strerror(e));
		}
		len += (size_t)n;
	}
	f->buf = buf;
	f->bytes = kimg_span_make(buf, len);
	return 0;
}

/* The holes of a regular file, as the file system reports them; none on
 * file systems without SEEK_HOLE (then it is all data: still correct). */
static void find_holes(int fd, uint64_t size, struct kimg_file *f)
{
	uint64_t off = 0;
	struct kimg_zero_range *holes = NULL;
	f->zeros.r = NULL;
	f->zeros.n = 0;
	while (off < size && f->zeros.n < KIMG_FILE_HOLES_MAX) {
		off_t h = lseek(fd, (off_t)off, SEEK_HOLE);
		if (h < 0 || (uint64_t)h >= size)
			break;
		off_t d = lseek(fd, h, SEEK_DATA);
		uint64_t end = d < 0 ? size : (uint64_t)d; /* ENXIO: a hole up to the end */
		if (end > size)
			end = size;
		if (end - (uint64_t)h >= KIMG_FILE_HOLE_MIN) {
			if (!holes && (holes = malloc(KIMG_FILE_HOLES_MAX * sizeof *holes)) == NULL)
				break; /* no memory: read the holes as data */
			holes[f->zeros.n].start = (uint64_t)h;
			holes[f->zeros.n].end = end;
			f->zeros.r = holes;
			f->zeros.n++;
		}
		if (end <= off)
			break;
		off = end;
	}
}

static int file_open(const char *path, struct kimg_file *f, uint64_t read_below, struct kimg_error *err)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		return kimg_error_set(err, -e, 0, "%s", strerror(e));
	}
	struct stat st;
	if (file_fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return kimg_error_set(err, -e, 0, "stat: %s", strerror(e));
	}
	int rc = 0;
	if (S_ISDIR(st.st_mode)) {
		rc = kimg_error_set(err, -EISDIR, 0, "%s", strerror(EISDIR));
	} else if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < read_below) {
		/* Room for one more byte: the read that sees the end needs no second buffer. */
		rc = read_all(fd, (size_t)st.st_size + 1, f, err);
	} else if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			int e = errno;
			rc = kimg_error_set(err, -e, 0, "mmap: %s", strerror(e));
		} else {
			f->map = p;
			f->map_size = (size_t)st.st_size;
			f->bytes = kimg_span_make(p, (uint64_t)st.st_size);
			find_holes(fd, (uint64_t)st.st_size, f);
		}
	} else if (S_ISBLK(st.st_mode) || (S_ISCHR(st.st_mode) && !isatty(fd))) {
		/* /dev/zero or a disk would be read to the size cap for nothing. */
		rc = kimg_error_set(err, -ENODEV, 0, "not a regular file, pipe or terminal");
	} else {
		/* Blocking reads from here on: a pipe with a writer must be
		 * drained, not abandoned at the first empty read. A FIFO that
		 * has no writer at all still reads EOF at once. */
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		rc = read_all(fd, 1 << 16, f, err);
	}
	close(fd);
	return rc;
}

int kimg_file_open(const char *path, struct kimg_file *f, struct kimg_error *err)
{
	return file_open(path, f, 0, err);
}

int kimg_file_open_small_read(const char *path, struct kimg_file *f, uint64_t read_below, struct kimg_error *err)
{
	return file_open(path, f, read_below, err);
}

void kimg_file_advise_random(const struct kimg_file *f)
{
	if (f->map)
		(void)madvise(f->map, f->map_size, MADV_RANDOM);
}

void kimg_file_advise_normal(const struct kimg_file *f)
{
	if (f->map)
		(void)madvise(f->map, f->map_size, MADV_NORMAL);
}

void kimg_file_will_need(struct kimg_span bytes)
{
	if (!bytes.data || bytes.size == 0)
		return;
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t mask = page > 0 ? (uintptr_t)page - 1 : 4095;
	uintptr_t start = (uintptr_t)bytes.data & ~mask;
	uintptr_t end = (uintptr_t)bytes.data + (uintptr_t)bytes.size;
	/* Heap memory (zip members, pipes) answers EBADF or nothing: ignored. */
	(void)madvise((void *)start, end - start, MADV_WILLNEED);
}

static void guard_remove(const struct kimg_file *f);

void kimg_file_close(struct kimg_file *f)
{
	if (f->guarded)
		guard_remove(f);
	if (f->map)
		munmap(f->map, f->map_size);
	free(f->buf);
	free((void *)f->zeros.r);
	memset(f, 0, sizeof *f);
}

/* ---- SIGBUS guard (kimg_file_guard) ----
 * Per thread (SIGBUS from a page fault is delivered to the thread that
 * faulted): the chain of active guards, innermost first, each on its
 * caller's stack. Process-wide: the handler, installed while any thread is
 * inside a guard. */
struct file_guard {
	const struct kimg_file *f;
	sigjmp_buf env;
	struct file_guard *outer;
};
static _Thread_local struct file_guard *guards;
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned handler_users; /* threads inside a guard, under handler_lock */
static bool handler_installed;
static struct sigaction previous_sigbus;
/* Files added with kimg_file_guard_add, open until kimg_file_close (per
 * thread: a file is opened, read and closed by one thread). */
static _Thread_local const struct kimg_file **extra;
static _Thread_local size_t n_extra, cap_extra;

static bool holds(const struct kimg_file *f, const uint8_t *a)
{
	const uint8_t *base = f->map;
	return a && base && a >= base && a < base + f->map_size;
}

int kimg_file_guard_add(struct kimg_file *f)
{
	if (!f->map || f->guarded)
		return 0;
	if (n_extra == cap_extra) {
		size_t cap = cap_extra ? cap_extra * 2 : 16;
		const struct kimg_file **p = realloc(extra, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		extra = p;
		cap_extra = cap;
	}
	extra[n_extra++] = f;
	f->guarded = true;
	return 0;
}

static void guard_remove(const struct kimg_file *f)
{
	/* Closed in reverse order of opening, mostly: search from the end. */
	for (size_t i = n_extra; i-- > 0;)
		if (extra[i] == f) {
			extra[i] = extra[--n_extra];
			if (n_extra == 0) {
				/* per thread: a worker that ends would lose it (found
				 * by make asan-test) */
				free(extra);
				extra = NULL;
				cap_extra = 0;
			}
			return;
		}
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	const uint8_t *a = si ? (const uint8_t *)si->si_addr : NULL;
	for (struct file_guard *g = guards; g; g = g->outer) {
		if (holds(g->f, a)) {
			guards = g->outer; /* the guards inside g are left too */
			siglongjmp(g->env, 1);
		}
	}
	for (size_t i = 0; guards && i < n_extra; i++)
		if (holds(extra[i], a)) {
			struct file_guard *g = guards;
			guards = g->outer;
			siglongjmp(g->env, 1);
		}
	/* Not a guarded mapping: the previous disposition decides (returning
	 * re-runs the access, which faults again under it). */
	(void)uc;
	sigaction(sig, &previous_sigbus, NULL);
}

/* The first thread to enter a guard installs the handler, the last to
 * leave restores what was there. Returns false when it cannot be set. */
static bool handler_enter(void)
{
	bool ok = true;
	pthread_mutex_lock(&handler_lock);
	if (handler_users == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		handler_installed = sigaction(SIGBUS, &sa, &previous_sigbus) == 0;
	}
	if (handler_installed)
		handler_users++;
	else
		ok = false;
	pthread_mutex_unlock(&handler_lock);
	return ok;
}

static void handler_leave(void)
{
	pthread_mutex_lock(&handler_lock);
	if (--handler_users == 0) {
		sigaction(SIGBUS, &previous_sigbus, NULL);
		handler_installed = false;
	}
	pthread_mutex_unlock(&handler_lock);
}

void kimg_file_guard_fail(void)
{
	struct file_guard *g = guards;
	if (!g)
		return;
	guards = g->outer;
	siglongjmp(g->env, 1);
}

int kimg_file_guard(const struct kimg_file *f, void (*fn)(void *ctx), void *ctx, struct kimg_error *err)
{
	if (!f->map) {
		fn(ctx);
		return 0;
	}
	struct file_guard g;
	g.f = f;
	g.outer = guards;
	if (!guards && !handler_enter()) {
		fn(ctx); /* no guard possible: behave as before */
		return 0;
	}
	/* volatile: read after siglongjmp */
	volatile int failed = 0;
	if (sigsetjmp(g.env, 1) == 0) {
		guards = &g;
		fn(ctx);
	} else {
		failed = 1;
	}
	guards = g.outer;
	if (!guards)
		handler_leave();
	if (failed)
		return kimg_error_set(err, -EIO, 0, "file changed while it was read");
	return 0;
}

const char *kimg_file_pseudo_fs(const char *path)
{
	/* <linux/magic.h>; devtmpfs reports tmpfs's number, so /dev goes by name */
	static const struct {
		unsigned long magic;
		const char *name;
	} pseudo[] = {
		{ 0x9fa0, "proc" },	     { 0x62656572, "sysfs" },	  { 0x27e0eb, "cgroup" },
		{ 0x63677270, "cgroup2" },   { 0x64626720, "debugfs" },	  { 0x74726163, "tracefs" },
		{ 0x73636673, "securityfs" }, { 0xcafe4a11, "bpf" },	  { 0x62656570, "configfs" },
		{ 0xde5e81e4, "efivarfs" },  { 0x6165676c, "pstore" },	  { 0xf97cff8c, "selinuxfs" },
		{ 0x1cd1, "devpts" },	     { 0x65735543, "fusectl" },	  { 0x42494e4d, "binfmt_misc" },
		{ 0x6e736673, "nsfs" },	     { 0x57ac6e9d, "mqueue" },	  { 0x958458f6, "hugetlbfs" },
	};
	if (strcmp(path, "/dev") == 0 || strncmp(path, "/dev/", 5) == 0)
		return "devtmpfs";
	struct statfs sfs;
	if (statfs(path, &sfs) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof pseudo / sizeof pseudo[0]; i++)
		if ((unsigned long)sfs.f_type == pseudo[i].magic)
			return pseudo[i].name;
	return NULL;
}
