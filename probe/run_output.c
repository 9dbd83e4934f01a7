/* SPDX-License-Identifier: Apache-2.0 */
/* The output of a command kimg runs for a cluster source (run_output.h). */
#include "run_output.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "file.h"

extern char **environ;

/* Is name an executable in a directory of $PATH? Asked before spawning:
 * where posix_spawnp cannot report a failed exec (qemu-user runs the child
 * and it exits 127), "not on PATH" must still be said as such. */
static bool on_path(const char *name)
{
	const char *path = getenv("PATH");
	char file[4096];
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (snprintf(file, sizeof file, "%.*s/%s", (int)len, len ? p : ".", name) < (int)sizeof file &&
		    access(file, X_OK) == 0)
			return true;
		if (!colon)
			return false;
		p = colon + 1;
	}
}

/* The output of argv (stdout; its stderr passes through), at most
 * KIMG_FILE_READ_MAX bytes. 0, or -1 with why. */
int probe_run_output(char *const argv[], char **out, size_t *len, char *why, size_t why_size)
{
	int fds[2];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	*out = NULL;
	*len = 0;
	if (!on_path(argv[0])) {
		snprintf(why, why_size, "%s is not on PATH", argv[0]);
		return -1;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(why, why_size, "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		if (rc == ENOENT)
			snprintf(why, why_size, "%s is not on PATH", argv[0]);
		else
			snprintf(why, why_size, "cannot run %s: %s", argv[0], strerror(rc));
		return -1;
	}
	size_t cap = 0;
	char *buf = NULL;
	bool too_big = false, failed = false;
	for (;;) {
		if (*len == cap) {
			if (cap >= KIMG_FILE_READ_MAX) {
				too_big = true;
				break;
			}
			size_t nc = cap ? cap * 2 : 1 << 20;
			char *p = realloc(buf, nc);
			if (!p) {
				failed = true;
				break;
			}
			buf = p;
			cap = nc;
		}
		ssize_t k = read(fds[0], buf + *len, cap - *len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		*len += (size_t)k;
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (too_big || failed) {
		snprintf(why, why_size, "%s", too_big ? "its output is larger than 1 GiB" : "out of memory");
		free(buf);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFEXITED(status))
			snprintf(why, why_size, "it failed (exit status %d)", WEXITSTATUS(status));
		else
			snprintf(why, why_size, "it was killed by signal %d", WTERMSIG(status));
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}
