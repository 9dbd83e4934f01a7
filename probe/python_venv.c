/* SPDX-License-Identifier: Apache-2.0 */
/* sys.path of a virtual environment read from its pyvenv.cfg and its
 * site-packages, without starting the interpreter (issue 27: a cold
 * `python -c` is a large part of a cold doctor). The answer is written in
 * the very form python_env.c's query prints, and read by the same code.
 *
 * Only where the files say all that Python would do (CPython's getpath
 * and site.py, 3.8-3.13): the interpreter an ELF file beside a pyvenv.cfg
 * one directory up, include-system-site-packages not "true" (no system or
 * user site), a version X.Y.Z, the base prefix found by its landmark
 * (lib/pythonX.Y/os.py under the parent of `home`, and no lib64 standard
 * library beside it), no sitecustomize anywhere it could be imported from,
 * no .pth line that runs code (setuptools' distutils-precedence.pth, which
 * adds no path, aside), no non-ASCII .pth text, and no PYTHON* variable
 * that changes sys.path. Anything else: the caller asks Python. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "file.h"

extern char **environ;

/* PYTHON* variables that leave sys.path as it is. */
static const char *const harmless_vars[] = { "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
					     "PYTHONFAULTHANDLER", "PYTHONHASHSEED", "PYTHONWARNINGS", "PYTHONUTF8",
					     "PYTHONBREAKPOINT", "PYTHONPYCACHEPREFIX", "PYTHONDEVMODE" };

struct answer {
	char *buf;
	size_t len, size;
	bool full;
};

static void put(struct answer *a, const char *s)
{
	size_t n = strlen(s);
	if (a->len + n + 1 > a->size) { /* room for s and its NUL */
		a->full = true;
		return;
	}
	memcpy(a->buf + a->len, s, n);
	a->len += n;
	a->buf[a->len] = '\0';
}

static void put_line(struct answer *a, const char *s)
{
	if (strchr(s, '\n'))
		return; /* as the query: such entries cannot be told apart */
	put(a, s);
	put(a, "\n");
}

static bool fail(char *why, size_t size, const char *fmt, const char *arg)
{
	snprintf(why, size, fmt, arg);
	return false;
}

static bool is_dir(const char *p)
{
	struct stat st;
	return kimg_file_stat(p, &st, true) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *p)
{
	struct stat st;
	return kimg_file_stat(p, &st, true) == 0;
}

/* The standard library's paths under a base prefix (sizes as declared
 * where they are used). */
static void set_stdlib_paths(const char *base, const char *xy, char stdlib[4200], char landmark[4300],
			     char lib64[4200], char dynload[4300], char zip[4200])
{
	snprintf(stdlib, 4200, "%s/lib/python%s", base, xy);
	snprintf(landmark, 4300, "%s/os.py", stdlib);
	snprintf(lib64, 4200, "%s/lib64/python%s", base, xy);
	snprintf(dynload, 4300, "%s/lib-dynload", stdlib);
	{
		/* python311.zip: the digits without the dot */
		char nodot[16];
		size_t k = 0;
		for (const char *c = xy; *c && k + 1 < sizeof nodot; c++)
			if (*c != '.')
				nodot[k++] = *c;
		nodot[k] = '\0';
		snprintf(zip, 4200, "%s/lib/python%s.zip", base, nodot);
	}
}

/* path made absolute and normal as os.path.abspath does (".", "..",
 * repeated slashes; symbolic links kept), into out. */
static bool abspath(const char *base, const char *path, char *out, size_t size)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s%s%s", path[0] == '/' ? "" : base, path[0] == '/' ? "" : "/", path) >=
	    (int)sizeof tmp)
		return false;
	size_t n = 0;
	char *save = NULL;
	out[0] = '\0';
	for (char *part = strtok_r(tmp, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (strcmp(part, ".") == 0)
			continue;
		if (strcmp(part, "..") == 0) {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--; /* the slash */
			out[n] = '\0';
			continue;
		}
		size_t l = strlen(part);
		if (n + l + 2 > size)
			return false;
		out[n++] = '/';
		memcpy(out + n, part, l + 1);
		n += l;
	}
	if (n == 0) {
		if (size < 2)
			return false;
		strcpy(out, "/");
	}
	return true;
}

/* Where execvp would find `python`, as sys.executable names it. */
static bool find_executable(const char *python, const char *cwd, char *out, size_t size, char *why, size_t wsize)
{
	if (strchr(python, '/')) {
		if (!abspath(cwd, python, out, size))
			return fail(why, wsize, "%s: path too long", python);
		/* CPython keeps a relative path's "..": only the plain forms */
		if (python[0] != '/' || strcmp(out, python) != 0)
			return fail(why, wsize, "%s is not a plain absolute path", python);
		return access(out, X_OK) == 0 || fail(why, wsize, "%s is not executable", python);
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		return fail(why, wsize, "no PATH to find %s in", python);
	size_t pl = strlen(path);
	if (path[0] == ':' || path[pl - 1] == ':' || strstr(path, "::"))
		return fail(why, wsize, "PATH has an empty entry (the current directory) to find %s in", python);
	char *copy = strdup(path), *save = NULL;
	bool found = false;
	for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char cand[4096], norm[4096];
		struct stat st;
		if (snprintf(cand, sizeof cand, "%s/%s", dir, python) >= (int)sizeof cand || kimg_file_stat(cand, &st, true) != 0 ||
		    !S_ISREG(st.st_mode) || access(cand, X_OK) != 0)
			continue;
		if (dir[0] != '/' || !abspath("/", cand, norm, sizeof norm) || strcmp(norm, cand) != 0) {
			free(copy);
			return fail(why, wsize, "the PATH entry that holds %s is not a plain absolute path", python);
		}
		snprintf(out, size, "%s", cand);
		found = true;
	}
	free(copy);
	return found || fail(why, wsize, "%s not found on PATH", python);
}

static bool is_elf(const char *path)
{
	unsigned char head[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool elf = read(fd, head, 4) == 4 && memcmp(head, "\177ELF", 4) == 0;
	close(fd);
	return elf;
}

/* dir/name-like entries that `import sitecustomize` could find. A
 * directory that is there but cannot be listed (no memory, no
 * descriptors, no read permission) may hold one too: why says so. */
static bool has_sitecustomize(const char *dir, char *why, size_t wsize)
{
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return false;
		snprintf(why, wsize, "%s cannot be listed: it may hold a sitecustomize module", dir);
		return true;
	}
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d)) != NULL)
		found = strncmp(de->d_name, "sitecustomize", 13) == 0 &&
			(de->d_name[13] == '\0' || de->d_name[13] == '.');
	closedir(d);
	if (found)
		snprintf(why, wsize, "a sitecustomize module is in %s", dir);
	return found;
}

struct venv_cfg {
	char home[4096];
	char version[32];
	bool system_site;
	bool other_implementation;     /* uv's "implementation", not CPython */
};

static bool read_cfg(const char *path, struct venv_cfg *c, char *why, size_t wsize)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(why, wsize, "%s cannot be read", path);
	char line[4352];
	memset(c, 0, sizeof *c);
	while (fgets(line, sizeof line, f)) {
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		char *k = line, *v = eq + 1, *e;
		*eq = '\0';
		while (*k == ' ' || *k == '\t')
			k++;
		for (e = eq; e > k && (e[-1] == ' ' || e[-1] == '\t'); e--)
			e[-1] = '\0';
		while (*v == ' ' || *v == '\t')
			v++;
		for (e = v + strlen(v); e > v && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'); e--)
			e[-1] = '\0';
		if (strcasecmp(k, "home") == 0)
			snprintf(c->home, sizeof c->home, "%s", v);
		else if (strcasecmp(k, "include-system-site-packages") == 0)
			c->system_site = strcasecmp(v, "true") == 0;
		else if (strcasecmp(k, "implementation") == 0)
			c->other_implementation = strcasecmp(v, "CPython") != 0;
		else if ((strcasecmp(k, "version") == 0 || strcasecmp(k, "version_info") == 0) && !c->version[0])
			snprintf(c->version, sizeof c->version, "%s", v);
	}
	fclose(f);
	if (!c->home[0])
		return fail(why, wsize, "%s names no home", path);
	return true;
}

/* "3.11.7" (or virtualenv's "3.11.7.final.0"): X.Y.Z into out, X.Y into xy. */
static bool release_version(const char *v, char *out, size_t size, char *xy, size_t xysize)
{
	unsigned major, minor, micro;
	int used = 0;
	if (sscanf(v, "%u.%u.%u%n", &major, &minor, &micro, &used) != 3)
		return false;
	if (v[used] != '\0' && strcmp(v + used, ".final.0") != 0)
		return false; /* a pre-release: sys.version says "3.13.0rc1", the file "3.13.0" */
	snprintf(out, size, "%u.%u.%u", major, minor, micro);
	snprintf(xy, xysize, "%u.%u", major, minor);
	return true;
}

/* Is s a line of a from offset `from` on? */
static bool has_line(const struct answer *a, size_t from, const char *s)
{
	size_t n = strlen(s);
	for (const char *p = a->buf + from; (p = strstr(p, s)) != NULL; p++)
		if ((p == a->buf + from || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/* The .pth files of site (sorted, as site.addsitedir): their directory
 * lines into a, in order, each once (site's known_paths: a directory
 * already on sys.path, from `path_at` in a, is not added again). False
 * when one would run code or is not ASCII. */
static bool add_pth_dirs(struct answer *a, size_t path_at, const char *site, char *why, size_t wsize)
{
	struct dirent **names = NULL;
	int n = scandir(site, &names, NULL, alphasort);
	if (n < 0) /* out of memory, or gone since: its .pth files unknown */
		return fail(why, wsize, "%s cannot be listed", site);
	bool ok = true;
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		size_t l = strlen(name);
		if (!ok || l < 5 || strcmp(name + l - 4, ".pth") != 0 || name[0] == '.')
			continue;
		char path[4352];
		snprintf(path, sizeof path, "%s/%s", site, name);
		FILE *f = fopen(path, "r");
		if (!f && (errno == ENOMEM || errno == EMFILE || errno == ENFILE)) {
			ok = fail(why, wsize, "%s cannot be read", path); /* this process's lack, not the file's */
			continue;
		}
		if (!f)
			continue; /* site skips a .pth it cannot open */
		char line[4096];
		while (ok && fgets(line, sizeof line, f)) {
			for (const unsigned char *c = (const unsigned char *)line; *c; c++)
				if (*c >= 0x80)
					ok = fail(why, wsize, "%s is not ASCII", path);
			if (!ok || line[0] == '#')
				continue;
			size_t ll = strlen(line);
			while (ll > 0 && (line[ll - 1] == '\n' || line[ll - 1] == '\r' || line[ll - 1] == ' ' ||
					  line[ll - 1] == '\t' || line[ll - 1] == '\f' || line[ll - 1] == '\v'))
				line[--ll] = '\0';
			const char *s = line;
			while (*s == ' ' || *s == '\t' || *s == '\f' || *s == '\v')
				s++;
			if (!*s)
				continue;
			if (strncmp(line, "import ", 7) == 0 || strncmp(line, "import\t", 7) == 0) {
				char hack[4352];
				snprintf(hack, sizeof hack, "%s/_distutils_hack", site);
				if (strcmp(name, "distutils-precedence.pth") == 0 && is_dir(hack) &&
				    strncmp(line, "import os; var = 'SETUPTOOLS_USE_DISTUTILS';", 44) == 0)
					continue; /* setuptools' shim: adds no path (without it the line fails) */
				ok = fail(why, wsize, "%s runs code", path);
				continue;
			}
			char dir[4096];
			if (abspath(site, line, dir, sizeof dir) && exists(dir) && !has_line(a, path_at, dir)) {
				if (has_sitecustomize(dir, why, wsize))
					ok = false;
				put_line(a, dir);
			}
		}
		fclose(f);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ok;
}

int probe_python_venv_answer(const char *python, const char *mark, char *buf, size_t size, char *why,
			     size_t why_size)
{
	for (char **e = environ; *e; e++) {
		if (strncmp(*e, "PYTHON", 6) != 0 && strncmp(*e, "__PYVENV_LAUNCHER__=", 20) != 0)
			continue;
		bool harmless = false;
		for (size_t i = 0; i < sizeof harmless_vars / sizeof harmless_vars[0] && !harmless; i++) {
			size_t l = strlen(harmless_vars[i]);
			harmless = strncmp(*e, harmless_vars[i], l) == 0 && (*e)[l] == '=';
		}
		if (!harmless) {
			const char *eq = strchr(*e, '=');
			char name[64];
			snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - *e) : 40, *e);
			fail(why, why_size, "%s is set", name);
			return -1;
		}
	}
	char cwd[4096], exe[4096], cfg_path[4200], prefix[4096];
	if (!getcwd(cwd, sizeof cwd)) {
		fail(why, why_size, "%s", "no current directory");
		return -1;
	}
	if (!find_executable(python, cwd, exe, sizeof exe, why, why_size))
		return -1;
	if (!is_elf(exe)) {
		fail(why, why_size, "%s is not an ELF executable (a wrapper script?)", exe);
		return -1;
	}
	/* site.venv: sys.prefix is the parent of the executable's directory */
	snprintf(prefix, sizeof prefix, "%s", exe);
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(prefix, '/');
		if (!slash || slash == prefix) {
			fail(why, why_size, "%s is not inside a virtual environment", exe);
			return -1;
		}
		*slash = '\0';
	}
	snprintf(cfg_path, sizeof cfg_path, "%s/pyvenv.cfg", prefix);
	struct venv_cfg cfg;
	if (!exists(cfg_path)) {
		fail(why, why_size, "no pyvenv.cfg beside %s: not a virtual environment", exe);
		return -1;
	}
	if (!read_cfg(cfg_path, &cfg, why, why_size))
		return -1;
	if (cfg.other_implementation) {
		fail(why, why_size, "%s names an implementation other than CPython", cfg_path);
		return -1;
	}
	if (cfg.system_site) {
		fail(why, why_size, "%s includes the system site-packages", cfg_path);
		return -1;
	}
	char version[32], xy[16];
	if (!release_version(cfg.version, version, sizeof version, xy, sizeof xy)) {
		fail(why, why_size, "%s names no release version X.Y.Z", cfg_path);
		return -1;
	}
	/* the base prefix: the parent of home, by its landmark */
	char base[4096], stdlib[4200], landmark[4300], lib64[4200], dynload[4300], site[4300], zip[4200];
	if (!abspath(cwd, cfg.home, base, sizeof base)) {
		fail(why, why_size, "%s: home too long", cfg_path);
		return -1;
	}
	char *slash = strrchr(base, '/');
	if (slash && slash != base)
		*slash = '\0';
	set_stdlib_paths(base, xy, stdlib, landmark, lib64, dynload, zip);
	if (!exists(landmark)) {
		/* home names a directory holding a link to the interpreter (a
		 * version manager's, a test's): Python follows the venv's own
		 * interpreter to the real one, whose prefix holds the library */
		char real[4096];
		if (realpath(exe, real)) {
			for (int up = 0; up < 2; up++) {
				char *cut = strrchr(real, '/');
				if (cut && cut != real)
					*cut = '\0';
			}
			char landmark2[4300];
			snprintf(landmark2, sizeof landmark2, "%s/lib/python%s/os.py", real, xy);
			if (exists(landmark2)) {
				snprintf(base, sizeof base, "%s", real);
				set_stdlib_paths(base, xy, stdlib, landmark, lib64, dynload, zip);
			}
		}
	}
	if (!exists(landmark)) {
		fail(why, why_size, "no standard library at %s", stdlib);
		return -1;
	}
	struct stat st;
	if (kimg_file_stat(lib64, &st, false) == 0) {
		fail(why, why_size, "a standard library in lib64 (%s): its platlibdir is not known", lib64);
		return -1;
	}
	if (exists(zip)) {
		fail(why, why_size, "%s may hold a sitecustomize", zip);
		return -1;
	}
	snprintf(site, sizeof site, "%s/lib/python%s/site-packages", prefix, xy);
	const char *dirs[] = { stdlib, dynload, site };
	for (size_t i = 0; i < 3; i++)
		if (has_sitecustomize(dirs[i], why, why_size))
			return -1;
	struct answer a = { buf, 0, size, false };
	buf[0] = '\0';
	put_line(&a, mark);
	put(&a, exe);
	put(&a, "\t");
	put_line(&a, version);
	put_line(&a, cwd);
	put_line(&a, stdlib); /* sysconfig's stdlib and platstdlib: the base's */
	put_line(&a, stdlib);
	size_t path_at = a.len;
	put_line(&a, zip); /* sys.path: the standard library's three, the site's */
	put_line(&a, stdlib);
	put_line(&a, dynload);
	if (is_dir(site)) {
		put_line(&a, site);
		if (!add_pth_dirs(&a, path_at, site, why, why_size))
			return -1;
	}
	if (a.full) {
		fail(why, why_size, "%s", "the answer is too long");
		return -1;
	}
	return (int)a.len;
}
