/* SPDX-License-Identifier: Apache-2.0 */
/* Host and Python stacks for the failure report (see stack.h).
 *
 * libunwind's public names are macros over per-architecture symbols
 * (unw_getcontext is _Ux86_64_getcontext, unw_init_local is
 * _ULx86_64_init_local, ...), and its headers are not on GPU machines, so
 * the cursor API is called through those exported symbols with opaque,
 * generously sized buffers. Why libunwind at all: it reads .symtab through
 * unw_get_proc_name, naming the static functions of executables built
 * without -rdynamic, which dladdr (dynamic symbols only) cannot. Where it
 * is absent (the H200 machine printed "?? (wrong_static+0x8e4d)" for main),
 * the object's file is mapped and its .symtab read by the core
 * (core/elf_symbols.h), a few objects per report. */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "diag.h" /* kimg_real_dlsym */
#include "shim_pins.h" /* glibc symbol-version pins for dladdr, dlopen, dl_iterate_phdr */
#include "locate.h"
#include "pyframes.h"
#include "stack.h"

#ifdef KIMG_GLIBC_BASE
__asm__(".symver pthread_once,pthread_once@" KIMG_GLIBC_BASE); /* moved into libc in 2.34 */
#endif

/* glibc's own dlsym, an up-call of shim/diag.h: it never re-enters the
 * exported dlsym hook. */
static void *sym(void *handle, const char *name)
{
	return kimg_real_dlsym(handle, name);
}

/* ---- libunwind, loaded lazily ---- */

/* unw_context_t is about 1 KiB and unw_cursor_t 127 words on x86-64;
 * 4 KiB each leaves room for other builds of the library. */
#define UNW_BUF_WORDS 512
#define UNW_X86_64_RIP 16 /* UNW_REG_IP on x86-64 */

struct unw_api {
	int (*getcontext)(void *ctx);
	int (*init_local)(void *cursor, void *ctx);
	int (*step)(void *cursor);
	int (*get_reg)(void *cursor, int reg, uint64_t *val);
	int (*get_proc_name)(void *cursor, char *buf, size_t len, uint64_t *off);
	int (*backtrace)(void **buf, int size);
};

static struct unw_api unw;
static bool unw_ok;
static pthread_once_t unw_once = PTHREAD_ONCE_INIT;

static void unw_load(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
#if defined(__x86_64__)
	*(void **)&unw.getcontext = sym(h, "_Ux86_64_getcontext");
	*(void **)&unw.init_local = sym(h, "_ULx86_64_init_local");
	*(void **)&unw.step = sym(h, "_ULx86_64_step");
	*(void **)&unw.get_reg = sym(h, "_ULx86_64_get_reg");
	*(void **)&unw.get_proc_name = sym(h, "_ULx86_64_get_proc_name");
#endif
	*(void **)&unw.backtrace = sym(h, "unw_backtrace");
	unw_ok = (unw.getcontext && unw.init_local && unw.step && unw.get_reg) || unw.backtrace;
}

const char *kimg_stack_unwinder_name(void)
{
	pthread_once(&unw_once, unw_load);
	return unw_ok ? "libunwind" : "backtrace";
}

/* ---- demangling ---- */

bool kimg_demangle(const char *mangled, char *out, size_t size)
{
	typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
	if (!mangled || size == 0 || strncmp(mangled, "_Z", 2) != 0)
		return false;
	demangle_fn fn;
	*(void **)&fn = sym(RTLD_DEFAULT, "__cxa_demangle");
	if (!fn) {
		/* Python loads extension modules RTLD_LOCAL, so the libstdc++ that
		 * torch brought in is loaded but not in the global scope (seen on
		 * the H200 run); RTLD_NOLOAD finds it without loading anything */
		void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
		if (!h)
			return false;
		*(void **)&fn = sym(h, "__cxa_demangle");
		dlclose(h); /* drops only the reference RTLD_NOLOAD took */
		if (!fn)
			return false;
	}
	int status = -1;
	char *d = fn(mangled, NULL, NULL, &status);
	if (status != 0 || !d) {
		free(d);
		return false;
	}
	snprintf(out, size, "%s", d);
	free(d);
	return true;
}

/* ---- host frames ---- */

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : (path ? path : "??");
}

/* The object holding this code: frames inside it are kimg's own. */
static const void *self_base(void)
{
	Dl_info info;
	if (dladdr((void *)&self_base, &info) && info.dli_fbase)
		return info.dli_fbase;
	return NULL;
}

/* ---- names from the object's file (.symtab), when dladdr has none ---- */

/* Objects mapped per report: a stack crosses few objects, and each map
 * costs an open and an mmap of a file that may be hundreds of MB (only
 * the symbol-table pages are touched). */
#define SYMTAB_MAX_OBJECTS 4

struct symtab_object {
	uintptr_t base; /* dlpi_addr: load bias, so vaddr = pc - base */
	bool usable;    /* mapped; false: could not be (vdso, deleted file) */
	struct kimg_mapped_file file;
};

/* The objects one kimg_stack_host call has mapped; unmapped at its end. */
struct symtab_cache {
	struct symtab_object obj[SYMTAB_MAX_OBJECTS];
	size_t n;
};

struct object_query {
	uintptr_t pc, base;
	bool found, is_main;
	char name[512];
};

static int object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct object_query *q = data;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || q->pc < start || q->pc - start >= ph->p_memsz)
			continue;
		q->found = true;
		q->base = info->dlpi_addr;
		q->is_main = !info->dlpi_name || !info->dlpi_name[0];
		snprintf(q->name, sizeof q->name, "%s", q->is_main ? "" : info->dlpi_name);
		return 1;
	}
	return 0;
}

/* The cached object holding pc, mapping its file on first use; NULL when
 * pc is in no object, the cache is full or the file cannot be mapped. */
static struct symtab_object *symtab_object_for(struct symtab_cache *c, uintptr_t pc)
{
	struct object_query q;
	memset(&q, 0, sizeof q);
	q.pc = pc;
	if (!dl_iterate_phdr(object_cb, &q) || !q.found)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (c->obj[i].base == q.base)
			return c->obj[i].usable ? &c->obj[i] : NULL;
	if (c->n == SYMTAB_MAX_OBJECTS)
		return NULL;
	if (q.is_main) {
		/* the main program has no name in the link map */
		ssize_t n = readlink("/proc/self/exe", q.name, sizeof q.name - 1);
		q.name[n > 0 ? n : 0] = '\0';
	}
	struct symtab_object *o = &c->obj[c->n++];
	struct kimg_error err;
	o->base = q.base;
	o->usable = q.name[0] && kimg_map_path(q.name, &o->file, &err) == 0;
	return o->usable ? o : NULL;
}

/* Name (copied into name) and start of the function holding pc, from the
 * symbol tables of its object's file. */
static bool symtab_name(struct symtab_cache *c, uintptr_t pc, char *name, size_t size, uintptr_t *start)
{
	struct symtab_object *o = c ? symtab_object_for(c, pc) : NULL;
	struct kimg_elf_symbol sym;
	if (!o || kimg_elf_symbol_find(o->file.bytes, (uint64_t)(pc - o->base), &sym, NULL) != 0)
		return false;
	snprintf(name, size, "%s", sym.name);
	*start = o->base + (uintptr_t)sym.value;
	return true;
}

static void symtab_release(struct symtab_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		kimg_unmap_path(&c->obj[i].file);
	c->n = 0;
}

/* proc_name: the name libunwind found (may be NULL); ip: return address,
 * looked up at ip - 1 so a call at the end of a function names it. */
static void format_frame(char *out, uintptr_t ip, bool innermost, const char *proc_name, uint64_t proc_off,
			 struct symtab_cache *cache)
{
	uintptr_t look = innermost ? ip : ip - 1;
	Dl_info info;
	memset(&info, 0, sizeof info);
	bool have = dladdr((void *)look, &info) != 0;
	const char *name = proc_name && *proc_name ? proc_name : (have ? info.dli_sname : NULL);
	uint64_t off = proc_name && *proc_name ? proc_off
			: (have && info.dli_saddr ? (uint64_t)(ip - (uintptr_t)info.dli_saddr) : 0);
	char from_symtab[160]; /* as long as a demangled name */
	uintptr_t start;
	if (!name && symtab_name(cache, look, from_symtab, sizeof from_symtab, &start)) {
		name = from_symtab;
		off = (uint64_t)(ip - start);
	}
	char demangled[160];
	if (name && kimg_demangle(name, demangled, sizeof demangled))
		name = demangled;
	uint64_t rel = have && info.dli_fbase ? (uint64_t)(ip - (uintptr_t)info.dli_fbase) : (uint64_t)ip;
	const char *obj = have ? base_name(info.dli_fname) : "??";
	if (name)
		snprintf(out, KIMG_FRAME_TEXT, "%s+0x%llx (%s+0x%llx)", name, (unsigned long long)off, obj,
			 (unsigned long long)rel);
	else
		snprintf(out, KIMG_FRAME_TEXT, "?? (%s+0x%llx)", obj, (unsigned long long)rel);
}

static bool in_self(uintptr_t ip, const void *self)
{
	Dl_info info;
	return self && dladdr((void *)(ip - 1), &info) && info.dli_fbase == self;
}

/* Raw return addresses, innermost first; no names yet. */
struct raw_frame {
	uintptr_t ip;
	char name[128];
	uint64_t off;
	bool named;
};

#define MAX_RAW 96

__attribute__((noinline)) static size_t collect_libunwind(struct raw_frame *raw, size_t max)
{
	size_t n = 0;
	if (unw.getcontext && unw.init_local && unw.step && unw.get_reg) {
		uint64_t ctx[UNW_BUF_WORDS], cursor[UNW_BUF_WORDS];
		/* context and cursor must come from this frame: walking after
		 * returning from the function that captured it would read a dead frame */
		if (unw.getcontext(ctx) != 0 || unw.init_local(cursor, ctx) != 0)
			return 0;
		do {
			uint64_t ip = 0;
			if (unw.get_reg(cursor, UNW_X86_64_RIP, &ip) != 0 || ip == 0)
				break;
			raw[n].ip = (uintptr_t)ip;
			raw[n].named = unw.get_proc_name &&
				       unw.get_proc_name(cursor, raw[n].name, sizeof raw[n].name, &raw[n].off) == 0;
			n++;
		} while (n < max && unw.step(cursor) > 0);
		return n;
	}
	void *ips[MAX_RAW];
	int got = unw.backtrace(ips, (int)(max < MAX_RAW ? max : MAX_RAW));
	for (int i = 0; i < got; i++) {
		raw[n].ip = (uintptr_t)ips[i];
		raw[n++].named = false;
	}
	return n;
}

__attribute__((noinline)) static size_t collect_backtrace(struct raw_frame *raw, size_t max)
{
	void *ips[MAX_RAW];
	int got = backtrace(ips, (int)(max < MAX_RAW ? max : MAX_RAW));
	size_t n = 0;
	for (int i = 0; i < got; i++) {
		raw[n].ip = (uintptr_t)ips[i];
		raw[n++].named = false;
	}
	return n;
}

size_t kimg_stack_host(char (*frames)[KIMG_FRAME_TEXT], size_t max, bool skip_self, enum kimg_unwinder how)
{
	struct raw_frame raw[MAX_RAW];
	size_t n = 0;
	pthread_once(&unw_once, unw_load);
	if (how == KIMG_UNWIND_BACKTRACE || (how == KIMG_UNWIND_AUTO && !unw_ok))
		n = collect_backtrace(raw, MAX_RAW);
	else if (unw_ok)
		n = collect_libunwind(raw, MAX_RAW);

	/* frames 0 and 1 are collect_*() and this function; then kimg's own */
	size_t first = n > 2 ? 2 : n;
	if (skip_self) {
		const void *self = self_base();
		while (first < n && in_self(raw[first].ip, self))
			first++;
	}
	size_t out = 0;
	struct symtab_cache cache;
	cache.n = 0;
	for (size_t i = first; i < n && out < max; i++, out++)
		format_frame(frames[out], raw[i].ip, false, raw[i].named ? raw[i].name : NULL, raw[i].off, &cache);
	symtab_release(&cache);
	return out;
}

size_t kimg_stack_capture(void **ips, size_t max)
{
	void *raw[MAX_RAW];
	int got = backtrace(raw, MAX_RAW);
	const void *self = self_base();
	size_t first = 0, n = 0;
	while (first < (size_t)(got > 0 ? got : 0) && in_self((uintptr_t)raw[first], self))
		first++;
	for (size_t i = first; i < (size_t)got && n < max; i++)
		ips[n++] = raw[i];
	return n;
}

size_t kimg_stack_format(void *const *ips, size_t n, char (*frames)[KIMG_FRAME_TEXT], size_t max)
{
	struct symtab_cache cache;
	size_t out = 0;
	cache.n = 0;
	for (size_t i = 0; i < n && out < max; i++, out++)
		format_frame(frames[out], (uintptr_t)ips[i], false, NULL, 0, &cache);
	symtab_release(&cache);
	return out;
}

/* ---- Python frames ---- */

struct py_api {
	int (*is_initialized)(void);
	int (*gil_check)(void);
	void *(*this_thread_state)(void);
	void *(*get_frame)(void *tstate);
	void *(*frame_code)(void *frame);
	int (*frame_line)(void *frame);
	void *(*frame_back)(void *frame);
	const char *(*unicode_utf8)(void *obj);
	void *(*getattr)(void *obj, const char *name);
	void (*decref)(void *obj);
	void (*err_fetch)(void **type, void **value, void **tb);
	void (*err_restore)(void *type, void *value, void *tb);
	void (*err_clear)(void);
};

#define PY_SYM(field, name) (*(void **)&api->field = sym(RTLD_DEFAULT, name))

/* Resolved on every report rather than once: Python may be loaded into the
 * process after the first failure (a C program that later embeds it). */
static bool py_resolve(struct py_api *api)
{
	memset(api, 0, sizeof *api);
	if (!PY_SYM(is_initialized, "Py_IsInitialized"))
		return false;
	PY_SYM(gil_check, "PyGILState_Check");
	/* 3.13 renamed the unchecked accessor; the GILState one works from 3.x */
	if (!PY_SYM(this_thread_state, "PyThreadState_GetUnchecked") &&
	    !PY_SYM(this_thread_state, "_PyThreadState_UncheckedGet"))
		PY_SYM(this_thread_state, "PyGILState_GetThisThreadState");
	PY_SYM(get_frame, "PyThreadState_GetFrame");   /* 3.9+ */
	PY_SYM(frame_code, "PyFrame_GetCode");         /* 3.9+ */
	PY_SYM(frame_line, "PyFrame_GetLineNumber");
	PY_SYM(frame_back, "PyFrame_GetBack");         /* 3.9+ */
	PY_SYM(unicode_utf8, "PyUnicode_AsUTF8");
	PY_SYM(getattr, "PyObject_GetAttrString");
	PY_SYM(decref, "Py_DecRef");
	PY_SYM(err_fetch, "PyErr_Fetch");
	PY_SYM(err_restore, "PyErr_Restore");
	PY_SYM(err_clear, "PyErr_Clear");
	return api->gil_check && api->this_thread_state && api->get_frame && api->frame_code && api->frame_line &&
	       api->frame_back && api->unicode_utf8 && api->getattr && api->decref && api->err_fetch &&
	       api->err_restore && api->err_clear;
}

/* str(getattr(obj, name)) into out; false (and "?") when absent, e.g.
 * co_qualname before Python 3.11. */
static bool py_attr_text(const struct py_api *api, void *obj, const char *name, char *out, size_t size)
{
	void *v = api->getattr(obj, name);
	const char *s = v ? api->unicode_utf8(v) : NULL;
	snprintf(out, size, "%s", s ? s : "?");
	if (!s)
		api->err_clear();
	if (v)
		api->decref(v);
	return s != NULL;
}

size_t kimg_stack_python(struct kimg_python_frame *frames, size_t max)
{
	struct py_api api_s, *api = &api_s;
	if (!py_resolve(api) || !api->is_initialized() || !api->gil_check())
		return 0;
	void *ts = api->this_thread_state();
	if (!ts)
		return 0;
	/* the program's pending exception, if any, must survive our calls */
	void *et = NULL, *ev = NULL, *etb = NULL;
	api->err_fetch(&et, &ev, &etb);
	size_t n = 0;
	void *frame = api->get_frame(ts); /* new reference */
	while (frame && n < max) {
		void *code = api->frame_code(frame); /* new reference */
		frames[n].line = api->frame_line(frame);
		if (code) {
			py_attr_text(api, code, "co_filename", frames[n].file, sizeof frames[n].file);
			if (!py_attr_text(api, code, "co_qualname", frames[n].function, sizeof frames[n].function))
				py_attr_text(api, code, "co_name", frames[n].function, sizeof frames[n].function);
			api->decref(code);
		} else {
			snprintf(frames[n].file, sizeof frames[n].file, "?");
			snprintf(frames[n].function, sizeof frames[n].function, "?");
		}
		n++;
		void *back = api->frame_back(frame); /* new reference */
		api->decref(frame);
		frame = back;
	}
	if (frame)
		api->decref(frame);
	api->err_restore(et, ev, etb);
	return n;
}

size_t kimg_stack_python_any(struct kimg_python_frame *frames, size_t max, char *note, size_t note_size)
{
	struct py_api api;
	char scratch[8];
	if (!note) {
		note = scratch;
		note_size = sizeof scratch;
	}
	note[0] = '\0';
	if (!py_resolve(&api) || !api.is_initialized())
		return 0;
	/* This thread holds the GIL when the interpreter's current thread
	 * state is this thread's own: PyGILState_Check alone answers 1 when
	 * its check is disabled (sub-interpreters). */
	void *(*current)(void) = NULL, *(*mine)(void) = NULL;
	*(void **)&current = sym(RTLD_DEFAULT, "PyThreadState_GetUnchecked");
	if (!current)
		*(void **)&current = sym(RTLD_DEFAULT, "_PyThreadState_UncheckedGet");
	*(void **)&mine = sym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	bool holds = api.gil_check() && (!current || !mine || (current() && current() == mine()));
	if (holds)
		return kimg_stack_python(frames, max);
	return kimg_python_frames_nogil(frames, max, note, note_size);
}
