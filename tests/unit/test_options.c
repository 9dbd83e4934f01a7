/* SPDX-License-Identifier: Apache-2.0 */
/* Specification of the KIMG_* options (shim/diag/options.c; docs/design.md section 7):
 * names, accepted values, defaults kept on bad values with one warning
 * naming the variable, %p/%h/%r/%% expansion, the skip list.
 * Links the diagnosis layer (build/libkimgdiag.a) as a library. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

#include "diag_internal.h"
#include "testutil.h"

static struct kimg_options o;
static struct kimg_env_snapshot env;
static char warnings[2048];

static const struct kimg_options_ctx ctx_python = { "python3.12", "python3", "node1", 4242, false };

static int parse_ctx(const struct kimg_options_ctx *ctx, char *const *envp)
{
	return kimg_options_parse(envp, ctx, &o, &env, warnings, sizeof warnings);
}

#define PARSE(...) parse_ctx(&ctx_python, (char *const[]){ __VA_ARGS__, NULL })

START_TEST(defaults_without_variables)
{
	ck_assert_int_eq(parse_ctx(&ctx_python, (char *const[]){ "PATH=/bin", NULL }), 0);
	ck_assert(!o.disabled && !o.verbose && !o.audit);
	ck_assert_int_eq(o.format, KIMG_FORMAT_TEXT);
	ck_assert_str_eq(o.log_path, "");
	ck_assert_int_eq(o.on_error, KIMG_ON_ERROR_CONTINUE);
	ck_assert_int_eq(o.fallback, KIMG_FALLBACK_NONE);
	ck_assert_str_eq(env.skip, KIMG_DEFAULT_SKIP);
	ck_assert_str_eq(env.program, "python3.12");
	ck_assert_str_eq(warnings, "");
}
END_TEST

START_TEST(format_text_json_any_case)
{
	PARSE("KIMG_FORMAT=json");
	ck_assert_int_eq(o.format, KIMG_FORMAT_JSON);
	PARSE("KIMG_FORMAT=JSON");
	ck_assert_int_eq(o.format, KIMG_FORMAT_JSON);
	PARSE("KIMG_FORMAT=Text");
	ck_assert_int_eq(o.format, KIMG_FORMAT_TEXT);
}
END_TEST

/* With no room for warnings (NULL, or a size of 0: the secure-mode parse
 * of options.c, which prints none), bad values are still counted and the
 * defaults kept, and nothing is written: the buffer's byte stays. */
START_TEST(bad_values_counted_without_a_warning_buffer)
{
	char *const bad[] = { "KIMG_FORMAT=xml", "KIMG_VERBOSE=maybe", "KIMG_AUDIT=1", NULL };
	ck_assert_int_eq(kimg_options_parse(bad, &ctx_python, &o, &env, NULL, 0), 2);
	ck_assert_int_eq(o.format, KIMG_FORMAT_TEXT);
	ck_assert(!o.verbose && o.audit);
	char one = 'x';
	ck_assert_int_eq(kimg_options_parse(bad, &ctx_python, &o, &env, &one, 0), 2);
	ck_assert_int_eq(one, 'x');
}
END_TEST

START_TEST(bad_value_warns_once_naming_variable_and_keeps_default)
{
	ck_assert_int_eq(PARSE("KIMG_FORMAT=xml", "KIMG_VERBOSE=1"), 1);
	ck_assert_int_eq(o.format, KIMG_FORMAT_TEXT);
	ck_assert(o.verbose);
	ck_assert_str_eq(warnings, "kimg: warning: KIMG_FORMAT=xml: expected text or json; using the default\n");
	ck_assert_int_eq(PARSE("KIMG_ON_ERROR=explode", "KIMG_VERBOSE=maybe"), 2);
	ck_assert_int_eq(o.on_error, KIMG_ON_ERROR_CONTINUE);
	ck_assert(!o.verbose);
	ck_assert_ptr_nonnull(strstr(warnings, "kimg: warning: KIMG_ON_ERROR=explode: "));
	ck_assert_ptr_nonnull(strstr(warnings, "kimg: warning: KIMG_VERBOSE=maybe: "));
}
END_TEST

/* mimalloc's convention: 1/true/yes/on, case-insensitive */
START_TEST(booleans)
{
	static const char *const on[] = { "1", "true", "YES", "On" };
	static const char *const off[] = { "0", "false", "no", "OFF" };
	char var[64];
	for (int i = 0; i < 4; i++) {
		snprintf(var, sizeof var, "KIMG_AUDIT=%s", on[i]);
		ck_assert_int_eq(PARSE(var), 0);
		ck_assert_msg(o.audit, "%s", var);
		snprintf(var, sizeof var, "KIMG_AUDIT=%s", off[i]);
		ck_assert_int_eq(PARSE(var), 0);
		ck_assert_msg(!o.audit, "%s", var);
	}
	ck_assert_int_eq(PARSE("KIMG_AUDIT=2"), 1);
	ck_assert_int_eq(PARSE("KIMG_AUDIT="), 1);
}
END_TEST

START_TEST(log_path_expansion)
{
	PARSE("KIMG_LOG=/tmp/kimg.%p.%h.%r.%%.log", "RANK=3", "SLURM_PROCID=9");
	ck_assert_str_eq(o.log_path, "/tmp/kimg.4242.node1.3.%.log");
	/* RANK wins, then OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID */
	PARSE("KIMG_LOG=r%r", "SLURM_PROCID=9", "PMI_RANK=7");
	ck_assert_str_eq(o.log_path, "r7");
	PARSE("KIMG_LOG=r%r", "SLURM_PROCID=9");
	ck_assert_str_eq(o.log_path, "r9");
	/* no launcher: a lone process is rank 0; empty RANK counts as unset */
	PARSE("KIMG_LOG=r%r", "RANK=");
	ck_assert_str_eq(o.log_path, "r0");
	PARSE("KIMG_LOG=stderr");
	ck_assert_str_eq(o.log_path, "");
	ck_assert_str_eq(env.log_spec, "stderr");
}
END_TEST

/* issue 22 item 8: a rank goes into a path, so only a number is one */
START_TEST(log_path_rank_must_be_a_number)
{
	static const char *const bad[] = { "../../tmp/evil", "/etc/x", "3/..", "-1", "1e3", " 2", "2 ", "0x10" };
	static const char *const vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID" };
	char var[64];
	for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++)
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			snprintf(var, sizeof var, "%s=%s", vars[v], bad[i]);
			int n = PARSE("KIMG_LOG=/logs/k-%r.log", var);
			ck_assert_msg(strcmp(o.log_path, "/logs/k-0.log") == 0, "%s gave %s", var, o.log_path);
			ck_assert_int_eq(n, 1);
			ck_assert_msg(strstr(warnings, vars[v]) && strstr(warnings, "not a number"), "%s: %s", var,
				      warnings);
		}
	/* no %r: a strange RANK is none of kimg's business */
	ck_assert_int_eq(PARSE("KIMG_LOG=/logs/k.log", "RANK=../x"), 0);
	PARSE("KIMG_LOG=/logs/k-%r.log", "RANK=12");
	ck_assert_str_eq(o.log_path, "/logs/k-12.log");
}
END_TEST

/* issue 22 item 7: the fallback of a kernel without openat2 refuses a
 * symbolic link at any depth, absolute or relative, and opens the rest */
START_TEST(log_dir_walk_refuses_links_anywhere)
{
	char root[] = "/tmp/kimg-walk.XXXXXX", p[256];
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(p, sizeof p, "%s/real", root);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/real/sub", root);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	char link[256];
	snprintf(link, sizeof link, "%s/link", root);
	ck_assert_int_eq(symlink("real", link), 0);
	snprintf(p, sizeof p, "%s/real/sub/", root);
	int fd = kimg_log_walk_dir(p);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(p, sizeof p, "%s/./real//sub", root);
	fd = kimg_log_walk_dir(p);
	ck_assert_int_ge(fd, 0);
	close(fd);
	static const char *const linked[] = { "%s/link", "%s/link/sub", "%s/real/../link/sub" };
	for (size_t i = 0; i < sizeof linked / sizeof linked[0]; i++) {
		snprintf(p, sizeof p, linked[i], root);
		errno = 0;
		ck_assert_int_eq(kimg_log_walk_dir(p), -1);
		ck_assert_msg(errno == ELOOP, "%s: errno %d", p, errno);
	}
	/* with standard input closed the walk's first descriptor is 0, a
	 * valid one: the walk goes on from it (a host may run with fd 0 shut) */
	int saved = dup(0);
	ck_assert_int_ge(saved, 0);
	close(0);
	snprintf(p, sizeof p, "%s/link/sub", root);
	errno = 0;
	int rc0 = kimg_log_walk_dir(p);
	int errno0 = errno;
	snprintf(p, sizeof p, "%s/real/sub", root);
	int fd0 = kimg_log_walk_dir(p);
	struct stat got, want;
	ck_assert_int_ge(fd0, 0);
	ck_assert_int_eq(fstat(fd0, &got), 0);
	close(fd0);
	ck_assert_int_eq(dup2(saved, 0), 0);
	close(saved);
	ck_assert_int_eq(rc0, -1);
	ck_assert_int_eq(errno0, ELOOP);
	ck_assert_int_eq(stat(p, &want), 0);
	ck_assert(got.st_dev == want.st_dev && got.st_ino == want.st_ino); /* real/sub itself */
	char cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	ck_assert_int_eq(chdir(root), 0);
	errno = 0;
	ck_assert_int_eq(kimg_log_walk_dir("link/sub"), -1);
	ck_assert_int_eq(errno, ELOOP);
	fd = kimg_log_walk_dir("real/sub");
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* a file on the way is not a directory */
	close(open("real/file", O_CREAT | O_WRONLY, 0600));
	errno = 0;
	ck_assert_int_eq(kimg_log_walk_dir("real/file"), -1);
	ck_assert_int_eq(errno, ENOTDIR);
	ck_assert_int_eq(chdir(cwd), 0);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(log_path_bad_escape_or_too_long_uses_stderr)
{
	ck_assert_int_eq(PARSE("KIMG_LOG=/tmp/%x"), 1);
	ck_assert_str_eq(o.log_path, "");
	ck_assert_ptr_nonnull(strstr(warnings, "KIMG_LOG=/tmp/%x"));
	ck_assert_int_eq(PARSE("KIMG_LOG=/tmp/%"), 1);
	ck_assert_str_eq(o.log_path, "");
	static char big[700] = "KIMG_LOG=";
	memset(big + 9, 'a', 600);
	ck_assert_int_eq(PARSE(big), 1);
	ck_assert_str_eq(o.log_path, "");
	/* expansion that overflows only after %h */
	static char edge[600] = "KIMG_LOG=";
	memset(edge + 9, 'b', 508);
	strcat(edge, "%h");
	ck_assert_int_eq(PARSE(edge), 1);
	ck_assert_str_eq(o.log_path, "");
}
END_TEST

START_TEST(on_error_values)
{
	PARSE("KIMG_ON_ERROR=abort");
	ck_assert_int_eq(o.on_error, KIMG_ON_ERROR_ABORT);
	PARSE("KIMG_ON_ERROR=exit:3");
	ck_assert_int_eq(o.on_error, KIMG_ON_ERROR_EXIT);
	ck_assert_int_eq(o.exit_code, 3);
	PARSE("KIMG_ON_ERROR=EXIT:255");
	ck_assert_int_eq(o.exit_code, 255);
	PARSE("KIMG_ON_ERROR=continue");
	ck_assert_int_eq(o.on_error, KIMG_ON_ERROR_CONTINUE);
	static const char *const bad[] = { "KIMG_ON_ERROR=exit:256", "KIMG_ON_ERROR=exit:", "KIMG_ON_ERROR=exit:-1",
					   "KIMG_ON_ERROR=exit:1x", "KIMG_ON_ERROR=exit" };
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(parse_ctx(&ctx_python, (char *const[]){ (char *)bad[i], NULL }), 1);
		ck_assert_int_eq(o.on_error, KIMG_ON_ERROR_CONTINUE);
	}
}
END_TEST

START_TEST(fallback_values)
{
	PARSE("KIMG_FALLBACK=ptx");
	ck_assert_int_eq(o.fallback, KIMG_FALLBACK_PTX);
	PARSE("KIMG_FALLBACK=force-ptx");
	ck_assert_int_eq(o.fallback, KIMG_FALLBACK_FORCE_PTX);
	ck_assert_str_eq(o.fallback_glob, "");
	PARSE("KIMG_FALLBACK=force-ptx:*gemm*");
	ck_assert_int_eq(o.fallback, KIMG_FALLBACK_FORCE_PTX);
	ck_assert_str_eq(o.fallback_glob, "*gemm*");
	ck_assert_int_eq(PARSE("KIMG_FALLBACK=force-ptx:"), 1);
	ck_assert_int_eq(o.fallback, KIMG_FALLBACK_NONE);
	ck_assert_int_eq(PARSE("KIMG_FALLBACK=sass"), 1);
}
END_TEST

/* libfaketime-style program filter: compilers spawned under the preload */
START_TEST(skip_list_default_and_custom)
{
	static const struct kimg_options_ctx nvcc = { "nvcc", "nvcc", "h", 1, false };
	static const struct kimg_options_ctx ninja_short = { NULL, "ninja", "h", 1, false };
	static const struct kimg_options_ctx nvcc2 = { "nvcc2", "nvcc2", "h", 1, false };
	parse_ctx(&nvcc, (char *const[]){ NULL });
	ck_assert(o.disabled && env.skipped);
	parse_ctx(&ninja_short, (char *const[]){ NULL });
	ck_assert(o.disabled);
	parse_ctx(&nvcc2, (char *const[]){ NULL });
	ck_assert(!o.disabled); /* whole names only */
	PARSE("PATH=/bin");
	ck_assert(!o.disabled);
	/* a custom list replaces the default */
	PARSE("KIMG_SKIP=foo,python3.12,bar");
	ck_assert(o.disabled && env.skipped);
	parse_ctx(&nvcc, (char *const[]){ "KIMG_SKIP=foo,,bar", NULL });
	ck_assert(!o.disabled);
	parse_ctx(&nvcc, (char *const[]){ "KIMG_SKIP=", NULL });
	ck_assert(!o.disabled);
}
END_TEST

START_TEST(disable)
{
	PARSE("KIMG_DISABLE=1");
	ck_assert(o.disabled && !env.skipped);
	PARSE("KIMG_DISABLE=off");
	ck_assert(!o.disabled);
}
END_TEST

/* docs/loading.md section 9: the specific name wins over the generic one */
START_TEST(driver_jit_switches_snapshot)
{
	PARSE("CUDA_FORCE_PTX_JIT=1");
	ck_assert(env.force_ptx_jit && !env.disable_ptx_jit);
	PARSE("CUDA_FORCE_JIT=1");
	ck_assert(env.force_ptx_jit);
	PARSE("CUDA_FORCE_PTX_JIT=0", "CUDA_FORCE_JIT=1");
	ck_assert(!env.force_ptx_jit);
	PARSE("CUDA_DISABLE_JIT=1");
	ck_assert(env.disable_ptx_jit);
	PARSE("CUDA_DISABLE_PTX_JIT=yes");
	ck_assert(!env.disable_ptx_jit);
}
END_TEST

START_TEST(names_match_exactly)
{
	PARSE("KIMG_FORMATX=json", "XKIMG_FORMAT=json", "KIMG_FORMAT", "kimg_format=json");
	ck_assert_int_eq(o.format, KIMG_FORMAT_TEXT);
	ck_assert_str_eq(warnings, "");
}
END_TEST

START_TEST(banner_is_one_line_with_every_option)
{
	PARSE("KIMG_VERBOSE=1", "KIMG_FORMAT=json", "KIMG_ON_ERROR=exit:7", "KIMG_LOG=/tmp/k.%p",
	      "KIMG_FALLBACK=force-ptx:sgemm*");
	char line[1024];
	size_t n = kimg_options_banner(&o, &env, line, sizeof line);
	ck_assert_uint_eq(n, strlen(line));
	ck_assert_ptr_eq(strchr(line, '\n'), line + n - 1);
	ck_assert_str_eq(line, "kimg " KIMG_VERSION ": loaded into python3.12; KIMG_LOG=/tmp/k.4242 KIMG_FORMAT=json "
			       "KIMG_VERBOSE=1 KIMG_ON_ERROR=exit:7 KIMG_FALLBACK=force-ptx:sgemm* KIMG_AUDIT=0 KIMG_DRIVER_LOG=1 "
			       "KIMG_PTXAS_REASON=1 "
			       "KIMG_SKIP=nvcc,cicc,ptxas,fatbinary,nvlink,gcc,g++,cc,c++,cc1,cc1plus,ld,ld.gold,ld.lld,as,"
			       "ninja,make,cmake KIMG_DISABLE=0\n");
}
END_TEST

/* The report's "process" object (docs/json-shim-report.md): rank, local rank
 * and world size from the launchers, in the %r order (torchrun, Open MPI,
 * MPICH/PMI, Slurm); unset or not a number is -1 (null), silently. */
START_TEST(launcher_rank_snapshot)
{
	ck_assert_int_eq(PARSE("PATH=/bin"), 0);
	ck_assert_int_eq(env.rank, -1);
	ck_assert_int_eq(env.local_rank, -1);
	ck_assert_int_eq(env.world_size, -1);
	PARSE("RANK=5", "LOCAL_RANK=1", "WORLD_SIZE=8", "SLURM_PROCID=9", "SLURM_LOCALID=3", "SLURM_NTASKS=16");
	ck_assert_int_eq(env.rank, 5);
	ck_assert_int_eq(env.local_rank, 1);
	ck_assert_int_eq(env.world_size, 8);
	PARSE("OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_SIZE=4");
	ck_assert_int_eq(env.rank, 2);
	ck_assert_int_eq(env.local_rank, 0);
	ck_assert_int_eq(env.world_size, 4);
	PARSE("PMI_RANK=7", "MPI_LOCALRANKID=3", "PMI_SIZE=12");
	ck_assert_int_eq(env.rank, 7);
	ck_assert_int_eq(env.local_rank, 3);
	ck_assert_int_eq(env.world_size, 12);
	PARSE("SLURM_PROCID=9", "SLURM_LOCALID=3", "SLURM_NTASKS=16");
	ck_assert_int_eq(env.rank, 9);
	ck_assert_int_eq(env.local_rank, 3);
	ck_assert_int_eq(env.world_size, 16);
	/* the first set variable decides, as for %r: a bad RANK is unknown,
	 * not a fall-through to SLURM_PROCID; %r takes a number only (issue
	 * 22), and says so */
	ck_assert_int_eq(PARSE("KIMG_LOG=r%r", "RANK=x1", "SLURM_PROCID=9", "LOCAL_RANK=-1"), 1);
	ck_assert_int_eq(env.rank, -1);
	ck_assert_int_eq(env.local_rank, -1);
	ck_assert_str_eq(o.log_path, "r0");
	ck_assert_str_eq(warnings,
			 "kimg: warning: RANK=x1: not a number, so not a rank for %r in KIMG_LOG; using the default\n");
	PARSE("RANK=", "PMI_RANK=4"); /* empty counts as unset */
	ck_assert_int_eq(env.rank, 4);
}
END_TEST

/* the constructor path: environ, /proc/self/exe */
START_TEST(init_reads_process_environment)
{
	setenv("KIMG_FORMAT", "json", 1);
	setenv("KIMG_SKIP", "nothing-here", 1);
	kimg_options_init();
	ck_assert_int_eq(kimg_opts.format, KIMG_FORMAT_JSON);
	ck_assert_str_eq(kimg_env.program, "test_options");
	ck_assert(!kimg_opts.disabled);
	setenv("KIMG_SKIP", "test_options", 1);
	kimg_options_init();
	ck_assert(kimg_opts.disabled);
}
END_TEST

/* AT_SECURE (issue 16): every KIMG_* variable is ignored, no warning is
 * made from them, and kimg stays disabled (nothing written, nothing changed) */
START_TEST(secure_execution_reads_nothing)
{
	const struct kimg_options_ctx secure = { "su", "su", "node1", 4242, true };
	char *const envp[] = { "KIMG_LOG=/etc/passwd", "KIMG_FORMAT=json", "KIMG_ON_ERROR=exit:3",
			       "KIMG_FALLBACK=force-ptx", "KIMG_AUDIT=1", "KIMG_VERBOSE=1", "KIMG_DISABLE=maybe",
			       NULL };
	ck_assert_int_eq(parse_ctx(&secure, envp), 0);
	ck_assert(o.secure && o.disabled);
	ck_assert_str_eq(o.log_path, "");
	ck_assert_int_eq(o.format, KIMG_FORMAT_TEXT);
	ck_assert_int_eq(o.on_error, KIMG_ON_ERROR_CONTINUE);
	ck_assert_int_eq(o.fallback, KIMG_FALLBACK_NONE);
	ck_assert(!o.audit && !o.verbose);
	ck_assert_str_eq(env.log_spec, "");
	ck_assert_str_eq(warnings, "");
	/* the same environment outside secure mode does act: the test above is not vacuous */
	ck_assert_int_eq(parse_ctx(&ctx_python, envp), 1);
	ck_assert_str_eq(o.log_path, "/etc/passwd");
	ck_assert(!o.secure);
}
END_TEST

/* issue 12 item 15: an unclosed bracket would match nothing in silence */
START_TEST(fallback_glob_must_be_well_formed)
{
	ck_assert_int_eq(PARSE("KIMG_FALLBACK=force-ptx:["), 1);
	ck_assert_int_eq(o.fallback, KIMG_FALLBACK_NONE);
	ck_assert_ptr_nonnull(strstr(warnings, "KIMG_FALLBACK=force-ptx:[: GLOB has an unclosed '['"));
	ck_assert_int_eq(PARSE("KIMG_FALLBACK=force-ptx:*/lib[!x"), 1);
	ck_assert_int_eq(PARSE("KIMG_FALLBACK=force-ptx:a\\"), 1);
	ck_assert_int_eq(PARSE("KIMG_FALLBACK=force-ptx:*/_C[0-9].so"), 0);
	ck_assert_str_eq(o.fallback_glob, "*/_C[0-9].so");
	ck_assert_int_eq(PARSE("KIMG_FALLBACK=force-ptx:[]]x"), 0); /* ']' first is a member */
	ck_assert_int_eq(PARSE("KIMG_FALLBACK=force-ptx:\\[x"), 0); /* a quoted '[' */
}
END_TEST

/* Every option given at once: each kept copy is its own option's value
 * (the banner and a forked child's log path read them), none overwritten
 * by an option that keeps nothing (a make mutants survivor gave
 * KIMG_VERBOSE a one-byte copy at offset 0, over CUDA_FORCE_PTX_JIT's). */
START_TEST(kept_values_stay_their_own)
{
	PARSE("KIMG_LOG=/tmp/k-%p.log", "KIMG_FORMAT=json", "KIMG_VERBOSE=1", "KIMG_ON_ERROR=exit:3",
	      "KIMG_FALLBACK=force-ptx:*cublas*", "KIMG_AUDIT=1", "CUDA_FORCE_PTX_JIT=1", "CUDA_DISABLE_PTX_JIT=1");
	ck_assert(env.force_ptx_jit);
	ck_assert(env.disable_ptx_jit);
	ck_assert_str_eq(env.log_spec, "/tmp/k-%p.log");
	ck_assert(env.log_per_process);
	ck_assert_str_eq(o.log_path, "/tmp/k-4242.log");
	ck_assert_str_eq(env.fallback_spec, "force-ptx:*cublas*");
	ck_assert(o.verbose);
	ck_assert(o.audit);
	ck_assert_int_eq(o.exit_code, 3);
	ck_assert_str_eq(warnings, "");
}
END_TEST

/* issue 12 item 6: a forked child expands the same spec with its own pid */
START_TEST(log_path_expands_again_per_pid)
{
	char out[512];
	PARSE("KIMG_LOG=/tmp/k-%h-%r-%p-%%p.log", "RANK=3");
	ck_assert_str_eq(o.log_path, "/tmp/k-node1-3-4242-%p.log");
	ck_assert(env.log_per_process);
	ck_assert(kimg_log_path_expand(env.log_spec, 77, &env, out, sizeof out));
	ck_assert_str_eq(out, "/tmp/k-node1-3-77-%p.log");
	PARSE("KIMG_LOG=/tmp/k-%%p-%h.log");
	ck_assert(!env.log_per_process); /* %%p is a literal */
}
END_TEST

/* The option table (shim/diag/options.c): row i describes option i, names
 * are distinct KIMG_ variables, each row's default is what an empty
 * environment gives (as the banner shows it), and every accepted word of a
 * word-list option parses to its own value without a warning. The oracle
 * for the names is the list below, written from docs/man/libkimg.7. */
START_TEST(option_table_rows_match_the_enum)
{
	static const char *const names[KIMG_OPT_COUNT] = {
		[KIMG_OPT_LOG] = "KIMG_LOG",           [KIMG_OPT_FORMAT] = "KIMG_FORMAT",
		[KIMG_OPT_VERBOSE] = "KIMG_VERBOSE",   [KIMG_OPT_ON_ERROR] = "KIMG_ON_ERROR",
		[KIMG_OPT_FALLBACK] = "KIMG_FALLBACK", [KIMG_OPT_AUDIT] = "KIMG_AUDIT",
		[KIMG_OPT_DRIVER_LOG] = "KIMG_DRIVER_LOG", [KIMG_OPT_PTXAS_REASON] = "KIMG_PTXAS_REASON",
		[KIMG_OPT_SKIP] = "KIMG_SKIP",         [KIMG_OPT_DISABLE] = "KIMG_DISABLE",
	};
	ck_assert_int_eq(parse_ctx(&ctx_python, (char *const[]){ "PATH=/bin", NULL }), 0);
	char line[2048];
	kimg_options_banner(&o, &env, line, sizeof line);
	for (int i = 0; i < KIMG_OPT_COUNT; i++) {
		const struct kimg_option *opt = &kimg_option_table[i];
		ck_assert_int_eq(opt->id, i);
		ck_assert_str_eq(opt->name, names[i]);
		ck_assert(opt->default_text != NULL);
		char shown[700];
		snprintf(shown, sizeof shown, " %s=%s ", opt->name, opt->default_text);
		if (!strstr(line, shown)) { /* the last one ends the line */
			snprintf(shown, sizeof shown, " %s=%s\n", opt->name, opt->default_text);
			ck_assert_msg(strstr(line, shown), "banner %s lacks the default of %s", line, opt->name);
		}
		if (opt->type == KIMG_OPT_TEXT)
			ck_assert(opt->parse != NULL && opt->show != NULL);
		else
			ck_assert(opt->expected != NULL);
		if (opt->type != KIMG_OPT_ENUM)
			continue;
		for (const struct kimg_option_word *w = opt->words; w->word; w++) {
			char var[128];
			snprintf(var, sizeof var, "%s=%s%s", opt->name, w->word, w->takes_arg ? ":7" : "");
			ck_assert_int_eq(parse_ctx(&ctx_python, (char *const[]){ var, NULL }), 0);
			ck_assert_int_eq(*(const int *)((const char *)&o + opt->field), w->value);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("parse");
	tcase_add_test(tc, defaults_without_variables);
	tcase_add_test(tc, format_text_json_any_case);
	tcase_add_test(tc, bad_value_warns_once_naming_variable_and_keeps_default);
	tcase_add_test(tc, bad_values_counted_without_a_warning_buffer);
	tcase_add_test(tc, booleans);
	tcase_add_test(tc, log_path_expansion);
	tcase_add_test(tc, log_path_rank_must_be_a_number);
	tcase_add_test(tc, log_dir_walk_refuses_links_anywhere);
	tcase_add_test(tc, log_path_bad_escape_or_too_long_uses_stderr);
	tcase_add_test(tc, on_error_values);
	tcase_add_test(tc, fallback_values);
	tcase_add_test(tc, skip_list_default_and_custom);
	tcase_add_test(tc, disable);
	tcase_add_test(tc, driver_jit_switches_snapshot);
	tcase_add_test(tc, kept_values_stay_their_own);
	tcase_add_test(tc, names_match_exactly);
	tcase_add_test(tc, banner_is_one_line_with_every_option);
	tcase_add_test(tc, launcher_rank_snapshot);
	tcase_add_test(tc, init_reads_process_environment);
	tcase_add_test(tc, secure_execution_reads_nothing);
	tcase_add_test(tc, fallback_glob_must_be_well_formed);
	tcase_add_test(tc, log_path_expands_again_per_pid);
	tcase_add_test(tc, option_table_rows_match_the_enum);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
