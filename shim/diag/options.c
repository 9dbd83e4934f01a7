/* KIMG_* options: read once from the environment in the library
 * constructor, then read-only (docs/design.md section 7).
 *
 * The constructor runs before the program's main and possibly before libc
 * has finished initialising other preloaded libraries, so this file walks
 * `environ` itself (as mimalloc's _mi_prim_getenv does), never allocates,
 * and compares ASCII by hand instead of through locale-aware strcasecmp.
 * A bad value produces one warning naming the variable and keeps the
 * default: a typo must never stop the user's program. */
#include <errno.h>
#include <limits.h>
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

/* Expand %p %h %r %% into out; false when the result does not fit or a %
 * is followed by anything else. %h and %r come from env (recorded by
 * kimg_options_parse), so a forked child expands the same spec again with
 * only its pid changed. */
bool kimg_log_path_expand(const char *spec, long pid, const struct kimg_env_snapshot *env, char *out, size_t size)
{
	char num[24];
	size_t n = 0;
	for (const char *s = spec; *s; s++) {
		const char *piece = s;
		size_t len = 1;
		if (*s == '%') {
			switch (s[1]) {
			case 'p':
				snprintf(num, sizeof num, "%ld", pid);
				piece = num;
				break;
			case 'h':
				piece = env->host[0] ? env->host : "localhost";
				break;
			case 'r':
				piece = env->rank_text[0] ? env->rank_text : "0";
				break;
			case '%':
				piece = "%";
				break;
			default:
				return false;
			}
			len = strlen(piece);
			s++;
		}
		if (len >= size - n)
			return false;
		memcpy(out + n, piece, len);
		n += len;
	}
	out[n] = '\0';
	return true;
}

/* Does spec use %p (a %% pair is a literal percent sign)? */
static bool spec_has_pid(const char *spec)
{
	for (const char *s = spec; *s; s++)
		if (*s == '%' && s[1]) {
			if (s[1] == 'p')
				return true;
			s++;
		}
	return false;
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

/* ---- the option table: one row per KIMG_ variable ---- */

typedef void (*option_parse_fn)(struct parse_state *st, const char *name, const char *v, struct kimg_options *o,
				struct kimg_env_snapshot *env);

static void parse_log(struct parse_state *st, const char *name, const char *v, struct kimg_options *o,
		      struct kimg_env_snapshot *env)
{
	copy_str(env->log_spec, sizeof env->log_spec, v);
	if (!*v || eq_nocase(v, "stderr"))
		return;
	env->log_per_process = spec_has_pid(v);
	/* the spec is kept whole, for a forked child to expand again */
	if (strlen(v) >= sizeof env->log_spec ||
	    !kimg_log_path_expand(v, st->ctx->pid, env, o->log_path, sizeof o->log_path)) {
		env->log_per_process = false;
		o->log_path[0] = '\0';
		warn(st, name, v, "bad %-escape or path too long (stderr is used)");
	}
}

static void parse_format(struct parse_state *st, const char *name, const char *v, struct kimg_options *o,
			 struct kimg_env_snapshot *env)
{
	if (eq_nocase(v, "text"))
		o->format = KIMG_FORMAT_TEXT;
	else if (eq_nocase(v, "json") || eq_nocase(v, "jsonl"))
		o->format = KIMG_FORMAT_JSON;
	else
		warn(st, name, v, "expected text or json");
}

static void parse_verbose(struct parse_state *st, const char *name, const char *v, struct kimg_options *o,
			  struct kimg_env_snapshot *env)
{
	int b = parse_bool(v);
	if (b < 0)
		warn(st, name, v, "expected 1/true/yes/on or 0/false/no/off");
	else
		o->verbose = b;
}

static void parse_audit(struct parse_state *st, const char *name, const char *v, struct kimg_options *o,
			struct kimg_env_snapshot *env)
{
	int b = parse_bool(v);
	if (b < 0)
		warn(st, name, v, "expected 1/true/yes/on or 0/false/no/off");
	else
		o->audit = b;
}

static void parse_disable(struct parse_state *st, const char *name, const char *v, struct kimg_options *o,
			  struct kimg_env_snapshot *env)
{
	int b = parse_bool(v);
	if (b < 0)
		warn(st, name, v, "expected 1/true/yes/on or 0/false/no/off");
	else if (b)
		o->disabled = true;
}

static void parse_on_error(struct parse_state *st, const char *name, const char *v, struct kimg_options *o,
			   struct kimg_env_snapshot *env)
{
	long code;
	if (eq_nocase(v, "continue"))
		o->on_error = KIMG_ON_ERROR_CONTINUE;
	else if (eq_nocase(v, "abort"))
		o->on_error = KIMG_ON_ERROR_ABORT;
	else if (prefix_nocase(v, "exit:") && parse_int(v + 5, 0, 255, &code)) {
		o->on_error = KIMG_ON_ERROR_EXIT;
		o->exit_code = (int)code;
	} else
		warn(st, name, v, "expected continue, abort or exit:N (N from 0 to 255)");
}

static void parse_fallback(struct parse_state *st, const char *name, const char *v, struct kimg_options *o,
			   struct kimg_env_snapshot *env)
{
	copy_str(env->fallback_spec, sizeof env->fallback_spec, v);
	if (!*v || eq_nocase(v, "none") || eq_nocase(v, "off"))
		o->fallback = KIMG_FALLBACK_NONE;
	else if (eq_nocase(v, "ptx"))
		o->fallback = KIMG_FALLBACK_PTX;
	else if (eq_nocase(v, "force-ptx"))
		o->fallback = KIMG_FALLBACK_FORCE_PTX;
	else if (prefix_nocase(v, "force-ptx:") && v[10] && strlen(v + 10) < sizeof o->fallback_glob) {
		if (!kimg_options_glob_well_formed(v + 10)) {
			warn(st, name, v, "GLOB has an unclosed '[' or ends in a lone backslash (no fallback)");
			return;
		}
		o->fallback = KIMG_FALLBACK_FORCE_PTX;
		copy_str(o->fallback_glob, sizeof o->fallback_glob, v + 10);
	} else
		warn(st, name, v, "expected ptx, force-ptx or force-ptx:GLOB (GLOB under 256 bytes)");
}

static void parse_skip(struct parse_state *st, const char *name, const char *v, struct kimg_options *o,
		       struct kimg_env_snapshot *env)
{
	if (strlen(v) >= sizeof env->skip) {
		warn(st, name, v, "list too long");
		return;
	}
	copy_str(env->skip, sizeof env->skip, v);
}

static const struct {
	const char *name;
	option_parse_fn parse;
} option_table[] = {
	{ "KIMG_LOG", parse_log },         { "KIMG_FORMAT", parse_format },   { "KIMG_VERBOSE", parse_verbose },
	{ "KIMG_ON_ERROR", parse_on_error }, { "KIMG_FALLBACK", parse_fallback }, { "KIMG_AUDIT", parse_audit },
	{ "KIMG_SKIP", parse_skip },       { "KIMG_DISABLE", parse_disable },
};

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
			copy_str(env->rank_text, sizeof env->rank_text, r);
			break;
		}
	}

	for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; i++) {
		const char *v = env_find(envp, option_table[i].name);
		if (v)
			option_table[i].parse(&st, option_table[i].name, v, o, env);
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
	static const char *const on_error[] = { "continue", "abort", "exit" };
	static const char *const fallback[] = { "none", "ptx", "force-ptx" };
	char exit_code[16] = "";
	if (o->on_error == KIMG_ON_ERROR_EXIT)
		snprintf(exit_code, sizeof exit_code, ":%d", o->exit_code);
	int n = snprintf(buf, size,
			 "kimg %s: loaded into %s; KIMG_LOG=%s KIMG_FORMAT=%s KIMG_VERBOSE=1 KIMG_ON_ERROR=%s%s "
			 "KIMG_FALLBACK=%s%s%s KIMG_AUDIT=%d KIMG_SKIP=%s KIMG_DISABLE=%d%s\n",
			 KIMG_VERSION, env->program[0] ? env->program : "?", o->log_path[0] ? o->log_path : "stderr",
			 o->format == KIMG_FORMAT_JSON ? "json" : "text", on_error[o->on_error % 3], exit_code,
			 fallback[o->fallback % 3], o->fallback_glob[0] ? ":" : "", o->fallback_glob, o->audit ? 1 : 0,
			 env->skip, o->disabled ? 1 : 0, env->skipped ? " (skipped: program in KIMG_SKIP)" : "");
	if (n < 0 || size == 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
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
