/* SPDX-License-Identifier: Apache-2.0 */
/* The Python environment doctor checks: sys.path of an interpreter, asked
 * once (python -c, no shell), keeping the directories that exist. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doctor.h"
#include "file.h"

/* First line: the interpreter and its version; then one sys.path entry
 * per line (entries with a newline in them cannot be told apart and are
 * dropped by Python's side). */
static const char query[] =
	"import sys, sysconfig\n"
	"print(sys.executable + '\\t' + sys.version.split()[0])\n"
	"print(sysconfig.get_paths().get('stdlib', ''))\n"
	"print(sysconfig.get_paths().get('platstdlib', ''))\n"
	"for p in sys.path:\n"
	"    if p and '\\n' not in p: print(p)\n";

#define OUTPUT_MAX (1u << 20)

int probe_python_env(const char *python, struct probe_python *py, char *err, size_t err_size)
{
	int fds[2];
	memset(py, 0, sizeof *py);
	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(err, err_size, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, err_size, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		int devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDERR_FILENO);
		}
		/* -E -s: no PYTHON* variables... would change the environment the
		 * user runs; -I would hide user site-packages. Plain -c it is. */
		execlp(python, python, "-c", query, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	char *buf = malloc(OUTPUT_MAX + 1);
	size_t n = 0;
	while (buf && n < OUTPUT_MAX) {
		ssize_t r = read(fds[0], buf + n, OUTPUT_MAX - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!buf) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	buf[n] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n == 0) {
		free(buf);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			snprintf(err, err_size, "cannot run %s", python);
		else
			snprintf(err, err_size, "%s -c 'import sys; print(sys.path)' failed", python);
		return -1;
	}
	char *save = NULL;
	char *line = strtok_r(buf, "\n", &save);
	if (line) {
		char *tab = strchr(line, '\t');
		if (tab) {
			*tab = '\0';
			snprintf(py->version, sizeof py->version, "%s", tab + 1);
		}
		snprintf(py->executable, sizeof py->executable, "%s", line);
	}
	/* The standard library holds no device code and tens of thousands of
	 * files; its lib-dynload neither. site-packages inside it stay. */
	char stdlib[2][1024] = { "", "" };
	for (int k = 0; k < 2; k++)
		if ((line = strtok_r(NULL, "\n", &save)) != NULL)
			snprintf(stdlib[k], sizeof stdlib[k], "%s", line);
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		struct stat st;
		bool in_stdlib = false;
		for (int k = 0; k < 2; k++) {
			size_t l = strlen(stdlib[k]);
			in_stdlib |= l > 0 && strncmp(line, stdlib[k], l) == 0 && (line[l] == '\0' || line[l] == '/') &&
				     !strstr(line + l, "-packages");
		}
		if (in_stdlib)
			continue;
		if (kimg_file_stat(line, &st, true) != 0 || !S_ISDIR(st.st_mode))
			continue; /* python311.zip and other absent entries */
		bool dup = false;
		for (int i = 0; i < py->n_paths && !dup; i++)
			dup = strcmp(py->paths[i], line) == 0;
		if (dup || py->n_paths >= PROBE_PYTHON_MAX_PATHS)
			continue;
		if ((py->paths[py->n_paths] = strdup(line)) != NULL)
			py->n_paths++;
	}
	free(buf);
	/* A directory inside another one is walked with it: drop it
	 * (/usr/lib/python3.11/lib-dynload under /usr/lib/python3.11). */
	for (int i = 0; i < py->n_paths; i++) {
		bool inside = false;
		for (int k = 0; k < py->n_paths && !inside; k++) {
			size_t l = strlen(py->paths[k]);
			inside = k != i && strncmp(py->paths[i], py->paths[k], l) == 0 &&
				 (py->paths[i][l] == '/' || (l > 0 && py->paths[k][l - 1] == '/'));
		}
		if (inside) {
			free(py->paths[i]);
			memmove(&py->paths[i], &py->paths[i + 1], (size_t)(py->n_paths - i - 1) * sizeof py->paths[0]);
			py->n_paths--;
			i--;
		}
	}
	return 0;
}

void probe_python_free(struct probe_python *py)
{
	for (int i = 0; i < py->n_paths; i++)
		free(py->paths[i]);
	py->n_paths = 0;
}
