/* SPDX-License-Identifier: Apache-2.0 */
/* A fake libcuda.so.1 for the shim tests: enough of the driver API for
 * the load / lookup / launch paths libkimg hooks, with no GPU.
 *
 * It decides like a real driver, from its own reading of the image
 * (fake_image.h: no code shared with kimg's core, so the tests' "the
 * program sees 209" is not kimg agreeing with itself), against a device
 * described by the environment:
 *   FAKE_CUDA_SM      compute capability as an SM number (default 90)
 *   FAKE_CUDA_TEGRA   1: integrated GPU (the attribute only: which code runs
 *                     follows the CC, so 12.1 GB10 runs sm_120 cubins)
 *   FAKE_CUDA_DRIVER  cuDriverGetVersion (default 13000)
 *   FAKE_CUDA_COUNT   number of devices (default 1; 0: cuInit gives 100)
 *   FAKE_CUDA_DEVICE  the current context's device, cuCtxGetDevice's answer
 *                     (default 0; the other calls answer alike for any device)
 *   FAKE_CUDA_INIT_ERROR  cuInit returns this code (803, 804: a driver that
 *                     refuses the process; default 0)
 *   FAKE_CUDA_NAME    device name (default "Fake GPU")
 *                     (cuDeviceGetUuid: bytes a0 a1 ... ae, then the device
 *                     index: fake_nvml.c hands out the same UUIDs)
 *   FAKE_CUDA_LAZY    1: cuLibraryGetKernel always succeeds and the error
 *                     surfaces at cuKernelGetFunction / launch instead
 *   FAKE_CUDA_NO_JIT  1: a load that needs the PTX JIT gives 221 (no JIT library)
 *   FAKE_CUDA_DUMP    a file: each launch appends "launch NAME KIND ARCH ISA"
 *                     for the image the driver selected ("ptx compute_90
 *                     9.0"), so tests see which code ran (the fallback's
 *                     stand-in, or the SASS)
 *   CUDA_FORCE_PTX_JIT / CUDA_DISABLE_PTX_JIT as the real driver reads them.
 *   FAKE_CUDA_NO_LOGS  1: a driver older than 12.9: cuGetProcAddress knows no
 *                     cuLogs* name (the exports stay, as a stub would have them)
 *   FAKE_CUDA_LOG_NOISE  lines of healthy-run noise cuInit logs (default 6:
 *                     "Returning 201 (CUDA_ERROR_INVALID_CONTEXT) from
 *                     cuCtxGetDevice_v2", as in a PyTorch run [V]); 0: none
 *   CUDA_LOG_FILE     the driver's own log file: every message is appended,
 *                     one line each, as the real driver does (stdout/stderr too)
 * The error log (cuLogsRegisterCallback, CUDA 12.9+) carries the driver's
 * words as measured on an H200 with driver 580.159.04 [V]: for code that
 * does not fit, "No device code available for GPU ISA 90", for a kernel
 * "Kernel (NAME) cannot be found in library due to compilation error", for
 * rejected PTX "JIT compilation failed", and for every failing entry point
 * "Returning N (CUDA_ERROR_X) from FN" last. Callbacks run synchronously on
 * the failing thread; several coexist. Around each one the stand-in arms
 * failalloc_arm (tests/shim/progs/failalloc.c) when that is loaded, so a
 * test can see an allocation made inside a callback.
 * Its "JIT" accepts PTX the guide's rules accept (target not above the device,
 * .version not above the driver's ISA) and rejects, with 218, PTX that
 * contains the text FAKE_JIT_REJECT: the stand-in for instructions the
 * lower target lacks, which only a real ptxas would notice.
 * Where errors surface follows CUDA 13.0 [V] (as verified on an H200):
 * cuModuleLoad* fails at load (209 / 218 / 222 / 223), cuLibraryLoad*
 * always succeeds and cuLibraryGetKernel returns the error.
 *
 * fake_cuda_last_call() names the last driver function entered on this
 * thread, so a test can tell cuLaunchKernel from cuLaunchKernel_ptsz.
 *
 * Built once, by make (tests/fake_cuda/fake.mk: $(BUILD)/fake_cuda/libcuda.so.1);
 * every test takes it from there. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_image.h"

typedef int CUresult;
#define FAKE_API __attribute__((visibility("default")))

enum { OBJ_MODULE = 1, OBJ_LIBRARY, OBJ_KERNEL };
#define OBJ_MAGIC 0x46414b45u /* "FAKE" */
#define MAX_IMAGES 64

struct obj {
	uint32_t magic;
	int kind;
	int err;              /* what using this code gives: 0 or the image error */
	const uint8_t *image; /* start of the code (container, cubin, PTX) */
	uint64_t size;
	uint8_t *owned;       /* file contents, for *FromFile / cuModuleLoad */
	char name[256];       /* kernels */
	char desc[64];        /* the selected image: "ptx compute_90 9.0" */
};

static __thread const char *last_call = "";
FAKE_API const char *fake_cuda_last_call(void);
const char *fake_cuda_last_call(void)
{
	return last_call;
}

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : dflt;
}

static void fake_device(struct fi_device *dev)
{
	memset(dev, 0, sizeof *dev);
	dev->sm = (unsigned)env_int("FAKE_CUDA_SM", 90);
	dev->driver = env_int("FAKE_CUDA_DRIVER", 13000);
	dev->force_jit = env_int("CUDA_FORCE_PTX_JIT", env_int("CUDA_FORCE_JIT", 0)) != 0;
	dev->disable_jit = env_int("CUDA_DISABLE_PTX_JIT", env_int("CUDA_DISABLE_JIT", 0)) != 0;
}

/* The fake JIT's one way to fail a PTX the rules accept (see the top). */
static int jit_rejects(const struct fi_image *img)
{
	static const char marker[] = "FAKE_JIT_REJECT";
	return img->kind == FI_PTX && !img->compressed && img->data &&
	       memmem(img->data, img->size, marker, sizeof marker - 1) != NULL;
}

/* 0 or the CUresult the driver gives for this code on the fake device;
 * *selected gets the chosen image. 200 CUDA_ERROR_INVALID_IMAGE for bytes
 * that are no device code. */
static int decide(const uint8_t *code, uint64_t size, struct fi_image *selected)
{
	struct fi_image imgs[FI_MAX];
	struct fi_device dev;
	const struct fi_image *chosen;
	int raw_ptx;
	int n = fi_collect(code, size, imgs, &raw_ptx);
	if (n < 0)
		return 200;
	fake_device(&dev);
	int err = fi_decide(imgs, n, raw_ptx, &dev, &chosen);
	if (err)
		return err;
	/* FAKE_CUDA_NO_JIT=1: libnvidia-ptxjitcompiler.so.1 missing, as in some
	 * containers and Jetson images */
	if (chosen->kind == FI_PTX && env_int("FAKE_CUDA_NO_JIT", 0))
		return 221; /* CUDA_ERROR_JIT_COMPILER_NOT_FOUND */
	if (jit_rejects(chosen))
		return 218; /* CUDA_ERROR_INVALID_PTX */
	if (selected)
		*selected = *chosen;
	return 0;
}

/* "ptx compute_90 9.0" / "sass sm_90 -" for the image decide() selects. */
static void describe(const uint8_t *code, uint64_t size, char *buf, size_t cap)
{
	struct fi_image img;
	char arch[32], isa[16] = "-";
	memset(&img, 0, sizeof img);
	if (decide(code, size, &img) != 0 || !img.data) {
		snprintf(buf, cap, "none");
		return;
	}
	fi_arch_name(&img, arch, sizeof arch);
	if (img.kind == FI_PTX)
		snprintf(isa, sizeof isa, "%u.%u", img.isa / 10u, img.isa % 10u);
	snprintf(buf, cap, "%s %s %s", img.kind == FI_PTX ? "ptx" : "sass", arch, isa);
}

/* In-memory code: a registration wrapper, container, cubin or PTX text. */
static int span_of_memory(const void *image, const uint8_t **code, uint64_t *size)
{
	return fi_extent(image, code, size) < 0 ? 200 : 0;
}

static uint8_t *read_file(const char *path, uint64_t *size)
{
	FILE *f = path ? fopen(path, "rb") : NULL;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1); /* + NUL for PTX */
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = (uint64_t)n;
	return buf;
}

static struct obj *obj_new(int kind, int err, const uint8_t *image, uint64_t size, uint8_t *owned)
{
	struct obj *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	o->magic = OBJ_MAGIC;
	o->kind = kind;
	o->err = err;
	o->image = image;
	o->size = size;
	o->owned = owned;
	if (kind != OBJ_KERNEL && !err)
		describe(image, size, o->desc, sizeof o->desc);
	return o;
}

static struct obj *obj_check(const void *h, int kind)
{
	const struct obj *o = h;
	return o && o->magic == OBJ_MAGIC && o->kind == kind ? (struct obj *)h : NULL;
}

/* Is `name` a kernel of the image the driver selected? */
static int has_kernel(const struct obj *o, const char *name)
{
	struct fi_image img;
	if (!name)
		return 0;
	memset(&img, 0, sizeof img);
	if (decide(o->image, o->size, &img) != 0)
		return 1;
	return fi_has_kernel(&img, name);
}

#define ENTER(name) (last_call = (name))

/* ---- the error log (cuLogs*, see the top) ---- */

typedef void (*log_callback)(void *data, int level, char *message, size_t length);
#define MAX_LOG_CALLBACKS 8
static struct { log_callback fn; void *data; } log_callbacks[MAX_LOG_CALLBACKS];
static unsigned log_serial; /* cuLogsCurrent's iterator: messages so far */
/* A failing allocator's switch, when one is preloaded (weak: absent = NULL). */
extern void failalloc_arm(int on) __attribute__((weak));
static const char *error_name(int code);

static void fake_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fake_log(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
	log_serial++;
	const char *file = getenv("CUDA_LOG_FILE");
	if (file && *file) {
		FILE *f = strcmp(file, "stdout") == 0 ? stdout : strcmp(file, "stderr") == 0 ? stderr : fopen(file, "a");
		if (f) {
			fprintf(f, "%s\n", msg);
			if (f != stdout && f != stderr)
				fclose(f);
			else
				fflush(f);
		}
	}
	for (int i = 0; i < MAX_LOG_CALLBACKS; i++) {
		if (!log_callbacks[i].fn)
			continue;
		if (failalloc_arm)
			failalloc_arm(1);
		log_callbacks[i].fn(log_callbacks[i].data, 0, msg, len);
		if (failalloc_arm)
			failalloc_arm(0);
	}
}

/* The last line of every failing entry point, as the driver words it. */
static CUresult log_return(const char *fn, CUresult rc)
{
	if (rc != 0) {
		const char *name = error_name(rc);
		fake_log("Returning %d (%s) from %s", rc, name ? name : "CUDA_ERROR_UNKNOWN", fn);
	}
	return rc;
}

/* What the driver says before the "Returning" line of a code that does not fit. */
static void log_why(int err, const char *kernel)
{
	if (err == 209)
		fake_log("No device code available for GPU ISA %d", env_int("FAKE_CUDA_SM", 90));
	else if (err == 218 || err == 222)
		fake_log("JIT compilation failed");
	if (err && kernel)
		fake_log("Kernel (%s) cannot be found in library due to compilation error", kernel);
}

/* ---- device and context ---- */

static int initialised;

FAKE_API CUresult cuInit(unsigned flags)
{
	ENTER("cuInit");
	if (env_int("FAKE_CUDA_INIT_ERROR", 0) != 0)
		return env_int("FAKE_CUDA_INIT_ERROR", 0);
	if (env_int("FAKE_CUDA_COUNT", 1) <= 0)
		return 100; /* CUDA_ERROR_NO_DEVICE */
	/* the noise of a healthy run: the driver asks for a context before
	 * there is one ([V] six of these in a PyTorch run) */
	for (int i = env_int("FAKE_CUDA_LOG_NOISE", 6); i > 0; i--)
		log_return("cuCtxGetDevice_v2", 201);
	initialised = 1;
	return 0;
}

FAKE_API CUresult cuDriverGetVersion(int *v)
{
	ENTER("cuDriverGetVersion");
	if (!v)
		return 1;
	*v = env_int("FAKE_CUDA_DRIVER", 13000);
	return 0;
}

FAKE_API CUresult cuDeviceGetCount(int *n)
{
	ENTER("cuDeviceGetCount");
	if (!n)
		return 1;
	*n = env_int("FAKE_CUDA_COUNT", 1);
	return 0;
}

FAKE_API CUresult cuDeviceGet(int *dev, int ordinal)
{
	ENTER("cuDeviceGet");
	if (!dev || ordinal < 0 || ordinal >= env_int("FAKE_CUDA_COUNT", 1))
		return 101; /* CUDA_ERROR_INVALID_DEVICE */
	*dev = ordinal;
	return 0;
}

FAKE_API CUresult cuDeviceGetName(char *name, int len, int dev)
{
	ENTER("cuDeviceGetName");
	const char *n = getenv("FAKE_CUDA_NAME");
	if (!name || len <= 0)
		return 1;
	snprintf(name, (size_t)len, "%s", n && *n ? n : "Fake GPU");
	return 0;
}

FAKE_API CUresult cuDeviceGetUuid(unsigned char *uuid, int dev)
{
	ENTER("cuDeviceGetUuid");
	if (!uuid || dev < 0 || dev >= env_int("FAKE_CUDA_COUNT", 1))
		return 101; /* CUDA_ERROR_INVALID_DEVICE */
	for (int i = 0; i < 15; i++)
		uuid[i] = (unsigned char)(0xa0 + i);
	uuid[15] = (unsigned char)dev;
	return 0;
}

FAKE_API CUresult cuDeviceGetUuid_v2(unsigned char *uuid, int dev);
CUresult cuDeviceGetUuid_v2(unsigned char *uuid, int dev)
{
	return cuDeviceGetUuid(uuid, dev);
}

FAKE_API CUresult cuDeviceGetAttribute(int *value, int attrib, int dev)
{
	ENTER("cuDeviceGetAttribute");
	int sm = env_int("FAKE_CUDA_SM", 90);
	if (!value)
		return 1;
	switch (attrib) {
	case 75: *value = sm / 10; break; /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
	case 76: *value = sm % 10; break; /* ..._MINOR */
	case 18: *value = env_int("FAKE_CUDA_TEGRA", 0); break; /* ..._INTEGRATED */
	default: *value = 0;
	}
	return 0;
}

FAKE_API CUresult cuCtxGetDevice(int *dev)
{
	ENTER("cuCtxGetDevice");
	if (!dev)
		return 1;
	*dev = env_int("FAKE_CUDA_DEVICE", 0);
	return 0;
}

static int the_context;
FAKE_API CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
	ENTER("cuDevicePrimaryCtxRetain");
	if (!ctx)
		return 1;
	*ctx = &the_context;
	return 0;
}

FAKE_API CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev)
{
	ENTER("cuCtxCreate_v2");
	return cuDevicePrimaryCtxRetain(ctx, dev);
}

/* ptxas's words for a refusal (the real JIT's, shortened): what only
 * CU_JIT_ERROR_LOG_BUFFER carries, never the error log. */
static const char *jit_reason(int err)
{
	return err == 222 ? "Unsupported .version; current version is the driver's"
	       : err == 218 ? "SM version specified by .target is higher than default SM version assumed"
	       : "no kernel image for this device";
}

/* ---- modules: errors at load ---- */

static CUresult module_from(void **mod, const uint8_t *code, uint64_t size, uint8_t *owned)
{
	if (!mod) {
		free(owned);
		return 1; /* CUDA_ERROR_INVALID_VALUE */
	}
	int err = decide(code, size, NULL);
	if (err) {
		free(owned);
		log_why(err, NULL);
		return err;
	}
	*mod = obj_new(OBJ_MODULE, 0, code, size, owned);
	return *mod ? 0 : 2;
}

FAKE_API CUresult cuModuleLoad(void **mod, const char *fname)
{
	ENTER("cuModuleLoad");
	uint64_t size = 0;
	uint8_t *buf = read_file(fname, &size);
	if (!buf)
		return log_return("cuModuleLoad", 301); /* CUDA_ERROR_FILE_NOT_FOUND */
	return log_return("cuModuleLoad", module_from(mod, buf, size, buf));
}

FAKE_API CUresult cuModuleLoadData(void **mod, const void *image)
{
	ENTER("cuModuleLoadData");
	const uint8_t *code;
	uint64_t size;
	int rc = span_of_memory(image, &code, &size);
	return log_return("cuModuleLoadData", rc ? rc : module_from(mod, code, size, NULL));
}

FAKE_API CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals)
{
	ENTER("cuModuleLoadDataEx");
	const uint8_t *code;
	uint64_t size;
	int rc = span_of_memory(image, &code, &size);
	rc = rc ? rc : module_from(mod, code, size, NULL);
	/* CU_JIT_ERROR_LOG_BUFFER (5) / _SIZE_BYTES (6), as for cuLinkCreate */
	char *log = NULL;
	size_t log_size = 0;
	for (unsigned i = 0; rc && opts && vals && i < n; i++) {
		if (opts[i] == 5)
			log = vals[i];
		else if (opts[i] == 6)
			log_size = (size_t)(uintptr_t)vals[i];
	}
	if (log && log_size)
		snprintf(log, log_size, "ptxas fatal   : %s\n", jit_reason(rc));
	return log_return("cuModuleLoadDataEx", rc);
}

FAKE_API CUresult cuModuleLoadFatBinary(void **mod, const void *fat)
{
	ENTER("cuModuleLoadFatBinary");
	const uint8_t *code;
	uint64_t size;
	int rc = span_of_memory(fat, &code, &size);
	return log_return("cuModuleLoadFatBinary", rc ? rc : module_from(mod, code, size, NULL));
}

FAKE_API CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	ENTER("cuModuleGetFunction");
	struct obj *m = obj_check(mod, OBJ_MODULE);
	if (!m || !fn)
		return 400; /* CUDA_ERROR_INVALID_HANDLE */
	if (!has_kernel(m, name))
		return 500; /* CUDA_ERROR_NOT_FOUND */
	struct obj *k = obj_new(OBJ_KERNEL, 0, m->image, m->size, NULL);
	if (!k)
		return 2;
	snprintf(k->name, sizeof k->name, "%s", name);
	memcpy(k->desc, m->desc, sizeof k->desc);
	*fn = k;
	return 0;
}

FAKE_API CUresult cuModuleUnload(void *mod)
{
	ENTER("cuModuleUnload");
	struct obj *m = obj_check(mod, OBJ_MODULE);
	if (!m)
		return 400;
	m->magic = 0;
	free(m->owned);
	free(m);
	return 0;
}

/* ---- libraries: CUDA 13 loads always succeed, errors at the kernel ---- */

FAKE_API CUresult cuLibraryLoadData(void **lib, const void *code, int *jo, void **jv, unsigned nj, int *lo, void **lv,
				    unsigned nl)
{
	ENTER("cuLibraryLoadData");
	const uint8_t *p;
	uint64_t size;
	if (!lib)
		return 1;
	int rc = span_of_memory(code, &p, &size);
	if (rc)
		return rc;
	*lib = obj_new(OBJ_LIBRARY, decide(p, size, NULL), p, size, NULL);
	return *lib ? 0 : 2;
}

FAKE_API CUresult cuLibraryLoadFromFile(void **lib, const char *file, int *jo, void **jv, unsigned nj, int *lo,
					void **lv, unsigned nl)
{
	ENTER("cuLibraryLoadFromFile");
	uint64_t size = 0;
	if (!lib)
		return 1;
	uint8_t *buf = read_file(file, &size);
	if (!buf)
		return 301;
	*lib = obj_new(OBJ_LIBRARY, decide(buf, size, NULL), buf, size, buf);
	return *lib ? 0 : 2;
}

FAKE_API CUresult cuLibraryGetKernel(void **kernel, void *lib, const char *name)
{
	ENTER("cuLibraryGetKernel");
	struct obj *l = obj_check(lib, OBJ_LIBRARY);
	if (!l || !kernel)
		return 400;
	int lazy = env_int("FAKE_CUDA_LAZY", 0);
	if (l->err && !lazy) {
		log_why(l->err, name ? name : "");
		return log_return("cuLibraryGetKernel", l->err);
	}
	if (!l->err && !has_kernel(l, name))
		return log_return("cuLibraryGetKernel", 500);
	struct obj *k = obj_new(OBJ_KERNEL, l->err, l->image, l->size, NULL);
	if (!k)
		return 2;
	snprintf(k->name, sizeof k->name, "%s", name ? name : "");
	memcpy(k->desc, l->desc, sizeof k->desc);
	*kernel = k;
	return 0;
}

FAKE_API CUresult cuLibraryGetModule(void **mod, void *lib)
{
	ENTER("cuLibraryGetModule");
	struct obj *l = obj_check(lib, OBJ_LIBRARY);
	if (!l || !mod)
		return 400;
	if (l->err) {
		log_why(l->err, NULL);
		return log_return("cuLibraryGetModule", l->err);
	}
	*mod = obj_new(OBJ_MODULE, 0, l->image, l->size, NULL);
	return *mod ? 0 : 2;
}

/* [V] CUDA 13: the CUfunction of a kernel is the same value. */
FAKE_API CUresult cuKernelGetFunction(void **fn, void *kernel)
{
	ENTER("cuKernelGetFunction");
	struct obj *k = obj_check(kernel, OBJ_KERNEL);
	if (!k || !fn)
		return 400;
	if (k->err) {
		log_why(k->err, k->name);
		return log_return("cuKernelGetFunction", k->err);
	}
	*fn = k;
	return 0;
}

FAKE_API CUresult cuLibraryUnload(void *lib)
{
	ENTER("cuLibraryUnload");
	struct obj *l = obj_check(lib, OBJ_LIBRARY);
	if (!l)
		return 400;
	l->magic = 0;
	free(l->owned);
	free(l);
	return 0;
}

/* Not a driver API: one line of healthy-run noise, for fake_cudart to log
 * after a failure the way a runtime asking for a context would. */
FAKE_API void fake_cuda_log_noise(void);
void fake_cuda_log_noise(void)
{
	log_return("cuCtxGetDevice_v2", 201);
}

/* ---- symbol and variable lookups ----
 * [V] CUDA 13: a library whose code does not fit fails its first lookup
 * of any kind, a variable's as a kernel's (209 from cuLibraryGetGlobal for
 * a program that fills a __constant__ table before its first launch). A
 * name is found when it is in the selected image's bytes (compressed
 * images: any name). */
static int has_symbol(const struct obj *o, const char *name)
{
	struct fi_image img;
	memset(&img, 0, sizeof img);
	if (!name || !*name || decide(o->image, o->size, &img) != 0 || !img.data)
		return 0;
	return img.compressed || memmem(img.data, img.size, name, strlen(name)) != NULL;
}

/* 0 or the error of looking `name` up in library `lib` from entry point fn. */
static CUresult library_lookup(const char *fn, void *lib, const char *name, const void *out)
{
	struct obj *l = obj_check(lib, OBJ_LIBRARY);
	if (!l || !out)
		return log_return(fn, 400);
	if (l->err) {
		log_why(l->err, NULL);
		return log_return(fn, l->err);
	}
	return has_symbol(l, name) ? 0 : log_return(fn, 500);
}

static unsigned long long fake_address(const void *handle, const char *name)
{
	unsigned long long h = 0x7f0000000000ull ^ (unsigned long long)(uintptr_t)handle;
	for (const char *c = name; c && *c; c++)
		h = h * 31 + (unsigned char)*c;
	return h & ~0xfull;
}

FAKE_API CUresult cuLibraryGetGlobal(unsigned long long *dptr, size_t *bytes, void *lib, const char *name)
{
	ENTER("cuLibraryGetGlobal");
	CUresult rc = library_lookup("cuLibraryGetGlobal", lib, name, dptr ? (void *)dptr : (void *)bytes);
	if (rc)
		return rc;
	if (dptr)
		*dptr = fake_address(lib, name);
	if (bytes)
		*bytes = 64;
	return 0;
}

FAKE_API CUresult cuLibraryGetManaged(unsigned long long *dptr, size_t *bytes, void *lib, const char *name)
{
	ENTER("cuLibraryGetManaged");
	CUresult rc = library_lookup("cuLibraryGetManaged", lib, name, dptr ? (void *)dptr : (void *)bytes);
	if (rc)
		return rc;
	if (dptr)
		*dptr = fake_address(lib, name);
	if (bytes)
		*bytes = 64;
	return 0;
}

FAKE_API CUresult cuLibraryGetUnifiedFunction(void **fptr, void *lib, const char *symbol)
{
	ENTER("cuLibraryGetUnifiedFunction");
	CUresult rc = library_lookup("cuLibraryGetUnifiedFunction", lib, symbol, fptr);
	if (!rc)
		*fptr = (void *)(uintptr_t)fake_address(lib, symbol);
	return rc;
}

/* Not hooked by libkimg: the safety net's case (an entry point that fails
 * like the lookups above and that kimg only sees in the driver's log). */
FAKE_API CUresult cuLibraryGetKernelCount(unsigned *count, void *lib)
{
	ENTER("cuLibraryGetKernelCount");
	struct obj *l = obj_check(lib, OBJ_LIBRARY);
	if (!l || !count)
		return log_return("cuLibraryGetKernelCount", 400);
	if (l->err) {
		log_why(l->err, NULL);
		return log_return("cuLibraryGetKernelCount", l->err);
	}
	*count = 1;
	return 0;
}

/* Modules fail at load, so a module's lookup finds or misses the name. */
static CUresult module_global(const char *fn, void *mod, const char *name, unsigned long long *addr)
{
	struct obj *m = obj_check(mod, OBJ_MODULE);
	if (!m)
		return log_return(fn, 400);
	if (!has_symbol(m, name))
		return log_return(fn, 500);
	*addr = fake_address(mod, name);
	return 0;
}

/* cuda.h maps cuModuleGetGlobal to _v2 (64-bit pointer and size); the
 * plain export keeps the 32-bit ABI of CUDA 2.0. */
FAKE_API CUresult cuModuleGetGlobal_v2(unsigned long long *dptr, size_t *bytes, void *mod, const char *name);
CUresult cuModuleGetGlobal_v2(unsigned long long *dptr, size_t *bytes, void *mod, const char *name)
{
	ENTER("cuModuleGetGlobal_v2");
	unsigned long long a = 0;
	CUresult rc = module_global("cuModuleGetGlobal_v2", mod, name, &a);
	if (!rc && dptr)
		*dptr = a;
	if (!rc && bytes)
		*bytes = 64;
	return rc;
}

FAKE_API CUresult cuModuleGetGlobal(unsigned *dptr, unsigned *bytes, void *mod, const char *name);
CUresult cuModuleGetGlobal(unsigned *dptr, unsigned *bytes, void *mod, const char *name)
{
	ENTER("cuModuleGetGlobal");
	unsigned long long a = 0;
	CUresult rc = module_global("cuModuleGetGlobal", mod, name, &a);
	if (!rc && dptr)
		*dptr = (unsigned)a;
	if (!rc && bytes)
		*bytes = 64;
	return rc;
}

/* ---- the error log API (CUDA 12.9) ---- */

FAKE_API CUresult cuLogsRegisterCallback(log_callback fn, void *data, void **handle_out);
CUresult cuLogsRegisterCallback(log_callback fn, void *data, void **handle_out)
{
	ENTER("cuLogsRegisterCallback");
	if (!fn)
		return 1;
	for (int i = 0; i < MAX_LOG_CALLBACKS; i++)
		if (!log_callbacks[i].fn) {
			log_callbacks[i].data = data;
			log_callbacks[i].fn = fn;
			if (handle_out)
				*handle_out = &log_callbacks[i];
			return 0;
		}
	return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}

FAKE_API CUresult cuLogsUnregisterCallback(void *handle);
CUresult cuLogsUnregisterCallback(void *handle)
{
	ENTER("cuLogsUnregisterCallback");
	for (int i = 0; i < MAX_LOG_CALLBACKS; i++)
		if (handle == (void *)&log_callbacks[i] && log_callbacks[i].fn) {
			log_callbacks[i].fn = NULL;
			return 0;
		}
	return 1;
}

FAKE_API CUresult cuLogsCurrent(unsigned *iterator, unsigned flags);
CUresult cuLogsCurrent(unsigned *iterator, unsigned flags)
{
	ENTER("cuLogsCurrent");
	if (!iterator || flags)
		return 1;
	*iterator = log_serial;
	return 0;
}

/* ---- launches ---- */

static CUresult launch(void *f)
{
	struct obj *k = obj_check(f, OBJ_KERNEL);
	const char *dump = getenv("FAKE_CUDA_DUMP");
	if (k && !k->err && dump && *dump) {
		FILE *out = fopen(dump, "a");
		if (out) {
			fprintf(out, "launch %s %s\n", k->name, k->desc);
			fclose(out);
		}
	}
	return k ? k->err : 400;
}
#define LAUNCH(name) log_return(name, launch(f))

#define LAUNCH_PARAMS void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
		      unsigned shmem, void *stream
FAKE_API CUresult cuLaunchKernel(LAUNCH_PARAMS, void **params, void **extra)
{
	ENTER("cuLaunchKernel");
	return LAUNCH("cuLaunchKernel");
}
FAKE_API CUresult cuLaunchKernel_ptsz(LAUNCH_PARAMS, void **params, void **extra)
{
	ENTER("cuLaunchKernel_ptsz");
	return LAUNCH("cuLaunchKernel_ptsz");
}
FAKE_API CUresult cuLaunchKernelEx(const void *config, void *f, void **params, void **extra)
{
	ENTER("cuLaunchKernelEx");
	return LAUNCH("cuLaunchKernelEx");
}
FAKE_API CUresult cuLaunchKernelEx_ptsz(const void *config, void *f, void **params, void **extra)
{
	ENTER("cuLaunchKernelEx_ptsz");
	return LAUNCH("cuLaunchKernelEx_ptsz");
}
FAKE_API CUresult cuLaunchCooperativeKernel(LAUNCH_PARAMS, void **params)
{
	ENTER("cuLaunchCooperativeKernel");
	return LAUNCH("cuLaunchCooperativeKernel");
}
FAKE_API CUresult cuLaunchCooperativeKernel_ptsz(LAUNCH_PARAMS, void **params)
{
	ENTER("cuLaunchCooperativeKernel_ptsz");
	return LAUNCH("cuLaunchCooperativeKernel_ptsz");
}

/* ---- the JIT linker (cuLink*) ----
 * Each input is decided like a module (PTX through the fake JIT, cubins
 * and fatbins by the rules) when it is added, as the driver compiles PTX
 * at cuLinkAddData; libraries and objects are accepted unread. A refusal
 * writes a ptxas-like line into CU_JIT_ERROR_LOG_BUFFER (option 5, size
 * option 6) given to cuLinkCreate. cuLinkComplete hands back the first
 * accepted PTX or cubin input as "the linked cubin". */
struct fake_link {
	uint32_t magic;
	char *log;
	size_t log_size;
	const void *first;
	size_t first_size;
};
#define LINK_MAGIC 0x4c494e4bu /* "LINK" */

FAKE_API CUresult cuLinkCreate_v2(unsigned n, int *opts, void **vals, void **state);
CUresult cuLinkCreate_v2(unsigned n, int *opts, void **vals, void **state)
{
	ENTER("cuLinkCreate_v2");
	if (!state)
		return 1;
	struct fake_link *l = calloc(1, sizeof *l);
	if (!l)
		return 2;
	l->magic = LINK_MAGIC;
	for (unsigned i = 0; opts && vals && i < n; i++) {
		if (opts[i] == 5)
			l->log = vals[i];
		else if (opts[i] == 6)
			l->log_size = (size_t)(uintptr_t)vals[i];
	}
	*state = l;
	return 0;
}

FAKE_API CUresult cuLinkCreate(unsigned n, int *opts, void **vals, void **state);
CUresult cuLinkCreate(unsigned n, int *opts, void **vals, void **state)
{
	CUresult r = cuLinkCreate_v2(n, opts, vals, state);
	ENTER("cuLinkCreate");
	return r;
}

static struct fake_link *link_check(void *state)
{
	struct fake_link *l = state;
	return l && l->magic == LINK_MAGIC ? l : NULL;
}

/* The ptxas-like line for a refusal, as the real JIT words it. */
static void link_log(struct fake_link *l, int err, const char *name)
{
	if (!l->log || l->log_size == 0)
		return;
	const char *why = jit_reason(err);
	snprintf(l->log, l->log_size, "ptxas fatal   : %s: %s\n", name && *name ? name : "<input>", why);
}

static CUresult link_add(struct fake_link *l, int type, const uint8_t *data, size_t size, const char *name)
{
	if (type == 3 || type == 4)
		return 0; /* CU_JIT_INPUT_OBJECT, _LIBRARY: taken as they are */
	while (size > 0 && data[size - 1] == '\0')
		size--; /* PTX sizes include the terminator */
	int err = decide(data, size, NULL);
	if (err) {
		link_log(l, err, name);
		return err;
	}
	if (!l->first && (type == 0 || type == 1)) {
		l->first = data;
		l->first_size = size;
	}
	return 0;
}

#define LINK_ADD_DATA_PARAMS void *state, int type, void *data, size_t size, const char *name, unsigned n, \
			     int *opts, void **vals
FAKE_API CUresult cuLinkAddData_v2(LINK_ADD_DATA_PARAMS);
CUresult cuLinkAddData_v2(LINK_ADD_DATA_PARAMS)
{
	ENTER("cuLinkAddData_v2");
	struct fake_link *l = link_check(state);
	if (!l || !data)
		return l ? 1 : 400;
	return link_add(l, type, data, size, name);
}
FAKE_API CUresult cuLinkAddData(LINK_ADD_DATA_PARAMS);
CUresult cuLinkAddData(LINK_ADD_DATA_PARAMS)
{
	CUresult r = cuLinkAddData_v2(state, type, data, size, name, n, opts, vals);
	ENTER("cuLinkAddData");
	return r;
}

#define LINK_ADD_FILE_PARAMS void *state, int type, const char *path, unsigned n, int *opts, void **vals
FAKE_API CUresult cuLinkAddFile_v2(LINK_ADD_FILE_PARAMS);
CUresult cuLinkAddFile_v2(LINK_ADD_FILE_PARAMS)
{
	ENTER("cuLinkAddFile_v2");
	struct fake_link *l = link_check(state);
	uint64_t size = 0;
	if (!l)
		return 400;
	uint8_t *buf = read_file(path, &size);
	if (!buf)
		return 301;
	/* kept until the process ends: "the linked cubin" may point into it */
	return link_add(l, type, buf, (size_t)size, path);
}
FAKE_API CUresult cuLinkAddFile(LINK_ADD_FILE_PARAMS);
CUresult cuLinkAddFile(LINK_ADD_FILE_PARAMS)
{
	CUresult r = cuLinkAddFile_v2(state, type, path, n, opts, vals);
	ENTER("cuLinkAddFile");
	return r;
}

FAKE_API CUresult cuLinkComplete(void *state, void **cubin, size_t *size);
CUresult cuLinkComplete(void *state, void **cubin, size_t *size)
{
	ENTER("cuLinkComplete");
	struct fake_link *l = link_check(state);
	if (!l || !cubin || !size)
		return l ? 1 : 400;
	if (!l->first)
		return 209; /* nothing for this device went in */
	*cubin = (void *)l->first;
	*size = l->first_size;
	return 0;
}

FAKE_API CUresult cuLinkDestroy(void *state);
CUresult cuLinkDestroy(void *state)
{
	ENTER("cuLinkDestroy");
	struct fake_link *l = link_check(state);
	if (!l)
		return 400;
	l->magic = 0;
	free(l);
	return 0;
}

/* ---- errors ---- */

static const struct { int code; const char *name, *text; } errors[] = {
	{ 0, "CUDA_SUCCESS", "no error" },
	{ 100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ 200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
	{ 201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ 209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device" },
	{ 218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed" },
	{ 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain." },
	{ 223, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "PTX JIT compiler library not found" },
	{ 301, "CUDA_ERROR_FILE_NOT_FOUND", "file not found" },
	{ 400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ 500, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
};

static const char *error_name(int code)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == code)
			return errors[i].name;
	return NULL;
}

FAKE_API CUresult cuGetErrorName(int code, const char **s)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == code) {
			*s = errors[i].name;
			return 0;
		}
	*s = NULL;
	return 1;
}

FAKE_API CUresult cuGetErrorString(int code, const char **s)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == code) {
			*s = errors[i].text;
			return 0;
		}
	*s = NULL;
	return 1;
}

/* ---- cuGetProcAddress: the driver's name -> variant table ---- */

FAKE_API CUresult cuGetProcAddress(const char *sym, void **pfn, int version, unsigned long long flags);
FAKE_API CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version, unsigned long long flags, int *st);

#define FN(x) ((void *)(x))
static const struct { const char *name; void *fn, *ptsz; } procs[] = {
	{ "cuInit", FN(cuInit), NULL },
	{ "cuDriverGetVersion", FN(cuDriverGetVersion), NULL },
	{ "cuDeviceGetCount", FN(cuDeviceGetCount), NULL },
	{ "cuDeviceGet", FN(cuDeviceGet), NULL },
	{ "cuDeviceGetName", FN(cuDeviceGetName), NULL },
	{ "cuDeviceGetAttribute", FN(cuDeviceGetAttribute), NULL },
	{ "cuCtxGetDevice", FN(cuCtxGetDevice), NULL },
	{ "cuDevicePrimaryCtxRetain", FN(cuDevicePrimaryCtxRetain), NULL },
	{ "cuCtxCreate", FN(cuCtxCreate_v2), NULL },
	{ "cuModuleLoad", FN(cuModuleLoad), NULL },
	{ "cuModuleLoadData", FN(cuModuleLoadData), NULL },
	{ "cuModuleLoadDataEx", FN(cuModuleLoadDataEx), NULL },
	{ "cuModuleLoadFatBinary", FN(cuModuleLoadFatBinary), NULL },
	{ "cuModuleGetFunction", FN(cuModuleGetFunction), NULL },
	{ "cuModuleUnload", FN(cuModuleUnload), NULL },
	{ "cuLibraryLoadData", FN(cuLibraryLoadData), NULL },
	{ "cuLibraryLoadFromFile", FN(cuLibraryLoadFromFile), NULL },
	{ "cuLibraryGetKernel", FN(cuLibraryGetKernel), NULL },
	{ "cuLibraryGetModule", FN(cuLibraryGetModule), NULL },
	{ "cuLibraryUnload", FN(cuLibraryUnload), NULL },
	{ "cuKernelGetFunction", FN(cuKernelGetFunction), NULL },
	{ "cuLaunchKernel", FN(cuLaunchKernel), FN(cuLaunchKernel_ptsz) },
	{ "cuLaunchKernelEx", FN(cuLaunchKernelEx), FN(cuLaunchKernelEx_ptsz) },
	{ "cuLaunchCooperativeKernel", FN(cuLaunchCooperativeKernel), FN(cuLaunchCooperativeKernel_ptsz) },
	{ "cuGetErrorName", FN(cuGetErrorName), NULL },
	{ "cuLibraryGetGlobal", FN(cuLibraryGetGlobal), NULL },
	{ "cuLibraryGetManaged", FN(cuLibraryGetManaged), NULL },
	{ "cuLibraryGetUnifiedFunction", FN(cuLibraryGetUnifiedFunction), NULL },
	{ "cuLibraryGetKernelCount", FN(cuLibraryGetKernelCount), NULL },
	{ "cuGetErrorString", FN(cuGetErrorString), NULL },
};

/* Names that answer with their _v2 from a version on, as the driver does:
 * the linker's from CUDA 6.5, cuModuleGetGlobal (64-bit pointers) from 3.2. */
static int versioned_proc(const char *sym, int version, void **pfn)
{
	static const struct { const char *name; void *fn, *v2; int since; } rows[] = {
		{ "cuLinkCreate", FN(cuLinkCreate), FN(cuLinkCreate_v2), 6050 },
		{ "cuLinkAddData", FN(cuLinkAddData), FN(cuLinkAddData_v2), 6050 },
		{ "cuLinkAddFile", FN(cuLinkAddFile), FN(cuLinkAddFile_v2), 6050 },
		{ "cuLinkComplete", FN(cuLinkComplete), FN(cuLinkComplete), 6050 },
		{ "cuLinkDestroy", FN(cuLinkDestroy), FN(cuLinkDestroy), 6050 },
		{ "cuModuleGetGlobal", FN(cuModuleGetGlobal), FN(cuModuleGetGlobal_v2), 3020 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (strcmp(rows[i].name, sym) == 0) {
			*pfn = version >= rows[i].since ? rows[i].v2 : rows[i].fn;
			return 1;
		}
	return 0;
}

static CUresult proc_lookup(const char *sym, void **pfn, int version, unsigned long long flags, int *status)
{
	ENTER("cuGetProcAddress");
	if (!sym || !pfn)
		return 1;
	*pfn = NULL;
	static const struct { const char *name; void *fn; } logs[] = {
		{ "cuLogsRegisterCallback", FN(cuLogsRegisterCallback) },
		{ "cuLogsUnregisterCallback", FN(cuLogsUnregisterCallback) },
		{ "cuLogsCurrent", FN(cuLogsCurrent) },
	};
	for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++)
		/* introduced in 12.9: older requests and older drivers find none */
		if (strcmp(logs[i].name, sym) == 0 && version >= 12090 && !env_int("FAKE_CUDA_NO_LOGS", 0))
			*pfn = logs[i].fn;
	if (*pfn) {
		/* found */
	} else if (strcmp(sym, "cuGetProcAddress") == 0) {
		/* the _v2 ABI from 12000 */
		*pfn = version >= 12000 ? FN(cuGetProcAddress_v2) : FN(cuGetProcAddress);
	} else if (versioned_proc(sym, version, pfn)) {
		/* found */
	} else {
		for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
			if (strcmp(procs[i].name, sym) == 0)
				*pfn = (flags & 2) && procs[i].ptsz ? procs[i].ptsz : procs[i].fn;
	}
	if (status)
		*status = *pfn ? 0 : 1; /* CU_GET_PROC_ADDRESS_SUCCESS / _SYMBOL_NOT_FOUND */
	return *pfn ? 0 : 500;
}

CUresult cuGetProcAddress(const char *sym, void **pfn, int version, unsigned long long flags)
{
	return proc_lookup(sym, pfn, version, flags, NULL);
}

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version, unsigned long long flags, int *st)
{
	return proc_lookup(sym, pfn, version, flags, st);
}

/* Not a driver API: the same lookup under a name libkimg does not hook, so
 * fake_cudart's cudaGetDriverEntryPoint can stand for a runtime holding
 * its own unwrapped driver table (libkimg must wrap at the runtime API). */
FAKE_API CUresult fake_cuda_private_gpa(const char *sym, void **pfn, int version, unsigned long long flags, int *st);
CUresult fake_cuda_private_gpa(const char *sym, void **pfn, int version, unsigned long long flags, int *st)
{
	return proc_lookup(sym, pfn, version, flags, st);
}
