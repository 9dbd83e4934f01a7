/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe doctor: the toolchains that compile device code on this
 * machine, and the CUDA switches set in its environment.
 *
 * - Triton compiles every kernel with a ptxas, its bundled one unless
 *   $TRITON_PTXAS_PATH names another; a ptxas older than a GPU fails with
 *   "ptxas fatal: Value 'sm_121a' is not defined for option 'gpu-name'"
 *   (vllm#34470, triton-lang/triton#8539). Triton asks for sm_XYa from
 *   9.0 on, plain sm_XY below.
 * - The nvcc and ptxas on PATH and in the toolkit directories: with one
 *   older than a GPU, building an extension here (torch cpp_extension,
 *   FlashInfer's JIT, CuPy) would fail.
 * Which CUDA release can target which GPU is the core's table
 * (kimg_toolkit_target_find, docs/rules.md §7); a tool's release is what
 * its --version says. */
#include <dirent.h>
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
#include "rules.h"
#include "thread.h"

/* --version may hang (a wrapper script waiting on a lock): it gets this long. */
#define VERSION_TIMEOUT_MS 10000
#define VERSION_OUTPUT_MAX 65536
/* Tools asked at once: a cold --version reads its program from disk
 * (ptxas is some 30 MB), so they wait side by side, not in turn. */
#define VERSION_AT_ONCE 8

/* Run `path --version` (no shell) and return its stdout+stderr in buf.
 * Returns 0, or -1 with why in err. */
static int run_version(const char *path, char *buf, size_t size, char *err, size_t err_size)
{
	int fds[2];
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
		dup2(fds[1], STDERR_FILENO);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		execl(path, path, "--version", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	size_t n = 0;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool timed_out = false;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= VERSION_TIMEOUT_MS) {
			timed_out = true;
			break;
		}
		struct pollfd p = { fds[0], POLLIN, 0 };
		int r = poll(&p, 1, (int)(VERSION_TIMEOUT_MS - spent));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			timed_out = r == 0;
			break;
		}
		char chunk[4096];
		ssize_t got = read(fds[0], chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		size_t keep = (size_t)got < size - 1 - n ? (size_t)got : size - 1 - n;
		memcpy(buf + n, chunk, keep);
		n += keep;
	}
	close(fds[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[n] = '\0';
	if (timed_out) {
		snprintf(err, err_size, "--version did not answer within %d s", VERSION_TIMEOUT_MS / 1000);
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && n == 0) {
		snprintf(err, err_size, "cannot run it");
		return -1;
	}
	return 0;
}

/* "Cuda compilation tools, release 12.8, V12.8.93" -> 12080; 0 if absent. */
static int parse_release(const char *text)
{
	for (const char *p = strstr(text, "release "); p; p = strstr(p + 1, "release ")) {
		unsigned major, minor;
		if (sscanf(p + 8, "%u.%u", &major, &minor) == 2 && major > 0 && major < 100 && minor < 10)
			return (int)(major * 1000 + minor * 10);
	}
	return 0;
}

/* The target a tool is asked for on dev: Triton's sm_XYa from 9.0 on. */
static enum kimg_arch_variant asked_variant(enum doc_tool_kind kind, unsigned sm)
{
	return kind == DOC_TOOL_TRITON_PTXAS && sm >= 90 ? KIMG_VARIANT_A : KIMG_VARIANT_PLAIN;
}

/* Can a toolkit of `release` emit code for dev (docs/rules.md §7)? *first
 * gets the first release that can (0: none known). */
static bool release_targets(int release, enum doc_tool_kind kind, unsigned sm, int *first)
{
	const struct kimg_toolkit_target *tt = kimg_toolkit_target_find(sm, asked_variant(kind, sm));
	if (!tt)
		tt = kimg_toolkit_target_find(sm, KIMG_VARIANT_PLAIN);
	*first = tt ? tt->first_toolkit : 0;
	if (!tt)
		return false;
	return release >= tt->first_toolkit && (tt->last_toolkit == 0 || release <= tt->last_toolkit);
}

static void add_tool(struct doc_tools *tools, enum doc_tool_kind kind, const char *path, const char *source, bool used)
{
	struct stat st;
	char real[4096];
	if (tools->n == DOC_TOOLS_MAX || kimg_file_stat(path, &st, true) != 0 || !S_ISREG(st.st_mode) ||
	    access(path, X_OK) != 0)
		return;
	if (!realpath(path, real))
		snprintf(real, sizeof real, "%s", path);
	for (size_t i = 0; i < tools->n; i++) {
		char other[4096];
		if (tools->v[i].kind == kind && realpath(tools->v[i].path, other) && strcmp(other, real) == 0)
			return; /* the same file by another name (PATH and /usr/local/cuda) */
	}
	struct doc_tool *t = &tools->v[tools->n++];
	memset(t, 0, sizeof *t);
	t->kind = kind;
	t->source = source;
	t->used = used;
	snprintf(t->path, sizeof t->path, "%s", path);
}

/* Triton's bundled ptxas: Triton 3.x keeps it (and ptxas-blackwell) in
 * triton/backends/nvidia/bin, 2.x in triton/third_party/cuda/bin. */
static void find_triton(struct doc_tools *tools, char *const *dirs, int n, bool overridden)
{
	static const char *const bins[] = { "triton/backends/nvidia/bin", "triton/third_party/cuda/bin" };
	for (int i = 0; i < n; i++)
		for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
			char dir[4096];
			if (snprintf(dir, sizeof dir, "%s/%s", dirs[i], bins[b]) >= (int)sizeof dir)
				continue;
			DIR *dh = opendir(dir);
			if (!dh)
				continue;
			char *names[16];
			int k = 0;
			struct dirent *de;
			while ((de = readdir(dh)) != NULL && k < 16)
				if (strncmp(de->d_name, "ptxas", 5) == 0 && (names[k] = strdup(de->d_name)) != NULL)
					k++;
			closedir(dh);
			for (int a = 0; a < k; a++) /* in name order: ptxas before ptxas-blackwell */
				for (int c = a + 1; c < k; c++)
					if (strcmp(names[c], names[a]) < 0) {
						char *x = names[a];
						names[a] = names[c];
						names[c] = x;
					}
			for (int a = 0; a < k; a++) {
				char path[4200];
				snprintf(path, sizeof path, "%s/%s", dir, names[a]);
				add_tool(tools, DOC_TOOL_TRITON_PTXAS, path, "triton", !overridden);
				free(names[a]);
			}
		}
}

static void find_in_dir(struct doc_tools *tools, const char *dir, const char *source)
{
	static const struct { const char *name; enum doc_tool_kind kind; } progs[] = {
		{ "ptxas", DOC_TOOL_PTXAS }, { "nvcc", DOC_TOOL_NVCC },
	};
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
		char path[4096];
		if (snprintf(path, sizeof path, "%s/%s", dir, progs[i].name) < (int)sizeof path)
			add_tool(tools, progs[i].kind, path, source, true);
	}
}

static void find_toolkits(struct doc_tools *tools)
{
	const char *path = getenv("PATH");
	char *copy = path ? strdup(path) : NULL, *save = NULL;
	for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p; p = strtok_r(NULL, ":", &save))
		if (*p)
			find_in_dir(tools, p, "PATH");
	free(copy);
	const char *roots = getenv("KIMG_TOOLKIT_DIRS");
	if (roots) {
		copy = strdup(roots);
		save = NULL;
		for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p; p = strtok_r(NULL, ":", &save)) {
			char bin[4096];
			if (*p && snprintf(bin, sizeof bin, "%s/bin", p) < (int)sizeof bin)
				find_in_dir(tools, bin, "toolkit");
		}
		free(copy);
		return;
	}
	/* /usr/local/cuda*: listed by hand (glob(3) is GLIBC_2.27 in libc), in name order */
	DIR *dh = opendir("/usr/local");
	char *names[64];
	int k = 0;
	for (struct dirent *de; dh && (de = readdir(dh)) != NULL && k < 64;)
		if (strncmp(de->d_name, "cuda", 4) == 0 && (names[k] = strdup(de->d_name)) != NULL)
			k++;
	if (dh)
		closedir(dh);
	for (int a = 0; a < k; a++)
		for (int c = a + 1; c < k; c++)
			if (strcmp(names[c], names[a]) < 0) {
				char *x = names[a];
				names[a] = names[c];
				names[c] = x;
			}
	for (int a = 0; a < k; a++) {
		char bin[4096];
		if (snprintf(bin, sizeof bin, "/usr/local/%s/bin", names[a]) < (int)sizeof bin)
			find_in_dir(tools, bin, "toolkit");
		free(names[a]);
	}
}

static void format_release(int v, char *buf, size_t size)
{
	probe_format_cuda_version(v, buf, size);
	if (!buf[0])
		snprintf(buf, size, "?");
}

/* Can tool o stand in for t: the same use, and a release that targets
 * every GPU here as t would be asked (Triton's sm_XYa)? */
static bool can_replace(const struct doctor *d, const struct doc_tool *o, const struct doc_tool *t)
{
	enum doc_tool_kind want = t->kind == DOC_TOOL_NVCC ? DOC_TOOL_NVCC : DOC_TOOL_PTXAS;
	if (o == t || o->kind != want || !o->release)
		return false;
	for (int k = 0; k < d->n_targets; k++) {
		int first;
		if (!release_targets(o->release, t->kind, d->targets[k].dev.cc.sm, &first))
			return false;
	}
	return true;
}

/* The fix for a tool that cannot target some GPU: another found tool of
 * the same use that can target every GPU, else the release to install. */
static void make_fix(struct doctor *d, struct doc_tool *t)
{
	char need[16];
	format_release(t->needs_release, need, sizeof need);
	for (size_t i = 0; i < d->tools.n; i++) {
		const struct doc_tool *o = &d->tools.v[i];
		if (!can_replace(d, o, t))
			continue;
		char rel[16];
		format_release(o->release, rel, sizeof rel);
		if (t->kind == DOC_TOOL_TRITON_PTXAS)
			snprintf(t->fix, sizeof t->fix, "export TRITON_PTXAS_PATH=%s (CUDA %s, targets every GPU here)", o->path, rel);
		else
			snprintf(t->fix, sizeof t->fix, "build with %s (CUDA %s) instead: its directory first on PATH, or CUDA_HOME",
				 o->path, rel);
		return;
	}
	if (t->kind == DOC_TOOL_TRITON_PTXAS)
		snprintf(t->fix, sizeof t->fix,
			 "install a CUDA toolkit of %s or newer and export TRITON_PTXAS_PATH=<toolkit>/bin/ptxas, or a Triton whose "
			 "bundled ptxas is that new", need);
	else
		snprintf(t->fix, sizeof t->fix, "install a CUDA toolkit of %s or newer to build for these GPUs", need);
}

/* One tool's --version, into its release or its error (a thread's task). */
static void *ask_version(void *arg)
{
	struct doc_tool *t = arg;
	char out[VERSION_OUTPUT_MAX];
	if (run_version(t->path, out, sizeof out, t->error, sizeof t->error) == 0 &&
	    (t->release = parse_release(out)) == 0)
		snprintf(t->error, sizeof t->error, "--version names no CUDA release");
	return NULL;
}

/* Found and asked for their --version: needs no GPU, so it runs while the
 * GPUs are asked and the environment walked (cmd_doctor.c). */
void probe_doctor_tools_find(struct doc_tools *tools, char *const *dirs, int n)
{
	const char *override = getenv("TRITON_PTXAS_PATH");
	memset(tools, 0, sizeof *tools);
	if (override && *override)
		add_tool(tools, DOC_TOOL_TRITON_PTXAS, override, "TRITON_PTXAS_PATH", true);
	find_triton(tools, dirs, n, override && *override);
	find_toolkits(tools);
	for (size_t i = 0; i < tools->n; i += VERSION_AT_ONCE) {
		struct probe_thread th[VERSION_AT_ONCE];
		size_t k = tools->n - i < VERSION_AT_ONCE ? tools->n - i : VERSION_AT_ONCE;
		for (size_t j = 0; j < k; j++)
			probe_thread_create(&th[j], ask_version, &tools->v[i + j], PROBE_THREAD_INLINE_AT_JOIN);
		for (size_t j = 0; j < k; j++)
			probe_thread_join(&th[j]);
	}
}

void probe_doctor_tools_judge(struct doctor *d)
{
	struct doc_tools *tools = &d->tools;
	for (size_t i = 0; i < tools->n; i++) {
		struct doc_tool *t = &tools->v[i];
		for (int k = 0; t->release && k < d->n_targets && k < 64; k++) {
			int first = 0;
			if (!release_targets(t->release, t->kind, d->targets[k].dev.cc.sm, &first)) {
				t->cannot |= 1ul << k;
				if (first > t->needs_release)
					t->needs_release = first;
			}
		}
	}
	for (size_t i = 0; i < tools->n; i++) {
		struct doc_tool *t = &tools->v[i];
		if (!t->cannot)
			continue;
		make_fix(d, t);
		if (t->kind == DOC_TOOL_TRITON_PTXAS && t->used)
			tools->triton_bad++;
		else if (t->kind != DOC_TOOL_TRITON_PTXAS)
			tools->build_bad++;
	}
}

/* ---- the CUDA switches ---- */

/* What each variable changes, for the page (docs/rules.md P6, docs/loading.md §9). */
static const struct {
	const char *name;
	const char *effect;
} switches[] = {
	{ "CUDA_FORCE_PTX_JIT", "=1: the driver ignores every cubin and JIT-compiles the PTX instead; a module without "
				"PTX then fails with 209 even where its cubin fits (P6)" },
	{ "CUDA_DISABLE_PTX_JIT", "=1: the driver never JIT-compiles PTX; a module without a cubin for the GPU then "
				  "fails with 223, except kernels already in the JIT cache (P6)" },
	{ "CUDA_MODULE_LOADING", "LAZY (the default since CUDA 12.2) loads each kernel at its first launch, so an image "
				 "error comes at that launch rather than at module load; EAGER loads them all at load" },
	{ "TORCH_CUDA_ARCH_LIST", "the architectures PyTorch extension builds compile for (torch.utils.cpp_extension, "
				  "torch_extensions JIT builds, FlashInfer's JIT, many setup.py): an extension built with a "
				  "list that does not cover this GPU fails here with 209" },
	{ "CUDA_CACHE_DISABLE", "=1: the driver's JIT cache (~/.nv/ComputeCache) is neither read nor written: every PTX "
				"module is compiled again at each start" },
	{ "CUDA_CACHE_PATH", "moves the driver's JIT cache from ~/.nv/ComputeCache" },
	{ "CUDA_CACHE_MAXSIZE", "the driver's JIT cache size in bytes (entries past it are evicted)" },
	{ "TRITON_PTXAS_PATH", "the ptxas Triton compiles with instead of its bundled one (see Toolchains)" },
};

/* TORCH_CUDA_ARCH_LIST ("8.0;8.6+PTX", spaces or semicolons) as the images
 * such a build carries, judged by the core on each target. */
static void judge_arch_list(const struct doctor *d, const char *list, char *out, size_t size)
{
	struct kimg_image imgs[64];
	size_t n = 0;
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", list);
	out[0] = '\0';
	for (char *tok = strtok_r(copy, "; ", &save); tok && n + 2 <= 64; tok = strtok_r(NULL, "; ", &save)) {
		char *plus = strstr(tok, "+PTX");
		struct kimg_arch arch;
		if (plus)
			*plus = '\0';
		if (kimg_arch_parse(tok, &arch, NULL) != 0 || arch.sm < 10) {
			snprintf(out, size, "'%s' is not an architecture PyTorch knows (8.0, 9.0a, 8.6+PTX)", tok);
			return;
		}
		memset(&imgs[n], 0, sizeof imgs[n]);
		imgs[n].kind = KIMG_IMAGE_SASS;
		imgs[n++].arch = arch;
		if (plus) {
			memset(&imgs[n], 0, sizeof imgs[n]);
			imgs[n].kind = KIMG_IMAGE_PTX;
			imgs[n++].arch = arch;
		}
	}
	size_t used = 0;
	for (int t = 0; t < d->n_targets && n; t++) {
		struct kimg_module_verdict v;
		kimg_rules_check_module(imgs, n, &d->targets[t].dev, NULL, &v);
		if (v.outcome != KIMG_OUTCOME_CANNOT_RUN)
			continue;
		char name[160];
		probe_doctor_target_name(&d->targets[t], name, sizeof name);
		used += (size_t)snprintf(out + (used < size ? used : size), used < size ? size - used : 0,
					 "%sa build with it cannot run on %s: %s [%s] -> error %d", used ? "; " : "", name,
					 kimg_reason_text(v.reason), v.rule ? v.rule : "?", v.expected_error);
	}
}

void probe_doctor_switches(struct doctor *d)
{
	struct doc_switches *s = &d->switches;
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < sizeof switches / sizeof switches[0] && s->n < DOC_SWITCHES_MAX; i++) {
		const char *v = getenv(switches[i].name);
		if (!v)
			continue;
		struct doc_switch *w = &s->v[s->n++];
		w->name = switches[i].name;
		w->effect = switches[i].effect;
		snprintf(w->value, sizeof w->value, "%s", v);
		if (strcmp(w->name, "TORCH_CUDA_ARCH_LIST") == 0)
			judge_arch_list(d, v, w->verdict, sizeof w->verdict);
	}
}
