/* SPDX-License-Identifier: Apache-2.0 */
/* Internal interfaces of the diagnosis layer of libkimg.so (shim/diag/),
 * beyond the boundary in shim/diag.h: option parsing (options.c), the log
 * target (log.c), registry statistics (registry.c). Nothing here is
 * exported, and nothing in shim/hook/ includes it. */
#ifndef KIMG_SHIM_DIAG_INTERNAL_H
#define KIMG_SHIM_DIAG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"

/* ---- options.c ---- */

/* KIMG_SKIP's default: the toolchain's own programs (options.c says why). */
#define KIMG_DEFAULT_SKIP \
	"nvcc,cicc,ptxas,fatbinary,nvlink,gcc,g++,cc,c++,cc1,cc1plus,ld,ld.gold,ld.lld,as,ninja,make,cmake"

/* Facts read from the environment besides struct kimg_options: the driver's
 * own JIT switches (the rules need them, and the process may change its
 * environment later), and what the banner shows. */
struct kimg_env_snapshot {
	bool force_ptx_jit;     /* CUDA_FORCE_PTX_JIT, else CUDA_FORCE_JIT, != 0 */
	bool disable_ptx_jit;   /* CUDA_DISABLE_PTX_JIT, else CUDA_DISABLE_JIT, != 0 */
	bool skipped;           /* disabled because KIMG_SKIP matched */
	char program[64];       /* program name compared with KIMG_SKIP */
	char skip[512];         /* KIMG_SKIP list in effect */
	char log_spec[512];     /* KIMG_LOG as given, before expansion */
	char fallback_spec[280];/* KIMG_FALLBACK as given */
	/* what KIMG_LOG's %h and %r expand to, kept so that a forked child can
	 * expand %p again with its own pid (kimg_log_path_expand) */
	char host[256];
	char rank_text[24];
	bool log_per_process;   /* KIMG_LOG holds %p */
	/* where this process sits in a multi-process job, from the launchers'
	 * variables (torchrun, Open MPI, MPICH/PMI, Slurm); -1 when none is
	 * set or the value is not a decimal number */
	long rank;              /* RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID */
	long local_rank;        /* LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID */
	long world_size;        /* WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS */
};

KIMG_HIDDEN extern struct kimg_env_snapshot kimg_env;

/* What kimg_options_parse needs to know about the process; the constructor
 * fills it from /proc/self/exe, program_invocation_short_name, the host
 * name and getpid(). Tests pass their own. */
struct kimg_options_ctx {
	const char *exe;        /* basename of /proc/self/exe, or NULL */
	const char *short_name; /* program_invocation_short_name, or NULL */
	const char *hostname;   /* for %h; NULL -> "localhost" */
	long pid;               /* for %p */
	bool secure;            /* getauxval(AT_SECURE): read no KIMG_* variable */
};

/* The KIMG_* options, one table row each (options.c): the enum is the
 * row index. */
enum kimg_option_id {
	KIMG_OPT_LOG = 0,
	KIMG_OPT_FORMAT,
	KIMG_OPT_VERBOSE,
	KIMG_OPT_ON_ERROR,
	KIMG_OPT_FALLBACK,
	KIMG_OPT_AUDIT,
	KIMG_OPT_DRIVER_LOG,
	KIMG_OPT_PTXAS_REASON,
	KIMG_OPT_SKIP,
	KIMG_OPT_DISABLE,
	KIMG_OPT_COUNT
};

enum kimg_option_type {
	KIMG_OPT_BOOL,  /* 1/true/yes/on, 0/false/no/off, any case: a bool field */
	KIMG_OPT_ENUM,  /* one of the row's words, any case: an enum (int) field */
	KIMG_OPT_TEXT,  /* the row's own parser */
};

/* An accepted word of an ENUM option and the value it sets; with takes_arg
 * the word is written "word:ARG" and ARG goes to the row's parse_arg. The
 * banner names a value by its first word. */
struct kimg_option_word {
	const char *word;
	int value;
	bool takes_arg;
};

struct parse_state;
struct kimg_option {
	enum kimg_option_id id;
	const char *name;                    /* "KIMG_FORMAT" */
	enum kimg_option_type type;
	const char *default_text;            /* the default as the banner shows it */
	const struct kimg_option_word *words;/* ENUM: NULL-terminated */
	size_t field;                        /* BOOL/ENUM: offset in struct kimg_options */
	size_t keep, keep_size;              /* keep_size != 0: the value as given is copied into the
					      * struct kimg_env_snapshot field at offset keep */
	const char *expected;                /* BOOL/ENUM: the warning for a value not taken */
	/* TEXT: the parser and the banner's value (either may be set for
	 * another type to replace the generic one) */
	void (*parse)(struct parse_state *st, const struct kimg_option *opt, const char *v, struct kimg_options *o,
		      struct kimg_env_snapshot *env);
	void (*show)(const struct kimg_options *o, const struct kimg_env_snapshot *env, char *buf, size_t size);
	/* ENUM words with takes_arg: 1 taken, 0 not (the expected warning),
	 * -1 refused with arg_refused; show_arg writes ":ARG" for the banner */
	int (*parse_arg)(const char *arg, struct kimg_options *o);
	void (*show_arg)(const struct kimg_options *o, char *buf, size_t size);
	const char *arg_refused;
};

KIMG_HIDDEN extern const struct kimg_option kimg_option_table[KIMG_OPT_COUNT];

/* Parse a NULL-terminated "NAME=VALUE" array into *o and *env (both reset
 * to defaults first). Bad values leave the default and append one line
 * "kimg: warning: KIMG_X=...: why\n" to warn (NUL-terminated, truncated
 * when full). No allocation, no libc locale use. Returns the number of
 * warnings. */
KIMG_HIDDEN int kimg_options_parse(char *const *envp, const struct kimg_options_ctx *ctx, struct kimg_options *o,
				   struct kimg_env_snapshot *env, char *warn, size_t warn_size);

/* The KIMG_VERBOSE banner: one line, version and every option's value,
 * ending in '\n'. Returns its length (truncated to size - 1). */
KIMG_HIDDEN size_t kimg_options_banner(const struct kimg_options *o, const struct kimg_env_snapshot *env, char *buf,
				       size_t size);

/* KIMG_FALLBACK=force-ptx:GLOB takes only a well-formed glob (balanced
 * brackets, no trailing backslash); the fuzz target checks what it took. */
KIMG_HIDDEN bool kimg_options_glob_well_formed(const char *glob);

/* ---- diagnose.c: the report path, for the units above it ----
 * (audit.c, fallback.c, summary.c call it; it calls none of them; it calls
 * down to module_read.c and deferred.c) */

/* A load report held back (audit.c: the first module of a group, written
 * with the group's count): a copy of e, its device, path and replay stacks
 * is kept, and written (kimg_report_load_event, counted as an audit
 * report) by kimg_report_flush_held: before any failure's report, so
 * reports stay in load order; by audit.c before its next report; at exit.
 * tag names the group; kimg_report_hold_count updates the count of the
 * held report when it is that group's. */
#define KIMG_HELD_FRAMES 32
#define KIMG_HELD_PYTHON 8
KIMG_HIDDEN void kimg_report_hold(const struct kimg_load_event *e, const void *tag);
KIMG_HIDDEN void kimg_report_hold_count(const void *tag, unsigned modules);
KIMG_HIDDEN void kimg_report_flush_held(void);

/* ---- deferred.c: where the two reports written after their moment wait ----
 * The held report above is kept there; kimg_report_flush_held (diagnose.c)
 * hands kimg_report_write_held its writer. The recorded failures of
 * modules for other GPUs (dispatch_track.h) are written at a failing exit
 * by the writer the first record arms (kimg_report_failure). */
KIMG_HIDDEN void kimg_report_write_held(bool (*write)(const struct kimg_load_event *e));
KIMG_HIDDEN void kimg_report_arm_exit_replay(void (*write)(const struct kimg_failure *f));

/* The fallback's caveat, in its reports and in the exit summary. */
#define KIMG_FALLBACK_CAVEAT_TEXT \
	"code paths chosen by __CUDA_ARCH__ and performance may differ from a native build for this GPU; " \
	"rebuild with the fix for production use"

/* ---- log.c: where reports go ----
 * Below options.c: the options call the log (warnings, the banner, the
 * KIMG_LOG expansion), the log calls nothing above it. */

/* KIMG_LOG's spec with %p as pid and %h %r %% as recorded in env; false
 * when a % is followed by anything else or the result does not fit. */
KIMG_HIDDEN bool kimg_log_path_expand(const char *spec, long pid, const struct kimg_env_snapshot *env, char *out,
				      size_t size);


/* Write buf to the KIMG_LOG target (opened once, lazily, O_APPEND) or to
 * stderr, in one write() when the kernel allows, so lines from several
 * processes sharing a log do not interleave. Thread safe. */
KIMG_HIDDEN void kimg_log_write(const char *buf, size_t len);

/* Lines for people (banner, summary): the log target in text format,
 * stderr in json format (the log then holds JSON objects only). */
KIMG_HIDDEN void kimg_log_write_human(const char *buf, size_t len);
/* At exit, on stderr: the reports a log reader that did not read cost. */
KIMG_HIDDEN void kimg_log_say_dropped(void);
/* Open the KIMG_LOG target at path (log_open.c): the fd (STDERR_FILENO
 * or STDOUT_FILENO for /dev/stderr, /dev/stdout), or -1 with the reason
 * in why ("KIMG_LOG file X is not used: it ..."). */
KIMG_HIDDEN int kimg_log_open(const char *path, char *why, size_t size);
/* dir opened O_PATH one name at a time, never through a symbolic link
 * (ELOOP): the fallback of a kernel without openat2; unit tested. */
KIMG_HIDDEN int kimg_log_walk_dir(const char *dir);

/* ---- driver_log.c: the lines a report takes ---- */

/* The lines of this thread's newest call the driver logged and no report
 * took yet (noise lines of other codes left out), oldest first, now
 * marked taken. Returns a mark for kimg_driver_log_settle. */
KIMG_HIDDEN unsigned kimg_driver_log_take(struct kimg_driver_lines *out);

/* The mark of this thread's next line, taking nothing. */
KIMG_HIDDEN unsigned kimg_driver_log_mark(void);

/* Every line this thread logged since mark (kimg's own driver calls during
 * a report, the fallback's stand-in loads) is marked taken: never the
 * safety net's. */
KIMG_HIDDEN void kimg_driver_log_settle(unsigned mark);

/* Each image-class "Returning" line no report took, with the lines of its
 * call (image_words: one of them names an image problem), every ring's,
 * oldest first; each is marked taken before fn sees it. For the exit. */
typedef void (*kimg_driver_untaken_fn)(void *ctx, const char *call, int code, bool image_words,
				       const struct kimg_driver_lines *lines);
KIMG_HIDDEN void kimg_driver_log_for_each_untaken(kimg_driver_untaken_fn fn, void *ctx);

/* A report's driver_log from the lines taken; the kernel the lines name
 * ("Kernel (k) cannot be found", the safety net's only name), in a static
 * buffer (under the report lock), or NULL. */
struct kimg_report;
KIMG_HIDDEN void kimg_driver_lines_to_report(struct kimg_report *r, const struct kimg_driver_lines *dl);
KIMG_HIDDEN const char *kimg_driver_lines_kernel(const struct kimg_driver_lines *dl);

/* ---- ptxas_reason.c ---- */

/* Largest image KIMG_PTXAS_REASON compiles again. */
#define KIMG_PTXAS_REASON_MAX_BYTES ((uint64_t)64 << 20)

/* For a load the driver refused with 218 / 222 and no JIT log buffer of
 * the program's: compile the same code once more through the real
 * cuModuleLoadDataEx with CU_JIT_ERROR_LOG_BUFFER, unload the module if
 * it loads after all, and copy ptxas's words (trailing blanks cut) to log.
 * image is the code as the program gave it (a registration wrapper is
 * followed); size its length when the caller knew it (a link input), else
 * 0. True when there are some. Cold; under the report lock. */
KIMG_HIDDEN bool kimg_ptxas_reason(const void *image, uint64_t size, char *log, size_t log_size);

/* ---- registry.c ---- */

/* The string arena and the longest string it copies (tests fill them). */
#define KIMG_REGISTRY_ARENA_SIZE (8u << 20)
#define KIMG_REGISTRY_MAX_STRING 4096u

struct kimg_registry_stats {
	unsigned long entries;        /* live entries, all kinds */
	unsigned long dropped;        /* insertions dropped: table full */
	unsigned long strings_dropped;/* names/paths not copied: arena full */
	unsigned long arena_used;     /* bytes */
};
KIMG_HIDDEN void kimg_registry_get_stats(struct kimg_registry_stats *s);

#endif
