/* SPDX-License-Identifier: Apache-2.0 */
/* LD_PRELOAD helper for tests/probe/hardening.sh: makes "a file shrinks
 * while kimg-probe reads it" happen every time instead of 1 run in 100.
 * When the probe maps the file named by $SHRINK_PATH, the file is cut to
 * $SHRINK_TO bytes (default 0) right after the mapping is made, so the
 * probe's next read past that point meets a page that no longer exists
 * (SIGBUS without kimg_file_guard). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "mmap");
	void *p = real(addr, len, prot, flags, fd, off);
	const char *path = getenv("SHRINK_PATH");
	struct stat a, b;
	if (p != MAP_FAILED && fd >= 0 && path && fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino && S_ISREG(a.st_mode)) {
		const char *to = getenv("SHRINK_TO");
		if (truncate(path, to ? strtoll(to, NULL, 0) : 0) != 0)
			abort();
	}
	return p;
}
