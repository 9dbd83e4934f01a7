/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of probe/python_venv.c: a virtual environment's sys.path
 * read from its files, in the form python_env.c's query prints it (the
 * mark; sys.executable TAB the version; the cwd; sysconfig's stdlib and
 * platstdlib; sys.path), or why the files do not say it all. The venvs are
 * built here file by file, so the oracle is CPython's own rules as the
 * head of probe/python_venv.c and kimg-probe(1) state them, written out by
 * hand for each layout: site.venv's prefix (the parent of the interpreter's
 * directory), getpath's base prefix (the parent of `home`, found by
 * lib/pythonX.Y/os.py), sys.path (pythonXY.zip, lib/pythonX.Y,
 * lib-dynload, site-packages, then each .pth's directories in name order),
 * and each thing that sends doctor to the interpreter instead. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "fail_alloc.h"

/* The paths here are short (a few hundred bytes under /tmp); GCC cannot
 * know it of each snprintf into a path buffer. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define MARK "kimg-mark"

static char dir[] = "/tmp/kimg-test-python-venv.XXXXXX";
static char why[512];
static char answer[65536];

extern char **environ;

static void mkdirs(const char *path)
{
	char p[4096];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s", p);
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* An ELF executable that is not Python (it is never started). */
static void put_elf(const char *path)
{
	FILE *in = fopen("/bin/true", "rb"), *out = fopen(path, "wb");
	ck_assert(in && out);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
	ck_assert_int_eq(chmod(path, 0755), 0);
}

/* A base installation and a venv on it, under dir/name: root/base with
 * bin/ (its home), lib/python3.12/os.py and lib-dynload; root/v with
 * bin/python, pyvenv.cfg and an empty site-packages. The cwd is root. */
struct venv {
	char root[512], base[600], v[600], python[700], cfg[700], site[700], stdlib[700];
};

static void write_cfg(const struct venv *e, const char *text)
{
	put_file(e->cfg, text);
}

static struct venv make_venv(const char *name)
{
	struct venv e;
	snprintf(e.root, sizeof e.root, "%s/%s", dir, name);
	snprintf(e.base, sizeof e.base, "%s/base", e.root);
	snprintf(e.v, sizeof e.v, "%s/v", e.root);
	snprintf(e.python, sizeof e.python, "%s/bin/python", e.v);
	snprintf(e.cfg, sizeof e.cfg, "%s/pyvenv.cfg", e.v);
	snprintf(e.site, sizeof e.site, "%s/lib/python3.12/site-packages", e.v);
	snprintf(e.stdlib, sizeof e.stdlib, "%s/lib/python3.12", e.base);
	char p[1024];
	snprintf(p, sizeof p, "%s/bin", e.base);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/lib-dynload", e.stdlib);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/os.py", e.stdlib);
	put_file(p, "");
	snprintf(p, sizeof p, "%s/bin", e.v);
	mkdirs(p);
	mkdirs(e.site);
	put_elf(e.python);
	snprintf(p, sizeof p, "home = %s/bin\ninclude-system-site-packages = false\nversion = 3.12.4\n", e.base);
	write_cfg(&e, p);
	ck_assert_int_eq(chdir(e.root), 0);
	return e;
}

/* The answer Python would print for e (with `extra` sys.path lines after
 * site-packages; site NULL: no site-packages directory). */
static const char *expected(const struct venv *e, const char *version, const char *site, const char *extra)
{
	static char buf[8192];
	snprintf(buf, sizeof buf, MARK "\n%s\t%s\n%s\n%s\n%s\n%s/lib/python312.zip\n%s\n%s/lib-dynload\n%s%s%s",
		 e->python, version, e->root, e->stdlib, e->stdlib, e->base, e->stdlib, e->stdlib, site ? site : "",
		 site ? "\n" : "", extra);
	return buf;
}

static int ask(const char *python)
{
	why[0] = '\0';
	answer[0] = '\0';
	return probe_python_venv_answer(python, MARK, answer, sizeof answer, why, sizeof why);
}

static void expect_answer(const char *python, const char *want)
{
	int n = ask(python);
	ck_assert_msg(n >= 0, "%s: %s", python, why);
	ck_assert_str_eq(answer, want);
	ck_assert_int_eq(n, (int)strlen(want));
}

static void expect_why(const char *python, const char *want)
{
	ck_assert_int_eq(ask(python), -1);
	ck_assert_str_eq(why, want);
}

/* No PYTHON* variable that moves sys.path (the runner's own unset). */
static void setup(void)
{
	for (;;) {
		char **e = environ;
		while (*e && strncmp(*e, "PYTHON", 6) != 0 && strncmp(*e, "__PYVENV_LAUNCHER__=", 20) != 0)
			e++;
		if (!*e)
			break;
		char name[256];
		snprintf(name, sizeof name, "%.*s", (int)(strchr(*e, '=') - *e), *e);
		unsetenv(name);
	}
}

START_TEST(plain_venv)
{
	struct venv e = make_venv("plain");
	expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
	/* virtualenv's version_info, keys in any case, spaces and CRLF */
	char cfg[1024];
	snprintf(cfg, sizeof cfg,
		 "no equals sign here\r\n  Home\t=  %s/bin \r\nImplementation = cpython\r\nversion_info = 3.12.4.final.0\r\n"
		 "version = 3.9.0\r\ninclude-system-site-packages = False\r\n",
		 e.base);
	write_cfg(&e, cfg);
	expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
	/* no lib-dynload: still on sys.path, as getpath puts it */
	char dynload[1024];
	snprintf(dynload, sizeof dynload, "%s/lib-dynload", e.stdlib);
	ck_assert_int_eq(rmdir(dynload), 0);
	expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
	/* no site-packages directory: sys.path ends at lib-dynload */
	ck_assert_int_eq(rmdir(e.site), 0);
	expect_answer(e.python, expected(&e, "3.12.4", NULL, ""));
}
END_TEST

/* home relative to the cwd; home naming a directory without the
 * library, the interpreter a link into an installation that has it. */
START_TEST(home_found)
{
	struct venv e = make_venv("home");
	write_cfg(&e, "home = base/bin\nversion = 3.12.4\n");
	expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
	/* the venv's python a link to the real one; home a directory of links */
	char real[1024], link_home[1024], cfg[1200];
	snprintf(real, sizeof real, "%s/bin/python3.12", e.base);
	put_elf(real);
	ck_assert_int_eq(unlink(e.python), 0);
	ck_assert_int_eq(symlink(real, e.python), 0);
	snprintf(link_home, sizeof link_home, "%s/shims/bin", e.root);
	mkdirs(link_home);
	snprintf(cfg, sizeof cfg, "home = %s\nversion = 3.12.4\n", link_home);
	write_cfg(&e, cfg);
	expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
	/* neither home's parent nor the real interpreter's has one */
	char os_py[1024];
	snprintf(os_py, sizeof os_py, "%s/os.py", e.stdlib);
	ck_assert_int_eq(unlink(os_py), 0);
	char want[1200];
	snprintf(want, sizeof want, "no standard library at %s/shims/lib/python3.12", e.root);
	expect_why(e.python, want);
}
END_TEST

START_TEST(home_too_long)
{
	struct venv e = make_venv("longhome");
	char cfg[4352];
	memset(cfg, 'h', sizeof cfg);
	memcpy(cfg, "home = ", 7);
	strcpy(cfg + 4200, "\nversion = 3.12.4\n");
	write_cfg(&e, cfg);
	char want[1024];
	snprintf(want, sizeof want, "%s: home too long", e.cfg);
	expect_why(e.python, want);
}
END_TEST

/* .pth files: in name order, their directory lines (relative to
 * site-packages, absolute; comments, blank and missing ones dropped);
 * setuptools' distutils shim adds nothing. */
START_TEST(pth_directories)
{
	struct venv e = make_venv("pth");
	char p[1024], extra[4096], text[5000];
	snprintf(p, sizeof p, "%s/rel", e.site);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/abs", e.root);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/up", e.root);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/b.pth", e.site);
	put_file(p, "# a comment\nrel\n\n   \n/nonexistent/dir\r\n.\nrel/\n./rel/.\nrel/x/../../../../../../up\n");
	snprintf(p, sizeof p, "%s/c.pth", e.site);
	char far[4200];
	memset(far, 'x', 4100); /* no such path can be */
	far[4100] = '\0';
	snprintf(text, sizeof text, "/..\n../../../../../../../../../../../../../../../../..\n%s\n", far);
	put_file(p, text);
	snprintf(p, sizeof p, "%s/d.pth", e.site);
	ck_assert_int_eq(symlink("nowhere", p), 0); /* site skips a .pth it cannot open */
	snprintf(p, sizeof p, "%s/e.pth", e.site);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/a.pth", e.site);
	/* a leading blank is part of the name (site strips the end only) */
	snprintf(text, sizeof text, "%s/abs \t\n\t%s/abs\n%s/abs\n%s\n", e.root, e.root, e.root, e.stdlib);
	put_file(p, text);
	snprintf(p, sizeof p, "%s/.hidden.pth", e.site);
	put_file(p, "/\n");
	snprintf(p, sizeof p, "%s/.pth", e.site);
	put_file(p, "/\n");
	snprintf(p, sizeof p, "%s/notes.txt", e.site);
	put_file(p, "/\n");
	snprintf(p, sizeof p, "%s/_distutils_hack", e.site);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/distutils-precedence.pth", e.site);
	put_file(p, "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; "
		    "enabled and __import__('_distutils_hack').add_shim(); \n");
	/* each directory once: site's known_paths holds sys.path's (the
	 * standard library, site-packages itself) and each one added */
	snprintf(extra, sizeof extra, "%s/abs\n%s/rel\n%s/up\n/\n", e.root, e.site, e.root);
	expect_answer(e.python, expected(&e, "3.12.4", e.site, extra));
	/* without _distutils_hack the shim's line is code that runs */
	snprintf(p, sizeof p, "%s/_distutils_hack", e.site);
	ck_assert_int_eq(rmdir(p), 0);
	char want[1024];
	snprintf(want, sizeof want, "%s/distutils-precedence.pth runs code", e.site);
	expect_why(e.python, want);
}
END_TEST

START_TEST(pth_refused)
{
	struct venv e = make_venv("pthbad");
	char p[1024], want[1024];
	snprintf(p, sizeof p, "%s/x.pth", e.site);
	put_file(p, "import\tsys\n");
	snprintf(want, sizeof want, "%s runs code", p);
	expect_why(e.python, want);
	put_file(p, "importlib_dir\n");  /* a directory line that starts with "import" */
	expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
	put_file(p, "# caf\xc3\xa9\n");
	snprintf(want, sizeof want, "%s is not ASCII", p);
	expect_why(e.python, want);
	/* a .pth directory that holds a sitecustomize */
	char d[1024];
	snprintf(d, sizeof d, "%s/extra", e.root);
	mkdirs(d);
	snprintf(p, sizeof p, "%s/sitecustomize.cpython-312-x86_64-linux-gnu.so", d);
	put_file(p, "");
	snprintf(p, sizeof p, "%s/x.pth", e.site);
	snprintf(want, sizeof want, "%s\n", d);
	put_file(p, want);
	snprintf(want, sizeof want, "a sitecustomize module is in %s", d);
	expect_why(e.python, want);
}
END_TEST

/* A sitecustomize anywhere `import sitecustomize` could find it. */
START_TEST(sitecustomize)
{
	struct venv e = make_venv("sc");
	char p[1024], want[1024];
	snprintf(p, sizeof p, "%s/sitecustomizer.py", e.stdlib); /* another name */
	put_file(p, "");
	expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
	const char *where[] = { e.stdlib, "lib-dynload", e.site };
	for (int i = 0; i < 3; i++) {
		char d[800];
		if (i == 1)
			snprintf(d, sizeof d, "%s/lib-dynload", e.stdlib);
		else
			snprintf(d, sizeof d, "%s", where[i]);
		snprintf(p, sizeof p, "%s/sitecustomize%s", d, i == 0 ? ".py" : i == 1 ? ".cpython-312-x86_64-linux-gnu.so" : "");
		if (i == 2)
			mkdirs(p); /* a package */
		else
			put_file(p, "");
		snprintf(want, sizeof want, "a sitecustomize module is in %s", d);
		expect_why(e.python, want);
		if (i == 2)
			rmdir(p);
		else
			unlink(p);
	}
	expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
}
END_TEST

/* What else the base installation may hold that the files cannot say. */
START_TEST(base_layouts_refused)
{
	struct venv e = make_venv("layouts");
	char p[1024], want[1024];
	snprintf(p, sizeof p, "%s/lib64/python3.12", e.base);
	mkdirs(p);
	snprintf(want, sizeof want, "a standard library in lib64 (%s): its platlibdir is not known", p);
	expect_why(e.python, want);
	ck_assert_int_eq(rmdir(p), 0);
	char lib64[1024];
	snprintf(lib64, sizeof lib64, "%s/lib64", e.base);
	ck_assert_int_eq(rmdir(lib64), 0);
	snprintf(p, sizeof p, "%s/lib/python312.zip", e.base);
	put_file(p, "");
	snprintf(want, sizeof want, "%s may hold a sitecustomize", p);
	expect_why(e.python, want);
	ck_assert_int_eq(unlink(p), 0);
	expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
}
END_TEST

/* pyvenv.cfg's settings that send doctor to the interpreter. */
START_TEST(cfg_refused)
{
	struct venv e = make_venv("cfg");
	char cfg[1024], want[1024];
	snprintf(cfg, sizeof cfg, "home = %s/bin\nimplementation = PyPy\nversion = 3.12.4\n", e.base);
	write_cfg(&e, cfg);
	snprintf(want, sizeof want, "%s names an implementation other than CPython", e.cfg);
	expect_why(e.python, want);
	snprintf(cfg, sizeof cfg, "home = %s/bin\ninclude-system-site-packages = TRUE\nversion = 3.12.4\n", e.base);
	write_cfg(&e, cfg);
	snprintf(want, sizeof want, "%s includes the system site-packages", e.cfg);
	expect_why(e.python, want);
	static const char *const versions[] = { "3.13.0rc1", "3.12", "", "3.12.4.final.1", "3.12.4 " };
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
		snprintf(cfg, sizeof cfg, "home = %s/bin\nversion = %s\n", e.base, versions[i]);
		write_cfg(&e, cfg);
		snprintf(want, sizeof want, "%s names no release version X.Y.Z", e.cfg);
		if (i == 4) /* the value's own trailing space is dropped, as Python's configparser does */
			expect_answer(e.python, expected(&e, "3.12.4", e.site, ""));
		else
			expect_why(e.python, want);
	}
	write_cfg(&e, "version = 3.12.4\nhome =\n");
	snprintf(want, sizeof want, "%s names no home", e.cfg);
	expect_why(e.python, want);
	ck_assert_int_eq(unlink(e.cfg), 0);
	snprintf(want, sizeof want, "no pyvenv.cfg beside %s: not a virtual environment", e.python);
	expect_why(e.python, want);
}
END_TEST

/* The interpreter named: a plain absolute path, or found on PATH as
 * execvp would, never through the current directory. */
START_TEST(interpreter_named)
{
	struct venv e = make_venv("named");
	char want[1024], path[2048];
	const char *ok = expected(&e, "3.12.4", e.site, "");
	char okbuf[8192];
	snprintf(okbuf, sizeof okbuf, "%s", ok);
	expect_why("v/bin/python", "v/bin/python is not a plain absolute path");
	snprintf(path, sizeof path, "%s/bin/../bin/python", e.v);
	snprintf(want, sizeof want, "%s is not a plain absolute path", path);
	expect_why(path, want);
	snprintf(path, sizeof path, "%s/pyvenv.cfg", e.v);
	snprintf(want, sizeof want, "%s is not executable", path);
	expect_why(path, want);
	char script[1024];
	snprintf(script, sizeof script, "%s/bin/wrapper", e.v);
	put_file(script, "#!/bin/sh\nexec python3 \"$@\"\n");
	ck_assert_int_eq(chmod(script, 0755), 0);
	snprintf(want, sizeof want, "%s is not an ELF executable (a wrapper script?)", script);
	expect_why(script, want);
	expect_why("/bin/true", "/bin/true is not inside a virtual environment");
	char huge[5000];
	memset(huge, 'p', sizeof huge - 1);
	huge[0] = '/';
	huge[sizeof huge - 1] = '\0';
	ck_assert_int_eq(ask(huge), -1); /* "NAME: path too long", cut to the buffer */
	ck_assert_uint_eq(strlen(why), sizeof why - 1);
	ck_assert_int_eq(strncmp(why, huge, sizeof why - 1), 0);
	/* on PATH */
	unsetenv("PATH");
	expect_why("python", "no PATH to find python in");
	setenv("PATH", "", 1);
	expect_why("python", "no PATH to find python in");
	static const char *const empty[] = { ":%s/bin", "%s/bin:", "/usr/bin::%s/bin" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, empty[i], e.v);
		setenv("PATH", path, 1);
		expect_why("python", "PATH has an empty entry (the current directory) to find python in");
	}
	/* the first entry that holds an executable file of the name */
	char d1[1024], d2[1024], f[1100];
	snprintf(d1, sizeof d1, "%s/notexec", e.root);
	mkdirs(d1);
	snprintf(f, sizeof f, "%s/python", d1);
	put_file(f, "");
	snprintf(d2, sizeof d2, "%s/isdir/python", e.root);
	mkdirs(d2);
	snprintf(path, sizeof path, "/nonexistent:%s:%s/isdir:%s/bin:/usr/bin", d1, e.root, e.v);
	setenv("PATH", path, 1);
	expect_answer("python", okbuf);
	snprintf(path, sizeof path, "/nonexistent:%s/bin/../bin", e.v);
	setenv("PATH", path, 1);
	expect_why("python", "the PATH entry that holds python is not a plain absolute path");
	snprintf(path, sizeof path, "/nonexistent:%s//bin", e.v);
	setenv("PATH", path, 1);
	expect_why("python", "the PATH entry that holds python is not a plain absolute path");
	setenv("PATH", "v/bin", 1);
	expect_why("python", "the PATH entry that holds python is not a plain absolute path");
	setenv("PATH", "/nonexistent:/also/not", 1);
	expect_why("python", "python not found on PATH");
}
END_TEST

/* PYTHON* variables: those that leave sys.path alone are allowed, any
 * other (or a longer name that starts like one) is not. */
START_TEST(environment)
{
	struct venv e = make_venv("env");
	char ok[8192];
	snprintf(ok, sizeof ok, "%s", expected(&e, "3.12.4", e.site, ""));
	static const char *const harmless[] = { "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
						"PYTHONFAULTHANDLER", "PYTHONHASHSEED", "PYTHONWARNINGS", "PYTHONUTF8",
						"PYTHONBREAKPOINT", "PYTHONPYCACHEPREFIX", "PYTHONDEVMODE" };
	for (size_t i = 0; i < sizeof harmless / sizeof harmless[0]; i++)
		setenv(harmless[i], "1", 1);
	/* and names that only start like Python's */
	setenv("PYTHO", "1", 1);
	setenv("PYTHOX", "1", 1);
	setenv("__PYVENV_LAUNCHER__X", "1", 1);
	expect_answer(e.python, ok);
	static const char *const moving[] = { "PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONUSERBASE",
					      "PYTHONUNBUFFEREDX", "PYTHONHASHSEE", "__PYVENV_LAUNCHER__" };
	for (size_t i = 0; i < sizeof moving / sizeof moving[0]; i++) {
		setenv(moving[i], "1", 1);
		char want[128];
		snprintf(want, sizeof want, "%s is set", moving[i]);
		expect_why(e.python, want);
		unsetenv(moving[i]);
	}
	char name[100];
	memset(name, 'X', sizeof name - 1);
	memcpy(name, "PYTHON", 6);
	name[sizeof name - 1] = '\0';
	setenv(name, "", 1);
	char want[128];
	snprintf(want, sizeof want, "%.63s is set", name);
	expect_why(e.python, want);
	unsetenv(name);
	expect_answer(e.python, ok);
}
END_TEST

START_TEST(no_current_directory)
{
	struct venv e = make_venv("nocwd");
	char gone[1024];
	snprintf(gone, sizeof gone, "%s/gone", e.root);
	mkdirs(gone);
	ck_assert_int_eq(chdir(gone), 0);
	ck_assert_int_eq(rmdir(gone), 0);
	expect_why(e.python, "no current directory");
}
END_TEST

/* The answer past its buffer: refused, never cut. */
START_TEST(answer_too_long)
{
	struct venv e = make_venv("small");
	const char *want = expected(&e, "3.12.4", e.site, "");
	size_t n = strlen(want);
	char *buf = malloc(n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(probe_python_venv_answer(e.python, MARK, buf, n + 1, why, sizeof why), (int)n); /* just fits */
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(probe_python_venv_answer(e.python, MARK, buf, n, why, sizeof why), -1);
	ck_assert_str_eq(why, "the answer is too long");
	free(buf);
}
END_TEST

/* Each allocation failing in turn (the PATH's copy, pyvenv.cfg's and each
 * .pth's stream, the listings): the whole answer or -1, never an answer
 * that lacks what the files say. */
START_TEST(allocation_failures)
{
	if (!FAIL_ALLOC_WORKS)
		return;
	struct venv e = make_venv("oom");
	char p[1024], extra[2048], path[1024];
	snprintf(p, sizeof p, "%s/extra", e.root);
	mkdirs(p);
	snprintf(extra, sizeof extra, "%s\n", p);
	snprintf(p, sizeof p, "%s/a.pth", e.site);
	put_file(p, extra);
	snprintf(path, sizeof path, "/nonexistent:%s/bin", e.v);
	setenv("PATH", path, 1);
	char want[8192];
	snprintf(want, sizeof want, "%s", expected(&e, "3.12.4", e.site, extra));
	bool hit = true;
	long k;
	for (k = 1; hit; k++) {
		why[0] = answer[0] = '\0';
		fail_alloc_arm(k);
		int n = probe_python_venv_answer("python", MARK, answer, sizeof answer, why, sizeof why);
		hit = fail_alloc_hit();
		if (n >= 0)
			ck_assert_msg(strcmp(answer, want) == 0, "allocation %ld failed: answer\n%s", k, answer);
		else
			ck_assert_msg(hit && why[0], "allocation %ld: -1 with nothing failed (%s)", k, why);
	}
	ck_assert_int_gt(k, 5); /* PATH's copy, the streams, the listings */
	/* with a sitecustomize in the .pth's directory: never an answer */
	snprintf(p, sizeof p, "%s/extra/sitecustomize.py", e.root);
	put_file(p, "");
	for (k = 1, hit = true; hit; k++) {
		fail_alloc_arm(k);
		int n = probe_python_venv_answer("python", MARK, answer, sizeof answer, why, sizeof why);
		hit = fail_alloc_hit();
		ck_assert_msg(n == -1, "allocation %ld failed: an answer", k);
	}
}
END_TEST

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static Suite *suite(void)
{
	Suite *s = suite_create("python_venv");
	TCase *t = tcase_create("venv");
	tcase_add_checked_fixture(t, setup, NULL);
	tcase_add_test(t, plain_venv);
	tcase_add_test(t, home_found);
	tcase_add_test(t, home_too_long);
	tcase_add_test(t, pth_directories);
	tcase_add_test(t, pth_refused);
	tcase_add_test(t, sitecustomize);
	tcase_add_test(t, base_layouts_refused);
	tcase_add_test(t, cfg_refused);
	tcase_add_test(t, interpreter_named);
	tcase_add_test(t, environment);
	tcase_add_test(t, answer_too_long);
	tcase_add_test(t, no_current_directory);
	tcase_add_test(t, allocation_failures);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	int rc = run_suite(suite());
	if (chdir("/") == 0)
		nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
