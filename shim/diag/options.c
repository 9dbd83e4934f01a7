/* SPDX-License-Identifier: Apache-2.0 */
/* KIMG_* options: read once from the environment in the library
 * constructor, then read-only (docs/design.md section 7).
 *
 * The constructor runs before the program's main and possibly before libc
 * has finished initialising other preloaded libraries, so this file walks
 * `environ` itself (as mimalloc's _mi_prim_getenv does), never allocates,
 * and compares ASCII by hand instead of through locale-aware strcasecmp.
 * A bad value produces one warning naming the variable and keeps the
 * default: a typo must never stop the user's program.
 *
 * Past 500 lines on purpose: the option table (one row per variable,
 * docs/design.md section 7), the parsers its rows point to, the banner
 * that prints them back and the locale-free ASCII helpers all run under
 * the constructor's rules above and share one parse state; split, the
 * helpers would become a dozen shared one-line functions with this file
 * as their only caller. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "diag_internal.h"

struct kimg_options kimg_opts;
struct kimg_env_snapshot kimg_env;

/* Programs that never load GPU code but are often started under a
 * preloaded libkimg (a build spawned from a training script); staying out
 * of them keeps compilers fast and their output clean. */
static const char default_skip[] = KIMG_DEFAULT_SKIP;

/* Rank variables of the common launchers, first match wins (torchrun,
 * Open MPI, MPICH/PMI, Slurm). Without any, %r expands to "0": a lone
 * process is rank 0 of one. */
static const char *const rank_vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID" };
/* The same launchers' rank on this node and number of processes, in the
 * same order, for the report's "process" object. */
static const char *const local_rank_vars[] = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
					       "SLURM_LOCALID" };
static const char *const world_size_vars[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS" };

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool eq_nocase(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (ascii_lower(*a) != ascii_lower(*b))
			return false;
	return *a == *b;
}

static bool prefix_nocase(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (ascii_lower(*s) != ascii_lower(*prefix))
			return false;
	return true;
}

/* Value of NAME in envp, or NULL. */
static const char *env_find(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

struct parse_state {
	const struct kimg_options_ctx *ctx;
	char *const *envp;
	char *warn;
	size_t warn_size;
	int warnings;
};

static void warn(struct parse_state *st, const char *name, const char *value, const char *why)
{
	st->warnings++;
	if (!st->warn || st->warn_size == 0)
		return;
	size_t used = strnlen(st->warn, st->warn_size);
	if (used + 1 >= st->warn_size)
		return;
	snprintf(st->warn + used, st->warn_size - used, "kimg: warning: %s=%.64s: %s; using the default\n", name,
		 value, why);
}

/* 1/true/yes/on and 0/false/no/off, any case; -1 otherwise. */
static int parse_bool(const char *v)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (eq_nocase(v, yes[i]))
			return 1;
		if (eq_nocase(v, no[i]))
			return 0;
	}
	return -1;
}

/* Decimal in [lo, hi]; false on anything else. */
static bool parse_int(const char *v, long lo, long hi, long *out)
{
	long n = 0;
	if (!*v)
		return false;
	for (; *v; v++) {
		if (*v < '0' || *v > '9' || n > hi)
			return false;
		n = n * 10 + (*v - '0');
	}
	if (n < lo || n > hi)
		return false;
	*out = n;
	return true;
}

/* The first of vars that is set and non-empty, as a number; -1 when none is
 * or it is not a plain decimal (these are the launchers' variables, not
 * ours: a strange value is silently "unknown", never a warning). */
static long launcher_number(char *const *envp, const char *const *vars, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = env_find(envp, vars[i]);
		long out;
		if (v && *v)
			return parse_int(v, 0, 1L << 30, &out) ? out : -1;
	}
	return -1;
}

/* Does spec use %c (a %% pair is a literal percent sign)? */
static bool spec_uses(const char *spec, char c)
{
	for (const char *s = spec; s && *s; s++)
		if (*s == '%' && s[1]) {
			if (s[1] == c)
				return true;
			s++;
		}
	return false;
}

static bool spec_has_pid(const char *spec)
{
	return spec_uses(spec, 'p');
}

/* fnmatch(3) takes an unclosed '[' as a literal, so "force-ptx:[" would
 * quietly select nothing; refuse it instead. A ']' right after '[' or "[!"
 * is a member, a backslash quotes the next byte. */
bool kimg_options_glob_well_formed(const char *g)
{
	for (; *g; g++) {
		if (*g == '\\') {
			if (!*++g)
				return false;
		} else if (*g == '[') {
			const char *c = g + 1;
			if (*c == '!' || *c == '^')
				c++;
			if (*c == ']')
				c++;
			while (*c && *c != ']')
				c++;
			if (!*c)
				return false;
			g = c;
		}
	}
	return true;
}

/* ---- the option table: one row per KIMG_ variable (diag_internal.h) ----
 * As mimalloc's options.c: the enum names the options, the table describes
 * each (type, default, accepted words, where the value goes), and parsing,
 * warnings and the KIMG_VERBOSE banner are loops over it. Booleans and
 * word lists are parsed generically; a row's own parser handles what no
 * word list can say (a path, a program list). Adding an option is one
 * enum value, one row and its field in struct kimg_options. */

#define OPT_FIELD(field) offsetof(struct kimg_options, field)
#define KEEP_FIELD(field) offsetof(struct kimg_env_snapshot, field), sizeof(((struct kimg_env_snapshot *)0)->field)
#define BOOL_EXPECTED "expected 1/true/yes/on or 0/false/no/off"

_Static_assert(sizeof(enum kimg_format) == sizeof(int) && sizeof(enum kimg_on_error) == sizeof(int) &&
		       sizeof(enum kimg_fallback) == sizeof(int),
	       "enum options are stored as int");

static void parse_log(struct parse_state *st, const struct kimg_option *opt, const char *v, struct kimg_options *o,
		      struct kimg_env_snapshot *env)
{
	if (!*v || eq_nocase(v, "stderr"))
		return;
	env->log_per_process = spec_has_pid(v);
	/* the spec is kept whole, for a forked child to expand again */
	if (strlen(v) >= sizeof env->log_spec ||
	    !kimg_log_path_expand(v, st->ctx->pid, env, o->log_path, sizeof o->log_path)) {
		env->log_per_process = false;
		o->log_path[0] = '\0';
		warn(st, opt->name, v, "bad %-escape or path too long (stderr is used)");
	}
}

static void show_log(const struct kimg_options *o, const struct kimg_env_snapshot *env, char *buf, size_t size)
{
	snprintf(buf, size, "%s", o->log_path[0] ? o->log_path : "stderr");
}

static void parse_skip(struct parse_state *st, const struct kimg_option *opt, const char *v, struct kimg_options *o,
		       struct kimg_env_snapshot *env)
{
	if (strlen(v) >= sizeof env->skip) {
		warn(st, opt->name, v, "list too long");
		return;
	}
	copy_str(env->skip, sizeof env->skip, v);
}

static void show_skip(const struct kimg_options *o, const struct kimg_env_snapshot *env, char *buf, size_t size)
{
	snprintf(buf, size, "%s", env->skip);
}

/* exit:N, N from 0 to 255 */
static int parse_exit_code(const char *arg, struct kimg_options *o)
{
	long code;
	if (!parse_int(arg, 0, 255, &code))
		return 0;
	o->exit_code = (int)code;
	return 1;
}

static void show_exit_code(const struct kimg_options *o, char *buf, size_t size)
{
	snprintf(buf, size, ":%d", o->exit_code);
}

/* force-ptx:GLOB, GLOB non-empty and under 256 bytes; -1: refused with its
 * own warning (an unclosed '[' would select nothing, silently) */
static int parse_fallback_glob(const char *arg, struct kimg_options *o)
{
	if (!*arg || strlen(arg) >= sizeof o->fallback_glob)
		return 0;
	if (!kimg_options_glob_well_formed(arg))
		return -1;
	copy_str(o->fallback_glob, sizeof o->fallback_glob, arg);
	return 1;
}

static void show_fallback_glob(const struct kimg_options *o, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", o->fallback_glob[0] ? ":" : "", o->fallback_glob);
}

static const struct kimg_option_word format_words[] = {
	{ "text", KIMG_FORMAT_TEXT, false }, { "json", KIMG_FORMAT_JSON, false },
	{ "jsonl", KIMG_FORMAT_JSON, false }, { NULL, 0, false },
};
static const struct kimg_option_word on_error_words[] = {
	{ "continue", KIMG_ON_ERROR_CONTINUE, false }, { "abort", KIMG_ON_ERROR_ABORT, false },
	{ "exit", KIMG_ON_ERROR_EXIT, true }, { NULL, 0, false },
};
static const struct kimg_option_word fallback_words[] = {
	{ "none", KIMG_FALLBACK_NONE, false },      { "off", KIMG_FALLBACK_NONE, false },
	{ "", KIMG_FALLBACK_NONE, false },          { "ptx", KIMG_FALLBACK_PTX, false },
	{ "force-ptx", KIMG_FALLBACK_FORCE_PTX, false }, { "force-ptx", KIMG_FALLBACK_FORCE_PTX, true },
	{ NULL, 0, false },
};

/* Row i describes option i (tests/unit/test_options.c checks it); the
 * order is also the order of parsing, warnings and the banner. */
const struct kimg_option kimg_option_table[KIMG_OPT_COUNT] = {
	[KIMG_OPT_LOG] = { KIMG_OPT_LOG, "KIMG_LOG", KIMG_OPT_TEXT, "stderr", NULL, 0, KEEP_FIELD(log_spec), NULL,
			   parse_log, show_log, NULL, NULL, NULL },
	[KIMG_OPT_FORMAT] = { KIMG_OPT_FORMAT, "KIMG_FORMAT", KIMG_OPT_ENUM, "text", format_words,
			      OPT_FIELD(format), 0, 0, "expected text or json", NULL, NULL, NULL, NULL },
	[KIMG_OPT_VERBOSE] = { KIMG_OPT_VERBOSE, "KIMG_VERBOSE", KIMG_OPT_BOOL, "0", NULL, OPT_FIELD(verbose), 0, 0,
			       BOOL_EXPECTED, NULL, NULL, NULL, NULL },
	[KIMG_OPT_ON_ERROR] = { KIMG_OPT_ON_ERROR, "KIMG_ON_ERROR", KIMG_OPT_ENUM, "continue", on_error_words,
				OPT_FIELD(on_error), 0, 0, "expected continue, abort or exit:N (N from 0 to 255)", NULL,
				NULL, parse_exit_code, show_exit_code, NULL },
	[KIMG_OPT_FALLBACK] = { KIMG_OPT_FALLBACK, "KIMG_FALLBACK", KIMG_OPT_ENUM, "none", fallback_words,
				OPT_FIELD(fallback), KEEP_FIELD(fallback_spec),
				"expected ptx, force-ptx or force-ptx:GLOB (GLOB under 256 bytes)", NULL, NULL,
				parse_fallback_glob, show_fallback_glob,
				"GLOB has an unclosed '[' or ends in a lone backslash (no fallback)" },
	[KIMG_OPT_AUDIT] = { KIMG_OPT_AUDIT, "KIMG_AUDIT", KIMG_OPT_BOOL, "0", NULL, OPT_FIELD(audit), 0, 0,
			     BOOL_EXPECTED, NULL, NULL, NULL, NULL },
	/* on by default: docs/loading.md section 11 (the driver's error log) */
	[KIMG_OPT_DRIVER_LOG] = { KIMG_OPT_DRIVER_LOG, "KIMG_DRIVER_LOG", KIMG_OPT_BOOL, "1", NULL,
				  OPT_FIELD(driver_log), 0, 0, BOOL_EXPECTED, NULL, NULL, NULL, NULL },
	[KIMG_OPT_PTXAS_REASON] = { KIMG_OPT_PTXAS_REASON, "KIMG_PTXAS_REASON", KIMG_OPT_BOOL, "1", NULL,
				    OPT_FIELD(ptxas_reason), 0, 0, BOOL_EXPECTED, NULL, NULL, NULL, NULL },
	[KIMG_OPT_SKIP] = { KIMG_OPT_SKIP, "KIMG_SKIP", KIMG_OPT_TEXT, KIMG_DEFAULT_SKIP, NULL, 0, 0, 0, NULL,
			    parse_skip, show_skip, NULL, NULL, NULL },
	/* parsed before KIMG_SKIP is applied and never in secure mode, so
	 * KIMG_DISABLE=0 cannot undo another reason to stay off */
	[KIMG_OPT_DISABLE] = { KIMG_OPT_DISABLE, "KIMG_DISABLE", KIMG_OPT_BOOL, "0", NULL, OPT_FIELD(disabled), 0, 0,
			       BOOL_EXPECTED, NULL, NULL, NULL, NULL },
};

/* The generic parsers: a boolean, or one of the row's words (a word with
 * an argument takes "word:ARG" and hands ARG to the row). */
static void parse_generic(struct parse_state *st, const struct kimg_option *opt, const char *v, struct kimg_options *o)
{
	char *field = (char *)o + opt->field;
	if (opt->type == KIMG_OPT_BOOL) {
		int b = parse_bool(v);
		if (b < 0)
			warn(st, opt->name, v, opt->expected);
		else
			*(bool *)field = b;
		return;
	}
	for (const struct kimg_option_word *w = opt->words; w->word; w++) {
		if (!w->takes_arg && eq_nocase(v, w->word)) {
			*(int *)field = w->value;
			return;
		}
	}
	for (const struct kimg_option_word *w = opt->words; w->word; w++) {
		size_t len = strlen(w->word);
		if (!w->takes_arg || !prefix_nocase(v, w->word) || v[len] != ':')
			continue;
		int taken = opt->parse_arg(v + len + 1, o);
		if (taken > 0) {
			*(int *)field = w->value;
			return;
		}
		if (taken < 0) {
			warn(st, opt->name, v, opt->arg_refused);
			return;
		}
	}
	warn(st, opt->name, v, opt->expected);
}

static void parse_option(struct parse_state *st, const struct kimg_option *opt, const char *v, struct kimg_options *o,
			 struct kimg_env_snapshot *env)
{
	if (opt->keep_size)
		copy_str((char *)env + opt->keep, opt->keep_size, v);
	if (opt->parse)
		opt->parse(st, opt, v, o, env);
	else
		parse_generic(st, opt, v, o);
}

/* The banner's text for one option's value. */
static void show_option(const struct kimg_option *opt, const struct kimg_options *o,
			const struct kimg_env_snapshot *env, char *buf, size_t size)
{
	const char *field = (const char *)o + opt->field;
	if (opt->show) {
		opt->show(o, env, buf, size);
	} else if (opt->type == KIMG_OPT_BOOL) {
		snprintf(buf, size, "%d", *(const bool *)field ? 1 : 0);
	} else {
		int value = *(const int *)field;
		const struct kimg_option_word *w = opt->words;
		while (w->word && w->value != value)
			w++;
		size_t n = (size_t)snprintf(buf, size, "%s", w->word ? w->word : "?");
		/* the argument of the value's word with one ("exit" -> ":7") */
		for (w = opt->words; w->word && n < size; w++)
			if (w->takes_arg && w->value == value) {
				opt->show_arg(o, buf + n, size - n);
				break;
			}
	}
}

/* Is `prog` one of the comma-separated names in `list`? Exact match;
 * empty items are ignored. */
static bool in_list(const char *list, const char *prog)
{
	if (!prog || !*prog)
		return false;
	size_t plen = strlen(prog);
	for (const char *s = list; *s;) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		if (len == plen && len > 0 && memcmp(s, prog, len) == 0)
			return true;
		s += len + (end ? 1 : 0);
	}
	return false;
}

/* A driver switch is on when its value is a non-zero number (the driver
 * documents "=1"); the specific name wins over the generic one
 * (docs/loading.md section 9). */
static bool driver_switch(char *const *envp, const char *specific, const char *generic)
{
	const char *v = env_find(envp, specific);
	if (!v)
		v = env_find(envp, generic);
	long n;
	return v && parse_int(v, 0, LONG_MAX / 16, &n) && n != 0;
}

int kimg_options_parse(char *const *envp, const struct kimg_options_ctx *ctx, struct kimg_options *o,
		       struct kimg_env_snapshot *env, char *warn_buf, size_t warn_size)
{
	struct parse_state st = { ctx, envp, warn_buf, warn_size, 0 };
	memset(o, 0, sizeof *o);
	memset(env, 0, sizeof *env);
	copy_str(env->skip, sizeof env->skip, default_skip);
	/* the rows whose default is on (their default_text says "1") */
	o->driver_log = true;
	o->ptxas_reason = true;
	if (warn_buf && warn_size)
		warn_buf[0] = '\0';
	if (ctx->secure) {
		/* setuid, setgid or file capabilities: the environment belongs to
		 * someone with fewer rights than the process, so nothing in it may
		 * steer kimg (where to write, what to change); kimg stays passive */
		o->secure = true;
		o->disabled = true;
		return 0;
	}

	copy_str(env->host, sizeof env->host, ctx->hostname ? ctx->hostname : "");
	for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++) {
		const char *r = env_find(envp, rank_vars[i]);
		if (r && *r) {
			/* a rank goes into the KIMG_LOG path (%r): a number only,
			 * never "../../tmp/evil" */
			long n;
			if (parse_int(r, 0, 1L << 30, &n))
				copy_str(env->rank_text, sizeof env->rank_text, r);
			else if (spec_uses(env_find(envp, "KIMG_LOG"), 'r'))
				warn(&st, rank_vars[i], r, "not a number, so not a rank for %r in KIMG_LOG");
			break;
		}
	}

	for (size_t i = 0; i < KIMG_OPT_COUNT; i++) {
		const char *v = env_find(envp, kimg_option_table[i].name);
		if (v)
			parse_option(&st, &kimg_option_table[i], v, o, env);
	}

	env->rank = launcher_number(envp, rank_vars, sizeof rank_vars / sizeof rank_vars[0]);
	env->local_rank = launcher_number(envp, local_rank_vars, sizeof local_rank_vars / sizeof local_rank_vars[0]);
	env->world_size = launcher_number(envp, world_size_vars, sizeof world_size_vars / sizeof world_size_vars[0]);

	env->force_ptx_jit = driver_switch(envp, "CUDA_FORCE_PTX_JIT", "CUDA_FORCE_JIT");
	env->disable_ptx_jit = driver_switch(envp, "CUDA_DISABLE_PTX_JIT", "CUDA_DISABLE_JIT");

	const char *prog = ctx->exe && *ctx->exe ? ctx->exe : ctx->short_name;
	copy_str(env->program, sizeof env->program, prog ? prog : "");
	if (in_list(env->skip, ctx->exe) || in_list(env->skip, ctx->short_name)) {
		env->skipped = true;
		o->disabled = true;
	}
	return st.warnings;
}

size_t kimg_options_banner(const struct kimg_options *o, const struct kimg_env_snapshot *env, char *buf, size_t size)
{
	if (size == 0)
		return 0;
	size_t n = 0;
	int w = snprintf(buf, size, "kimg %s: loaded into %s;", KIMG_VERSION, env->program[0] ? env->program : "?");
	n = w < 0 ? 0 : (size_t)w < size ? (size_t)w : size - 1;
	for (size_t i = 0; i < KIMG_OPT_COUNT && n < size - 1; i++) {
		char value[600];
		show_option(&kimg_option_table[i], o, env, value, sizeof value);
		w = snprintf(buf + n, size - n, " %s=%s", kimg_option_table[i].name, value);
		n = w < 0 ? n : n + (size_t)w < size ? n + (size_t)w : size - 1;
	}
	if (n < size - 1) {
		w = snprintf(buf + n, size - n, "%s\n", env->skipped ? " (skipped: program in KIMG_SKIP)" : "");
		n = w < 0 ? n : n + (size_t)w < size ? n + (size_t)w : size - 1;
	}
	return n;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

void kimg_options_init(void)
{
	extern char **environ;
	char exe_path[PATH_MAX];
	char host[256] = "";
	char warnings[1024];
	struct kimg_options_ctx ctx = { NULL, program_invocation_short_name, host, (long)getpid(), false };

	/* glibc 2.16+; the kernel sets AT_SECURE when the exec changed the
	 * process's credentials (setuid, setgid, file capabilities) or an LSM
	 * asked for it: glibc drops LD_* then, kimg reads nothing at all */
	if (getauxval(AT_SECURE)) {
		ctx.secure = true;
		kimg_options_parse(environ, &ctx, &kimg_opts, &kimg_env, NULL, 0);
		return;
	}
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
	if (n > 0) {
		exe_path[n] = '\0';
		ctx.exe = basename_of(exe_path);
	}
	if (gethostname(host, sizeof host - 1) != 0)
		host[0] = '\0';
	host[sizeof host - 1] = '\0';

	/* stderr: the log target itself may be what is wrong */
	if (kimg_options_parse(environ, &ctx, &kimg_opts, &kimg_env, warnings, sizeof warnings) > 0)
		kimg_log_stderr(warnings, strlen(warnings));
}

/* For init (shim/hook/): the banner, when KIMG_VERBOSE is set. */
void kimg_options_print_banner(void)
{
	char line[1024];
	if (!kimg_opts.verbose)
		return;
	size_t n = kimg_options_banner(&kimg_opts, &kimg_env, line, sizeof line);
	kimg_log_write_human(line, n);
}
