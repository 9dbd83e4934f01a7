/* SPDX-License-Identifier: Apache-2.0 */
/* Python frames of the calling thread without the GIL (pyframes.h).
 *
 * PyTorch, CuPy and most bindings release the GIL around every CUDA call,
 * so the C API cannot be used there (taking the GIL inside a CUDA call
 * can deadlock against a thread that holds it and waits for the GPU).
 * Like faulthandler, this reads the thread's own frame chain directly:
 * the thread is inside a C call, so its frames cannot change or go away
 * under us, and nothing is written (no reference counts, no allocation
 * by Python). Layouts:
 *   3.10        PyThreadState.frame -> PyFrameObject chain (f_back, f_code, f_lasti)
 *   3.11, 3.12  PyThreadState.cframe->current_frame -> _PyInterpreterFrame chain
 *   3.13, 3.14  PyThreadState.current_frame, offsets read from the
 *               interpreter's own _Py_DebugOffsets (_PyRuntime starts
 *               with it), whose layout is itself per version
 * The fixed offsets were taken with offsetof() against each version's
 * headers (x86-64 and aarch64 share them: LP64, same alignment); the
 * debug-offsets positions from CPython's pycore_debug_offsets.h of 3.13
 * and 3.14. Every object read is checked for its type (PyCode_Type,
 * PyUnicode_Type) and every read goes through process_vm_readv on our
 * own pid (an error, not a fault, for a bad pointer), falling back to the
 * readable-mapping check where seccomp forbids that call. Other versions,
 * free-threaded builds and anything that fails a check: no frames, and a
 * note that says why. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "diag.h"
#include "bound.h"
#include "locate.h"
#include "pyframes.h"

/* glibc's own dlsym, an up-call of shim/diag.h */
static void *sym(const char *name)
{
	return kimg_real_dlsym(RTLD_DEFAULT, name);
}

/* ---- reading memory that may not be there ---- */

static int vm_read_state; /* 0 untried, 1 works, -1 refused (seccomp) */

static bool safe_read(const void *addr, void *out, size_t n)
{
	if (!addr)
		return false;
	if (vm_read_state >= 0) {
		struct iovec local = { out, n }, remote = { (void *)addr, n };
		ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (got == (ssize_t)n) {
			vm_read_state = 1;
			return true;
		}
		if (got < 0 && (errno == EPERM || errno == ENOSYS || errno == EACCES) && vm_read_state == 0)
			vm_read_state = -1;
		else
			return false;
	}
	if (kimg_readable_run(addr, n) < n)
		return false;
	memcpy(out, addr, n);
	return true;
}

static bool read_ptr(uintptr_t addr, uintptr_t *out)
{
	return safe_read((const void *)addr, out, sizeof *out);
}

/* ---- layouts ---- */

enum chain { CHAIN_FRAME_OBJECT = 0, CHAIN_CFRAME, CHAIN_DIRECT };

struct layout {
	enum chain chain;
	size_t ts_frame;          /* 3.10: tstate->frame; 3.11/12: tstate->cframe; 3.13+: tstate->current_frame */
	size_t cframe_current;    /* 3.11/12: cframe->current_frame */
	size_t f_back, f_code, f_lasti;   /* frame: previous, code (executable), lasti (3.10) */
	size_t f_instr;           /* 3.11/12 prev_instr, 3.13+ instr_ptr */
	size_t f_owner;           /* 0: none (3.10) */
	int owner_skip_lo;        /* owners >= this are not Python frames (C stack / interpreter entries); 0 none */
	bool stackref;            /* 3.14: the executable is a tagged _PyStackRef */
	size_t co_filename, co_name, co_qualname; /* co_qualname 0: none (3.10) */
	size_t co_code, co_firsttraceable;        /* 3.11/12: incomplete-frame check; 0: none */
	size_t ob_type;
	size_t u_length, u_state, u_ascii_size, u_compact_size;
	bool line_api;            /* PyUnstable_InterpreterFrame_GetLine (3.12+), else PyCode_Addr2Line */
};

/* offsetof() against the 3.10.13, 3.11.7 and 3.12.1 headers */
static const struct layout layout_310 = {
	.chain = CHAIN_FRAME_OBJECT, .ts_frame = 24, .f_back = 24, .f_code = 32, .f_lasti = 96,
	.co_filename = 104, .co_name = 112, .ob_type = 8,
	.u_length = 16, .u_state = 32, .u_ascii_size = 48, .u_compact_size = 72,
};
static const struct layout layout_311 = {
	.chain = CHAIN_CFRAME, .ts_frame = 56, .cframe_current = 8, .f_back = 48, .f_code = 32, .f_instr = 56,
	.f_owner = 69, .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_code = 184,
	.co_firsttraceable = 168, .ob_type = 8, .u_length = 16, .u_state = 32, .u_ascii_size = 48, .u_compact_size = 72,
};
static const struct layout layout_312 = {
	.chain = CHAIN_CFRAME, .ts_frame = 56, .cframe_current = 0, .f_back = 8, .f_code = 0, .f_instr = 56,
	.f_owner = 70, .owner_skip_lo = 3, .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_code = 192,
	.co_firsttraceable = 176, .ob_type = 8, .u_length = 16, .u_state = 32, .u_ascii_size = 40,
	.u_compact_size = 56, .line_api = true,
};

/* Positions of the fields kimg uses inside _Py_DebugOffsets, per version
 * (the struct grew between 3.13 and 3.14). */
struct debug_positions {
	unsigned minor;
	size_t free_threaded, ts_current_frame, if_previous, if_executable, if_instr_ptr, if_owner;
	size_t co_filename, co_name, co_qualname, ob_type, u_state, u_length, u_ascii_size;
	int owner_skip_lo;
};
static const struct debug_positions debug_positions[] = {
	{ 13, 16, 184, 232, 240, 248, 264, 280, 288, 296, 360, 544, 552, 560, 3 },
	{ 14, 16, 208, 256, 264, 272, 288, 320, 328, 336, 408, 624, 632, 640, 3 },
};

static bool layout_from_debug_offsets(unsigned minor, unsigned long hexversion, struct layout *l, char *note,
				      size_t note_size)
{
	const struct debug_positions *p = NULL;
	for (size_t i = 0; i < sizeof debug_positions / sizeof debug_positions[0]; i++)
		if (debug_positions[i].minor == minor)
			p = &debug_positions[i];
	const uint8_t *rt = sym("_PyRuntime");
	char cookie[8];
	uint64_t version = 0, ft = 0;
	if (!p || !rt || !safe_read(rt, cookie, 8) || memcmp(cookie, "xdebugpy", 8) != 0 ||
	    !safe_read(rt + 8, &version, 8) || (version >> 16) != (hexversion >> 16)) {
		snprintf(note, note_size, "CPython 3.%u: its _Py_DebugOffsets are not the ones kimg knows; no Python frames",
			 minor);
		return false;
	}
	if (!safe_read(rt + p->free_threaded, &ft, 8) || ft != 0) {
		snprintf(note, note_size, "free-threaded CPython 3.%u: frames not read", minor);
		return false;
	}
	uint64_t v[12];
	const size_t at[12] = { p->ts_current_frame, p->if_previous, p->if_executable, p->if_instr_ptr, p->if_owner,
				p->co_filename, p->co_name, p->co_qualname, p->ob_type, p->u_state, p->u_length,
				p->u_ascii_size };
	for (int i = 0; i < 12; i++)
		if (!safe_read(rt + at[i], &v[i], 8) || v[i] > 4096) {
			snprintf(note, note_size, "CPython 3.%u: unexpected _Py_DebugOffsets; no Python frames", minor);
			return false;
		}
	memset(l, 0, sizeof *l);
	l->chain = CHAIN_DIRECT;
	l->ts_frame = v[0];
	l->f_back = v[1];
	l->f_code = v[2];
	l->f_instr = v[3];
	l->f_owner = v[4];
	l->owner_skip_lo = p->owner_skip_lo;
	l->stackref = minor >= 14;
	l->co_filename = v[5];
	l->co_name = v[6];
	l->co_qualname = v[7];
	l->ob_type = v[8];
	l->u_state = v[9];
	l->u_length = v[10];
	l->u_ascii_size = v[11];
	l->u_compact_size = v[11] + 16; /* + utf8_length, utf8 */
	l->line_api = true;
	return true;
}

/* ---- strings ---- */

static void put_utf8(char *out, size_t size, size_t *at, uint32_t c)
{
	char b[4];
	size_t n;
	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | (c >> 12 & 0x3f));
		b[2] = (char)(0x80 | (c >> 6 & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (*at + n < size) {
		memcpy(out + *at, b, n);
		*at += n;
	}
}

/* A str object into out as UTF-8; false (out "?") when it is not one. */
static bool read_str(const struct layout *l, uintptr_t obj, uintptr_t unicode_type, char *out, size_t size)
{
	uintptr_t type = 0;
	int64_t length = 0;
	uint32_t state = 0;
	snprintf(out, size, "?");
	if (!obj || !read_ptr(obj + l->ob_type, &type) || type != unicode_type ||
	    !safe_read((const void *)(obj + l->u_length), &length, sizeof length) ||
	    !safe_read((const void *)(obj + l->u_state), &state, sizeof state) || length < 0)
		return false;
	unsigned kind = state >> 2 & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4))
		return false; /* legacy strings (3.10/3.11 only): not for code objects */
	uintptr_t data = obj + (ascii ? l->u_ascii_size : l->u_compact_size);
	size_t n = (size_t)length < 1024 ? (size_t)length : 1024, at = 0;
	uint8_t buf[4096];
	if (!safe_read((const void *)data, buf, n * kind))
		return false;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = kind == 1 ? buf[i] : kind == 2 ? ((const uint16_t *)buf)[i] : ((const uint32_t *)buf)[i];
		put_utf8(out, size, &at, c);
	}
	out[at] = '\0';
	return true;
}

/* ---- the walk ---- */

struct py_fns {
	int (*is_initialized)(void);
	void *(*this_thread_state)(void);
	int (*addr2line)(void *code, int addr);
	int (*frame_line)(void *frame);
	uintptr_t code_type, unicode_type;
};

static bool version_of(unsigned *minor, unsigned long *hex)
{
	const unsigned long *v = sym("Py_Version"); /* 3.11+ */
	unsigned long x = 0;
	if (v && safe_read(v, &x, sizeof x) && (x >> 24) == 3) {
		*hex = x;
		*minor = (unsigned)(x >> 16 & 0xff);
		return true;
	}
	const char *(*get)(void) = (const char *(*)(void))sym("Py_GetVersion");
	const char *s = get ? get() : NULL;
	unsigned maj = 0, min = 0;
	if (!s || sscanf(s, "%u.%u", &maj, &min) != 2 || maj != 3)
		return false;
	*minor = min;
	*hex = 0x03000000ul | (unsigned long)min << 16;
	return true;
}

size_t kimg_python_frames_nogil(struct kimg_python_frame *frames, size_t max, char *note, size_t note_size)
{
	struct py_fns fn;
	struct layout l;
	unsigned minor = 0;
	unsigned long hex = 0;
	note[0] = '\0';
	*(void **)&fn.is_initialized = sym("Py_IsInitialized");
	*(void **)&fn.this_thread_state = sym("PyGILState_GetThisThreadState");
	*(void **)&fn.addr2line = sym("PyCode_Addr2Line");
	*(void **)&fn.frame_line = sym("PyUnstable_InterpreterFrame_GetLine");
	fn.code_type = (uintptr_t)sym("PyCode_Type");
	fn.unicode_type = (uintptr_t)sym("PyUnicode_Type");
	if (!fn.is_initialized || !fn.this_thread_state || !fn.is_initialized())
		return 0;
	if (!version_of(&minor, &hex)) {
		snprintf(note, note_size, "this Python's version could not be read; no Python frames");
		return 0;
	}
	if (minor == 10)
		l = layout_310;
	else if (minor == 11)
		l = layout_311;
	else if (minor == 12)
		l = layout_312;
	else if (minor == 13 || minor == 14) {
		if (!layout_from_debug_offsets(minor, hex, &l, note, note_size))
			return 0;
	} else {
		snprintf(note, note_size, "CPython 3.%u: frame layout unknown to kimg (it reads 3.10 to 3.14 without the GIL); "
			 "no Python frames", minor);
		return 0;
	}
	if (!fn.code_type || !fn.unicode_type || (l.line_api ? !fn.frame_line : !fn.addr2line)) {
		snprintf(note, note_size, "CPython 3.%u without the functions kimg needs; no Python frames", minor);
		return 0;
	}
	uintptr_t ts = (uintptr_t)fn.this_thread_state(), frame = 0;
	if (!ts)
		return 0; /* a thread Python never ran on */
	if (!read_ptr(ts + l.ts_frame, &frame) ||
	    (l.chain == CHAIN_CFRAME && (!frame || !read_ptr(frame + l.cframe_current, &frame)))) {
		snprintf(note, note_size, "CPython 3.%u: the thread state could not be read; no Python frames", minor);
		return 0;
	}
	size_t n = 0;
	for (int hops = 0; frame && n < max && hops < 1024; hops++) {
		uintptr_t code = 0, type = 0, next = 0;
		if (!read_ptr(frame + l.f_back, &next) || !read_ptr(frame + l.f_code, &code))
			break;
		if (l.stackref)
			code &= ~(uintptr_t)3; /* tag bits of a _PyStackRef */
		uint8_t owner = 0;
		if (l.f_owner && !safe_read((const void *)(frame + l.f_owner), &owner, 1))
			break;
		bool python = (!l.owner_skip_lo || owner < l.owner_skip_lo) && read_ptr(code + l.ob_type, &type) &&
			      type == fn.code_type;
		if (python && l.co_firsttraceable && owner != 1 /* generator */) {
			/* an incomplete frame: pushed, first instruction not run yet */
			uintptr_t instr = 0;
			int32_t first = 0;
			if (read_ptr(frame + l.f_instr, &instr) &&
			    safe_read((const void *)(code + l.co_firsttraceable), &first, sizeof first) &&
			    instr < code + l.co_code + (uintptr_t)first * 2)
				python = false;
		}
		if (python) {
			struct kimg_python_frame *f = &frames[n++];
			uintptr_t name = 0, file = 0;
			read_ptr(code + l.co_filename, &file);
			read_str(&l, file, fn.unicode_type, f->file, sizeof f->file);
			if (!l.co_qualname || !read_ptr(code + l.co_qualname, &name) ||
			    !read_str(&l, name, fn.unicode_type, f->function, sizeof f->function)) {
				read_ptr(code + l.co_name, &name);
				read_str(&l, name, fn.unicode_type, f->function, sizeof f->function);
			}
			if (l.line_api) {
				f->line = fn.frame_line((void *)frame);
			} else if (l.chain == CHAIN_FRAME_OBJECT) {
				int32_t lasti = 0;
				safe_read((const void *)(frame + l.f_lasti), &lasti, sizeof lasti);
				f->line = fn.addr2line((void *)code, lasti * 2);
			} else {
				uintptr_t instr = 0;
				read_ptr(frame + l.f_instr, &instr);
				f->line = fn.addr2line((void *)code, (int)(instr - (code + l.co_code)));
			}
		}
		frame = next;
	}
	return n;
}
