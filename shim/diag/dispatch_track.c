/* SPDX-License-Identifier: Apache-2.0 */
/* Arch-dispatched failures: recorded, reported only when they reach the
 * program (dispatch_track.h).
 *
 * How "reaches the program" is told, and what it cannot see:
 * - a launch that fails is always reported (hook_driver.c, hook_runtime.c
 *   mark launches), and says when its module had been recorded; with
 *   static cudart the runtime's own lookup before a launch looks like a
 *   probe, so a program that launches such a kernel and ignores the error
 *   is only caught by its exit status;
 * - the caller of the failing driver call, by the object its return
 *   address lies in (dladdr, cold path only): the module's own object (its
 *   static runtime, or the library's own code), a CUDA runtime
 *   (libcudart*, vendored names too) or a dispatching library's object
 *   means "the runtime or library asked"; anything else (the program,
 *   ctypes, cuda-python) means the program asked, and it is reported at
 *   once. Misjudging a runtime under another name errs toward reporting;
 *   a program calling the driver from the same object as its modules
 *   (static cudart program with its own cuModuleGetFunction) errs toward
 *   silence until exit;
 * - the exit status through on_exit(), which deferred.c arms at the first
 *   record (so nothing is done at start-up) and which takes the records
 *   out of here (kimg_dispatch_take_unreported): this unit records and
 *   never reports; _exit() and os._exit() bypass it;
 * - fatal signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) through a
 *   handler installed at the first record only where the disposition is
 *   still the default; it writes the pre-rendered per-file lines to
 *   stderr, restores the default and re-raises, so the process dies as it
 *   would have (core dump included). A handler the program installs
 *   later simply replaces it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <unistd.h>

#include "diag_internal.h"
#include "dispatch_track.h"
#include "fatbin.h"
#include "shim_pins.h" /* glibc symbol-version pins for dladdr */
#include "input.h"
#include "locate.h"
#include "ptx.h"
#include "cubin.h"
#include "rules.h"
#include "seen.h"
#include "stack.h"
#include "stats.h"

#define MAX_FILES 64
_Static_assert(MAX_FILES <= KIMG_NOTES_MAX, "a summary line per file");
#define RAW_FRAMES 32
#define PY_FRAMES 8
#define RUNS_CACHE 128
#define WALK_MAX_IMAGES 128

static pthread_mutex_t track_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- does the file have code for this GPU ---- */

static struct {
	uint64_t key; /* hash(path) ^ sm; 0 empty */
	bool runs;
} runs_cache[RUNS_CACHE];

static uint64_t hash_str(const char *s)
{
	uint64_t h = kimg_hash_str(s);
	return h ? h : 1; /* 0 marks an empty cache slot */
}

struct runs_walk {
	const struct kimg_device *d;
	bool runs;
};

static bool module_runs(const struct kimg_image *imgs, size_t n, const struct kimg_device *d)
{
	struct kimg_module_verdict v;
	if (n == 0)
		return false;
	kimg_rules_check_module(imgs, n, d, NULL, &v);
	return v.outcome != KIMG_OUTCOME_CANNOT_RUN;
}

static int on_runs_module(void *ctx, const struct kimg_module_ref *m)
{
	struct runs_walk *w = ctx;
	struct kimg_image imgs[WALK_MAX_IMAGES];
	struct kimg_error err = { 0 };
	size_t n = 0;
	memset(imgs, 0, sizeof imgs[0]);
	if (m->kind == KIMG_INPUT_FATBIN) {
		struct kimg_fatbin fb;
		uint64_t cursor = 0;
		if (kimg_fatbin_open(m->bytes, 0, &fb, &err) < 0)
			return 0;
		while (n < WALK_MAX_IMAGES && kimg_fatbin_next(&fb, &cursor, &imgs[n], &err) > 0)
			n++;
	} else if (m->kind == KIMG_INPUT_CUBIN) {
		struct kimg_cubin_info ci;
		if (kimg_cubin_parse(m->bytes, &ci, &err) < 0)
			return 0;
		imgs[0].kind = KIMG_IMAGE_SASS;
		imgs[0].arch.sm = ci.sm;
		imgs[0].arch.variant = ci.sm_a_v1 ? KIMG_VARIANT_A : KIMG_VARIANT_PLAIN;
		n = 1;
	} else if (m->kind == KIMG_INPUT_PTX) {
		struct kimg_ptx_info pi;
		if (kimg_ptx_parse(m->bytes, &pi, &err) < 0)
			return 0;
		imgs[0].kind = KIMG_IMAGE_PTX;
		imgs[0].arch = pi.target;
		imgs[0].ptx_isa = pi.isa;
		n = 1;
	}
	if (module_runs(imgs, n, w->d)) {
		w->runs = true;
		return 1; /* stop the walk */
	}
	return 0;
}

bool kimg_dispatch_file_runs_here(const char *path, const struct kimg_device *d)
{
	if (!path || !path[0] || !d)
		return false;
	uint64_t key = hash_str(path) ^ ((uint64_t)d->cc.sm << 1) ^ ((uint64_t)d->force_ptx_jit << 62);
	key = key ? key : 1;
	pthread_mutex_lock(&track_lock);
	for (int i = 0; i < RUNS_CACHE; i++)
		if (runs_cache[i].key == key) {
			bool runs = runs_cache[i].runs;
			pthread_mutex_unlock(&track_lock);
			return runs;
		}
	pthread_mutex_unlock(&track_lock);

	struct kimg_mapped_file file;
	struct kimg_error err = { 0 };
	struct runs_walk w = { d, false };
	if (kimg_map_path(path, &file, &err) == 0) {
		kimg_input_for_each_module(file.bytes, on_runs_module, &w, &err);
		kimg_unmap_path(&file);
	}
	pthread_mutex_lock(&track_lock);
	for (int i = 0; i < RUNS_CACHE; i++)
		if (runs_cache[i].key == 0 || i == RUNS_CACHE - 1) {
			runs_cache[i].key = key;
			runs_cache[i].runs = w.runs;
			break;
		}
	pthread_mutex_unlock(&track_lock);
	return w.runs;
}

/* ---- whose call was it ---- */

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : (path ? path : "");
}

bool kimg_dispatch_call_is_programs(const void *caller, const void *image, const char *module_file)
{
	Dl_info c, m;
	if (!caller || !dladdr(caller, &c) || !c.dli_fbase)
		return false;
	if (image && dladdr(image, &m) && m.dli_fbase == c.dli_fbase)
		return false; /* the module's own object: its runtime or its library code */
	const char *cb = base_name(c.dli_fname);
	if (strncmp(cb, "libcudart", 9) == 0)
		return false;
	if (kimg_dispatch_library(cb))
		return false;
	if (!image && module_file && c.dli_fname && strcmp(c.dli_fname, module_file) == 0)
		return false;
	return true;
}

/* ---- the records ---- */

struct file_entry {
	char path[512];
	unsigned modules;           /* distinct (module, error) recorded */
	unsigned failures;          /* failed calls, repeats included */
	char archs[96];             /* the first module's images: "sm_100f compute_100f" */
	const char *rule, *library;
	bool escalated;             /* reported in full (launch, program call, exit) */
	/* the first failure, for a later report */
	struct kimg_failure f;
	uint64_t module_key;
	char kernel[256];
	char load_path[512];
	void *ips[RAW_FRAMES];
	size_t n_ips;
	struct kimg_python_frame python[PY_FRAMES];
	size_t n_python;
};

static struct file_entry files[MAX_FILES];
static unsigned n_files;
static struct kimg_seen_set recorded; /* (module, error) keys; module keys with error 0 */


static struct file_entry *file_of(const char *path, bool create)
{
	for (unsigned i = 0; i < n_files; i++)
		if (strcmp(files[i].path, path) == 0)
			return &files[i];
	if (!create || n_files == MAX_FILES)
		return NULL;
	struct file_entry *e = &files[n_files++];
	memset(e, 0, sizeof *e);
	snprintf(e->path, sizeof e->path, "%s", path);
	return e;
}

/* The file's line of the exit summary (stats.h, shown with KIMG_VERBOSE),
 * rewritten whenever its facts change; under track_lock. */
static void note_file(unsigned i)
{
	const struct file_entry *e = &files[i];
	char line[1024], why[96];
	if (e->library)
		snprintf(why, sizeof why, "%s selects its modules per GPU [%s]", e->library, e->rule);
	else
		snprintf(why, sizeof why, "code specific to other GPUs [%s]", e->rule ? e->rule : "?");
	int n = snprintf(line, sizeof line,
			 "kimg: dispatch: %s: %u module%s for other GPUs failed %u time%s where the library looked "
			 "them up (%s; first: %s); not reported%s\n",
			 e->path, e->modules, e->modules == 1 ? "" : "s", e->failures, e->failures == 1 ? "" : "s", why,
			 e->archs[0] ? e->archs : "?", e->escalated ? ", except as shown above" : "");
	if (n > 0)
		kimg_stats_note(KIMG_NOTE_DISPATCH_FILE, i, line);
}

/* ---- the watch: exit status and fatal signals ---- */

/* Pre-rendered lines for the signal handler, double-buffered so it never
 * reads a buffer being written. */
static char sig_text[2][4096];
static _Atomic int sig_current = -1;

static void render_signal_text(void)
{
	int next = atomic_load(&sig_current) == 0 ? 1 : 0;
	char *buf = sig_text[next];
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < n_files && used < sizeof sig_text[0] - 1; i++) {
		int n = snprintf(buf + used, sizeof sig_text[0] - used,
				 "kimg:   %s: %u module%s for other GPUs failed to load (%s), recorded not reported\n",
				 files[i].path, files[i].modules, files[i].modules == 1 ? "" : "s", files[i].archs);
		if (n < 0)
			break;
		used += (size_t)n < sizeof sig_text[0] - used ? (size_t)n : sizeof sig_text[0] - used - 1;
	}
	atomic_store(&sig_current, next);
}

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

static void write_all(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Async-signal-safe: write() and raise() only. */
static void on_fatal_signal(int sig)
{
	int saved = errno;
	int cur = atomic_load(&sig_current);
	char head[96] = "kimg: fatal signal ";
	size_t n = strlen(head);
	char digits[8];
	int d = 0, v = sig;
	do {
		digits[d++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && d < 7);
	while (d > 0)
		head[n++] = digits[--d];
	static const char tail[] = " after arch-dispatched load failures (modules for other GPUs):\n";
	memcpy(head + n, tail, sizeof tail);
	n += sizeof tail - 1;
	write_all(head, n);
	if (cur >= 0)
		write_all(sig_text[cur], strlen(sig_text[cur]));
	errno = saved;
	/* SA_RESETHAND restored the default: die of the same signal */
	raise(sig);
}

static void arm_watch(void)
{
	static bool armed;
	if (armed)
		return;
	armed = true;
	for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
		struct sigaction old, sa;
		if (sigaction(fatal_signals[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_fatal_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESETHAND | SA_NODEFER;
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* ---- recording ---- */

static void archs_text(const struct kimg_report *r, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < r->image_count && used + 1 < size; i++) {
		char arch[32];
		kimg_image_arch_name(&r->images[i], arch, sizeof arch);
		int n = snprintf(buf + used, size - used, "%s%s", i ? " " : "", arch);
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
}

void kimg_dispatch_record(const struct kimg_failure *f, uint64_t module_key, const struct kimg_report *r,
			  const struct kimg_dispatch_verdict *v)
{
	pthread_mutex_lock(&track_lock);
	kimg_seen_insert(&recorded, kimg_report_key(module_key, f->error));
	struct file_entry *e = file_of(r->module_file, true);
	if (e) {
		e->failures++;
		if (kimg_seen_insert(&recorded, kimg_report_key(module_key, 0)))
			e->modules++;
		if (e->modules == 1 && e->failures == 1) {
			archs_text(r, e->archs, sizeof e->archs);
			e->rule = v->rule;
			e->library = v->library;
			e->f = *f;
			e->f.link = NULL;
			e->f.replay = NULL;
			e->module_key = module_key;
			if (f->kernel || r->kernel) {
				snprintf(e->kernel, sizeof e->kernel, "%s", f->kernel ? f->kernel : r->kernel);
				e->f.kernel = e->kernel;
			}
			if (f->path) {
				snprintf(e->load_path, sizeof e->load_path, "%s", f->path);
				e->f.path = e->load_path;
			}
			e->n_ips = kimg_stack_capture(e->ips, RAW_FRAMES);
			e->n_python = kimg_stack_python_any(e->python, PY_FRAMES, NULL, 0);
		}
	}
	if (e)
		note_file((unsigned)(e - files));
	render_signal_text();
	arm_watch();
	pthread_mutex_unlock(&track_lock);
}

bool kimg_dispatch_repeat(uint64_t module_key, int error)
{
	if (!kimg_seen_contains(&recorded, kimg_report_key(module_key, error)))
		return false;
	pthread_mutex_lock(&track_lock);
	for (unsigned i = 0; i < n_files; i++)
		if (files[i].module_key == module_key) {
			files[i].failures++;
			note_file(i);
		}
	pthread_mutex_unlock(&track_lock);
	return true;
}

bool kimg_dispatch_escalate(uint64_t module_key, const char *module_file)
{
	/* a full report of any module of the file stands for its records at
	 * exit too (the runtime may name one module by two handles) */
	pthread_mutex_lock(&track_lock);
	struct file_entry *e = module_file && module_file[0] ? file_of(module_file, false) : NULL;
	if (e) {
		e->escalated = true;
		note_file((unsigned)(e - files));
	}
	pthread_mutex_unlock(&track_lock);
	return kimg_seen_contains(&recorded, kimg_report_key(module_key, 0));
}

bool kimg_dispatch_take_unreported(int status, struct kimg_failure *f, struct kimg_replay *rp)
{
	/* not locked: at exit, a thread stopped inside a record must not hold
	 * the process up */
	for (unsigned i = 0; i < n_files; i++) {
		struct file_entry *e = &files[i];
		if (e->escalated)
			continue;
		e->escalated = true;
		note_file(i);
		*rp = (struct kimg_replay){
			.escalation = KIMG_ESCALATION_EXIT_STATUS, .exit_status = status, .ips = e->ips, .n_ips = e->n_ips,
			.python = e->python, .n_python = e->n_python, .modules = e->modules,
		};
		*f = e->f;
		f->replay = rp;
		return true;
	}
	return false;
}
