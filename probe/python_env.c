/* SPDX-License-Identifier: Apache-2.0 */
/* The Python environment doctor checks: sys.path of an interpreter, asked
 * once (python -c, no shell), keeping the directories that exist.
 *
 * The interpreter is the user's and may misbehave: its answer is read
 * under a time limit and only until it exits (a background child it left
 * holding stdout does not keep doctor waiting), a first MiB is used of an
 * answer that is longer, and one that names no directory is an error, not
 * an empty environment. "/" and pseudo file systems are never part of an
 * environment (an empty PYTHONPATH item puts the cwd in sys.path, and the
 * cwd may be "/"). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doctor.h"
#include "file.h"

/* A marker line, then the interpreter and its version, the cwd, the
 * standard library's two directories, then one sys.path entry per line
 * (entries with a newline in them cannot be told apart and are dropped by
 * Python's side). The marker tells an answer from garbage on stdout. */
#define ANSWER_MARK "kimg-doctor-sys-path-1"
static const char query[] =
	"import os, sys, sysconfig\n"
	"print('" ANSWER_MARK "')\n"
	"print(sys.executable + '\\t' + sys.version.split()[0])\n"
	"print(os.getcwd())\n"
	"print(sysconfig.get_paths().get('stdlib', ''))\n"
	"print(sysconfig.get_paths().get('platstdlib', ''))\n"
	"for p in sys.path:\n"
	"    if p and '\\n' not in p: print(p)\n";

#define OUTPUT_MAX (1u << 20)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read the child's stdout into buf (up to OUTPUT_MAX, counting the rest
 * in *over) until EOF, the child's exit, or the deadline. Returns 0, or
 * -1 on timeout (the child's process group killed). */
static int read_answer(int fd, pid_t pid, char *buf, size_t *n, size_t *over, int *status, double limit_s)
{
	double deadline = now_s() + limit_s;
	bool exited = false, eof = false;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (!eof) {
		char scratch[4096];
		for (;;) {
			char *dst = *n < OUTPUT_MAX ? buf + *n : scratch;
			size_t room = *n < OUTPUT_MAX ? OUTPUT_MAX - *n : sizeof scratch;
			ssize_t r = read(fd, dst, room);
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0)
				eof = true;
			if (r <= 0)
				break;
			if (dst == scratch)
				*over += (size_t)r;
			else
				*n += (size_t)r;
		}
		if (eof || exited)
			break; /* after the exit, what was written is read: stop */
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid) {
			exited = true;
			continue; /* one more read for what it wrote last */
		}
		double left = deadline - now_s();
		if (left <= 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
		struct pollfd p = { fd, POLLIN, 0 };
		/* short slices: a child that exits while a grandchild keeps the
		 * pipe open gives no POLLHUP */
		poll(&p, 1, left < 0.05 ? (int)(left * 1000) + 1 : 50);
	}
	if (!exited)
		while (waitpid(pid, status, 0) < 0 && errno == EINTR)
			;
	return 0;
}

static bool add_str(char ***v, int *n, int *cap, const char *s)
{
	if (*n == *cap) {
		int c = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, (size_t)c * sizeof *nv);
		if (!nv)
			return false;
		*v = nv;
		*cap = c;
	}
	if (!((*v)[*n] = strdup(s)))
		return false;
	(*n)++;
	return true;
}

static void skip_entry(struct probe_python *py, const char *dir, const char *why)
{
	for (int i = 0; i < py->n_skipped; i++)
		if (strcmp(py->skipped[i], dir) == 0)
			return;
	int cap = py->cap_skipped, n = py->n_skipped;
	if (add_str(&py->skipped, &py->n_skipped, &py->cap_skipped, dir) &&
	    !add_str(&py->skipped_why, &n, &cap, why)) {
		free(py->skipped[--py->n_skipped]);
	}
}

/* Why dir (an existing directory) is not part of an environment, or NULL. */
static const char *not_an_environment(const char *dir, char *buf, size_t size)
{
	char *real = realpath(dir, NULL);
	const char *why = NULL;
	if (real && strcmp(real, "/") == 0) {
		why = "the root directory is not an environment (an empty PYTHONPATH item puts the current directory in "
		      "sys.path)";
	} else {
		const char *fs = kimg_file_pseudo_fs(real ? real : dir);
		if (fs) {
			snprintf(buf, size, "on a pseudo file system (%s), not an environment", fs);
			why = buf;
		}
	}
	free(real);
	return why;
}

/* The answer (the query's lines, NUL-terminated in buf, freed here)
 * into py. over: it was longer than OUTPUT_MAX. */
static int parse_answer(const char *python, struct probe_python *py, char *buf, bool over, char *err, size_t err_size)
{
	if (over) {
		/* the first MiB: the line cut at its end is not an entry */
		py->answer_over_limit = true;
		char *last = strrchr(buf, '\n');
		if (last)
			last[1] = '\0';
	}
	char *save = NULL;
	char *line = strtok_r(buf, "\n", &save);
	if (!line || strcmp(line, ANSWER_MARK) != 0) {
		free(buf);
		snprintf(err, err_size, "%s answered something other than its sys.path (a wrapper that prints?)", python);
		return -1;
	}
	if ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		char *tab = strchr(line, '\t');
		if (tab) {
			*tab = '\0';
			snprintf(py->version, sizeof py->version, "%s", tab + 1);
		}
		snprintf(py->executable, sizeof py->executable, "%s", line);
	}
	if ((line = strtok_r(NULL, "\n", &save)) != NULL)
		snprintf(py->cwd, sizeof py->cwd, "%s", line);
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
		char why_buf[128];
		const char *why = not_an_environment(line, why_buf, sizeof why_buf);
		if (why) {
			skip_entry(py, line, why);
			continue;
		}
		bool dup = false;
		for (int i = 0; i < py->n_paths && !dup; i++)
			dup = strcmp(py->paths[i], line) == 0;
		if (!dup && !add_str(&py->paths, &py->n_paths, &py->cap_paths, line)) {
			free(buf);
			snprintf(err, err_size, "out of memory");
			return -1;
		}
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
	if (py->n_paths == 0 && py->n_skipped == 0) {
		snprintf(err, err_size, "%s named no existing sys.path directory to check", python);
		probe_python_free(py);
		return -1;
	}
	return 0;
}

int probe_python_env(const char *python, struct probe_python *py, char *err, size_t err_size)
{
	const double limit_s = PROBE_PYTHON_TIME_LIMIT_S;
	int fds[2];
	memset(py, 0, sizeof *py);
	char *buf = malloc(OUTPUT_MAX + 1);
	if (!buf) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	/* $KIMG_DOCTOR_PYTHON: "run" always asks the interpreter, "read"
	 * never does (an error where the files do not say); unset: the files
	 * of a virtual environment where they say it all (python_venv.c),
	 * else the interpreter. */
	const char *how = getenv("KIMG_DOCTOR_PYTHON");
	if (!how || strcmp(how, "run") != 0) {
		char why[512] = "";
		if (probe_python_venv_answer(python, ANSWER_MARK, buf, OUTPUT_MAX + 1, why, sizeof why) >= 0)
			return parse_answer(python, py, buf, false, err, err_size);
		if (how && strcmp(how, "read") == 0) {
			free(buf);
			snprintf(err, err_size, "cannot read the sys.path of %s from its files (KIMG_DOCTOR_PYTHON=read): %s",
				 python, why);
			return -1;
		}
	}
	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(err, err_size, "pipe: %s", strerror(errno));
		free(buf);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, err_size, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free(buf);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0); /* its own group: a timeout ends what it started too */
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
	size_t n = 0, over = 0;
	int status = 0;
	int timed_out = read_answer(fds[0], pid, buf, &n, &over, &status, limit_s);
	close(fds[0]);
	buf[n] = '\0';
	if (timed_out) {
		free(buf);
		snprintf(err, err_size, "cannot run %s: no answer within %g s", python, limit_s);
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		free(buf);
		snprintf(err, err_size, "cannot run %s", python);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n == 0) {
		free(buf);
		snprintf(err, err_size, "%s -c 'import sys; print(sys.path)' failed", python);
		return -1;
	}
	return parse_answer(python, py, buf, over != 0, err, err_size);
}

bool probe_python_is_cwd(const struct probe_python *py, const char *dir)
{
	return py->cwd[0] && strcmp(py->cwd, dir) == 0;
}

void probe_python_free(struct probe_python *py)
{
	for (int i = 0; i < py->n_paths; i++)
		free(py->paths[i]);
	for (int i = 0; i < py->n_skipped; i++) {
		free(py->skipped[i]);
		free(py->skipped_why[i]);
	}
	free(py->paths);
	free(py->skipped);
	free(py->skipped_why);
	py->paths = py->skipped = py->skipped_why = NULL;
	py->n_paths = py->n_skipped = 0;
}
