/* SPDX-License-Identifier: Apache-2.0 */
/* kimg-probe internals shared by its subcommands. The probe is a front
 * end: it finds inputs, asks the core for modules, images and verdicts,
 * and renders them (text or JSON). It never re-derives a verdict. */
#ifndef KIMG_PROBE_H
#define KIMG_PROBE_H

#include <stdbool.h>
#include <stdio.h>

#include "device.h"
#include "error.h"
#include "file.h"
#include "image.h"
#include "input.h"
#include "json.h"
#include "report.h"
#include "span.h"

struct probe_image_info; /* image.h */

/* Exit statuses, documented in --help and docs/json-probe.md. */
#define PROBE_EXIT_OK 0
#define PROBE_EXIT_FAIL 1  /* check: some module cannot run on some listed GPU */
#define PROBE_EXIT_ERROR 2 /* usage error, unreadable input, no driver */

/* ---- one input, its modules and images (collect.c) ---- */

struct probe_module {
	enum kimg_input_kind kind;       /* FATBIN, CUBIN or PTX */
	enum kimg_module_origin origin;
	uint64_t offset;                 /* in the file (or zip member) */
	uint64_t size;
	char *section;                   /* owned copy, or NULL */
	char *member;                    /* static-archive member (owned), or NULL */
	struct kimg_image *imgs;         /* offsets made file-relative */
	size_t n_imgs, cap_imgs;
	bool link_input;                 /* __nv_relfatbin of a linked file (probe_collect) */
	char *error;                     /* NULL, or why the image walk stopped (at most 159
	                                    bytes; malloc'ed: a module of a large library
	                                    is smaller without room for one) */
};

struct probe_file {
	const char *path;                /* as displayed ("w.whl!/lib/x.so") */
	unsigned walk_flags;             /* kimg_input_for_each_module_ex flags:
	                                    KIMG_INPUT_SCAN_DATA for --deep */
	enum kimg_input_kind kind;
	struct kimg_span bytes;          /* valid while the file is open */
	struct probe_module *mods;
	size_t n_mods, cap_mods;
	size_t n_link_inputs;            /* modules with link_input set */
	char error[200];                 /* "" or the file-level problem */
	/* A thin archive's member files, mapped while pf lives (images point
	 * into them): their modules' offsets are in the member's file. */
	struct kimg_file **members;      /* each allocated alone: the SIGBUS guard holds their addresses */
	size_t n_members;
};

/* Members of one thin archive kimg reads at most, and the depth: a member
 * that is itself a thin archive is not followed (GNU ar flattens them, so
 * one is a loop or a hand-made file). */
#define PROBE_THIN_MEMBERS_MAX 65536

/* Find every module of `bytes` and list its images (headers only: no
 * payload is read). Module-level problems go to mod->error, file-level
 * ones to pf->error. Returns the number of problems recorded. */
int probe_collect(struct probe_file *pf);
/* main: $KIMG_READAHEAD=SIZE, the bytes asked for ahead of each fatbin
 * header the walk reads (0: none; collect.c explains). None by default:
 * on the H200's disk a cold check of its site-packages took 1.211 s and
 * read 214 MB with none, 1.325 s and 454 MB with 128 KiB (bench/env_bench.py,
 * one run, -j 16), the same warm. */
#define PROBE_HEADER_WINDOW_DEFAULT 0
void probe_set_header_window(uint64_t bytes);
void probe_file_free(struct probe_file *pf);
/* Drop the link-input modules (what scan and check list without --all,
 * as cuobjdump does without -all). */
void probe_drop_link_inputs(struct probe_file *pf);

/* Stable JSON / text names: kimg_input_kind_name, kimg_module_origin_name
 * (core/input.h). */

/* ---- arguments and output state shared by scan and check (args.c) ---- */

/* What scan and check share while they render: the output mode, the
 * walk flags, the JSON writer and the count of inputs and modules that
 * could not be read (any makes the exit status 2). */
struct probe_out {
	FILE *f;                         /* where the text or JSON goes: stdout,
	                                    or one input's buffer in a worker */
	unsigned jobs;                   /* -j N: threads for the walk, 0 = default */
	bool json;                       /* --json */
	bool all_modules;                /* --all: list -rdc link inputs too */
	bool every_file;                 /* --every-file: a walk opens source and docs too */
	unsigned walk_flags;             /* kimg_input_for_each_module_ex flags */
	const char *platform;            /* --platform OS/ARCH[/VARIANT] of images, or NULL */
	bool reads_payloads;             /* scan --kernels: image files are handed on whole */
	struct kimg_json j;
	unsigned long errors;
};

struct probe_args {
	const char *cmd;                 /* "scan", "check": for messages */
	struct probe_out *out;           /* --json, --deep (KIMG_INPUT_SCAN_DATA) set here */
	char **paths;                    /* argv entries, in order */
	int n_paths;
	bool options_done;               /* after "--" everything is a PATH */
	bool expect_jobs;                /* after "-j": the next argument is N */
	bool expect_platform;            /* after "--platform": the next argument is it */
};

enum probe_arg {
	PROBE_ARG_TAKEN, /* a PATH, "--", --json or --deep: recorded */
	PROBE_ARG_HELP,  /* --help or -h */
	PROBE_ARG_OTHER, /* another option: the subcommand's to handle */
	PROBE_ARG_BAD,   /* a shared option with a bad value: usage error printed */
};

/* Room for argc PATHs; --json, --deep, --all and -j N (--jobs N,
 * --jobs=N) go to *out. After the last argument, probe_args_done says
 * whether an option still waits for its value. Returns 0, or -1 when out
 * of memory. */
int probe_args_init(struct probe_args *a, const char *cmd, int argc, struct probe_out *out);
void probe_args_free(struct probe_args *a);
enum probe_arg probe_args_take(struct probe_args *a, char *arg);
/* --driver X.Y, for check and doctor: the CUDA version (0 for none
 * asked is the caller's), or -1 after the usage error (value NULL: it was
 * missing). note_outside_table: a note on stderr when X.Y is outside
 * kimg's PTX ISA table (its PTX limit is unknown). */
int probe_args_driver(const struct probe_args *a, const char *value, bool note_outside_table);
/* 0, or PROBE_EXIT_ERROR after the usage error when -j lacks its N. */
int probe_args_done(const struct probe_args *a);
/* "kimg-probe CMD: <message>[ (see kimg-probe CMD --help)]" on stderr;
 * returns PROBE_EXIT_ERROR. */
int probe_usage_error(const struct probe_args *a, bool see_help, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- walking paths (walk.c, walk.h) ---- */

struct probe_gate; /* gate.h */

/* What a walk hands on, and to whom. Required: ctx, on_input, on_error;
 * the rest may be zero. */
struct probe_walker {
	void *ctx;
	/* The output being written, or NULL: a file that changes while it is
	 * read (walk_file.c abandons it midway) has its JSON closed back to
	 * where it began before on_error adds the error; its flags (--deep,
	 * --every-file, --platform, -j) steer the walk. */
	struct probe_out *out;
	/* Each input with device code or an ELF/archive shape. explicit: named
	 * on the command line (unknown content is then an error, while inside
	 * directories and wheels it is skipped). */
	void (*on_input)(void *ctx, const char *path, struct kimg_span bytes, bool explicit_path);
	/* An input that could not be read; `problem` has no trailing period.
	 * said: the walk prints the line itself (archives not read for a
	 * missing library: one line for all, when unread_each is set). */
	void (*on_error)(void *ctx, const char *path, const char *problem, bool said);
	/* Each container image (image.h), before its files, which are then
	 * named "IMAGE:/path/in/image". */
	void (*on_image)(void *ctx, const struct probe_image_info *image);
	/* True to leave a file found inside a directory unopened (doctor
	 * skips Python sources and other text by name). */
	bool (*skip_file)(void *ctx, const char *path);
	/* Worker threads (out->jobs, probe_jobs): when both are set, each
	 * file found is read, judged and rendered by a worker, into buffers
	 * that the main thread writes in walk order, so the output is the
	 * one-thread output byte for byte. job_begin (main thread) returns a
	 * copy of ctx for one input with its counters zeroed, whose first
	 * member is its struct probe_out (walk_jobs.c points it at the
	 * buffers); job_end (main thread, in walk order) adds the copy's
	 * counters to ctx and frees it. */
	struct probe_out *(*job_begin)(void *ctx);
	void (*job_end)(void *ctx, struct probe_out *job);
	/* For output that needs what is still being found when the walk
	 * begins (check's GPUs): the walk passes the gate before it writes
	 * any output, lists and reads no more once it is called off, and
	 * holds back small files while it is closed (gate.h). */
	struct probe_gate *gate;
	/* Archives not read for a missing library: true, each goes to
	 * on_error (said); false, one on_error for them all, "(archives)". */
	bool unread_each;
	/* A symbolic link inside a directory that leads nowhere holds no
	 * device code: counted in one line at the end, unless strict_links
	 * (check --strict), which makes each an error as before. One named on
	 * the command line is always an error. */
	bool strict_links;
};

/* Files, directories (recursed; symlinked directories not followed;
 * FIFOs, sockets and devices inside them skipped) and archives: wheels and
 * zips (members with ELF, archive, fatbin, cubin or PTX content; in other
 * zips met in a walk only members named like code, so numpy .npz and data
 * zips are never inflated), conda packages (.conda, .tar.bz2), and
 * archives inside archives, NEST_MAX levels deep. A mapped file that
 * shrinks while it is read ends its input with on_error "file changed
 * while it was read" instead of SIGBUS (sys/file.h). */
void probe_walk(char *const *paths, int n, const struct probe_walker *w);

/* ---- a directory tree, listed on several threads (tree.c) ---- */

/* Directory depth cap: bind mounts can make trees that never end even
 * without following symlinks. */
#define PROBE_WALK_MAX_DEPTH 64

struct probe_tree_visitor {
	void *ctx;
	/* A regular file of the tree (or a symlink to one), on a lister
	 * thread, in any order: true to visit it. dirfd holds it as name. */
	bool (*want_file)(void *ctx, int dirfd, const char *name, const char *path);
	/* On the thread that called probe_tree_walk, in walk order: depth
	 * first, each directory's entries sorted by name (strcmp). */
	void (*on_file)(void *ctx, const char *path);
	void (*on_problem)(void *ctx, const char *path, const char *problem);
	/* Optional, from any thread, without waiting: true to list no more
	 * (directories not yet listed are then visited empty). */
	bool (*stop)(void *ctx);
	/* Optional, as on_problem: a symbolic link that leads nowhere
	 * (dangling or looping). NULL: on_problem. */
	void (*on_dangling)(void *ctx, const char *path, const char *problem);
};

/* Visit the tree under the directory root with `threads` threads listing
 * (this one among them). Symlinked directories are not followed; FIFOs,
 * sockets and devices are left out; directories deeper than
 * PROBE_WALK_MAX_DEPTH are a problem, not descended. */
void probe_tree_walk(const char *root, unsigned threads, const struct probe_tree_visitor *v);

/* ---- worker threads (pool.c) ---- */

/* Threads used by default: the machine's cores, at most this many (more
 * rarely helps: the disk, not the CPU, is the limit of a cold walk). */
#define PROBE_JOBS_DEFAULT_MAX 8
#define PROBE_JOBS_MAX 256
struct probe_pool_job {
	void (*run)(struct probe_pool_job *job);    /* on a worker */
	void (*finish)(struct probe_pool_job *job); /* on the submitter, in order; may free job */
	struct probe_pool_job *next;                /* pool.c's */
	bool done;                                  /* pool.c's */
	bool held;                                  /* not started while the gate is closed */
	/* pool.c's, read by run: the submitter runs this job right before
	 * its finish step (no worker took it in time): whatever run would
	 * keep for finish may be done by finish itself, in order. */
	bool in_order;
};
struct probe_pool;
/* NULL only without memory (then run jobs inline). Starts no thread:
 * workers start as jobs come (one lone job is left to the submitter). */
struct probe_pool *probe_pool_start(unsigned threads, unsigned window);
void probe_pool_submit(struct probe_pool *p, struct probe_pool_job *job);
/* Runs here the jobs in flight that no worker has taken and that may
 * start now: for a submitter about to wait for something else (the
 * walk's gate), so that a lone job runs meanwhile. */
void probe_pool_help(struct probe_pool *p);
/* Workers started so far (tests). */
unsigned probe_pool_threads(struct probe_pool *p);
/* Finish every job in order, stop the threads, free p (NULL: nothing). */
void probe_pool_end(struct probe_pool *p);
/* Around a wait of a worker's job for what another thread is still
 * finding (check's GPUs, the package index): while it waits, another
 * worker may run a job, so that `threads` of them keep running (the pool
 * starts twice as many). No-ops on a thread that is not a pool's worker. */
void probe_pool_wait_begin(void);
void probe_pool_wait_end(void);
/* A closed gate holds back the jobs submitted with `held` set; the others
 * run. For jobs most of whose work waits for something still being found:
 * those that can do much before they wait (large files) go first, while
 * the held ones would only occupy workers. open: from any thread. */
void probe_pool_close_gate(struct probe_pool *p);
void probe_pool_open_gate(struct probe_pool *p);
bool probe_pool_gate_closed(struct probe_pool *p);
/* main: $KIMG_JOBS. probe_jobs: `asked` (-j N) if set, else $KIMG_JOBS,
 * else the online cores up to PROBE_JOBS_DEFAULT_MAX. */
void probe_set_default_jobs(unsigned n);
unsigned probe_jobs(unsigned asked);

/* main: $KIMG_READAHEAD=kernel keeps the kernel's readahead around each
 * header read (default: mapped inputs are marked for random access). */
void probe_set_kernel_readahead(bool on);

/* Path of the file on disk whose bytes are `bytes`, while the walk is
 * inside it; NULL for zip members (thin archives resolve members by it). */
const char *probe_input_fs_path(struct kimg_span bytes);
/* Known zero ranges (holes) of the mapped file whose bytes are `bytes`,
 * while the walk is inside it; NULL for anything else (zip members,
 * pipes, files without holes). */
const struct kimg_zero_ranges *probe_input_zeros(struct kimg_span bytes);

/* fn(ctx, i) for every i below n, on `threads` threads (this one waits),
 * each under a SIGBUS guard of the file this thread is walking: for work
 * inside one large input (the link-stub test of its modules). When the
 * file changed under a helper, this thread's walk of it ends as if it had
 * met the change itself (its guard, sys/file.h). Inputs whose bytes span
 * several files (thin archives) must not use it. threads <= 1, or no
 * thread to be had: fn runs here, in order. */
void probe_input_parallel(size_t n, unsigned threads, void (*fn)(void *ctx, size_t i), void *ctx);
/* here(here_ctx) on this thread and aside(aside_ctx) on a helper, at once,
 * each under a SIGBUS guard of the file this thread is walking; returns
 * when both have ended (the file changed: as probe_input_parallel). For
 * two independent readings of one large input. No thread to be had: both
 * run here, in order. */
void probe_input_beside(void (*here)(void *ctx), void *here_ctx, void (*aside)(void *ctx), void *aside_ctx);

/* "kimg-probe: PATH: problem" on stderr (problems.c). */
void probe_report_error(const char *path, const char *problem);
/* probe_walker.on_error for a subcommand whose state starts with a struct
 * probe_out: the problem on stderr (unless said), counted, and with
 * --json a file object (probe_json_unreadable_file). */
void probe_input_unreadable(void *ctx, const char *path, const char *problem, bool said);
/* Every problem collect recorded on pf (file-level, then each module's,
 * "module at 0x.. in SECTION: ..."), one probe_report_error line each.
 * Returns how many. */
unsigned long probe_report_problems(const struct probe_file *pf);

/* ---- kernels and payloads (kernels.c) ---- */

/* Kernel names of one image through fn (cubin symbols or PTX .entry).
 * Decompresses when needed, within KIMG_PAYLOAD_MAX_RATIO and the payload
 * limit. Returns the count or a negative error. */
#define PROBE_PAYLOAD_LIMIT_DEFAULT ((uint64_t)1 << 30)
void probe_set_payload_limit(uint64_t bytes); /* main: $KIMG_PAYLOAD_LIMIT */
int probe_image_kernels(const struct kimg_image *img, int (*fn)(void *, const char *, size_t),
			void *ctx, struct kimg_error *err);
/* Device-link stub: no PTX and every image a cubin without kernels
 * (docs/format.md section 2). Reads payloads: call only when needed. */
bool probe_module_is_link_stub(const struct probe_module *m);
/* Bytes probe_module_is_link_stub decodes at most for m: the plain sizes
 * of its compressed images (stored cubins cost a header parse only). */
uint64_t probe_module_stub_test_cost(const struct probe_module *m);

/* ---- targets for check (targets.c) ---- */

struct probe_target {
	struct kimg_device dev;
	bool named;          /* a GPU name or a real device: JSON "device" is dev.name */
	/* A node group of a cluster source or of --sm all (probe/cluster_groups.h),
	 * or NULL. */
	const struct probe_group *group;
};

/* Parse the --sm lists, in order, as one list: items separated by
 * commas, none empty; every compute capability one that exists; a target
 * given twice (9.0, 90, sm_90) kept once. driver_version applies to
 * hypothetical devices (0 = no PTX ISA limit). Returns the count (>0) or
 * -1 after printing the problem to stderr. *targets is malloc'ed. */
/* main: $KIMG_NATIVE=cuda asks the CUDA driver (cuInit) for --sm native
 * even where NVML could answer. */
void probe_set_native_ask_driver(bool on);
int probe_parse_targets(char *const *lists, int n_lists, int driver_version, struct probe_target **targets);

/* probe_parse_targets on a thread of its own (targets_async.c), for lists
 * that name `native`: the GPU query (NVML's start-up, some 20 ms on the
 * H200) runs while the walk begins. probe_targets_async_needed: a list
 * names native, so the query would wait for the device. start: NULL when
 * no thread could be had (then parse here). wait: from any thread, any
 * number of times: the count (>0), the targets (owned by a until end), or
 * -1 when parsing failed (its problem printed to stderr once). failed:
 * the same answer without waiting, false while the query runs. end:
 * joins, hands the targets over (malloc'ed; NULL on failure), frees a. */
struct probe_targets_async;
bool probe_targets_async_needed(char *const *lists, int n_lists);
struct probe_targets_async *probe_targets_async_start(char *const *lists, int n_lists, int driver_version);
int probe_targets_async_wait(struct probe_targets_async *a, struct probe_target **targets);
bool probe_targets_async_failed(const struct probe_targets_async *a);
/* fn(arg) once parsing has ended (at once if it has), under a's lock: once
 * probe_targets_async_wait has returned, the call is over. */
void probe_targets_async_on_done(struct probe_targets_async *a, void (*fn)(void *arg), void *arg);
int probe_targets_async_end(struct probe_targets_async *a, struct probe_target **targets);

/* ---- small formatting helpers (format.c) ---- */

/* Names from inputs (paths from directories and zips, archive members,
 * sections, kernels, problems that quote them) as text output shows them:
 * control bytes, ESC, C1 controls and bytes that are not UTF-8 become
 * \xNN, newline/tab/CR \n \t \r, a backslash \\; so a name cannot move
 * the cursor, recolour the terminal or split "one line per problem".
 * Valid UTF-8 stays as it is. Long names are cut to fit. */
struct probe_esc {
	char s[4 * 4096 + 8];
};
const char *probe_esc(struct probe_esc *e, const char *text);

/* 11080 -> "11.8", 13000 -> "13.0"; "" for 0. */
void probe_format_cuda_version(int v, char *buf, size_t size);
/* PTX ISA versions (900 -> "9.0", "" for 0): kimg_report_format_isa
 * (report/report.h), the same rendering the shim's reports use. */
/* Module header line fragment: "at 0x1a40 in .nv_fatbin (member tu_a.o)". */
void probe_format_module_place(const struct probe_module *m, char *buf, size_t size);

/* One image object (kind, arch, ptx_isa, compressed, size, ...), with
 * "kernels" when asked (json_image.c). */
void probe_json_image(struct kimg_json *j, const struct kimg_image *img, bool kernels);

/* File and module objects shared by scan and check (json_file.c). A file
 * object opens with path, kind, size, error and an open "modules" array,
 * closed by probe_json_file_end. An input that could not be read is a
 * whole object: path, kind null, error, empty modules. A module object
 * opens with offset, size, kind, origin, section, member, error; the
 * caller adds its keys and ends the object. */
void probe_json_file_begin(struct kimg_json *j, const struct probe_file *pf);
void probe_json_file_end(struct kimg_json *j);
void probe_json_unreadable_file(struct kimg_json *j, const char *path, const char *problem);
void probe_json_module_begin(struct kimg_json *j, const struct probe_module *m);

/* ---- subcommands ---- */

int probe_cmd_device(int argc, char **argv);
int probe_cmd_scan(int argc, char **argv);
int probe_cmd_check(int argc, char **argv);
int probe_cmd_summarize(int argc, char **argv); /* cmd_summarize.c */

#endif
